"""Synchronous IPC (docs/ipc.md): semantics, the DTS priority rule, a message storm, and the
fastpath round-trip cost under icount.

The checks run in the guest (tests/guest/ipctest/ prints "FAIL ..." for every broken expectation
and "ipctest MODE ok" at the end); the host re-checks the numbers the guest prints where a
wrong value would be easy to miss. Each test boots its own QEMU with `run=...`, so a hang
fails the test at its boot timeout instead of stalling the run.
"""
import functools
import re

import pytest

from ondol.abi import E_DEAD, E_TIMEOUT
from qemu_harness import run_to_halt


def ipctest(mode: str, dts: str = "on", timeout: float = 90, icount: bool = False,
            **options) -> str:
    """Run `ipctest MODE` in a fresh boot (under icount if asked); return the console text
    after checking that the guest reported no failure."""
    status, out, _ = run_to_halt({"dts": dts, "run": "ipctest," + mode.replace(" ", ","),
                                  **options}, timeout=timeout, icount=icount)
    name = mode.split()[0]
    fails = [line for line in out.splitlines() if line.startswith("FAIL")]
    assert not fails, "\n".join(fails) + "\n--- console tail:\n" + out[-2000:]
    assert "PANIC" not in out, out[-3000:]
    assert f"ipctest {name} ok" in out, out[-3000:]
    assert status == 0
    return out


@pytest.mark.parametrize("dts", ["on", "off"])
def test_fifo_order_sender_ids_and_closed_receive(dts):
    out = ipctest("order", dts)
    first = re.search(r"order first-rounds: ([\d ]+)", out).group(1).split()
    # 8 senders blocked in creation order: the first round is served in exactly that order
    assert first[:8] == [str(i) for i in range(8)]
    assert len(first) == 32 and sorted(first) == sorted(str(i) for i in range(8) for _ in range(4))


@pytest.mark.parametrize("dts", ["on", "off"])
def test_timeouts_poll_ticks_forever(dts):
    out = ipctest("timeout", dts)
    got = {m["what"]: (int(m["r"]), int(m["ticks"]))
           for m in re.finditer(r"timeout (?P<what>\S+) r=(?P<r>-?\d+) ticks=(?P<ticks>\d+)", out)}
    for what in ("recv/poll", "send/poll", "call/poll", "reply_recv/0"):
        assert got[what][0] == E_TIMEOUT and got[what][1] <= 2, (what, got[what])
    for what, n in (("recv/5", 5), ("send/7", 7), ("call/6", 6), ("recvfrom/4", 4),
                    ("reply_recv/5", 5), ("reply_recv/12", 12)):
        r, ticks = got[what]
        assert r == E_TIMEOUT and n <= ticks <= n + 10, (what, got[what])
    # satisfied waits return the partner's tid (send: 0) and no timeout fires later
    assert got["recv/forever"][0] > 0 and got["recv/forever"][1] >= 5
    assert got["recv/30-satisfied"][0] > 0 and got["recv/30-satisfied"][1] < 30
    assert got["recv/forever-after"][0] > 0 and got["recv/forever-after"][1] >= 40
    assert got["send/50-satisfied"][0] == 0 and 3 <= got["send/50-satisfied"][1] < 50


def test_dead_partner_and_unknown_ids():
    out = ipctest("dead")
    for what in ("send", "call", "recvfrom", "task"):
        m = re.search(rf"dead {what} r=(-?\d+) ticks=(\d+)", out)
        assert m and int(m.group(1)) == E_DEAD, (what, out[-1500:])
        assert int(m.group(2)) >= 10     # really blocked until the partner exited
    assert re.search(rf"dead reply r={E_DEAD}\b", out)
    # a child task exited while its threads waited in our queues (one for our reply)
    assert "dead killed-partners ok" in out


def test_access_control_grant_reply_right_delegation():
    ipctest("perm")


@pytest.mark.parametrize("dts", ["on", "off"])
def test_long_messages_page_crossing_bad_pointers_2big(dts):
    ipctest("buf", dts)


# Expected event orders (see prio_case in tests/guest/ipctest/prio.c): 'a'/'b' before/after the main
# thread's IPC to L (priority 50, blocked receiving), 'L' when L gets the message, 'H' when
# the other ready thread runs.
PRIO_EXPECTED = {
    "on": {"call-higher-ready": "aHLb", "call-lower-ready": "aLbH", "call-equal-ready": "aLbH",
           "send-equal": "aLbH", "send-lower": "abLH", "reply-higher-ready": "csHdt"},
    "off": {"call-higher-ready": "aHLb", "call-lower-ready": "aLbH", "call-equal-ready": "aHLb",
            "send-equal": "abLH", "send-lower": "abLH", "reply-higher-ready": "csHdt"},
}


