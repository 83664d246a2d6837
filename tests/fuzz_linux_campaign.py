#!/usr/bin/env python3
"""`make fuzz-linux SEED=... N=...`: the Linux-ABI fuzzer's long campaign on the UNIX
server, in both forms (unix=mk, then unix=ik), in icount mode.

Each form boots once, runs a warm-up and then N calls of SEED (tests/linux_fuzz.py), and
must end with no panic or server failure on the console, the shell answering and the
free frames back within the caches' slack. Exit status 0 only when both forms hold.
"""
import argparse
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import linux_fuzz  # noqa: E402
from qemu_harness import BUILD, GuestError, boot  # noqa: E402

sys.path.insert(0, str(BUILD.parent / "tools"))
from ondol import linuxsuite  # noqa: E402


def campaign(form: str, seed: int, calls: int) -> list[str]:
    """One form's campaign: the problems found (empty when it survived)."""
    timeout = 120 + calls / 2_000
    with boot({"unix": form}, timeout=60, lifetime=2 * timeout + 120, icount=True) as s:
        run = linux_fuzz.run(s, seed, calls, timeout)
        alive = s.cmd("echo still here")
        print(f"{form}: {run.summary}; MemFree {run.free_before_kib} -> "
              f"{run.free_after_kib} kB", flush=True)
    problems = [f"{form}: console: {line}" for line in run.trouble]
    if alive != "still here\n":
        problems.append(f"{form}: the shell no longer answers: {alive!r}")
    if run.free_before_kib - run.free_after_kib > linux_fuzz.CACHE_SLACK_KIB:
        problems.append(f"{form}: frames lost: {run.free_before_kib - run.free_after_kib} kB")
    return problems


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--n", type=int, default=1_000_000)
    ap.add_argument("--forms", default="mk,ik")
    args = ap.parse_args()
    linuxsuite.rootfs_archive(BUILD)
    problems = []
    for form in args.forms.split(","):
        t0 = time.monotonic()
        try:
            problems += campaign(form, args.seed, args.n)
        except (GuestError, AssertionError) as e:
            problems.append(f"{form}: {e}")
        print(f"{form}: {time.monotonic() - t0:.0f} s", flush=True)
    for p in problems:
        print(f"fuzz-linux: {p}", file=sys.stderr)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
