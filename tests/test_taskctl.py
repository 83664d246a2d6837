"""Task control of native tasks (docs/memory.md, "Task control for servers"): stopping and
resuming threads, their registers with the FS and GS bases, ending them, handing a task
to another task (tests/guest/taskctl.c). Frames and kernel objects must come back to baseline."""
import pytest

from qemu_harness import boot
from test_user_programs import meminfo


@pytest.fixture(scope="module")
def shell():
    s = boot(lifetime=600)
    try:
        s.cmd("taskctl errors", timeout=120)   # warm-up: first use of the kernel-object caches
        yield s
        assert s.halt() == 0, "halt did not power off cleanly"
    finally:
        s.close()


@pytest.mark.parametrize("mode", ["regs", "sleep", "end", "errors", "handover"])
def test_taskctl(shell, mode):
    before = meminfo(shell)
    out = shell.cmd(f"taskctl {mode}", timeout=120)
    assert "taskctl ok" in out and "FAIL" not in out and "killed task" not in out, out
    assert meminfo(shell) == before