@pytest.mark.parametrize("dts", ["on", "off"])
def test_priority_rule_and_direct_switch(dts):
    # Under icount, so the orders cannot depend on how fast the host runs QEMU: without it,
    # on a loaded host, "call-equal-ready" with dts off once came out aLbH in make test
    # (likely a timer tick inside the case; not traced). Under icount the run repeats.
    out = ipctest("prio", dts, icount=True)
    got = dict(re.findall(rf"prio (\S+) dts={dts} order=(\w+)", out))
    # With DTS the partner runs at once unless a higher-priority thread is ready (then that
    # one runs first, "aHLb"); without DTS an equal-priority ready thread goes first.
    assert got == PRIO_EXPECTED[dts]


@pytest.mark.parametrize("dts", ["on", "off"])
def test_storm_a_million_messages_64_threads(dts):
    # No wall-clock assertion (timing goals live in benchmarks): the boot's timeout catches a
    # hang; about 4 s on the development machine.
    out = ipctest("storm 48 16 20834", dts, timeout=150)
    m = re.search(r"storm threads=(\d+) messages=(\d+) replies=(\d+) ticks=\d+ tsc=\d+ errors=(\d+)", out)
    assert m, out[-2000:]
    threads, messages, replies, errors = map(int, m.groups())
    assert threads >= 64 and messages >= 1_000_000 and errors == 0
    assert replies == 48 * (20834 // 2)      # every call's reply arrived and checked out


def test_storm_across_tasks():
    """Servers in a child task: every message and reply switches address spaces (slower
    under TCG, hence fewer messages)."""
    out = ipctest("storm 48 16 5000 tasks", timeout=150)
    m = re.search(r"storm tasks threads=(\d+) messages=(\d+) replies=(\d+) ticks=\d+ errors=(\d+)", out)
    assert m, out[-2000:]
    threads, messages, replies, errors = map(int, m.groups())
    assert threads == 64 and messages == 48 * 5000 and replies == 48 * 2500 and errors == 0


# Deterministic mode: the guest TSC counts instructions, so a round trip has one exact cost.
# Measured (commit 2dbf811, default build) with ipcbench: call + reply_recv between two tasks
# 713 instructions with DTS (the fastpath), 1,155 without; between two threads 699 / 1,137.
# The bounds allow ~10 % before the test calls it a regression.
# Measured 638 / 620 (DTS on) and 1,130 / 1,108 (DTS off) at the fastpath tuning; ~+7 %.
DIFF_SEEDS = range(1, 9)
DIFF_STEPS = 300


@functools.cache
def diff_lines(fastpath: str, probes: bool = False) -> dict[str, list[str]]:
    """The differential runs' results, per worker slot (and the peer, and the end states)
    in the order each produced them: only the interleaving between threads may vary.
    With probes (`pcnt stat`), ipc.c's fastpath() runs under its probe instead of the
    assembly one (ipcfast.S)."""
    prefix = "pcnt,stat," if probes else ""
    cmds = ";".join(f"{prefix}ipctest,diff,{seed},{DIFF_STEPS}" for seed in DIFF_SEEDS)
    status, out, _ = run_to_halt({"ipc_fastpath": fastpath, "run": cmds}, timeout=240,
                                 icount=True)
    assert status == 0 and "PANIC" not in out, out[-3000:]
    assert out.count("ipctest diff ok") == len(DIFF_SEEDS), out[-3000:]
    fast = [int(n) for n in re.findall(r"^\s+(\d+)\s+ipc_fastpath\b", out, re.M)]
    assert (sum(fast) > 100) if probes and fastpath == "on" else not fast, out[-3000:]
    groups: dict[str, list[str]] = {}
    for seed_out in out.split("ipctest diff ok")[:-1]:
        for line in seed_out.splitlines():
            if line.startswith("DIFF "):
                key = "end" if line.startswith("DIFF end") else line.split()[1].split(".")[0]
                groups.setdefault(key, []).append(line)
    return groups


def test_fastpath_matches_general_path_on_random_sequences():
    """The slow path is the fastpath's oracle: randomised sequences of every IPC operation
    (flags, timeouts, dead partners, denied sends, priority changes, a cross-task peer;
    tests/guest/ipctest/diff.c) give identical results and final states with the fastpath
    on and off. Injecting a fastpath bug (a reply right not used up, a caller not queued
    for E_DEAD) makes the outputs differ."""
    on, off = diff_lines("on"), diff_lines("off")
    assert on == off
    results = [line.split()[3:5] for key, lines in on.items() if key not in ("end", "peer")
               for line in lines if " r=" in line]
    ok = lambda op: sum(1 for o, r in results if o == op and not r.startswith("r=-"))
    errors = {r for _, r in results if r.startswith("r=-")}
    # the mix reaches the fastpath's cases and the errors around them
    assert ok("call") > 200 and ok("reply_recv") > 80, (ok("call"), ok("reply_recv"))
    assert {"r=-5", "r=-7", "r=-8", "r=-9", "r=-10", "r=-11"} <= errors, errors
    assert sum(1 for line in on["peer"] if line.endswith("r=-7")) > 20


def test_probed_c_fastpath_matches_general_path():
    """With pcnt probes on, ipc.c's fastpath() in C takes the fastpath's cases (the
    assembly one declines at its gate): the same oracle holds it."""
    assert diff_lines("on", probes=True) == diff_lines("off")


@pytest.mark.parametrize("fastpath", ["on", "off"])
def test_sse_state_survives_ipc_switches(fastpath):
    """Lazy x87/SSE switching: client and server threads each keep their own pattern in
    xmm0-15 across 2,000 call / reply_recv switches (fastpath and general path); every 3rd
    or 4th round one side leaves the registers alone, so ownership moves in all orders."""
    status, out, _ = run_to_halt({"ipc_fastpath": fastpath, "run": "schedtest,fpuipc"},
                                 timeout=120)
    assert "fpuipc ok rounds=2000" in out, out[-2000:]
    assert status == 0


# measured 242 / 232 (DTS on: the assembly fastpath), 1,063 / 1,045 (off), + ~3 %; the
# DTS-on bounds are issue 15's goals (tasks <= 250, threads <= 240). With SMP scheduling
# (per-CPU run queues, the fastpath taking the kernel lock at its gate): 249 / 237 and
# 1,102 / 1,080 (off: wake placement and per-CPU queues in C), bounds for off + ~3 %.
# 1,151 / 1,133 with the scheduler's on-CPU protocol and its own locks (docs/smp.md "Done:
# wake-ups and switches without the BKL": the wait for and the release of on_cpu, the
# state test under the queue's lock), bounds for off + ~3 %.
# 1,059 / 1,041 with a switch to a thread blocked in IPC building no switch frame
# (entry.S swtch_to_tf) and finish_switch a leaf, bounds for off + ~3 %.
# 1,014 / 998 with calls and reply_recvs made without the BKL, dispatched before it is
# taken (docs/smp.md, "Design: IPC's per-endpoint state", step 4), bounds for off + ~3 %;
# 1,021 / 1,005 with the partner's slot compared before any lock is taken.
# 986 / 970 with lock_partner inlined (its partner test a constant function), bounds for
# off + ~3 %; 992 / 976 at the end of that session (code layout).
ROUNDTRIP_BOUND = {("on", "tasks"): 250, ("on", "threads"): 240,
                   ("off", "tasks"): 1016, ("off", "threads"): 999}
# the halves of a DTS-on round trip (measured 125 + 119 tasks, 120 + 114 threads), + ~3 %
HALF_BOUND = {("call", "tasks"): 129, ("reply", "tasks"): 123,
              ("call", "threads"): 124, ("reply", "threads"): 118}


@pytest.mark.parametrize("dts", ["on", "off"])
def test_icount_round_trip_stays_below_bound(dts):
    status, out, records = run_to_halt({"dts": dts, "run": "ipcbench,roundtrip,1000"},
                                       timeout=90, icount=True)
    assert status == 0, out[-2000:]
    results = [r for r in records if r.get("type") == "result"]
    rows = {r["scenario"]: r for r in results if r["test"] == "roundtrip"}
    halves = {(r["test"], r["scenario"]): r for r in results if r["test"] != "roundtrip"}
    assert set(rows) == {"tasks", "threads"}, records
    assert set(halves) == set(HALF_BOUND), records
    for row in results:
        assert row["bench"] == "ipc" and row["dts"] == dts and row["pcnt_probes"] is False
        assert row["unit"] == "tsc" and row["n"] == 1000 and row["threads"] == 0
        assert 50 < row["min"] <= row["median"] <= row["max"]
    for scenario, row in rows.items():
        assert row["median"] <= ROUNDTRIP_BOUND[(dts, scenario)], row
        # each half costs about half a round trip (the server's two TSC reads between)
        half_sum = sum(halves[(t, scenario)]["median"] for t in ("call", "reply"))
        assert row["median"] - 10 < half_sum < row["median"] + 40, (row, halves)
    assert {"type": "end", "bench": "ipc", "status": 0} in records
    # the fastpath (DTS on) is what makes the round trip cheap
    if dts == "on":
        assert rows["tasks"]["median"] < 0.4 * ROUNDTRIP_BOUND[("off", "tasks")]
        for key, row in halves.items():
            assert row["median"] <= HALF_BOUND[key], row


# A forwarded Linux null system call (ipcbench fwd, docs/unix.md "Forwarding"), DTS on:
# measured 290 round trip, halves 136 (trap -> server) + 152 (answer -> Linux thread) on
# the fastpath (283 = 133 + 148 before the GS base and the user_ctx bit); 854 (419 + 433)
# through the general path before it, 844 now with ipc_fastpath=off. Bounds + ~3 %, the
# call's raised by 2 (2026-11-28) for the push of the caller on its server's reply list
# (docs/smp.md, "Design: IPC's per-endpoint state": 298 = 140 + 156 -> 300 = 142 + 156).
# A task with routed calls (docs/unix.md, "Calls without the server lock") is told apart
# by its fwd_fast_server, 0, whose slot's lock is always busy: no test on this path.
FWD_BOUND = {"fwd": 300, "fwd_call": 142, "fwd_reply": 157}


def fwd_rows(**options) -> dict[str, dict]:
    status, out, records = run_to_halt({"run": "ipcbench,fwd,1000", **options}, timeout=90,
                                       icount=True)
    assert status == 0, out[-2000:]
    rows = {r["test"]: r for r in records if r.get("type") == "result"}
    assert set(rows) == set(FWD_BOUND), records
    for row in rows.values():
        assert row["bench"] == "ipc" and row["scenario"] == "linux" and row["n"] == 1000
        assert row["pcnt_probes"] is False and row["unit"] == "tsc"
        assert 50 < row["min"] <= row["median"] <= row["max"]
    assert {"type": "end", "bench": "ipc", "status": 0} in records
    return rows


def test_icount_forwarded_call_stays_below_bound():
    """The forwarding fastpath (ipcfast.S: fwd_fastpath and fast_answer) makes a forwarded
    null call cost about a third of the general path's."""
    fast, general = fwd_rows(), fwd_rows(ipc_fastpath="off")
    for test, bound in FWD_BOUND.items():
        assert fast[test]["median"] <= bound, fast[test]
        assert fast[test]["median"] < 0.4 * general[test]["median"], (fast[test], general[test])
    # each half costs about half a round trip (the server's two TSC reads between)
    half_sum = fast["fwd_call"]["median"] + fast["fwd_reply"]["median"]
    assert fast["fwd"]["median"] - 10 < half_sum < fast["fwd"]["median"] + 40


def test_icount_oneway_dts_skips_the_ready_queue():
    """P1's effect in miniature: with 3 busy threads a one-way send -> recv without DTS
    waits about one time slice per busy thread; with DTS it does not."""
    hz = 10000
    medians = {}
    for dts in ("on", "off"):
        status, out, records = run_to_halt(
            {"dts": dts, "hz": str(hz), "run": "ipcbench,busy,3,50;ipcbench,table1,4,20"},
            timeout=120, icount=True)
        assert status == 0, out[-2000:]
        rows = [r for r in records if r.get("type") == "result"]
        assert [r["scenario"] for r in rows] == ["busy_wait", "busy_wait", "sleep_busy", "sleep"]
        assert all(r["test"] == "oneway" and r["dts"] == dts and r["hz"] == hz for r in rows)
        assert [(r["threads"], r["n"]) for r in rows] == [(3, 50), (4, 20), (4, 20), (4, 20)]
        assert sum(1 for r in records if r == {"type": "end", "bench": "ipc", "status": 0}) == 2
        medians[dts] = [r["median"] for r in rows]
    slice_instr = 1_000_000_000 // hz
    busy3_on, busy4_on, mix_on, _ = medians["on"]
    busy3_off, busy4_off, mix_off, _ = medians["off"]
    assert busy3_on < 2000 and busy4_on < 2000 and mix_on < 2000
    assert 2.5 * slice_instr < busy3_off < 4 * slice_instr
    assert 3.5 * slice_instr < busy4_off < 5 * slice_instr
    assert 1.5 * slice_instr < mix_off < busy4_off
