"""The differential suite (tests/linux/, tools/ondol/linuxsuite.py) on the Linux peer: every
program ran and ended as suite.list says, its own checks pass on Linux (this validates the
suite), two runs print the same bytes, and the suite has at least 150 cases. Also the
runner's own pieces (frames, comparison, differences file, cache) on made-up data."""
import re

import pytest

from ondol import linuxsuite
from ondol.linuxsuite import Outcome

PROGRAMS = linuxsuite.programs()


@pytest.mark.parametrize("pass_no", [0, 1])
def test_every_program_ran_with_its_status(peer_passes, pass_no):
    outcomes = peer_passes[pass_no]
    assert [p.name for p in PROGRAMS] == list(outcomes)
    wrong = {p.name: outcomes[p.name].status for p in PROGRAMS
             if outcomes[p.name].status != p.status}
    assert wrong == {}


@pytest.mark.parametrize("pass_no", [0, 1])
def test_programs_own_checks_pass_on_linux(peer_passes, pass_no):
    for name, outcome in peer_passes[pass_no].items():
        lines = outcome.lines()
        assert [ln for ln in lines if ln.startswith("FAIL")] == [], name
        assert re.fullmatch(r"cases [1-9]\d* failed 0", lines[-1]), (name, lines[-1:])


def test_two_runs_print_the_same_bytes(peer_passes):
    first, second = peer_passes
    assert linuxsuite.compare(first, second) == []
    compared = [p.name for p in PROGRAMS if p.compare]
    assert [first[n].output for n in compared] == [second[n].output for n in compared]


def test_at_least_150_cases(peer_passes):
    assert linuxsuite.case_count(peer_passes[0]) >= 150


def test_fuzzer_finished_and_counted(peer_passes):
    for outcomes in peer_passes:
        head = outcomes["fuzz"].lines()[0]
        m = re.fullmatch(r"fuzz seed 1: calls 20000 denied (\d+) respawns (\d+)", head)
        assert m, head
        assert 0 < int(m[1]) < 20000 and int(m[2]) > 0


def test_malformed_elf_outcomes_on_linux(peer_passes):
    """What Debian's 6.1 kernel says (docs/unix.md lists the whole table)."""
    got = dict(ln.split(": ", 1) for ln in peer_passes[0]["execelf"].lines()[:-2])
    assert got["valid"] == "exit 42"
    # Linux never looks at e_ident[EI_CLASS] (load_elf_binary checks only e_machine).
    assert got["class32"] == got["bad_class"] == "exit 42"
    for name in ("empty", "text", "magic_only", "truncated_header", "truncated_phdrs",
                 "wrong_machine", "relocatable", "bad_phentsize", "phnum_zero",
                 "phnum_huge", "phoff_beyond_file", "script_no_interp", "interp_no_nul",
                 "interp_too_short"):
        assert got[name] == "-1 ENOEXEC", name
    assert got["interp_missing"] == got["script_missing_interp"] == "-1 ENOENT"
    assert got["interp_not_executable"] == got["interp_directory"] == "-1 EACCES"
    assert got["interp_not_elf"] == "-1 ELIBBAD"
    assert got["interp_outside_file"] == "-1 EIO"
    assert got["entry_outside"] == got["entry_zero"] == "killed by signal 11"
    assert len(got) == len(linuxsuite.elf_corpus())


def test_differences_file_is_well_formed():
    names = {p.name for p in PROGRAMS}
    for key, reason in linuxsuite.load_differences().items():
        prog, _, case = key.partition("/")
        assert prog in names and case and reason, key


# ---- the runner's pieces, on made-up data ---------------------------------------------

FRAMES = """@@pass 1
@@begin files_io
open missing: -1 ENOENT
cases 1 failed 0
@@end files_io 0
@@begin fuzz
noise 1
@@end fuzz 0
@@pass 2
@@begin files_io
open missing: -1 ENOENT
@@end files_io 1
@@done
"""


def test_parse_frames():
    passes = linuxsuite.parse(FRAMES)
    assert len(passes) == 2
    assert passes[0]["files_io"] == Outcome("files_io", "open missing: -1 ENOENT\ncases 1 failed 0\n", 0)
    assert passes[1]["files_io"].status == 1 and "fuzz" not in passes[1]


def _outcomes(io_text, status=0, fuzz="x"):
    return {"files_io": Outcome("files_io", io_text, status), "fuzz": Outcome("fuzz", fuzz, 0)}


def _all_present(d):
    """Outcomes for every compared program, the same everywhere but files_io."""
    base = {p.name: Outcome(p.name, "same: 1\n", 0) for p in PROGRAMS}
    base.update(d)
    return base


def test_compare_reports_a_differing_line_and_status():
    a = _all_present(_outcomes("open missing: -1 ENOENT\n"))
    b = _all_present(_outcomes("open missing: -1 EACCES\n", status=1))
    problems = linuxsuite.compare(a, b)
    assert problems == ["files_io: status 0 vs 1",
                        "files_io line 1: 'open missing: -1 ENOENT' vs 'open missing: -1 EACCES'"]


def test_compare_honours_differences_and_ignores_uncompared_programs():
    a = _all_present(_outcomes("open missing: -1 ENOENT\nx: 1\n", fuzz="one"))
    b = _all_present(_outcomes("FAIL open missing: -1 EACCES\nx: 1\n", fuzz="two"))
    assert linuxsuite.compare(a, b, {"files_io/open missing": "reason"}) == []
    assert linuxsuite.compare(a, b, {"files_io/*": "reason"}) == []
    assert len(linuxsuite.compare(a, b, {"files_io/other": "reason"})) == 1


def test_compare_reports_missing_programs_and_lines():
    a = _all_present(_outcomes("a: 1\nb: 2\n"))
    b = dict(_all_present(_outcomes("a: 1\n")))
    assert linuxsuite.compare(a, b) == ["files_io line 2: 'b: 2' vs '(none)'"]
    del b["files_io"]
    assert linuxsuite.compare(a, b) == ["files_io: missing on second"]


def test_run_cached_calls_the_target_once_per_content(tmp_path):
    calls = []

    def run(archive, build):
        calls.append(archive.read_bytes())
        return f"@@pass 1\n@@done {len(calls)}\n"

    kernel = tmp_path / "kernel"
    kernel.write_bytes(b"k1")
    fake = linuxsuite.Target("fake", run, lambda: [kernel])
    archive = tmp_path / "a.cpio"
    archive.write_bytes(b"one")
    first = linuxsuite.run_cached(fake, archive, tmp_path)
    assert linuxsuite.run_cached(fake, archive, tmp_path) == first
    archive.write_bytes(b"two")
    assert linuxsuite.run_cached(fake, archive, tmp_path) != first
    kernel.write_bytes(b"k2")
    linuxsuite.run_cached(fake, archive, tmp_path)
    assert calls == [b"one", b"two", b"two"]
    assert len(list((tmp_path / "linuxsuite" / "cache").glob("fake-*.txt"))) == 1
