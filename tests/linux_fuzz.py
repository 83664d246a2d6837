"""The Linux-ABI fuzzer (tests/linux/fuzz.c) driven on a booted UNIX server, shared by
tests/test_unix_reliability.py (100,000 calls in `make test`) and tests/fuzz_campaign.py
(`make fuzz-linux`, 1,000,000 calls): run it in a fresh directory, then check that the
server is still up, the shell still answers and the frames came back (docs/unix.md,
"Reliability")."""
from __future__ import annotations

import re
from dataclasses import dataclass

# Warm-up calls before the free-frame count is taken: the first calls grow the server's
# heap (MK: libc's pools; IK: the kernel's object caches) and the kernel's caches to a
# working size that later calls reuse; what they keep is a cache, not a leak.
WARM_UP_CALLS = 20_000
# What a run may still leave in those caches (measured: 16-88 KiB after 100,000 calls of
# a new seed). A leak of one frame per respawned child (about 1,100 per 100,000 calls)
# would be 4.4 MiB.
CACHE_SLACK_KIB = 256
# Lines the kernel or the server prints only when something went wrong.
TROUBLE = re.compile(r"PANIC|panic|FAIL|ondol: killed|unix: server")


@dataclass
class FuzzRun:
    summary: str          # "fuzz seed S: calls N denied D respawns R"
    free_before_kib: int  # MemFree after the warm-up, before the run
    free_after_kib: int   # MemFree after the run, its directory removed
    trouble: list[str]    # console lines that show a panic, a kill or a server failure


def free_kib(s) -> int:
    """MemFree of /proc/meminfo: the kernel's free-frame count (cached frames included)."""
    out = s.cmd("grep MemFree /proc/meminfo")
    m = re.search(r"MemFree:\s+(\d+) kB", out)
    if not m:
        raise AssertionError(f"no MemFree in /proc/meminfo: {out!r}")
    return int(m.group(1))


def fuzz_in_scratch(s, seed: int, calls: int, timeout: float) -> str:
    """Run `fuzz SEED CALLS` in an empty /tmp/fz (the files its random calls create go
    there) and remove it afterwards; return the fuzzer's output."""
    s.cmd("mkdir /tmp/fz; cd /tmp/fz")
    out = s.cmd(f"/suite/bin/fuzz {seed} {calls}", timeout=timeout)
    s.cmd("cd /; rm -rf /tmp/fz")
    return out


def run(s, seed: int, calls: int, timeout: float) -> FuzzRun:
    """Warm up, count the free frames, run CALLS calls of SEED, count them again."""
    start = len(s.output)
    fuzz_in_scratch(s, seed + 1, WARM_UP_CALLS, timeout)
    before = free_kib(s)
    out = fuzz_in_scratch(s, seed, calls, timeout)
    after = free_kib(s)
    m = re.search(rf"fuzz seed {seed}: calls {calls} denied \d+ respawns \d+", out)
    if not m or "system still answers: yes" not in out:
        raise AssertionError(f"the fuzzer did not finish: {out[-2000:]}")
    trouble = [l for l in s.output[start:].splitlines() if TROUBLE.search(l)]
    return FuzzRun(m.group(0), before, after, trouble)
