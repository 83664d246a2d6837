"""The UNIX server's reliability (issue 10, docs/unix.md "Reliability"), in both forms:
the Linux-ABI fuzzer's 100,000 calls leave the server up, the shell answering and the
frames free. Boots in icount mode: the fuzzer's stall polls and random sleeps then cost
no wall time (about 15 s per form for the calls under TCG)."""
import re
import sys
from pathlib import Path

import pytest

import linux_fuzz
from qemu_harness import BUILD, boot

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tools"))
from ondol import linuxsuite  # noqa: E402

FORMS = ["mk", "ik"]
FUZZ_CALLS = 100_000


@pytest.fixture(scope="module")
def archive():
    """build/rootfs.cpio with the suite's programs (built, under the suite's lock, by the
    peer's cached run)."""
    try:
        linuxsuite.suite_on_peer(BUILD)
    except linuxsuite.SuiteError as e:
        pytest.fail(f"root archive: {e}")


@pytest.fixture(scope="module", params=FORMS)
def shell(request, archive):
    s = boot({"unix": request.param}, timeout=60, lifetime=900, icount=True)
    try:
        yield s
    finally:
        s.close()


def test_fuzzer_leaves_the_server_up_and_the_frames_free(shell):
    run = linux_fuzz.run(shell, seed=1, calls=FUZZ_CALLS, timeout=600)
    assert run.trouble == []
    assert shell.cmd("echo still here; ls /suite/bin | grep -c fuzz") == "still here\n1\n"
    lost = run.free_before_kib - run.free_after_kib
    assert lost <= linux_fuzz.CACHE_SLACK_KIB, run


def hog(shell, mode: str, timeout: float = 300) -> str:
    """Run `hog MODE` (tests/linux/hog.c) in /tmp; its output and exit status."""
    return shell.cmd(f"cd /tmp && /suite/bin/hog {mode}; echo status $?; cd /", timeout=timeout)


def frames_back_after_second_run(shell, mode: str) -> tuple[str, int]:
    """Run `hog MODE` twice; the second run's output and the KiB it did not give back.
    The first run grows the server's heap and the kernel's caches to what such a run
    needs (MK: libc's pools keep their pages); a leak would show in the second."""
    hog(shell, mode)
    before = linux_fuzz.free_kib(shell)
    out = hog(shell, mode)
    return out, before - linux_fuzz.free_kib(shell)


def test_fork_bomb_is_stopped_by_the_process_table(shell):
    """As root no RLIMIT_NPROC applies: the bomb grows until fork gives EAGAIN (the
    server's table or the kernel's task table is full), then ends in order."""
    out, lost = frames_back_after_second_run(shell, "table")
    assert "fork bomb stopped by: -1 EAGAIN\n" in out, out
    members = int(re.search(r"members at the table limit: (\d+)", out).group(1))
    assert 1000 <= members <= 1022, out
    assert out.endswith("cases 4 failed 0\nstatus 0\n"), out
    assert shell.cmd("echo still here") == "still here\n"
    assert lost <= linux_fuzz.CACHE_SLACK_KIB


def test_fork_bomb_is_stopped_by_rlimit_nproc(shell):
    out = hog(shell, "nproc")
    assert "fork bomb stopped by: -1 EAGAIN\nmembers at RLIMIT_NPROC: 16\n" in out, out
    assert out.endswith("cases 5 failed 0\nstatus 0\n"), out


@pytest.mark.parametrize("mode", ["mmap", "brk"])
def test_memory_hog_is_stopped_and_its_memory_comes_back(shell, mode):
    """A child that maps (or extends its break) and touches memory without end is killed
    (FWD_FAULT_NOMEM -> SIGKILL) or refused (ENOMEM) before the kernel's 8 MiB reserve
    is gone; the shell answers and the frames come back."""
    out, lost = frames_back_after_second_run(shell, mode)
    assert re.search(rf"^{mode} hog: (killed by signal 9|exit 0)$", out, re.M), out
    assert out.endswith("cases 1 failed 0\nstatus 0\n"), out
    assert shell.cmd("echo still here") == "still here\n"
    assert lost <= linux_fuzz.CACHE_SLACK_KIB, (lost, out)


def test_filling_tmpfs_ends_with_enospc(shell):
    """Files of 16 MiB until one fails: the server's budget (24 MiB left free) refuses
    the next file's data with ENOSPC. Without it the server's memory runs out first
    (MK: the writer or the server killed). One 400 MiB file would not show that: its
    doubling buffer fails at 256 MiB whatever is free."""
    shell.cmd("fill() { dd if=/dev/zero of=/tmp/f$1 bs=1M count=16; }")
    out = shell.cmd("i=0; while fill $i; do i=$((i+1)); done; echo files $i", timeout=400)
    assert re.search(r"^dd: error writing '/tmp/f\d+': No space left on device$", out,
                     re.M), out
    files = int(re.search(r"^files (\d+)$", out, re.M).group(1))
    assert 8 <= files <= 14, out
    assert shell.cmd("rm /tmp/f*; echo still here") == "still here\n"
    assert shell.cmd("echo again > /tmp/small && cat /tmp/small; rm /tmp/small") == "again\n"


# The system call the MK server is made to die on: sync, which nothing calls at boot.
SYS_SYNC = 162


def test_server_death_ends_its_clients_and_powers_off(archive):
    """unix_crash: the MK server faults while a background sleep waits in nanosleep and
    the shell in wait4; the kernel reports the death, releases both and every other
    Linux task, and powers off with status 3 (a bounded wait: a hang fails)."""
    s = boot({"unix": "mk", "unix_crash": str(SYS_SYNC)}, timeout=60, lifetime=120,
             icount=True)
    try:
        s.send("sleep 100 & sleep 0.2; sync\r")
        status = s.wait(timeout=60)
        out = s.output
    finally:
        s.close()
    assert status == 3, out
    killed = re.findall(r"ondol: killed Linux task \d+ \(\w+\): its server \d+ exited", out)
    assert len(killed) >= 3, out
    assert re.search(r"unix: server died \(task \d+, thread \d+, status \d+\)", out), out
    m = re.search(r"unix: the server's (\d+) Linux tasks have ended; powering off", out)
    assert m and int(m.group(1)) == len(killed), out
