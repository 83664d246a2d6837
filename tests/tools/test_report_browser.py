"""The report as a reader sees it: results/report.html rendered by headless Chromium.

Inputs: a real `./ondol bench null` run, and tests/tools/data/ipc.json, the result file of
a real `./ondol bench ipc` run kept as test input (the full run takes minutes of QEMU).
These tests check the rendering, not the numbers."""
import shutil
import subprocess
from pathlib import Path

import pytest

from ondol import benchmarks, browser, report

REPO = Path(__file__).resolve().parents[2]
FIXTURE = Path(__file__).parent / "data" / "ipc.json"

NO_CHROMIUM = ("chromium is not installed and scripts/deps.sh could not install it "
               "(apt-get install chromium): the report cannot be rendered in a browser")
needs_chromium = pytest.mark.skipif(browser.find() is None, reason=NO_CHROMIUM)


def ondol(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([str(REPO / "ondol"), *args], capture_output=True, text=True,
                          timeout=600)


@pytest.fixture(scope="module")
def rendered(tmp_path_factory):
    """A results directory with both runs, its report with a screenshot, and what
    Chromium rendered."""
    if browser.find() is None:
        pytest.skip(NO_CHROMIUM)
    if not (REPO / "build" / "ondol.bin").exists():
        pytest.skip("build/ondol.bin not built (make test builds it first)")
    directory = tmp_path_factory.mktemp("results")
    shutil.copy(FIXTURE, directory / "ipc.json")
    # --no-build: `make test` has built the kernel already and must not recurse into make.
    proc = ondol("bench", "null", "--no-build", "--results", str(directory))
    assert proc.returncode == 0, proc.stderr
    proc = ondol("report", "--png", "--results", str(directory))
    assert proc.returncode == 0, proc.stderr
    return directory, browser.probe(directory / "report.html")


@needs_chromium
def test_every_figure_renders_as_a_drawn_svg(rendered):
    _, seen = rendered
    expected = [f.id for f in benchmarks.get("ipc").figures] + ["plot-null"]
    assert [f["id"] for f in seen["figures"]] == expected
    for fig in seen["figures"]:
        assert fig["kind"] == "svg" and fig["loaded"], fig
        assert fig["width"] > 300 and fig["height"] > 200, fig
        assert fig["marks"] > 20, fig       # axes, ticks, lines: a drawn plot, not a box


@needs_chromium
def test_no_error_in_the_page_or_the_console(rendered):
    _, seen = rendered
    assert seen["errors"] == [] and seen["console"] == []


@needs_chromium
def test_the_page_shows_every_section_and_its_conditions(rendered):
    _, seen = rendered
    text = seen["text"]
    for pid, paper in report.load_papers().items():
        assert f"{pid}: {paper['title']}" in text
    assert "Other measurements" in text
    for fig in benchmarks.get("ipc").figures:
        assert fig.title in text
    assert "Conditions of ipc.json" in text and "Conditions of null.json" in text


@needs_chromium
def test_report_png_is_a_screenshot_of_the_whole_page(rendered):
    directory, seen = rendered
    png = (directory / "report.png").read_bytes()
    assert png[:8] == b"\x89PNG\r\n\x1a\n"
    width, height = int.from_bytes(png[16:20], "big"), int.from_bytes(png[20:24], "big")
    assert (width, height) == (browser.WIDTH, seen["height"])


@needs_chromium
def test_the_probe_sees_broken_images_and_script_errors(tmp_path):
    """The checks above can fail: a page with a missing image and a throwing script."""
    page = tmp_path / "broken.html"
    page.write_text("<!doctype html><html><head><title>t</title></head><body>"
                    '<figure id="f"><img src="missing.png" alt="x"></figure>'
                    "<script>undefinedFunction();</script></body></html>")
    seen = browser.probe(page)
    assert seen["figures"][0]["loaded"] is False
    assert any("missing.png" in e for e in seen["errors"])
    assert any("undefinedFunction" in e for e in seen["errors"])
