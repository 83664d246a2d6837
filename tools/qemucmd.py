#!/usr/bin/env python3
"""The QEMU command line, written once.

Every boot takes its command from here: `make run` and `make debug` (through the command
line at the bottom), the test harness (tests/qemu_harness.py), the `./ondol` CLI
(tools/ondol/qemu.py), the Linux peer (tools/ondol/peer.py) and the cache-model tests
(tests/cachemodel/cachesim_env.py). A caller picks a variant by what it boots --
`ondol()`, `ondol_iso()`, `peer()`, `bare_guest()` -- and adds knobs by keyword
(`Knobs`): memory, icount, a TCG plugin, the gdb stub, extra flags. Every variant starts
with the same `machine_flags()`, so ondol and the Linux peer run on the same virtual
machine and their counts compare like for like.

Standard library only, so the Makefile runs it with plain python3. Run
`python3 tools/qemucmd.py --help` for the command line; `--print` shows the command
instead of running it. docs/debugging.md says how to add a variant.
"""
from __future__ import annotations

import argparse
import os
import re
import shlex
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

DEFAULT_BINARY = "qemu-system-x86_64"
BINARY_VARIABLE = "ONDOL_QEMU"
DEFAULT_MEMORY = "256M"

# Deterministic mode: one instruction per virtual ns (so the TSC counts instructions), no
# idle warping by host time, and fixed seed and clock so repeated boots are byte-identical.
ICOUNT_FLAGS = ("-icount", "shift=0,sleep=off", "-seed", "1",
                "-rtc", "base=2024-01-01T00:00:00,clock=vm")
# The same counting, but an idle guest waits in host time instead of jumping to its next
# timer: for guests that talk to a host program (`./ondol bench net`), whose answers take
# host time; with sleep=off the guest's TCP timers would run out before the host answers.
ICOUNT_SLEEP_FLAGS = ("-icount", "shift=0,sleep=on") + ICOUNT_FLAGS[2:]
# QEMU stops before the first instruction and serves gdb on localhost:1234.
GDB_FLAGS = ("-s", "-S")
# A port write of v makes QEMU exit with status 2v+1: how bare test guests end, and how
# ondol powers off after a failure (the MK UNIX server's death, docs/unix.md).
DEBUG_EXIT_DEVICE = ("-device", "isa-debug-exit,iobase=0xf4,iosize=0x04")


def binary() -> str:
    """The QEMU binary: $ONDOL_QEMU if set and not empty, else the installed
    qemu-system-x86_64 (Debian 12's QEMU 7.2). `ONDOL_QEMU=build/qemu/bin/qemu-system-x86_64`
    runs the QEMU 10 of scripts/qemu.sh (docs/debugging.md says when to)."""
    return os.environ.get(BINARY_VARIABLE) or DEFAULT_BINARY


def executable(qemu: str) -> Path:
    """The ELF file behind `qemu` (a path): scripts/qemu.sh's wrapper BIN/x runs
    BIN/../root/usr/bin/x; any other binary is its own."""
    path = Path(qemu).resolve()
    elf = path.parent.parent / "root" / "usr" / "bin" / path.name
    return elf if path.parent.name == "bin" and elf.is_file() else path


def version(qemu: str) -> tuple[int, int]:
    """(major, minor) from `qemu --version`; ValueError when it cannot be told."""
    out = subprocess.run([qemu, "--version"], capture_output=True, text=True).stdout
    found = re.search(r"version (\d+)\.(\d+)", out)
    if not found:
        raise ValueError(f"cannot tell the version of {qemu}: {out!r}")
    return int(found.group(1)), int(found.group(2))


def plugin_api(qemu: str) -> int:
    """The TCG plugin API version to build tools/cacheplugin for, from `qemu --version`:
    1 up to QEMU 8 (7.2 takes 0..1), 3 from QEMU 9 (10.0 takes 2..4)."""
    return 1 if version(qemu)[0] < 9 else 3


def fair_icount(qemu: str) -> bool:
    """Whether the QEMU's icount round robin gives every vCPU a share of each period
    (8.1 on, "accel/tcg/tcg-accel-ops-rr: ensure fairness with icount"); 7.2's gives a busy
    vCPU all of it (docs/smp.md, "Under icount")."""
    return version(qemu) >= (8, 1)


def escape(value: str) -> str:
    """QEMU's option syntax: a comma inside a value is written twice."""
    return value.replace(",", ",,")


