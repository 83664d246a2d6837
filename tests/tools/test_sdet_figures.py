"""P0's figures from `./ondol bench sdet --cache pentiumpro[,l2=off]` (tools/ondol/sdetmodel.py,
the declarations in benchmarks.py): the points a cache run gives, how the L2-on and L2-off
runs meet in one figure, and that every figure shows P0's curves beside ondol's, labelled
modelled where the model made them. Host only: no QEMU."""
import json
import shutil
from pathlib import Path

import pytest

from ondol import benchmarks, plot, report, sdetmodel
from ondol.figure import Ours, Published, points

# Test input, not measurements to trust: two real full sweeps (commit 581c298), trimmed to
# 1 and 16 users and to the window fields the figures read.
DATA = Path(__file__).parent / "data"
L2_ON, L2_OFF = DATA / "sdet-pentiumpro.json", DATA / "sdet-pentiumpro-l2off.json"
MODEL_FIGURES = ("p0-fig2-throughput", "p0-mk-ik-throughput", "p0-mk-ik-misses", "p0-fig3-l1i",
                 "p0-fig4-l1d", "p0-fig5-itlb", "p0-fig6-l2", "p0-fig7-cpi",
                 "p0-fig8-l2off-throughput", "p0-fig9-l2off-cpi")


def load(path: Path) -> dict:
    return json.loads(path.read_text())


def window(doc: dict, form: str, users: int) -> dict:
    (row,) = [r for r in doc["results"] if (r["unix"], r["users"]) == (form, users)]
    return row["cache"]


@pytest.fixture
def results(tmp_path) -> Path:
    """A results directory as two runs leave it: the L2-off sweep's points recorded by its
    run, then the L2-on sweep's document (and its points) as sdet.json."""
    sdetmodel.cache_outputs(load(L2_OFF), tmp_path)
    sdetmodel.cache_outputs(load(L2_ON), tmp_path)
    shutil.copy(L2_ON, tmp_path / "sdet.json")
    return tmp_path


def figure_points(results: Path) -> dict[str, list]:
    bench = benchmarks.get("sdet")
    rows = bench.figure_input(load(results / "sdet.json"), results)
    papers = report.load_papers()
    return {fig.id: [(s, points(s, fig, rows, papers)) for s in fig.series]
            for fig in bench.figures}


def test_every_p0_figure_has_p0s_curves_and_ondols_from_both_runs(results):
    by_figure = figure_points(results)
    assert set(MODEL_FIGURES) <= set(by_figure)
    for fig_id in MODEL_FIGURES:
        drawn = by_figure[fig_id]
        paper = [p for s, p in drawn if isinstance(s, Published)]
        ours = [p for s, p in drawn if isinstance(s, Ours)]
        assert paper and ours, fig_id
        assert all(p.y for _, p in drawn), (fig_id, [p.label for _, p in drawn if not p.y])
        assert all(p.x == [1, 16] for p in ours), fig_id            # the fixture's users
        assert all(set(p.x) <= {1, 12, 16} for p in paper), fig_id


def test_p0s_numbers_come_from_its_text():
    papers = report.load_papers()
    fig = {f.id: f for f in benchmarks.get("sdet").figures}["p0-fig8-l2off-throughput"]
    got = {p.label: (p.x, p.y) for p in (points(s, fig, [], papers) for s in fig.series)
           if p.published}
    assert got == {"P0 IK, L2 off": ([1, 16], [102.24, 1334.79]),
                   "P0 MK, L2 off": ([1, 16], [101.1, 546.08])}


def test_modelled_series_say_so_and_the_icount_one_says_exact(results):
    for fig_id, drawn in figure_points(results).items():
        for series, got in drawn:
            if isinstance(series, Ours) and "model" in series.where:
                assert "modelled" in series.label and "modelled" in got.unit, (fig_id, got)
            elif isinstance(series, Ours) and series.where.get("basis") == "instructions":
                assert got.unit == "ratio MK/IK (icount, exact)", fig_id
            elif isinstance(series, Published):
                assert "modelled" not in got.unit and "modelled" not in got.label


