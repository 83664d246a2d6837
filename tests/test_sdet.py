"""The SDET-like workload (docs/sdet.md): two users at once, run by /sdet/check on ondol's
UNIX server in MK and IK form and on the Linux peer (the same archive, the same binaries),
print the same bytes: each user's output file and its md5sum (taken in the guest, so the
files themselves are compared byte for byte, not only the console's copy of them)."""
import re
import sys
from pathlib import Path

import pytest

from qemu_harness import BUILD, boot

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tools"))
from ondol import linuxsuite, sdet  # noqa: E402

USERS = 2


@pytest.fixture(scope="module")
def linux():
    """/sdet/check USERS on the Linux peer; building the archive first (under the
    suite's lock, as the other tests build it)."""
    try:
        linuxsuite.suite_on_peer(BUILD)
        return sdet.peer_check(BUILD, USERS)
    except (linuxsuite.SuiteError, sdet.SdetError) as e:
        pytest.fail(f"sdet on the peer: {e}")


def sums(text: str) -> list[str]:
    """The md5sum lines of a check's text."""
    return re.findall(r"^[0-9a-f]{32}  u\d+\.out$", text, re.M)


def test_scripts_cover_sdet_commands_in_per_user_orders():
    """Every user's script runs every step once (SDET's 29 commands among them), in an
    order of its own that the seed fixes."""
    names = sorted(s.name for s in sdet.steps())
    orders = [re.findall(r"^echo '== (\S+)'$", sdet.script(u), re.M) for u in (1, 2, 3)]
    assert all(sorted(o) == names for o in orders)
    assert len({tuple(o) for o in orders}) == 3
    assert sdet.script(2) == sdet.script(2)
    assert {s.command for s in sdet.steps()} == set(sdet.COMMANDS) and len(sdet.COMMANDS) == 29


@pytest.mark.parametrize("form", ["mk", "ik"])
def test_outputs_identical_to_linux(linux, form):
    with boot({"unix": form}, timeout=60, lifetime=900) as s:
        out = s.cmd(f"/sdet/check {USERS}", timeout=800).replace("\r", "")
    assert len(sums(linux)) == USERS, linux[-2000:]
    assert "== make1\ntcc -c -o main.o main.c" in linux     # the steps ran, make among them
    assert out == linux
