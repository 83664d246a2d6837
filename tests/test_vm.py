"""Memory for processes (docs/memory.md), driven through the shell: regions and demand
paging, partial unmap and protect, placement, and the faults that must kill
(tests/guest/vmtest.c). Frames and kernel objects must come back to baseline."""
import re

import pytest

from qemu_harness import boot
from test_user_programs import KILL_LINE, meminfo


@pytest.fixture(scope="module")
def shell():
    s = boot(lifetime=600)
    try:
        s.cmd("vmtest all")             # warm-up: first use of the kernel-object caches
        yield s
        assert s.halt() == 0, "halt did not power off cleanly"
    finally:
        s.close()


@pytest.mark.parametrize("mode", ["demand", "split", "place"])
def test_vmtest(shell, mode):
    before = meminfo(shell)
    out = shell.cmd(f"vmtest {mode}")
    assert "vmtest ok" in out and "FAIL" not in out, out
    assert meminfo(shell) == before


# mode -> (access words in the report, where the fault is relative to the mapping)
FAULTS = {
    "ro": ("write, protection", 4096 + 8),
    "nx": ("exec, protection", 0),
    "guard": ("read, not present", 4 * 4096),
    "none": ("read, not present", 2 * 4096 + 16),
    "hole": ("read, not present", 4096 + 24),
}


@pytest.mark.parametrize("mode", sorted(FAULTS))
def test_bad_access_kills(shell, mode):
    words, offset = FAULTS[mode]
    before = meminfo(shell)
    out = shell.cmd(f"vmtest {mode}")
    m = re.search(KILL_LINE, out)
    assert m, f"no kill report:\n{out}"
    assert m["name"] == "vmtest" and "page fault" in m["cause"], out
    assert words in m["cause"], out
    base = int(m["addr"], 16) - offset
    assert base % 4096 == 0 and base >= 0x100000000000, out      # in the map area
    if mode == "nx":
        assert int(m["rip"], 16) == int(m["addr"], 16), out
    assert "status 142]" in out and "survived" not in out, out
    assert meminfo(shell) == before


# ---- copy-on-write clones (tests/guest/cowtest.c) ------------------------------------------

@pytest.mark.parametrize("args", ["iso", "deep 100", "wide 100", "cycles 100", "last", "errors", "ctl", "shared"])
def test_cow_clone(shell, args):
    before = meminfo(shell)
    out = shell.cmd(f"cowtest {args}", timeout=120)
    assert "cowtest ok" in out and "FAIL" not in out and "killed" not in out, out
    assert meminfo(shell) == before


# ---- the reverse map in every rmap= mode (tests/guest/vmstorm.c) -------------------------

@pytest.fixture(scope="module", params=["global", "lock", "log", "family"])
def rmap_shell(request):
    s = boot({"rmap": request.param}, lifetime=900)
    try:
        assert f"rmap={request.param}" in s.output, "the mode is not in the boot banner"
        s.cmd("vmtest all")             # warm-up: first use of the kernel-object caches
        yield s
        assert s.halt() == 0, "halt did not power off cleanly"
    finally:
        s.close()


def test_rmap_equals_page_tables_after_a_storm(rmap_shell):
    before = meminfo(rmap_shell)
    out = rmap_shell.cmd("vmstorm 7 1200", timeout=300)
    m = re.search(r"vmstorm ok checks=(\d+)", out)
    assert m and int(m[1]) > 300 and "FAIL" not in out and "killed" not in out, out
    assert meminfo(rmap_shell) == before


def test_clone_exit_cycles_return_to_baseline(rmap_shell):
    before = meminfo(rmap_shell)
    out = rmap_shell.cmd("cowtest cycles 10000", timeout=600)
    assert "cowtest ok" in out and "FAIL" not in out, out
    assert meminfo(rmap_shell) == before


def test_fork_families_share_one_family_and_fresh_tasks_start_their_own(rmap_shell):
    """rmap=family (P4's Linux): a clone joins its source's family (a fork's child shares
    its parent's family lock), a fresh task (an exec's) starts one, and an emptied task
    cloned into leaves its own for its source's; every family goes with its last member.
    The other modes make none."""
    mode = re.search(r"rmap=(\w+)", rmap_shell.output)[1]
    before = meminfo(rmap_shell)
    out = rmap_shell.cmd("cowtest family", timeout=120)
    assert "cowtest ok" in out and "FAIL" not in out and "killed" not in out, out
    m = re.search(r"cowtest families before=(\d+) clones=(\d+) fresh=(\d+) joined=(\d+)", out)
    assert m, out
    n, clones, fresh, joined = (int(x) for x in m.groups())
    if mode == "family":
        assert n >= 1 and (clones, fresh, joined) == (n, n + 3, n + 1), out
    else:
        assert (n, clones, fresh, joined) == (0, 0, 0, 0), out
    assert meminfo(rmap_shell) == before        # the families went with their tasks


def test_out_of_memory_kills_with_a_report(shell):
    """Touching more memory than the machine has: the toucher is killed with an "out of
    memory" report, the kernel stays up and every frame comes back."""
    before = meminfo(shell)
    out = shell.cmd("vmtest oom", timeout=300)
    m = re.search(KILL_LINE, out)
    assert m and m["name"] == "vmtest" and m["cause"] == "page fault (out of memory)", out
    assert "status 142]" in out and "survived" not in out, out
    assert meminfo(shell) == before
    assert "vmtest ok" in shell.cmd("vmtest all")
