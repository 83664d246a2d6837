"""The no-MMU configuration, boot option mmu=off (docs/alloc.md, "mmu=off"): every task in
one address space, programs relocated to distinct addresses, regions owned by their task.

Each test boots with mmu=off. The guest checker tests/guest/mmutest.c does the sharing and
ownership checks; the others run ondol's native programs that must keep working (the shell,
tasks spawning copies of themselves, IPC between tasks, the allocator benchmark) and check
that the UNIX server is refused with a message.
"""
import re

import pytest

from qemu_harness import boot, run_to_halt

MMU_OFF = {"mmu": "off"}


@pytest.fixture(scope="module")
def shell():
    s = boot(MMU_OFF, lifetime=600)
    try:
        yield s
        assert s.halt() == 0, "halt did not power off cleanly"
    finally:
        s.close()


def meminfo_aspaces(out: str) -> int:
    m = re.search(r"aspaces (\d+)", out)
    assert m, out
    return int(m[1])


def test_two_tasks_share_the_space_and_own_their_regions(shell):
    """A child reads its parent's page; foreign unmap/protect/fixed map are E_PERM; the
    child's memory goes with it; SYS_VM_CLONE is E_NOTSUP; mmap takes frames at once."""
    out = shell.cmd("mmutest share")
    assert "FAIL" not in out, out
    assert "mmutest ok" in out, out


def test_one_address_space_and_no_leak(shell):
    assert meminfo_aspaces(shell.cmd("meminfo")) == 1
    out = shell.cmd("stress tasks 100", timeout=120)
    assert "stress ok mode=tasks count=100" in out, out
    out = shell.cmd("stress threads 200", timeout=120)
    assert "stress ok mode=threads count=200" in out, out


def test_copies_of_a_program_run_side_by_side(shell):
    """ipctest order spawns copies of itself as senders (each relocated elsewhere)."""
    out = shell.cmd("ipctest order", timeout=60)
    assert "FAIL" not in out and "ipctest order ok" in out, out


def test_faults_still_kill(shell):
    """Without isolation between tasks a wild access is still caught where nothing is
    mapped: the null page and the kernel."""
    out = shell.cmd("faulttest null")
    assert "killed task" in out and "page fault" in out, out
    assert "survived" not in out, out


def test_allocator_benchmark_runs():
    status, out, results = run_to_halt({**MMU_OFF, "run": "mallocbench,contend,2,2000"},
                                       timeout=120)
    rows = [r for r in results if r.get("test") == "contended"]
    assert status == 0 and "PANIC" not in out, out[-2000:]
    assert len(rows) == 1 and rows[0]["n"] == 2 * 2 * 2000, rows


def test_ipc_round_trip_between_tasks_runs():
    status, out, results = run_to_halt({**MMU_OFF, "run": "ipcbench,roundtrip,100"}, timeout=120)
    scenarios = {r["scenario"] for r in results if r.get("test") == "roundtrip"}
    assert status == 0 and scenarios == {"tasks", "threads"}, out[-2000:]


def test_unix_server_refused_with_a_message(tmp_path):
    """The kernel refuses before it reads the root archive: an empty one will do."""
    empty = tmp_path / "rootfs.cpio"
    empty.write_bytes(b"")
    with boot({**MMU_OFF, "unix": "mk"}, wait_prompt=False, lifetime=60, rootfs=empty) as s:
        s.expect(r"the UNIX server needs mmu=on")


# Tests elsewhere rely on an address space per task and do not apply under mmu=off (they
# run with the default mmu=on): cowtest and vmstorm (tests/test_vm.py: copy-on-write
# clones, SYS_VM_CLONE is E_NOTSUP), pagertest clone (tests/test_pager.py), the UNIX
# server's tests (Linux programs need their own address space: refused above), and
# faulttest stack (tests/test_user_programs.py: the main stack is not at USER_STACK_TOP).