def test_points_are_p0s_metrics_of_the_windows():
    on, off = load(L2_ON), load(L2_OFF)
    got = {(p["unix"], p["users"], p["domain"], p["metric"], p["l2"]): p
           for doc in (on, off) for p in sdetmodel.model_points(doc)}
    mk, ik = window(on, "mk", 16), window(on, "ik", 16)
    server = [t for t in mk["tasks"] if t["name"] == "unixsrv"][0]
    l1i = got["mk", 16, "UNIX server", "l1i", "on"]
    assert l1i["value"] == pytest.approx(100 * server["l1i_misses"] / mk["total"]["instructions"],
                                         rel=1e-3)
    assert l1i["unit"] == sdetmodel.MISS_UNIT and l1i["model"] == "pentiumpro"
    ratio = got["mk/ik", 16, "system", "throughput", "on"]["value"]
    assert ratio == pytest.approx(ik["total"]["modelled_cycles"] / mk["total"]["modelled_cycles"],
                                  rel=1e-3)
    assert 0.85 < ratio < 0.9 and got["mk/ik", 16, "system", "throughput", "off"]["value"] < ratio
    assert ("ik", 16, "UNIX server", "cpi", "on") not in got     # IK's server is the kernel
    assert got["ik", 1, "all", "l2", "off"]["value"] == 0        # no L2, no L2 lines in


def test_domains_add_up_to_the_whole_run():
    for p_all in (p for p in sdetmodel.model_points(load(L2_ON))
                  if p["domain"] == "all" and p["metric"] in ("l1i", "itlb", "cpi")):
        parts = [p["value"] for p in sdetmodel.model_points(load(L2_ON))
                 if p["domain"] not in ("all", "system") and (p["unix"], p["users"], p["metric"])
                 == (p_all["unix"], p_all["users"], p_all["metric"])]
        assert len(parts) == (3 if p_all["unix"] == "mk" else 2)
        assert sum(parts) == pytest.approx(p_all["value"], rel=0.01)


def test_the_documents_own_run_wins_over_a_recorded_one(results):
    doc = load(results / "sdet.json")
    for row in doc["results"]:                 # a rerun with other numbers, same model
        if isinstance(row.get("cache"), dict):
            row["cache"] = {**row["cache"], "total": {**row["cache"]["total"],
                            "modelled_cycles": 2 * row["cache"]["total"]["modelled_cycles"]}}
    rows = sdetmodel.figure_rows(doc, results)
    hourly = [r for r in rows if r.get("metric") == "throughput" and r.get("unix") == "ik"
              and r.get("users") == 16]
    assert sorted(r["l2"] for r in hourly) == ["off", "on"]      # one each, not two L2-on
    own = [r for r in hourly if r["l2"] == "on"][0]["value"]
    recorded = [p for p in load(results / "sdet-cache-pentiumpro.json")["points"]
                if (p["unix"], p["users"], p["metric"]) == ("ik", 16, "throughput")][0]
    assert own == pytest.approx(recorded["value"] / 2, abs=0.1)


def test_the_report_draws_the_p0_figures_from_both_runs(results, monkeypatch):
    drawn = {}

    def figure_svg(spec, rows, papers):        # matplotlib is tested elsewhere; it is slow
        drawn[spec.id] = rows
        return f"<svg><!-- {spec.id} --></svg>"
    monkeypatch.setattr(plot, "figure_svg", figure_svg)
    page = report.write(results).read_text()
    for fig_id in MODEL_FIGURES:
        assert f'<figure id="{fig_id}">' in page
        assert {r.get("l2") for r in drawn[fig_id]} >= {"on", "off"}
    assert "P0 Figure 8" in page and page.count("Conditions of sdet.json") == 1


def test_one_figure_draws_with_p0_beside_ondol(results):
    fig = {f.id: f for f in benchmarks.get("sdet").figures}["p0-fig9-l2off-cpi"]
    rows = benchmarks.get("sdet").figure_input(load(results / "sdet.json"), results)
    svg = plot.figure_svg(fig, rows, report.load_papers())
    assert "P0 MK server, L2 off" in svg and "ondol MK server, L2 off (modelled)" in svg
    assert "CPI, CPI (modelled)" in svg                       # one axis, both units
