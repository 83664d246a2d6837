"""Per-domain cache-model figures (tools/ondol/cachetable.py)."""
from ondol import cachetable

WINDOW = {
    "geometry": {"name": "pentiumpro"},
    "domains": {"kernel": {"instructions": 2000, "l1i_misses": 40, "l1d_misses": 10,
                           "l2_misses": 4, "itlb_misses": 0, "dtlb_misses": 2,
                           "modelled_cpi": 1.5},
                "user": {"instructions": 500, "l1i_misses": 5, "l1d_misses": 0,
                         "l2_misses": 0, "itlb_misses": 20, "dtlb_misses": 20,
                         "modelled_cpi": 2.0},
                "server": {"instructions": 0}},
    "tasks": [{"name": "ipcbench", "kind": "user", "instructions": 500, "l1i_misses": 5,
               "itlb_misses": 20, "dtlb_misses": 20, "modelled_cpi": 2.0}],
}
ROW = {"test": "roundtrip", "dts": "on", "ipcs": 10, "cache": WINDOW, "median": 700}


def test_per_ipc_and_per_instruction_figures():
    rows = cachetable.domain_rows([ROW, {"test": "no window"}], ("test", "dts"))
    by_domain = {r["domain"]: r for r in rows}
    assert list(by_domain) == ["kernel", "user:ipcbench", "user (all)"]   # empty server left out
    k = by_domain["kernel"]
    assert k["insns/IPC"] == 200 and k["L1I/IPC"] == 4 and k["DTLB/IPC"] == 0.2
    assert k["L1I/insn"] == 40 / 2000 and k["modelled CPI"] == 1.5
    assert by_domain["user:ipcbench"]["ITLB/IPC"] == 2


def test_rows_without_ipc_count_give_only_per_instruction_rates():
    row = dict(ROW)
    del row["ipcs"]
    k = cachetable.domain_rows([row], ("test",))[0]
    assert k["insns/IPC"] is None and k["L2/insn"] == 4 / 2000
    assert "insns/IPC" not in cachetable.columns(("test",), per_ipc=False)


def test_markdown_has_both_tables():
    doc = {"key": ["test", "dts"], "results": [ROW], "cache": "pentiumpro", "mode": "icount",
           "commit": "abc"}
    text = cachetable.markdown(doc)
    assert text.count("| test | dts | domain |") == 2
    assert "| roundtrip | on | kernel | 200 | 4 | 1 | 0.4 | 0 | 0.2 | 1.5 |" in text
    assert cachetable.markdown({"results": [{"test": "x"}]}).startswith("(no cache windows")


def test_ipc_cache_benchmark_covers_issue_5_first_use():
    from ondol import benchmarks
    bench = benchmarks.get("ipc-cache")
    points = {(c.params["dts"], c.params["threads"]) for c in bench.configs}
    assert points == {("on", 0), ("on", 200), ("off", 0), ("off", 200)}
    assert all(c.command.startswith("ipcbench cacheroundtrip ") for c in bench.configs)
