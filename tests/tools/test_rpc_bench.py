"""The rpc entry of the benchmark registry (./ondol bench rpc, docs/servers.md): one boot
per placement, each running the same client, rows labelled by placement and call."""
from ondol import benchmarks


def test_rpc_boots_each_placement_with_the_same_client():
    bench = benchmarks.get("rpc")
    assert [(c.command, c.options, c.params) for c in bench.configs] == [
        ("echocli bench 1000", {"echo": "mk"}, {"placement": "mk"}),
        ("echocli bench 1000", {"echo": "ik"}, {"placement": "ik"}),
    ]
    assert bench.key == ("test", "placement") and bench.icount


def test_rpc_rows_name_each_bar_by_placement_and_call():
    bench = benchmarks.get("rpc")
    guest = [{"type": "result", "bench": "rpc", "test": "ping", "placement": "ik",
              "median": 493, "min": 493, "max": 493, "n": 1000}]
    (row,) = bench.rows(guest, bench.configs[1])
    assert row["call"] == "ik ping" and row["median"] == 493 and row["placement"] == "ik"
    assert bench.plot.x == "call"
