"""`./ondol bench unix` (tools/ondol/benchmarks.py, tools/ondol/unixbench.py,
tools/unixbench/unixbench.c): one boot per UNIX server form, the Linux peer beside them;
the shape of its table, not its numbers."""
import json
import re
from pathlib import Path

import pytest

from ondol import benchmarks, unixbench
from ondol.cli import main

REPO = Path(__file__).resolve().parents[2]
TESTS = ("getppid", "open_read", "stat", "pipe", "fork", "fork_exec", "fork_exec_dyn",
         "mmap_file")


def guest_row(test, median):
    return {"type": "result", "bench": "unix", "test": test, "unit": "tsc", "median": median,
            "min": median, "max": median, "n": 5}


@pytest.fixture
def fake_peer(monkeypatch):
    calls = []

    def peer_records(build, quick, icount):
        calls.append({"quick": quick, "icount": icount})
        return [{**guest_row(t, 2000), "unit": "instructions (icount)"} for t in TESTS]
    monkeypatch.setattr(unixbench, "peer_records", peer_records)
    monkeypatch.delenv("ONDOL_PEER", raising=False)
    return calls


def test_one_boot_per_form_with_the_program_as_init():
    bench = benchmarks.get("unix")
    assert [(c.options, c.params) for c in bench.configs] == [
        ({"unix": f, "linux_init": "/bench/unixbench"}, {"unix": f, "probes": "off"})
        for f in ("mk", "ik")]
    assert bench.key == ("test", "unix") and bench.icount
    quick = benchmarks.unix_benchmark(quick=True)
    assert {c.options["linux_init"] for c in quick.configs} == {"/bench/unixbench-quick"}


def test_rows_pair_each_form_with_linux_and_the_ratio(fake_peer):
    bench = benchmarks.unix_benchmark(quick=True)
    mk = bench.rows([guest_row(t, 3000) for t in TESTS], bench.configs[0])
    ik = bench.rows([guest_row("getppid", 1000)], bench.configs[1])
    assert fake_peer == [{"quick": True, "icount": True}]      # the peer boots once
    linux = [r for r in mk if r["kernel"] == "linux"]
    assert sorted(r["test"] for r in linux) == sorted(TESTS)
    assert all(r["unix"] == "linux" and r["ratio"] is None for r in linux)
    ours = [r for r in mk if r["kernel"] == "ondol"]
    assert all(r["unix"] == "mk" and r["linux"] == 2000 and r["ratio"] == 1.5 for r in ours)
    (getppid,) = ik
    assert getppid["unix"] == "ik" and getppid["ratio"] == 0.5
    assert getppid["label"] == "getppid ik"


def test_without_the_peer_the_linux_columns_stay_empty(monkeypatch):
    monkeypatch.setenv("ONDOL_PEER", "off")
    bench = benchmarks.unix_benchmark(quick=True)
    rows = bench.rows([guest_row("stat", 1000)], bench.configs[0])
    assert [(r["kernel"], r["linux"], r["ratio"]) for r in rows] == [("ondol", None, None)]


def test_the_peer_init_runs_the_program_with_its_records_on_com2():
    script = unixbench.peer_init(quick=True).decode()
    assert "mount -t tmpfs tmpfs /tmp" in script
    assert "/bench/unixbench-quick >/dev/ttyS1" in script
    assert script.rstrip().endswith("poweroff -f")


def test_bench_unix_end_to_end_table_shape(tmp_path, monkeypatch, capsys):
    """The real kernel in both forms and the real peer, in the quick mode: every operation
    has a row per form and one Linux row, all in instructions; the table shows them; and
    the switches per operation are exact (SWITCHES_PER_OP)."""
    if not (REPO / "build" / "ondol.bin").exists():
        pytest.skip("build/ondol.bin not built")
    monkeypatch.setenv("ONDOL_ROOT", str(REPO))
    monkeypatch.delenv("ONDOL_PEER", raising=False)
    quick_bench = benchmarks.unix_benchmark(quick=True)
    monkeypatch.setattr(benchmarks, "get", lambda name, quick=False: quick_bench)
    assert main(["bench", "unix", "--no-build", "--results", str(tmp_path)]) == 0
    doc = json.loads((tmp_path / "unix.json").read_text())
    rows = doc["results"]
    assert sorted((r["test"], r["unix"]) for r in rows) == sorted(
        (t, f) for t in TESTS for f in ("mk", "ik", "linux"))
    assert {r["unit"] for r in rows} == {"instructions (icount)"}
    assert all(0 < r["min"] <= r["median"] <= r["max"] and r["n"] >= 3 for r in rows)
    assert all(r["linux"] and r["ratio"] for r in rows if r["kernel"] == "ondol")
    assert [b["options"]["unix"] for b in doc["boots"]] == ["mk", "ik"]
    # the options in force are on record with every boot: form, DTS, fastpath (probes off)
    settings = [b["guest"]["settings"] for b in doc["boots"]]
    assert [s["unix"] for s in settings] == ["mk", "ik"]
    assert all("dts" in s and "ipc_fastpath" in s for s in settings)
    assert all(r["probes"] == "off" for r in rows if r["kernel"] == "ondol")
    out = capsys.readouterr().out
    header = next(line for line in out.splitlines() if "median" in line)
    assert re.findall(r"\w+", header) == ["test", "unix", "median", "min", "max", "n",
                                          "linux", "ratio", "thread_sw", "as_sw"]
    assert (tmp_path / "unix.svg").stat().st_size > 0
    check_switches({(r["test"], r["unix"]): r for r in rows})


# Thread and address-space switches per operation on ondol (the kernel's counters through
# /proc/ondol/syscalls): in MK each forwarded call is exactly one switch to the server and
# one back, each between address spaces; in IK a call switches nothing.
SWITCHES_PER_OP = {
    ("getppid", "mk"): 2, ("stat", "mk"): 2, ("open_read", "mk"): 6, ("pipe", "mk"): 4,
    ("getppid", "ik"): 0, ("stat", "ik"): 0, ("open_read", "ik"): 0, ("pipe", "ik"): 0,
}


def check_switches(rows):
    """The calls that do not block make exactly the switches above, thread and
    address-space alike; fork switches in both forms (the parent waits for its child); the
    Linux rows carry /proc/stat's context switches and no CR3 count."""
    for key, per_op in SWITCHES_PER_OP.items():
        assert (rows[key]["thread_sw"], rows[key]["as_sw"]) == (per_op, per_op), rows[key]
        assert rows[key]["thread_switches"] == per_op * rows[key]["n"]
    for form in ("mk", "ik"):
        assert rows[("fork", form)]["thread_sw"] >= 2 and rows[("fork", form)]["as_sw"] >= 2
    linux = [r for r in rows.values() if r["kernel"] == "linux"]
    assert all(r["as_sw"] is None and r["thread_sw"] is not None for r in linux)
    assert rows[("fork", "linux")]["thread_sw"] >= 1

