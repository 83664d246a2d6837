"""The alloc entry of the benchmark registry (./ondol bench alloc, docs/alloc.md): one boot
per lock kind running mallocbench under pcnt stat (kernel probes on), rows labelled by the
lock asked for, a size label and a plot series."""
from ondol import benchmarks


def test_alloc_boots_each_lock_kind_with_the_probes_on():
    bench = benchmarks.get("alloc")
    assert [(c.command, c.options, c.params) for c in bench.configs] == [
        ("pcnt stat mallocbench sizes", {"malloc_lock": k}, {"lock": k})
        for k in ("sleep-retry", "blocking", "lock-free")]
    assert bench.key == ("test", "size", "round", "lock") and bench.icount


def test_alloc_rows_keep_the_lock_asked_for_and_label_sizes():
    bench = benchmarks.get("alloc")
    guest = [{"type": "result", "bench": "alloc", "test": "malloc", "size": size,
              "round": "cold", "lock_in_force": "blocking", "median": 100, "min": 90,
              "max": 200, "n": 64, "mean": 120} for size in (16, 1024, 65536, 1 << 20)]
    rows = bench.rows(guest, bench.configs[2])
    assert [r["size_label"] for r in rows] == ["16", "1K", "64K", "1M"]
    assert all(r["lock"] == "lock-free" and r["lock_in_force"] == "blocking" for r in rows)
    assert rows[0]["series"] == "malloc, cold"
    assert bench.plot.where == {"lock": "sleep-retry"} and bench.plot.logx
