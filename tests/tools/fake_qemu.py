"""A stand-in for qemu-system-x86_64 that plays a canned guest result stream.

It understands just enough of the command line the CLI builds: the second `-serial file:`
is COM2, `-append` holds the kernel options, and `-plugin ...,out=FILE` names the cache
model's output. Behaviour comes from the environment:

  FAKE_QEMU_STREAM  file of stream lines written to COM2 after a hello line; `${key}` is
                    replaced by the kernel option `key` (string.Template)
  FAKE_QEMU_CACHE   same, written to the plugin's out= file when a plugin is given
  FAKE_QEMU_ARGV    file to which the command line is appended as one JSON line
  FAKE_QEMU_MODE    "hang" (never exit), "fail" (exit 1 after an error message)
  FAKE_QEMU_DELAY   seconds to sleep between stream lines (default 0)
"""
import json
import os
import string
import sys
import time


def value_after(argv: list[str], flag: str, nth: int = 0) -> str | None:
    values = [argv[i + 1] for i, a in enumerate(argv[:-1]) if a == flag]
    return values[nth] if len(values) > nth else None


def kernel_options(argv: list[str]) -> dict[str, str]:
    line = value_after(argv, "-append") or ""
    return dict(item.split("=", 1) for item in line.split())


def plugin_out(argv: list[str]) -> str | None:
    spec = value_after(argv, "-plugin")
    if spec is None:
        return None
    args = dict(a.split("=", 1) for a in spec.split(",")[1:] if "=" in a)
    return args.get("out")


def render(template_path: str, options: dict[str, str]) -> list[str]:
    with open(template_path) as f:
        text = string.Template(f.read()).safe_substitute(options)
    return text.splitlines(keepends=True)


def main(argv: list[str]) -> int:
    if "--version" in argv:
        print("QEMU emulator version 7.2.22 (fake)\nCopyright (c) nobody")
        return 0
    if os.environ.get("FAKE_QEMU_ARGV"):
        with open(os.environ["FAKE_QEMU_ARGV"], "a") as f:
            f.write(json.dumps(argv) + "\n")
    print("fake ondol console", flush=True)
    if os.environ.get("FAKE_QEMU_MODE") == "fail":
        print("qemu-system-x86_64: fake failure", file=sys.stderr)
        return 1
    options = {"hz": "100", **kernel_options(argv)}
    com2 = value_after(argv, "-serial", 1).removeprefix("file:")
    delay = float(os.environ.get("FAKE_QEMU_DELAY", "0"))
    hello = {"type": "hello", "kernel": "ondol", "version": "0.1", "commit": "fake",
             "options": options, "mem_mib": 256, "tsc_hz": 1000000000}
    with open(com2, "w") as out:
        out.write(json.dumps(hello) + "\n")
        for line in render(os.environ["FAKE_QEMU_STREAM"], options):
            out.write(line)
            out.flush()
            time.sleep(delay)
    cache_out = plugin_out(argv)
    if cache_out and os.environ.get("FAKE_QEMU_CACHE"):
        with open(cache_out, "w") as out:
            out.writelines(render(os.environ["FAKE_QEMU_CACHE"], options))
    if os.environ.get("FAKE_QEMU_MODE") == "hang":
        time.sleep(3600)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
