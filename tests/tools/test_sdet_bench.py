"""`./ondol bench sdet` (tools/ondol/benchmarks.py, tools/ondol/sdet.py): one boot per UNIX
server form (IK first), the Linux peer beside them; the rows' arithmetic and shape, not
the workload's numbers (tests/test_sdet.py runs the workload)."""
import pytest

from ondol import OndolError, benchmarks, sdet, sdetmodel


def record(users, instructions, calls=100, threads=10, spaces=9):
    return {"type": "result", "bench": "sdet", "test": "sdet", "users": users,
            "instructions": instructions, "syscalls": calls, "thread_switches": threads,
            "as_switches": spaces}


@pytest.fixture
def fake_peer(monkeypatch):
    calls = []

    def peer_records(build, quick, icount):
        calls.append((quick, icount))
        return [{**record(1, 200, calls=-1, threads=7, spaces=-1)},
                {"type": "trace", "bench": "sdet", "users": 1, "syscalls": 120}]
    monkeypatch.setattr(sdet, "peer_records", peer_records)
    monkeypatch.delenv("ONDOL_PEER", raising=False)
    return calls


def test_one_boot_per_form_with_the_bench_as_init():
    full, quick = benchmarks.get("sdet"), benchmarks.get("sdet", quick=True)
    assert [c.options for c in full.configs] == [
        {"unix": f, "linux_init": "/sdet/bench-full"} for f in ("ik", "mk")]
    assert {c.options["linux_init"] for c in quick.configs} == {"/sdet/bench-quick"}
    assert sdet.bench_script(sdet.QUICK) == b"#!/bin/sh\nexec /sdet/bench 1 4\n"
    assert full.icount and full.paper == "P0.table2"
    with pytest.raises(OndolError, match="no --quick form"):
        benchmarks.get("ipc", quick=True)


def test_rows_ratios_linux_and_p0(fake_peer):
    bench = benchmarks.get("sdet", quick=True)
    ik = bench.rows([record(1, 250), record(4, 1000)], bench.configs[0])
    mk = bench.rows([record(1, 300), record(4, 1250)], bench.configs[1])
    assert fake_peer == [(True, True)]                          # the peer boots once
    linux = [r for r in ik if r["unix"] == "linux"]
    assert linux[0]["syscalls"] == 120 and linux[0]["as_sw"] is None   # from the traced round
    assert linux[0]["thread_sw"] == 7 and "window" not in linux[0]
    by = {(r["unix"], r["users"]): r for r in ik + mk}
    assert by["ik", 1]["vs_linux"] == 1.25 and by["mk", 1]["vs_linux"] == 1.5
    assert by["mk", 1]["mk_ik"] == round(250 / 300, 3) and by["ik", 1]["mk_ik"] is None
    assert by["mk", 4]["mk_ik"] == 0.8 and by["mk", 4]["vs_linux"] is None
    assert by["mk", 4]["instr_per_script"] == 312 and by["mk", 4]["scripts_per_1e9"] == 3.2e6
    assert by["ik", 4]["p0_syscalls"] == 30771 and by["ik", 4]["p0_ctxt"] == 3377
    assert by["mk", 4]["p0_ctxt"] == 38741 and by["mk", 4]["window"] == 4


def window(kernel, server, user):
    """A cache window: (instructions, l2 misses, modelled cycles) per domain; the MK
    server is a task of the user domain, as the kernel marks it."""
    def counts(i, l2, cycles):
        return {"instructions": i, "l1i_misses": 0, "l1d_misses": 0, "itlb_misses": 0,
                "l2_misses": l2, "modelled_cycles": cycles}
    user_total = [a + b for a, b in zip(user, server)]
    tasks = [{"name": sdetmodel.SERVER_TASK, "kind": "user", **counts(*server)}] if server[0] else []
    return {"domains": {"kernel": counts(*kernel), "user": counts(*user_total)}, "tasks": tasks,
            "total": counts(*[a + b for a, b in zip(kernel, user_total)])}


def test_cache_outputs_split_the_server_and_model_throughput(tmp_path):
    doc = {"cache": "pentiumpro,l2=off", "mode": "icount", "commit": "x", "results": [
        {"unix": "ik", "users": 4, "cache": window((600, 60, 1800), (0, 0, 0), (400, 4, 600))},
        {"unix": "mk", "users": 4, "cache": window((600, 60, 1800), (100, 20, 400),
                                                   (400, 4, 600))}]}
    path, points = sdetmodel.cache_outputs(doc, tmp_path)
    assert path.name == "sdet-cache-pentiumpro-l2off.md"
    assert points.name == "sdet-cache-pentiumpro-l2off.json"
    text = path.read_text()
    assert "| mk | 4 | UNIX server | 0.091 | 0.0 | 0.0 | 0.0 | 0.2 | 4.0 | – |" in text
    assert "| mk | 4 | user | 0.364 | 0.0 | 0.0 | 0.0 | 0.01 | 1.5 | – |" in text
    assert "| ik | 4 | UNIX server" not in text
    ik_hour = 4 / (2400 / sdetmodel.CLOCK_HZ / 3600)
    assert f"| ik | 4 | all | 1.0 | 0.0 | 0.0 | 0.0 | 0.064 | 2.4 | {round(ik_hour, 1)} |" in text
    assert "| 4 | 0.8571 |" in text                     # 2400 / 2800 modelled cycles
    assert sdetmodel.cache_outputs({"results": [{"unix": "ik", "users": 1}]}, tmp_path) == []