def append_line(options: dict[str, str | int]) -> str:
    """Kernel options as one -append string; a number is written as its decimal text. The
    kernel splits words at spaces, so a key or value with a space (or a key with "=") cannot
    be passed: ValueError."""
    words = {key: str(value) for key, value in options.items()}
    for key, value in words.items():
        if not key or " " in key + value or "=" in key:
            raise ValueError(f"bad kernel option {key}={value!r}: no spaces allowed "
                             "(commas stand for spaces in run=)")
    return " ".join(f"{key}={value}" for key, value in words.items())


@dataclass(frozen=True)
class Plugin:
    """A TCG plugin: the shared object, its key=value arguments, and the file its messages
    go to (`-d plugin -D LOG`; without a log QEMU drops them)."""
    path: str | Path
    args: tuple[str, ...] = ()
    log: str | Path | None = None

    def flags(self) -> list[str]:
        spec = ",".join([escape(str(self.path)), *self.args])
        logging = ["-d", "plugin", "-D", str(self.log)] if self.log is not None else []
        return ["-plugin", spec, *logging]


@dataclass(frozen=True)
class Knobs:
    """What every variant may change. `qemu` overrides `binary()`; `extra` is appended last,
    verbatim (e.g. `-d int,cpu_reset -D qemu.log`)."""
    qemu: str | None = None
    memory: str = DEFAULT_MEMORY
    smp: int = 1
    icount: bool = False
    icount_sleep: bool = False        # with icount: idle time passes in host time
    plugin: Plugin | None = None
    gdb: bool = False
    extra: tuple[str, ...] = ()


def machine_flags(knobs: Knobs) -> list[str]:
    """The virtual machine itself, the same for every guest. QEMU 7.2 or 10.0, TCG only:
    `-cpu max` gives NX, SMEP and SMAP; no display; a guest reboot ends QEMU instead."""
    return ["-machine", "pc", "-cpu", "max", "-m", knobs.memory, "-smp", str(knobs.smp),
            "-display", "none", "-no-reboot"]


def _assemble(load: list[str], serials: list[str], knobs: Knobs) -> list[str]:
    """Binary, machine, what to load, serial ports in COM order, then the knobs' flags."""
    cmd = [knobs.qemu or binary(), *machine_flags(knobs), *load]
    for port in serials:
        cmd += ["-serial", port]
    if knobs.icount:
        cmd += ICOUNT_SLEEP_FLAGS if knobs.icount_sleep else ICOUNT_FLAGS
    if knobs.plugin is not None:
        cmd += knobs.plugin.flags()
    if knobs.gdb:
        cmd += GDB_FLAGS
    return cmd + list(knobs.extra)


def unix_rootfs(build: str | Path, append: str) -> Path | None:
    """The UNIX server's root archive when the options place the server (unix=mk|ik):
    build/rootfs.cpio, loaded as the second multiboot module (docs/unix.md, "Boot")."""
    placed = any(w in ("unix=mk", "unix=ik") for w in append.split())
    return Path(build) / "rootfs.cpio" if placed else None


def ondol(kernel: str | Path, initrd: str | Path, append: str = "", *, com1: str = "stdio",
          com2: str = "null", rootfs: str | Path | None = None, **knobs) -> list[str]:
    """ondol loaded by QEMU's multiboot loader (the boot archive is the module), with the
    kernel options `append` (`append_line()` makes it from a dict).

    COM1 is the console: "stdio" for pipes and logs, "mon:stdio" on a terminal (the QEMU
    monitor shares it: Ctrl-A C, Ctrl-A X quits). COM2 is the result stream, usually
    "file:PATH". Both take any QEMU character device. `rootfs`, when given, is the second
    module (QEMU's -initrd takes a comma-separated list; a comma in a path is doubled).
    """
    knobs = Knobs(**knobs)
    modules = ",".join(str(m).replace(",", ",,") for m in (initrd, rootfs) if m)
    load = ["-kernel", str(kernel), "-initrd", modules, "-append", with_markers(append, knobs),
            *DEBUG_EXIT_DEVICE]      # a failure power-off's status (power_off_failed)
    return _assemble(load, [com1, com2], knobs)


