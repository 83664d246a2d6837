"""Servers in MK and IK placement (docs/servers.md): the echo server (servers/echo/) built
as a user task and into the kernel from one source; the boot option echo=mk|ik picks the
placement, and one client binary (user/echocli.c) must get the same answers from both,
error cases included. Under icount the round trips have exact costs, bounded here."""
import pytest

from qemu_harness import run_to_halt


def echo_boot(placement: str, command: str = "echocli,check", **kw) -> tuple[str, list[dict]]:
    """Boot with echo=PLACEMENT, run `ps` and the client; return console text and records
    after checking that the client reported no failure."""
    status, out, records = run_to_halt({"echo": placement, "run": f"ps;{command}"},
                                       timeout=90, **kw)
    fails = [line for line in out.splitlines() if line.startswith("FAIL")]
    assert not fails, "\n".join(fails) + "\n--- console tail:\n" + out[-2000:]
    assert "PANIC" not in out and status == 0, out[-3000:]
    return out, records


def answers(out: str) -> list[str]:
    return [line for line in out.splitlines() if line.startswith("echocli ")]


def test_mk_and_ik_give_the_same_answers():
    mk, _ = echo_boot("mk")
    ik, _ = echo_boot("ik")
    assert "echocli check ok" in mk and "echocli check ok" in ik
    assert answers(mk) == answers(ik)
    # the guest's own checks, re-read where a wrong value would be easy to miss
    got = dict(line.split(" r=") for line in answers(mk) if " r=" in line)
    assert got["echocli ping-value"] == "42" and got["echocli add-7-total"] == "12"
    assert got["echocli bad-op"] == "-1"                              # E_NOSYS
    assert got["echocli reverse-bad-text"] == "-2"                    # E_FAULT
    assert got["echocli reverse-oversize"] == "-11"                   # E_2BIG
    assert 'echocli reverse-text "revres ,olleh" len=13' in answers(mk)
    # the placement: MK has the server task the kernel started; IK runs it in the kernel
    assert "echosrv" in mk and "echosrv" not in ik


def test_without_the_option_no_server_runs():
    """Boots that do not ask for a server run exactly as before: no task, no answer."""
    status, out, _ = run_to_halt({"run": "ps;echocli,check"}, timeout=90)
    assert status == 0 and "echosrv" not in out
    assert "FAIL echocli: cannot connect to echo: -6" in out          # E_NOENT
    status, out, _ = run_to_halt({"echo": "kernel", "run": "echocli,check"}, timeout=90)
    assert "option echo=kernel is not one of off|mk|ik; using off" in out
    assert "cannot connect to echo: -6" in out


# Exact costs under icount (instructions, client's rdtsc around the stub), measured when
# the servers arrived: MK ping 2,144, reverse64 6,838; IK ping 493, reverse64 2,023. The
# MK calls take the IPC slow path (the server receives with a buffer). ~10 % headroom.
RPC_BOUND = {("mk", "ping"): 2360, ("mk", "reverse64"): 7520,
             ("ik", "ping"): 545, ("ik", "reverse64"): 2230}


def test_icount_rpc_round_trips_stay_below_bound():
    medians = {}
    for placement in ("mk", "ik"):
        _, records = echo_boot(placement, "echocli,bench,200", icount=True)
        rows = [r for r in records if r.get("type") == "result"]
        assert [r["test"] for r in rows] == ["ping", "reverse64"], records
        for row in rows:
            assert row["bench"] == "rpc" and row["placement"] == placement and row["n"] == 200
            assert row["median"] <= RPC_BOUND[(placement, row["test"])], row
            medians[(placement, row["test"])] = row["median"]
        assert {"type": "end", "bench": "rpc", "status": 0} in records
    # IK: no thread or address-space switch, so a call costs a fraction of MK's
    assert medians[("ik", "ping")] < medians[("mk", "ping")] / 2
    assert medians[("ik", "reverse64")] < medians[("mk", "reverse64")] / 2
