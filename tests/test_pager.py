"""Pagers (docs/memory.md, "Pagers"): a thread of the test program supplies the pages of a
region (tests/guest/pagertest.c); its answers, refusals, exit and bad answers; clones of a
task with a pager region. Frames and kernel objects must come back to baseline, and the
reverse map must agree with the page tables afterwards."""
import re

import pytest

from qemu_harness import boot
from test_user_programs import KILL_LINE, meminfo


@pytest.fixture(scope="module")
def shell():
    s = boot(lifetime=600)
    try:
        s.cmd("pagertest basic")        # warm-up: first use of the kernel-object caches
        yield s
        assert s.halt() == 0, "halt did not power off cleanly"
    finally:
        s.close()


def run(shell, mode):
    before = meminfo(shell)
    out = shell.cmd(f"pagertest {mode}", timeout=120)
    assert "pagertest ok" in out and "FAIL" not in out, out
    assert meminfo(shell) == before
    return out


@pytest.mark.parametrize("mode", ["basic", "clone", "bad", "errors"])
def test_pager_supplies_pages(shell, mode):
    out = run(shell, mode)
    assert "killed" not in out, out


@pytest.mark.parametrize("mode", ["refuse", "exit"])
def test_no_page_kills_with_a_report(shell, mode):
    out = run(shell, mode)
    kills = list(re.finditer(KILL_LINE, out))
    assert len(kills) == (1 if mode == "refuse" else 2), out
    for m in kills:
        assert m["name"] == "pagerchild" and "page fault" in m["cause"], out
        assert "no page from its pager" in m["cause"], out
        assert int(m["addr"], 16) >= 0x100000000000, out      # in the map area


def test_killing_a_thread_that_waits_for_its_pager(shell):
    out = run(shell, "kill")
    assert "killed task" not in out, out      # ended by SYS_TASK_KILL, not for a fault

