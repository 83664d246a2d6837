"""The host side of issue 14's mmu=off comparison (allocmmu.py), traces taken on ondol
(alloctrace.py) and the hardware sweep (allocsweep.py), on made-up data: which boots
compare the modes, how a result stream is split into traces, what Table 2 counts, and
which points each sweep panel plots."""
import pytest

from ondol import allocmmu, allocsweep, alloctrace, benchmarks


def test_alloc_mmu_boots_every_configuration_in_both_modes():
    bench = benchmarks.get("alloc-mmu")
    modes = [c.options["mmu"] for c in bench.configs]
    assert modes == ["on"] * 3 + ["off"] * 3
    assert [c.command for c in bench.configs[:3]] == [c.command for c in bench.configs[3:]]
    assert set(bench.stream_names) == {"alloc", "ipc"} and "mmu" in bench.key


def test_ipc_rows_go_to_their_own_table():
    bench = benchmarks.get("alloc-mmu")
    ipc = next(c for c in bench.configs if c.command.startswith("ipcbench"))
    rows = bench.rows([{"bench": "ipc", "test": "roundtrip", "scenario": "tasks",
                        "median": 247}], ipc)
    assert rows == [{"mmu": "on", "bench": "ipc", "test": "roundtrip", "scenario": "tasks",
                     "median": 247, "table": "ipc"}]


def _sizes(mmu, malloc, touch):
    return [{"mmu": mmu, "table": "sizes", "test": t, "size": 16, "round": "cold", "mean": v}
            for t, v in (("malloc", malloc), ("touch", touch))]


def test_comparison_sums_malloc_and_first_touch_and_gives_ratios():
    doc = {"mode": "icount", "results": _sizes("on", 200, 100) + _sizes("off", 250, 20) +
           [{"mmu": m, "table": "ipc", "test": "roundtrip", "scenario": "tasks", "median": v}
            for m, v in (("on", 200), ("off", 150))]}
    text = allocmmu.comparison(doc)
    assert "| malloc + first touch 16 B (cold), per block | 300 | 270 | 0.900 | 0.95 |" in text
    assert "| IPC round trip between tasks, median | 200 | 150 | 0.750 | 0.30 |" in text
    assert "| IPC round trip between threads, median | – | – | – |" in text


def test_a_stream_splits_into_traces_and_skips_records():
    stream = (b'{"type":"hello"}\n#@ /tmp/tcc.7.trace\n# ondol alloc trace v1\nm 1 16\n'
              b'f 1\n{"type":"end"}\n#@ /tmp/sort.9.trace\nc 1 2 8\n')
    assert alloctrace.split(stream) == {"/tmp/tcc.7.trace": ["# ondol alloc trace v1",
                                                             "m 1 16", "f 1"],
                                        "/tmp/sort.9.trace": ["c 1 2 8"]}


def test_table2_counts_calls_per_function(tmp_path):
    trace = tmp_path / "t.trace"
    trace.write_text("# ondol alloc trace v1\nm 1 16\nc 2 4 8\nr 1 3 32\na 4 64 100\nf 3\nf 2\n")
    assert alloctrace.table2(trace) == {"malloc": 1, "calloc": 1, "realloc": 1, "memalign": 1,
                                        "free": 2}


def test_largest_process_trace_kept_per_program(tmp_path):
    parts = {"/tmp/make.3.trace": ["m 1 8"], "/tmp/make.4.trace": ["m 1 8", "f 1"],
             "/tmp/tcc.5.trace": ["m 1 1"]}
    found = alloctrace._keep_largest(parts, tmp_path)
    assert set(found) == {"trace:ondol-make", "trace:ondol-tcc"}
    assert found["trace:ondol-make"].read_text() == "m 1 8\nf 1\n"


def test_trace_boot_runs_sdets_steps_with_each_command_recorded():
    text = alloctrace.run_script()
    for program in alloctrace.SDET_PROGRAMS:
        assert f"{alloctrace.PRELOAD} ondol_trace=/tmp/{program}.%p.trace {program} " in text
    assert "ondol_trace=/tmp/col.%p.trace col -bx | grep -c ." in text   # col1 as it is
    assert "pr -l 20 -h shopping -D date doc/old.txt doc/new.txt" in text
    assert "ondol_trace=/tmp/memo" not in text and "ondol_trace=/tmp/head" not in text


@pytest.mark.parametrize("param, xs", [("l1d", [8, 16, 32, 64]),
                                       ("l2", [0, 128, 256, 512, 2048]),
                                       ("mem", [35, 70, 140])])
def test_each_sweep_panel_has_the_base_point(param, xs):
    sweep = {"base": "pentiumpro", "points": [
        {"parameter": p, "geometry": g, "x": x, "cpi": {"qsort": float(i)}}
        for i, (p, g, x) in enumerate(allocsweep.GEOMETRIES)]}
    got_xs, series = allocsweep._series(sweep, param)
    assert got_xs == xs and len(series["qsort"]) == len(xs)
    base = allocsweep.GEOMETRIES.index(("l1d", "l1d_size=8k", 8))
    assert series["qsort"][xs.index(allocsweep.BASE_POINTS.get(param, 8))] == float(base)
