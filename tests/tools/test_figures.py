"""Paper figures (tools/ondol/figure.py, plot.py): the series a declaration selects, that
every declared figure names real paper numbers, and how the figures are drawn."""
import json
import re
from pathlib import Path

import pytest

from ondol import benchmarks, plot, report
from ondol.figure import Figure, Ours, Published, paper_table, points

# Test input, not a measurement to trust: rows of a real `./ondol bench ipc` run.
FIXTURE = Path(__file__).parent / "data" / "ipc.json"


def ipc_rows() -> list[dict]:
    return json.loads(FIXTURE.read_text())["results"]


def line(*series, axes="twin") -> Figure:
    return Figure(id="t", paper="P1", title="t", caption="c", kind="line", x="threads",
                  xlabel="x", series=series, axes=axes, logy=True)


def test_published_row_gives_the_columns_as_numeric_x():
    got = points(Published("P1 DTS", "P1.table2", row="DTS"), line(), [], report.load_papers())
    assert got.published and (got.label, got.unit) == ("P1 DTS", "cycles")
    assert got.x == [0, 30, 60, 90, 120, 150, 180, 200]
    assert got.y == [378, 843, 1025, 1104, 1146, 1128, 1153, 1186]


def test_published_column_skips_missing_values():
    series = Published("uC/OS-II", "P1.table1", column="uC/OS-II")
    got = points(series, line(), [], report.load_papers())
    assert got.x == ["sleep & busy_wait", "sleep"] and got.y == [92000000, 650]


def test_ours_selects_rows_by_fields_sorts_by_x_and_spans_min_max():
    rows = [{"table": "T", "dts": "on", "threads": 30, "median": 5, "min": 4, "max": 9,
             "unit": "instructions (icount)"},
            {"table": "T", "dts": "on", "threads": 0, "median": 3, "min": 3, "max": 3},
            {"table": "T", "dts": "off", "threads": 0, "median": 7, "min": 7, "max": 7},
            {"table": "T", "dts": "on", "threads": 60, "median": 1, "min": 1, "max": 1,
             "kernel": "linux"}]
    got = points(Ours("on", {"table": "T", "dts": "on", "kernel": None}), line(), rows, {})
    assert not got.published and got.unit == "instructions (icount)"
    assert (got.x, got.y) == ([0, 30], [3, 5])
    assert got.span == ([0, 1], [0, 4])


def test_ours_renames_x_to_meet_the_papers_labels():
    rows = [{"scenario": "sleep_busy", "median": 2}]
    bar = Figure(id="b", paper="P1", title="t", caption="c", kind="bar", x="scenario",
                 xlabel="x", series=())
    got = points(Ours("o", {}, x_names={"sleep_busy": "sleep & busy_wait"}), bar, rows, {})
    assert got.x == ["sleep & busy_wait"] and got.span is None


@pytest.mark.parametrize("bench", [b for b in benchmarks.BENCHMARKS if b.figures],
                         ids=lambda b: b.name)
def test_declared_figures_name_real_paper_numbers(bench):
    papers = report.load_papers()
    for fig in bench.figures:
        assert fig.paper in papers and fig.kind in ("line", "bar")
        assert fig.axes in ("twin", "shared")
        for series in fig.series:
            if isinstance(series, Published):
                table = paper_table(papers, series.table)
                names = [r[0] for r in table["rows"]] if series.row else table["columns"]
                assert (series.row or series.column) in names, (fig.id, series.label)


def test_p1_figures_draw_every_series_from_a_real_run():
    fig_by_id = {f.id: f for f in benchmarks.get("ipc").figures}
    papers, rows = report.load_papers(), ipc_rows()
    for fig in fig_by_id.values():
        drawn = [points(s, fig, rows, papers) for s in fig.series]
        assert all(p.y for p in drawn), [p.label for p in drawn if not p.y]
    table2 = [points(s, fig_by_id["p1-table2"], rows, papers)
              for s in fig_by_id["p1-table2"].series]
    assert all(p.x == list(benchmarks.IPC_THREADS) for p in table2)


@pytest.mark.parametrize("fig_spec", benchmarks.get("ipc").figures, ids=lambda f: f.id)
def test_legend_sits_outside_the_axes_and_each_axis_names_its_unit(fig_spec):
    fig = plot._paper_figure(fig_spec, ipc_rows(), report.load_papers())
    fig.canvas.draw()
    renderer = fig.canvas.get_renderer()
    (legend,) = fig.legends
    box = legend.get_window_extent(renderer)
    for ax in fig.axes:
        assert not box.overlaps(ax.get_window_extent(renderer)), "legend over the data"
    labels = [ax.get_ylabel() for ax in fig.axes]
    plot.plt.close(fig)
    if fig_spec.axes == "twin":
        assert labels == ["paper [cycles]", "ondol [instructions (icount)]"]
    else:
        assert labels == ["instructions (icount)"]


def test_a_run_without_rows_for_a_series_still_draws_the_others():
    """P1's round trips absent (a partial run): the figure keeps the Linux series."""
    fig_spec = [f for f in benchmarks.get("ipc").figures if f.id == "ipc-roundtrip"][0]
    rows = [r for r in ipc_rows() if r.get("kernel") == "linux"]
    fig = plot._paper_figure(fig_spec, rows, report.load_papers())
    (legend,) = fig.legends
    assert [t.get_text() for t in legend.get_texts()] == ["Linux (peer)"]
    assert [p.get_facecolor() for p in fig.axes[0].patches][0][:3] == \
        plot.matplotlib.colors.to_rgb("C2")     # its own colour, not the first series'
    plot.plt.close(fig)


def test_figure_svg_is_reproducible_and_clip_ids_differ_between_figures():
    """Several figures sit inline in one page: a clip path id shared by two of them would
    clip the second with the first's rectangle."""
    first_spec, second_spec = benchmarks.get("ipc").figures[:2]
    papers, rows = report.load_papers(), ipc_rows()
    first = plot.figure_svg(first_spec, rows, papers)
    assert first == plot.figure_svg(first_spec, rows, papers)
    assert "<dc:date>" not in first
    second = plot.figure_svg(second_spec, rows, papers)
    clips = lambda svg: set(re.findall(r'<clipPath id="([^"]+)"', svg))
    assert clips(first) and clips(second) and not clips(first) & clips(second)
