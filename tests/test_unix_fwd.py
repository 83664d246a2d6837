"""Linux forwarding (kernel/ipc/fwd.c, docs/unix.md "Forwarding"), driven through the
shell: tests/guest/fwdtest.c is a tiny server whose cloned Linux tasks' system calls and
faults arrive as IPC calls. Frames and kernel objects must come back to baseline."""
import pytest

from qemu_harness import boot
from test_user_programs import meminfo


@pytest.fixture(scope="module")
def shell():
    s = boot(lifetime=600)
    try:
        s.cmd("fwdtest basic")          # warm-up: first use of the kernel-object caches
        yield s
        assert s.halt() == 0, "halt did not power off cleanly"
    finally:
        s.close()


@pytest.mark.parametrize("mode", ["basic", "defer", "fault", "regs", "intr", "errors"])
def test_fwdtest(shell, mode):
    before = meminfo(shell)
    out = shell.cmd(f"fwdtest {mode}", timeout=120)
    assert "fwdtest ok" in out and "FAIL" not in out, out
    assert "killed" not in out or mode == "fault", out
    assert meminfo(shell) == before


def test_task_killed_when_its_server_exits(shell):
    out = shell.cmd("fwdtest nosrv", timeout=120)
    assert "fwdtest ok" in out and "FAIL" not in out, out
    assert "killed Linux task" in out and "its server" in out and "exited" in out, out
