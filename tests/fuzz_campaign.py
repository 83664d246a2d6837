#!/usr/bin/env python3
"""`make fuzz SEED=... N=...`: a long random-syscall campaign against one booted kernel.

Boots ondol, runs the user-space fuzzer (tests/guest/fuzz.c) with the given seed and call count,
then checks that the kernel is still up: the shell answers, a fresh program runs, and
meminfo still reports. Exit status 0 only when all of that holds.
"""
import argparse
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from qemu_harness import GuestError, boot  # noqa: E402


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--n", type=int, default=1_000_000)
    ap.add_argument("--timeout", type=float, default=None, help="seconds (default: scales with N)")
    args = ap.parse_args()
    timeout = args.timeout or 60 + args.n / 20_000
    t0 = time.monotonic()
    try:
        with boot(lifetime=timeout + 60) as s:
            out = s.cmd(f"fuzz {args.seed} {args.n}", timeout=timeout)
            print(out[-3000:])
            if f"fuzz done seed={args.seed} n={args.n}" not in out or "[exit" in out:
                print("fuzz: the fuzzer did not finish cleanly", file=sys.stderr)
                return 1
            hello = s.cmd("hello alive")
            if "argv[1]=alive" not in hello:
                print("fuzz: the system no longer runs programs", file=sys.stderr)
                return 1
            print(s.cmd("meminfo"))
            s.halt()
    except GuestError as e:
        print(f"fuzz: {e}", file=sys.stderr)
        return 1
    print(f"fuzz: seed={args.seed} n={args.n} survived in {time.monotonic() - t0:.1f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