def with_markers(append: str, knobs: Knobs) -> str:
    """The kernel's marker loads (option `markers`, off by default so that measured paths
    carry none) are what a cache-model plugin reads: on whenever a plugin is attached,
    unless the options say otherwise."""
    if knobs.plugin is None or any(w.startswith("markers=") for w in append.split()):
        return append
    return f"{append} markers=on".strip()


def ondol_iso(iso: str | Path, *, com1: str = "stdio", com2: str = "null",
              **knobs) -> list[str]:
    """ondol booted from its GRUB image as a CD, as a real PC boots it (no kernel options:
    GRUB's menu entry gives them)."""
    return _assemble(["-cdrom", str(iso), "-boot", "d"], [com1, com2], Knobs(**knobs))


def peer(vmlinuz: str | Path, initramfs: str | Path, append: str, console_log: str | Path,
         results_log: str | Path, **knobs) -> list[str]:
    """The Linux peer (tools/peer/): Debian's kernel with the peer initramfs, COM1 (kernel
    and /init messages) into `console_log`, COM2 (its result records) into `results_log`.
    `no_timer_check` is always added: Linux's boot check that the I/O APIC timer ticks
    within a busy loop fails on a loaded host under TCG without icount, and it panics
    ("IO-APIC + timer doesn't work!"); the timer works, the check only races the host."""
    if "no_timer_check" not in append.split():
        append = f"{append} no_timer_check"
    load = ["-kernel", str(vmlinuz), "-initrd", str(initramfs), "-append", append]
    return _assemble(load, [f"file:{console_log}", f"file:{results_log}"], Knobs(**knobs))


def bare_guest(image: str | Path, **knobs) -> list[str]:
    """A tiny multiboot test image (tests/cachemodel/guest/) on a machine without default
    devices: no serial ports, only the debug-exit port through which the guest ends QEMU."""
    knobs.setdefault("memory", "64M")
    load = ["-nodefaults", *DEBUG_EXIT_DEVICE, "-kernel", str(image)]
    return _assemble(load, [], Knobs(**knobs))


# ---- command line: `make run` and `make debug` ----------------------------------------

def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="qemucmd.py", description="Boot ondol in QEMU on this terminal (COM1 with the "
        "QEMU monitor; COM2 into a file), as `make run` does.")
    p.add_argument("--print", action="store_true", help="print the command, do not run it")
    p.add_argument("--plugin-api", action="store_true",
                   help="print the plugin API version to build tools/cacheplugin for")
    p.add_argument("--qemu", help=f"QEMU binary (default ${BINARY_VARIABLE} or {DEFAULT_BINARY})")
    p.add_argument("--build", default="build", help="directory with ondol.bin, bootfs.tar, ondol.iso")
    p.add_argument("--append", default="", help="kernel options, 'key=value ...'")
    p.add_argument("--iso", action="store_true", help="boot build/ondol.iso through GRUB")
    p.add_argument("--memory", default=DEFAULT_MEMORY, help="guest RAM, e.g. 512M")
    p.add_argument("--icount", action="store_true", help="deterministic mode")
    p.add_argument("--gdb", action="store_true", help="wait for gdb on localhost:1234")
    p.add_argument("--com2", help="COM2 destination (default file:BUILD/com2.jsonl)")
    p.add_argument("extra", nargs="*", help="after --: more QEMU flags, verbatim")
    return p


def _command_from(args: argparse.Namespace) -> list[str]:
    build = Path(args.build)
    ports = dict(com1="mon:stdio", com2=args.com2 or f"file:{build / 'com2.jsonl'}")
    knobs = dict(qemu=args.qemu, memory=args.memory, icount=args.icount, gdb=args.gdb,
                 extra=tuple(args.extra))
    if args.iso:
        return ondol_iso(build / "ondol.iso", **ports, **knobs)
    return ondol(build / "ondol.bin", build / "bootfs.tar", args.append,
                 rootfs=unix_rootfs(build, args.append), **ports, **knobs)


def main(argv: list[str]) -> int:
    args = _parser().parse_args(argv)
    if args.plugin_api:
        print(plugin_api(args.qemu or binary()))
        return 0
    cmd = _command_from(args)
    if args.print:
        print(shlex.join(cmd))
        return 0
    try:
        os.execvp(cmd[0], cmd)  # QEMU takes over this process and its terminal
    except OSError as exc:
        print(f"qemucmd: cannot run {cmd[0]}: {exc.strerror}", file=sys.stderr)
    return 127


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
