"""The alloc entry of the benchmark registry (./ondol bench alloc, docs/alloc.md): per lock
kind a boot running mallocbench sizes under pcnt stat (kernel probes on) and boots running
mallocbench contend at 1 ms slices; rows labelled by the lock asked for, sizes labelled,
contention histograms split into one row per decade."""
from ondol import benchmarks

LOCKS = ("sleep-retry", "blocking", "lock-free")


def test_alloc_boots_each_lock_kind_for_sizes_and_contention():
    bench = benchmarks.get("alloc")
    configs = [(c.command, c.options, c.params) for c in bench.configs]
    assert configs[:3] == [("pcnt stat mallocbench sizes", {"malloc_lock": k}, {"lock": k})
                           for k in LOCKS]
    assert configs[3:9] == [(f"mallocbench contend {n} 100000",
                             {"malloc_lock": k, "hz": "1000"}, {"lock": k, "threads": n})
                            for n in (2, 4) for k in LOCKS]
    assert configs[9:] == [("mallocbench workloads", {"malloc_lock": "sleep-retry"},
                            {"lock": "sleep-retry"})]
    assert "lock" in bench.key and "bucket" in bench.key and bench.icount


def test_sizes_rows_keep_the_lock_asked_for_and_label_sizes():
    bench = benchmarks.get("alloc")
    guest = [{"type": "result", "bench": "alloc", "test": "malloc", "size": size,
              "round": "cold", "lock_in_force": "blocking", "median": 100, "min": 90,
              "max": 200, "n": 64, "mean": 120} for size in (16, 1024, 65536, 1 << 20)]
    rows = bench.rows(guest, bench.configs[2])
    assert [r["size_label"] for r in rows] == ["16", "1K", "64K", "1M"]
    assert all(r["lock"] == "lock-free" and r["lock_in_force"] == "blocking" and
               r["table"] == "sizes" for r in rows)
    assert rows[0]["series"] == "malloc, cold"
    assert bench.plot.where == {"table": "sizes", "lock": "sleep-retry"} and bench.plot.logx


def test_a_contention_row_brings_one_histogram_row_per_decade():
    bench = benchmarks.get("alloc")
    hist = [0, 399913, 31, 5, 13, 3, 3]
    guest = [{"type": "result", "bench": "alloc", "test": "contended", "threads": 2,
              "median": 112, "min": 11, "max": 21003760, "n": 400000, "hist": hist}]
    contention, *decades = bench.rows(guest, bench.configs[3])
    assert contention["table"] == "contention" and contention["lock"] == "sleep-retry"
    assert [r["count"] for r in decades] == hist
    assert [r["bucket"] for r in decades] == list(benchmarks.ALLOC_DECADES)
    assert all(r["table"] == "histogram" and r["threads"] == 2 and r["lock"] == "sleep-retry"
               for r in decades)


def test_workload_rows_bring_table2_rows_per_workload_and_in_all():
    bench = benchmarks.get("alloc")
    counts = {"malloc": 10, "calloc": 1, "realloc": 0, "free": 11, "mmap": 2, "munmap": 3}
    guest = [{"type": "result", "bench": "alloc", "test": "workload", "workload": name,
              **{f: n * k for f, n in counts.items()}} for name, k in (("a", 1), ("b", 2))]
    rows = bench.rows(guest, bench.configs[9])
    workloads = [r for r in rows if r["table"] == "workloads"]
    assert [r["workload"] for r in workloads] == ["a", "b"]
    table2 = {(r["workload"], r["function"]): r["count"] for r in rows if r["table"] == "table2"}
    assert len(table2) == 3 * 6
    assert table2[("b", "free")] == 22 and table2[("all", "free")] == 33
    assert table2[("all", "munmap")] == 9 and table2[("a", "calloc")] == 1


def test_alloc_cache_runs_the_workloads_under_their_own_bench_name():
    bench = benchmarks.get("alloc-cache")
    (config,) = bench.configs
    assert config.command == "mallocbench workloads alloc-cache"
    guest = [{"type": "result", "bench": "alloc-cache", "test": "workload", "workload": "a",
              "window": 1, "malloc": 1, "calloc": 0, "realloc": 0, "free": 1, "mmap": 0,
              "munmap": 0}]
    rows = bench.rows(guest, config)
    assert rows[0]["window"] == 1 and all(r["bench"] == "alloc-cache" for r in rows)
