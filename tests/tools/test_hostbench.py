"""`ondol bench alloc --host` (tools/ondol/hostbench.py): the ratios it reports, its
figures and its errors; the real runs are exercised by tests/test_malloc_host.py."""
import pytest

from ondol import hostbench
from ondol.cli import main


def _row(workload, allocator, median, rss):
    return {"workload": workload, "allocator": allocator, "threads": 4, "median": median,
            "peak_rss_kib": rss, "insns_per_op": 100.0}


def test_ratios_are_against_the_same_workload():
    rows = [_row("churn", "glibc", 2.0, 100), _row("churn", "mimalloc", 1.0, 50),
            _row("churn", "ondol", 1.5, 55), _row("sizes", "glibc", 4.0, 10),
            _row("sizes", "mimalloc", 4.0, 10), _row("sizes", "ondol", 2.0, 12)]
    hostbench._ratios(rows)
    ondol = {r["workload"]: r for r in rows if r["allocator"] == "ondol"}
    assert ondol["churn"]["vs_glibc"] == 0.75 and ondol["churn"]["vs_mimalloc"] == 1.5
    assert ondol["sizes"]["vs_mimalloc"] == 0.5 and ondol["sizes"]["rss_vs_mimalloc"] == 1.2
    assert hostbench._median_ratio(rows, "mimalloc") == {"time": 1.0, "peak_rss": 1.15}


def test_one_figure_per_workload(tmp_path):
    rows = [_row(w, a, 1.0, 10) for w in ("churn", "trace:gcc") for a in ("glibc", "ondol")]
    hostbench._ratios(rows)
    doc = {"results": rows, "commit": "0123456789abcdef"}
    written = {p.name for p in hostbench.plots(doc, tmp_path)}
    assert written == {"alloc-host-churn.png", "alloc-host-churn.svg",
                       "alloc-host-trace-gcc.png", "alloc-host-trace-gcc.svg"}


def test_only_alloc_has_a_host_side(capsys):
    assert main(["bench", "ipc", "--host", "--no-build"]) == 1
    assert "no host side for benchmark 'ipc'" in capsys.readouterr().err


@pytest.mark.parametrize("values,q,expected", [([3, 1, 2], 0.5, 2), ([1, 2, 3, 4], 0.9999, 4)])
def test_percentile(values, q, expected):
    assert hostbench.percentile(values, q) == expected
