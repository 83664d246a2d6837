#!/usr/bin/env python3
"""`make soak`: the SMP soak's long form (issue 13 item 6, docs/smp.md "Soak").

The AIM7-like mix (tests/linux/aim.c) on 8 vCPUs without icount (real concurrency), the
UNIX server in MK and then IK form, several minutes each; then the Linux-ABI fuzzer on 4
vCPUs. Each must end cleanly: every job's data checked, frames and kernel objects back to
their count before the run, no panic, the shell still answering, and the lock checker
(option lockcheck=on, docs/smp.md "Locking") reporting nothing. Exit status 0 only when
everything holds.
"""
import argparse
import sys
import time
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))
import test_smp_soak  # noqa: E402
from qemu_harness import GuestError  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tools"))
from ondol import aim  # noqa: E402


SOAK_RUNS = 4


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--jobs", type=int, default=aim.SOAK_JOBS, help="jobs per worker")
    ap.add_argument("--runs", type=int, default=SOAK_RUNS, help="runs per form")
    ap.add_argument("--forms", default="mk,ik")
    args = ap.parse_args()
    from ondol import linuxsuite
    linuxsuite.suite_on_peer(test_smp_soak.BUILD)
    for form in args.forms.split(","):
        t0 = time.monotonic()
        try:
            records = test_smp_soak.soak(form, args.jobs, args.runs, timeout=3600,
                                         lockcheck=True)
        except (AssertionError, GuestError) as e:
            print(f"soak: {form}: FAILED: {e}", file=sys.stderr)
            return 1
        frames = [-test_smp_soak.change(r, "frames_free") for r in records]
        print(f"soak: {form}: {args.runs} runs of {test_smp_soak.SOAK_CPUS} workers x "
              f"{args.jobs} jobs on {test_smp_soak.SOAK_CPUS} vCPUs, lock checker on, passed in "
              f"{time.monotonic() - t0:.0f} s; frames kept per run: {frames}")
    t0 = time.monotonic()
    status = pytest.main(["-q", "-p", "no:cacheprovider", str(Path(__file__).parent /
                          "test_smp_soak.py"), "-k", "fuzzer"])
    print(f"soak: fuzzers on {test_smp_soak.FUZZ_CPUS} vCPUs: "
          f"{'passed' if status == 0 else 'FAILED'} in {time.monotonic() - t0:.0f} s")
    return int(status)


if __name__ == "__main__":
    sys.exit(main())
