"""`./ondol bench vm` (tools/ondol/benchmarks.py, bench/vmbench.c, tools/peer/vm_ops.c):
one boot per rmap mode, the Linux peer beside it; the shape of its table, not its numbers."""
import json
import re
from pathlib import Path

import pytest

from ondol import benchmarks, peer
from ondol.cli import main

REPO = Path(__file__).resolve().parents[2]
TESTS = ("clone0", "clone64", "pagefault", "cowfault", "map16")


def guest_row(test, median):
    return {"type": "result", "bench": "vm", "test": test, "unit": "tsc", "median": median,
            "min": median, "max": median, "n": 5, "pages": 1}


@pytest.fixture
def fake_peer(monkeypatch):
    calls = []

    def run_peer(tests, n, icount=True, **kw):
        calls.append({"tests": list(tests), "n": n, "icount": icount, **kw})
        return [{"type": "hello", "kernel": "linux"},
                *({"type": "result", "bench": "vm", "test": peer.TESTS[t], "median": 2000,
                   "min": 2000, "max": 2100, "n": n, "unit": "instructions (icount)",
                   "modes": [[2000, n]], "kernel": "linux"} for t in tests),
                {"type": "end", "bench": "peer", "status": 0}]
    monkeypatch.setattr(peer, "run_peer", run_peer)
    monkeypatch.delenv("ONDOL_PEER", raising=False)
    return calls


def test_two_boots_per_rmap_mode_timed_and_under_the_probes():
    bench = benchmarks.get("vm")
    assert [(c.command, c.options, c.params) for c in bench.configs] == [
        (command, {"rmap": m}, {"rmap": m, "probes": probes})
        for m in ("global", "lock", "log")
        for command, probes in ((f"vmbench {benchmarks.VM_N}", "off"),
                                (f"pcnt stat vmbench probes {benchmarks.VM_PROBE_N}", "on"))]
    assert bench.key == ("test", "kernel", "rmap") and bench.icount
    assert set(benchmarks.VM_PEER_TESTS) == set(TESTS)
    assert all(short in peer.TESTS for short in benchmarks.VM_PEER_TESTS.values())


def test_rows_pair_each_ondol_figure_with_linux_and_the_ratio(fake_peer):
    bench = benchmarks.vm_benchmark(n=5, peer_n=7)
    first = bench.rows([guest_row(t, 1000) for t in TESTS], bench.configs[0])
    probed = bench.rows([guest_row("rmap_insert", 50)], bench.configs[1])
    later = bench.rows([guest_row("clone0", 3000)], bench.configs[4])
    # the peer boots once, with the first configuration
    assert fake_peer == [{"tests": list(benchmarks.VM_PEER_TESTS.values()), "n": 7,
                          "icount": True, "warmup": benchmarks.VM_PEER_WARMUP}]
    linux = [r for r in first if r["kernel"] == "linux"]
    assert sorted(r["test"] for r in linux) == sorted(TESTS)
    assert all(r["rmap"] == "n/a" and "modes" not in r and r["ratio"] is None for r in linux)
    ours = [r for r in first if r["kernel"] == "ondol"]
    assert all(r["rmap"] == "global" and r["linux"] == 2000 and r["ratio"] == 0.5 for r in ours)
    (insert,) = probed
    assert insert["probes"] == "on" and insert["linux"] is None and insert["ratio"] is None
    (log_row,) = later
    assert log_row["rmap"] == "log" and log_row["ratio"] == 1.5
    assert log_row["label"] == "clone0 ondol log"


def test_without_the_peer_the_linux_columns_stay_empty(monkeypatch):
    monkeypatch.setenv("ONDOL_PEER", "off")
    bench = benchmarks.vm_benchmark(n=5)
    rows = bench.rows([guest_row("map16", 1000)], bench.configs[0])
    assert [(r["kernel"], r["linux"], r["ratio"]) for r in rows] == [("ondol", None, None)]


def test_bench_vm_end_to_end_table_shape(tmp_path, monkeypatch, capsys):
    """The real kernel and the real peer, with few samples: every test has a row per rmap
    mode and one Linux row, all in instructions; the printed table shows them."""
    if not (REPO / "build" / "ondol.bin").exists():
        pytest.skip("build/ondol.bin not built")
    monkeypatch.setenv("ONDOL_ROOT", str(REPO))
    monkeypatch.delenv("ONDOL_PEER", raising=False)
    small = benchmarks.vm_benchmark(n=20, peer_n=20, probe_n=5)
    monkeypatch.setattr(benchmarks, "get", lambda name, quick=False: small)
    assert main(["bench", "vm", "--no-build", "--results", str(tmp_path)]) == 0
    doc = json.loads((tmp_path / "vm.json").read_text())
    rows = doc["results"]
    modes = ("global", "lock", "log")
    probes = [(p, "ondol", m) for p in ("rmap_insert", "rmap_remove") for m in modes]
    assert sorted((r["test"], r["kernel"], r["rmap"]) for r in rows) == sorted(
        [(t, "ondol", m) for t in TESTS for m in modes] + probes +
        [("rmap_apply", "ondol", "log")] + [(t, "linux", "n/a") for t in TESTS])
    assert {r["unit"] for r in rows} == {"instructions (icount)"}
    timed = [r for r in rows if not r.get("probe")]
    assert all(r["n"] == 20 and 0 < r["min"] <= r["median"] <= r["max"] for r in timed)
    # every probe sample is counted: 5 rounds of clone64 alone insert and remove 5 * 64
    assert all(r["n"] >= 5 * 64 and r["min"] <= r["median"] <= r["max"]
               for r in rows if r.get("probe"))
    assert all(r["linux"] and r["ratio"] for r in timed if r["kernel"] == "ondol")
    assert [b["options"]["rmap"] for b in doc["boots"]] == [m for m in modes for _ in (0, 1)]
    out = capsys.readouterr().out
    header = next(line for line in out.splitlines() if "median" in line)
    assert re.findall(r"\w+", header) == ["test", "kernel", "rmap", "median", "min", "max", "n",
                                          "linux", "ratio"]
    kernels = re.findall(r"^│ \w+\s+│ (\w+)\s+│", out, re.MULTILINE)
    assert sorted(kernels) == ["linux"] * len(TESTS) + ["ondol"] * (3 * len(TESTS) + 7)
    assert (tmp_path / "vm.svg").stat().st_size > 0
