"""`ondol compare` and `ondol report`."""
import json
import re

import pytest

from ondol import OndolError, benchmarks, compare, plot, report, results
from ondol.figure import Figure, Ours, Published
from ondol.cli import main


def doc(name="ipc", mode="icount", medians=None, key=("scenario", "threads")):
    medians = medians or {("busy", 0): 400, ("busy", 30): 1000}
    rows = [{"test": "pingpong", "scenario": s, "threads": t, "dts": "on",
             "unit": results.TSC_UNITS[mode], "median": m, "min": m, "max": m * 2, "n": 5}
            for (s, t), m in medians.items()]
    return {"benchmark": name, "description": "test", "commit": "abc", "qemu": "7.2",
            "mode": mode, "options": {"hz": "100"}, "cache": None, "date": "today",
            "host": {"name": "h"}, "paper": "P1.table2", "key": list(key), "boots": [],
            "results": rows}


def test_ratios_match_rows_by_key():
    a = doc()
    b = doc(medians={("busy", 30): 1500, ("busy", 0): 200, ("busy", 60): 7})
    columns, rows, warnings = compare.compare(a, b)
    assert columns == ["scenario", "threads", "A median", "B median", "B/A"]
    ratios = {(r["scenario"], r["threads"]): r["B/A"] for r in rows}
    assert ratios == {("busy", 0): 0.5, ("busy", 30): 1.5, ("busy", 60): None}
    assert warnings == []


def test_key_is_inferred_when_not_recorded():
    a, b = doc(), doc(medians={("busy", 0): 800, ("busy", 30): 1000})
    del a["key"]
    assert compare.key_fields(a) == ["test", "scenario", "threads", "dts"]
    assert compare.compare(a, b)[1][0]["B/A"] == 2.0


def test_mixed_modes_are_flagged():
    warnings = compare.compare(doc(), doc(mode="tsc"))[2]
    assert any("mode differs" in w for w in warnings)
    assert any("different units" in w for w in warnings)


def test_compare_command_prints_ratios(tmp_path, capsys):
    a, b = tmp_path / "a.json", tmp_path / "b.json"
    a.write_text(json.dumps(doc()))
    b.write_text(json.dumps(doc(medians={("busy", 0): 1000, ("busy", 30): 2500})))
    assert main(["compare", str(a), str(b)]) == 0
    out = capsys.readouterr().out
    assert "2.5" in out and "1,000" in out


def test_compare_rejects_non_result_files(tmp_path, capsys):
    bad = tmp_path / "x.json"
    bad.write_text("[1]")
    assert main(["compare", str(bad), str(tmp_path / "missing.json")]) == 1
    assert "is not an ondol result file" in capsys.readouterr().err


def test_report_has_sections_figures_tables_and_paper_numbers(tmp_path):
    for d in (doc(), doc(name="null", key=("test",), medians={("busy", 0): 120})):
        d["paper"] = None if d["benchmark"] == "null" else d["paper"]
        for row in d["results"]:
            row["series"] = "dts on"        # the ipc plot groups its lines by this field
            row["table"] = "P1 table 2"     # P1's Table 2 figure selects these rows
        results.write(d, tmp_path)
        plot.draw(d, benchmarks.get(d["benchmark"]).plot, tmp_path)
    (tmp_path / "unrelated.json").write_text('{"not": "a result"}')

    html = report.write(tmp_path).read_text()
    sections = re.findall(r'<section id="([^"]+)"><h2>', html)
    assert sections == ["P0", "P1", "P2", "P3", "P4", "other"]
    p1 = html[html.index('<section id="P1">'):html.index('<section id="P2">')]
    # P1: the declared figures inline, first; then the tables; the conditions last.
    figures = re.findall(r'<figure id="([^"]+)"><svg', p1)
    assert figures == [f.id for f in benchmarks.get("ipc").figures]
    assert p1.index("<figure") < p1.index("<table") < p1.index("Conditions of ipc.json")
    assert "with DTS the one-way IPC latency stays flat" in p1
    assert "data:image/png" not in html and "<?xml" not in html
    other = html[html.index('<section id="other">'):]
    assert '<figure id="plot-null"><svg' in other    # no figure declared: the generic plot
    assert "No ondol results for this paper yet" in html  # P0, P2, P3, P4
    assert "1,133,000,000" in p1 and "1,186" in p1      # P1 Table 2, no DTS / DTS at 200
    assert "122,732" in html and "1,151.92" in html     # P0 Table 2 and throughput
    assert "49,852" in html and "10,986" in html        # P2 Table 2, P3 copy to user
    assert "1.5x throughput" in html                    # P4
    assert "instructions (icount)" in html


def test_report_without_results_is_an_error(tmp_path):
    with pytest.raises(OndolError, match="no result files"):
        report.write(tmp_path)


def test_papers_tables_are_rectangular_and_referenced_tables_exist():
    papers = report.load_papers()
    assert sorted(papers) == ["P0", "P1", "P2", "P3", "P4"]
    for paper in papers.values():
        for table in paper["tables"]:
            assert all(len(row) == len(table["columns"]) for row in table["rows"]), table["id"]
    for bench in benchmarks.BENCHMARKS:
        if bench.paper:
            pid, _, tid = bench.paper.partition(".")
            assert tid in [t["id"] for t in papers[pid]["tables"]], bench.name


def test_plot_refuses_rows_without_the_plotted_field(tmp_path):
    d = doc()
    del d["results"][1]["threads"]
    with pytest.raises(OndolError, match="a result row has no 'threads' field"):
        plot.draw(d, benchmarks.get("ipc").plot, tmp_path)


def test_a_new_benchmark_adds_its_figure_by_declaring_it(tmp_path, monkeypatch):
    """No report code knows the figure: declaring it on the benchmark is enough."""
    figure = Figure(id="p2-calls", paper="P2", title="Calls per function", caption="c",
                    kind="bar", x="function", xlabel="function", axes="twin",
                    series=(Published("P2", "P2.table2", column="calls"),
                            Ours("ondol", {"test": "calls"}, y="count")))
    bench = benchmarks.Benchmark(name="alloc", description="d", configs=(), key=("function",),
                                 columns=("function", "count"),
                                 plot=benchmarks.Plot(kind="bar", x="function"),
                                 paper="P2.table2", figures=(figure,))
    monkeypatch.setattr(benchmarks, "BENCHMARKS", (*benchmarks.BENCHMARKS, bench))
    d = doc(name="alloc")
    d["paper"] = "P2.table2"
    d["results"] = [{"test": "calls", "function": f, "count": c, "unit": "calls"}
                    for f, c in (("malloc", 900), ("free", 800))]
    results.write(d, tmp_path)
    html = report.write(tmp_path).read_text()
    p2 = html[html.index('<section id="P2">'):html.index('<section id="P3">')]
    assert '<figure id="p2-calls"><svg' in p2 and "Calls per function" in p2
    assert "No ondol results for this paper yet" not in p2
