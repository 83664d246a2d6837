"""The differential suite on ondol (tools/ondol/suite_ondol.py): one boot per form of the
UNIX server (unix=mk, a task; unix=ik, in the kernel) runs every program of tests/linux/ from the root archive the Linux peer ran, and each compared
output line matches the peer's or is listed, with its reason, in tests/linux/differences.txt.
The list is the ratchet: a new difference fails until it is fixed or listed. The run is
cached by a hash of the archive, ondol's kernel and boot archive, and the runner."""
from pathlib import Path

import pytest

from ondol import linuxsuite, suite_ondol
from ondol.linuxsuite import Outcome

REPO = Path(__file__).resolve().parents[2]
PROGRAMS = linuxsuite.programs()


@pytest.fixture(scope="module", params=["mk", "ik"])
def ondol_pass(request):
    try:
        return request.param, suite_ondol.suite_on_ondol(REPO / "build", request.param)[0]
    except linuxsuite.SuiteError as e:
        pytest.fail(f"differential suite on ondol: {e}")


def test_every_program_ran_on_ondol(ondol_pass):
    form, outcomes = ondol_pass
    assert [p.name for p in PROGRAMS] == list(outcomes), form
    assert outcomes["fuzz"].status == 0, form


def test_ondol_prints_what_linux_prints_or_the_difference_is_listed(peer_passes, ondol_pass):
    form, outcomes = ondol_pass
    t = suite_ondol.tally(peer_passes[0], outcomes, linuxsuite.load_differences())
    print(f"suite on ondol ({form}): matched {t.matched} listed {t.listed} of {t.total} lines")
    assert t.failing == [], form
    assert t.matched > 500


# ---- the tally's rules, on made-up data -----------------------------------------------

PEER = Outcome("p", "a: 1\nb: 2\ncases 2 failed 0\n", 0)


def tally_of(ondol_text, status, differences):
    t = suite_ondol.Tally()
    suite_ondol.compare_program("p", PEER, Outcome("p", ondol_text, status), differences, t)
    return t


def test_a_listed_case_carries_its_totals_line_and_status():
    t = tally_of("a: 1\nFAIL b: 3 (want 2)\ncases 2 failed 1\n", 1, {"p/b": "why"})
    assert (t.matched, t.listed, t.failing) == (1, 2, [])


def test_an_unlisted_difference_or_status_fails():
    t = tally_of("a: 1\nFAIL b: 3 (want 2)\ncases 2 failed 1\n", 1, {})
    assert len(t.failing) == 3 and t.matched == 1
    t = tally_of(PEER.output, 9, {})
    assert t.failing == ["p: status 0 vs 9"] and t.matched == 3


def test_a_missing_program_fails():
    t = suite_ondol.Tally()
    suite_ondol.compare_program("p", PEER, None, {}, t)
    assert t.failing == ["p: missing on ondol"]
