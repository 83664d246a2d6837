"""The `ipc` benchmark entry (tools/ondol/benchmarks.py): its boots, P1 columns, plot
series and the Linux peer rows, against the fake QEMU."""
import json

import pytest

from ondol import benchmarks, peer
from ondol.cli import main

ROW = {"type": "result", "bench": "ipc", "test": "oneway", "scenario": "busy_wait",
       "threads": 0, "dts": "${dts}", "unit": "tsc", "median": 441, "min": 441, "max": 900,
       "n": 1000, "cmd": "${run}", "hz_seen": "${hz}"}
END = {"type": "end", "bench": "ipc", "status": 0}


def peer_record(test, median):
    return {"type": "result", "bench": "ipc", "test": test, "unit": "instructions (icount)",
            "median": median, "min": median, "max": median + 10, "n": 2000,
            "modes": [[median, 2000]], "kernel": "linux"}


@pytest.fixture
def fake_peer(monkeypatch):
    """Replaces the Linux peer boot; records the arguments of every call."""
    calls = []

    def run_peer(tests, n, icount=True, **kw):
        calls.append({"tests": list(tests), "n": n, "icount": icount})
        return [{"type": "hello", "kernel": "linux"},
                peer_record("linux_pipe_roundtrip", 13039),
                peer_record("linux_futex_handoff", 10143),
                peer_record("linux_futex_handoff_proc", 12685),
                {"type": "end", "bench": "peer", "status": 0}]
    monkeypatch.setattr(peer, "run_peer", run_peer)
    monkeypatch.delenv("ONDOL_PEER", raising=False)
    return calls


def test_configurations_cover_round_trips_and_both_p1_tables():
    bench = benchmarks.get("ipc")
    by_table = {}
    for config in bench.configs:
        by_table.setdefault(config.params["table"], []).append(config)
        assert config.options["dts"] == config.params["dts"]
    assert [c.command for c in by_table["round trip"]] == ["ipcbench roundtrip 2000"] * 2
    assert all("hz" not in c.options for c in by_table["round trip"])
    assert [c.command for c in by_table["P1 table 1"]] == ["ipcbench table1 50 1000"] * 2
    # forwarded Linux system calls: round trip and halves, DTS on and off
    assert [(c.command, c.params["dts"]) for c in by_table["forwarded"]] == [
        ("ipcbench fwd 1000", "on"), ("ipcbench fwd 1000", "off")]
    table2 = {(c.params["dts"], c.params["threads"]): c for c in by_table["P1 table 2"]}
    assert set(table2) == {(d, t) for d in ("on", "off")
                           for t in (0, 30, 60, 90, 120, 150, 180, 200)}
    assert table2[("off", 200)].command == "ipcbench busy 200 1000"
    # the one-way boots shorten the time slice so that n = 1000 fits in minutes
    assert all(c.options["hz"] == "10000" for c in by_table["P1 table 1"] + by_table["P1 table 2"])
    assert bench.key == ("test", "scenario", "threads", "dts") and bench.paper == "P1.table2"
    assert bench.plot.logy and bench.plot.x == "threads"


@pytest.mark.parametrize("row, expected", [
    ({"table": "P1 table 2", "scenario": "busy_wait", "threads": 30, "dts": "on"}, 843),
    ({"table": "P1 table 2", "scenario": "busy_wait", "threads": 200, "dts": "off"}, 1133000000),
    ({"table": "P1 table 2", "scenario": "busy_wait", "threads": 0, "dts": "off"}, 456),
    ({"table": "P1 table 1", "scenario": "sleep_busy", "threads": 50, "dts": "off"}, 120000000),
    ({"table": "P1 table 1", "scenario": "sleep", "threads": 50, "dts": "on"}, 299),
    ({"table": "P1 table 1", "scenario": "busy_wait", "threads": 50, "dts": "on"}, 1392),
    ({"table": "round trip", "scenario": "tasks", "threads": 0, "dts": "on"}, None),
    ({"table": "P1 table 2", "scenario": "busy_wait", "threads": 45, "dts": "on"}, None),
])
def test_p1_column_is_the_paper_number_for_the_same_point(row, expected):
    config = benchmarks.Config(command="x", params={"table": row.pop("table")})
    (out,) = benchmarks.ipc_rows([{"test": "oneway", **row}], config)
    assert out["p1_cycles"] == expected


def test_plot_series_keep_table2_lines_apart_from_the_rest():
    rows = [{"table": "P1 table 2", "dts": "on"}, {"table": "P1 table 2", "dts": "off"},
            {"table": "P1 table 1", "dts": "on"}, {"table": "round trip", "dts": "off"},
            {"table": "round trip", "dts": "n/a", "kernel": "linux"},
            {"table": "one-way halves", "dts": "on"}, {"table": "forwarded", "dts": "on"}]
    assert [benchmarks._series(r) for r in rows] == [
        "table 2, DTS on", "table 2, DTS off", "table 1 (3 scenarios), DTS on",
        "round trips, ondol", "round trips, Linux", "one-way halves (call, reply), ondol",
        "forwarded Linux calls (round trip, halves), ondol"]


def test_round_trip_halves_get_their_own_table():
    config = benchmarks.Config(command="x", params={"table": "round trip", "dts": "on"})
    rows = benchmarks.ipc_rows([{"test": t, "scenario": "tasks", "threads": 0}
                                for t in ("roundtrip", "call", "reply")], config)
    assert [r["table"] for r in rows if r.get("kernel") != "linux"] == [
        "round trip", "one-way halves", "one-way halves"]


@pytest.mark.parametrize("flag, icount", [([], True), (["--no-icount"], False)])
def test_bench_ipc_boots_every_configuration_and_adds_the_peer_once(scratch, fake_qemu, fake_peer,
                                                                    flag, icount):
    fake_qemu.stream(ROW, END)
    assert main(["bench", "ipc", "--no-build", *flag]) == 0
    doc = json.loads((scratch / "results" / "ipc.json").read_text())
    assert len(fake_qemu.calls()) == len(doc["boots"]) == 22
    ondol_rows = [r for r in doc["results"] if r.get("kernel") != "linux"]
    linux_rows = [r for r in doc["results"] if r.get("kernel") == "linux"]
    assert len(ondol_rows) == 22
    commands = {r["cmd"] for r in ondol_rows}
    assert "ipcbench,busy,200,1000" in commands and "ipcbench,roundtrip,2000" in commands
    assert "ipcbench,fwd,1000" in commands
    assert {r["hz_seen"] for r in ondol_rows if r["cmd"].startswith("ipcbench,busy")} == {"10000"}
    # the peer ran once, in the same mode as the ondol boots, for three round trips
    assert fake_peer == [{"tests": ["pipe", "futex", "futex_proc"], "n": 2000, "icount": icount}]
    assert sorted(r["scenario"] for r in linux_rows) == [
        "linux futex procs", "linux futex threads", "linux pipe procs"]
    assert all(r["test"] == "roundtrip" and r["dts"] == "n/a" and r["threads"] == 0
               and "modes" not in r for r in linux_rows)
    unit = "instructions (icount)" if icount else "TSC ticks"
    assert {r["unit"] for r in ondol_rows} == {unit}
    assert all("series" in r and "p1_cycles" in r for r in doc["results"])
    assert (scratch / "results" / "ipc.png").stat().st_size > 0
    for fig in benchmarks.get("ipc").figures:     # P1's figures, declared beside the bench
        assert (scratch / "results" / f"{fig.id}.svg").read_text().count("<path") > 20


def test_peer_failure_is_a_note_not_an_error(scratch, fake_qemu, monkeypatch, capsys):
    def broken(*args, **kw):
        raise peer.PeerError("QEMU failed: fake")
    monkeypatch.setattr(peer, "run_peer", broken)
    monkeypatch.delenv("ONDOL_PEER", raising=False)
    fake_qemu.stream(ROW, END)
    assert main(["bench", "ipc", "--no-build"]) == 0
    assert "no Linux peer rows for ipc: QEMU failed: fake" in capsys.readouterr().err
    doc = json.loads((scratch / "results" / "ipc.json").read_text())
    assert len(doc["results"]) == 22


def test_peer_can_be_switched_off(scratch, fake_qemu, fake_peer, monkeypatch):
    monkeypatch.setenv("ONDOL_PEER", "off")
    fake_qemu.stream(ROW, END)
    assert main(["bench", "ipc", "--no-build"]) == 0
    assert fake_peer == []
