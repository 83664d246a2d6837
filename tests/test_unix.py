"""The UNIX server running Linux programs (docs/unix.md), in both forms: ondol boots with
unix=mk (the server a task, reached by IPC) or unix=ik (the same server in the kernel), the
server unpacks build/rootfs.cpio (the second multiboot module) and runs Debian's busybox
sh as init on the console. The same static musl program (tests/linux/hello.c) must print
the same bytes as on the Linux peer; fork, wait4 statuses, execve, a segfault and an
unknown system call behave as on Linux, and the shell goes on."""
import re
import sys
from pathlib import Path

import pytest

from qemu_harness import BUILD, boot

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tools"))
from ondol import linuxsuite, suite_ondol  # noqa: E402

FORMS = ["mk", "ik"]


@pytest.fixture(scope="module")
def peer():
    """The suite's outcomes on the Linux peer (pass 1); also builds build/rootfs.cpio."""
    try:
        return linuxsuite.suite_on_peer(BUILD)[0]
    except linuxsuite.SuiteError as e:
        pytest.fail(f"differential suite on the peer: {e}")


@pytest.fixture(scope="module", params=FORMS)
def shell(request, peer):
    s = boot({"unix": request.param}, timeout=60, lifetime=600)
    try:
        yield s
    finally:
        s.close()


def test_busybox_sh_runs_commands(shell):
    assert shell.cmd("echo hi") == "hi\n"
    assert shell.cmd("ls /bin | head -3") == "arch\nash\nbase64\n"
    passwd = (BUILD / "rootfs" / "etc" / "passwd").read_text()
    assert shell.cmd("cat /etc/passwd") == passwd
    assert shell.cmd("for i in 1 2 3; do echo n$i; done > /tmp/f; cat /tmp/f") == "n1\nn2\nn3\n"


def test_static_musl_program_prints_what_linux_prints(shell, peer):
    """hello: argv, the auxiliary vector, fork + wait4 of a child that exits 7 and of one
    that dies of SIGSEGV, an unknown call (ENOSYS); as run.sh runs it (suite.list)."""
    out = shell.cmd("cd /tmp && /suite/bin/hello one two; echo status $?", timeout=60)
    assert out == peer["hello"].output + "status 0\n"
    assert "cases 17 failed 0" in out


def test_threads_and_futex_as_on_linux(shell, peer):
    """misc's thread cases (pthreads: clone, futex, set_tid_address, join) print what
    they print on the Linux peer."""
    out = shell.cmd("cd /tmp && /suite/bin/misc", timeout=120)
    names = ("FS base is the thread pointer", "4 threads x 1000", "thread ", "futex ",
             "set_tid_address", "sysinfo", "rseq")
    pick = lambda text: [l for l in text.splitlines() if l.startswith(names)]
    assert pick(out) == pick(peer["misc"].output)
    assert len(pick(out)) >= 12


def test_exit_statuses_through_the_shell(shell):
    assert shell.cmd('sh -c "exit 7"; echo status $?') == "status 7\n"
    assert shell.cmd("/suite/bin/hello segv; echo status $?") == \
        "Segmentation fault\nstatus 139\n"
    assert shell.cmd("echo still here") == "still here\n"


def test_malformed_elf_files_are_refused(shell):
    """execelf execve's the malformed-ELF corpus in children: every file is refused or
    ends by its own exit or a fault signal, and nothing else happens (no FAIL line)."""
    out = shell.cmd("cd /tmp && /suite/bin/execelf; echo status $?", timeout=120)
    assert "FAIL" not in out, out
    assert re.search(r"cases \d+ failed 0\nstatus 0\n$", out), out
    assert "valid: exit 42" in out
    assert shell.cmd("echo still here") == "still here\n"


@pytest.mark.parametrize("form", FORMS)
def test_unknown_calls_statistics_and_poweroff(peer, form):
    """Each unknown number is printed once; poweroff -f ends QEMU with status 0 after
    the server wrote its per-call statistics to the result stream."""
    with boot({"unix": form, "unix_unknown": "on"}, timeout=60, lifetime=300) as s:
        s.cmd("/suite/bin/hello one two; /suite/bin/hello one two", timeout=60)
        assert s.output.count("unix: unknown system call 500") == 1
        s.send("poweroff -f\r")
        assert s.wait(30) == 0
        stats = [r for r in s.results() if r.get("type") == "unix_calls"]
    assert len(stats) == 1, "one statistics record at power-off"
    rec = stats[0]
    assert rec["form"] == form and rec["unknown"] >= 2
    assert rec["calls"] == sum(rec["by_number"].values())
    assert rec["by_number"]["59"] >= 2 and rec["by_number"]["500"] == 2    # execve, unknown
    assert rec["by_pid"]["1"] > 0 and rec["reaped"] > 0
    # each call is counted once per process (no unknown number here is out of range)
    assert rec["calls"] == sum(rec["by_pid"].values()) + rec["reaped"] + rec["unlocked"]
    # the kernel's counters: every fork, exec and wait switches threads and address spaces
    assert rec["thread_switches"] >= rec["by_number"]["59"] >= 2
    assert rec["as_switches"] >= rec["by_number"]["59"]


# ---- signals through the run-time (servers/unix/entry.c, mk/rt_mk.c) ----------------------

def test_kill_and_trap_reach_shell_processes(shell):
    """kill -TERM ends a background sleep (wait's status 128+15); a trapped SIGINT runs
    the trap and the shell goes on; SIGCHLD and wait4 see each end."""
    shell.cmd("sleep 99 & p=$!")
    shell.cmd("until grep -q sleep /proc/$p/stat; do :; done")    # exec'd: SIGTERM not ignored
    assert shell.cmd("kill -TERM $p; wait $p; echo status $?") == "status 143\n"
    assert shell.cmd("sh -c 'trap \"echo caught\" INT; kill -INT $$; echo after'") == \
        "caught\nafter\n"
    assert shell.cmd("sh -c 'kill -KILL $$'; echo status $?") == "Killed\nstatus 137\n"


def test_ps_reads_proc(shell):
    """busybox ps lists the shell (pid 1) and itself from /proc with their command lines
    (/proc/PID/cmdline: init's argv is the program's path, as linux_init gives it; ps is
    the shell's forked child, so busybox shows its name apart: "{ps} /bin/sh", as on Linux)."""
    out = shell.cmd("ps")
    rows = [l.split() for l in out.splitlines()]
    assert rows[0] == ["PID", "USER", "COMMAND"], out
    names = {" ".join(r[2:]): r[0] for r in rows[1:]}
    assert names["/bin/sh"] == "1" and int(names["{ps} /bin/sh"]) > 1, out


def switch_counts(shell) -> dict:
    out = shell.cmd("head -n 999 /proc/ondol/syscalls")   # (busybox cat shows nothing of /proc yet)
    return {k: int(v) for k, v in (l.split() for l in out.splitlines() if l.count(" ") == 1)}


def test_proc_ondol_syscalls_counts_calls_and_switches(shell):
    """/proc/ondol/syscalls: the calls by number and by pid, and the kernel's switch
    counters, which grow with every command the shell forks (a fork and a wait at least)."""
    before = switch_counts(shell)
    after = switch_counts(shell)
    assert after["calls"] > before["calls"] > 0
    assert after["thread_switches"] > before["thread_switches"] > 0
    assert after["as_switches"] > before["as_switches"] > 0
    out = shell.cmd("head -n 999 /proc/ondol/syscalls")
    assert re.search(r"^nr 0 read \d+$", out, re.M) and re.search(r"^pid 1 \d+$", out, re.M)


def meminfo(shell) -> dict:
    out = shell.cmd("head -n 5 /proc/meminfo")
    return {k: int(v) for k, v in re.findall(r"^(\w+):\s+(\d+) kB$", out, re.M)}


def test_file_pages_come_back_after_the_programs_end(shell):
    """The page cache keeps a mapped file's bytes (the first runs move libc, ld.so and the
    programs in, and the server's heap grows once), and nothing more: after further runs of
    dynamic programs and of mem (a 4 MiB file mapped shared, private, by a fork, written,
    truncated, unlinked while mapped: its file object goes with its last mapping), MemFree
    is back within 256 KiB. /proc/meminfo's Cached counts the page cache: libc.so.6's
    1,881 KiB at least, and mem's file is out of it again once unlinked and unmapped. The
    kernel's reverse-map checker (/proc/ondol/vmcheck) finds every file and anonymous
    mapping recorded."""
    def work():
        assert shell.cmd("cd /tmp && /usr/bin/hello") == "Hello, world!\n"
        for program in ("dyn_hello one two", "mem"):
            assert shell.cmd(f"/suite/bin/{program} | tail -1", timeout=120).endswith(" failed 0\n")
    work()
    before = meminfo(shell)
    assert before["Cached"] >= 1881
    work()
    work()
    after = meminfo(shell)
    assert abs(after["MemFree"] - before["MemFree"]) <= 256
    assert after["Cached"] == before["Cached"]
    check = dict(l.split() for l in shell.cmd("head -n 3 /proc/ondol/vmcheck").splitlines())
    assert check["errors"] == "0" and check["mappings"] == check["entries"] != "0", check


def test_signals_program_prints_what_linux_prints(shell, peer):
    """tests/linux/signals.c (handlers, masks, sigreturn, alarm and setitimer, EINTR and
    SA_RESTART, faults to handlers, SIGCHLD, SIGPIPE) prints the peer's bytes."""
    out = shell.cmd("cd /tmp && /suite/bin/signals; echo $?", timeout=120)
    output, status = out[:-1].rsplit("\n", 1)[0] + "\n", int(out.splitlines()[-1])
    t = suite_ondol.Tally()
    suite_ondol.compare_program("signals", peer["signals"], linuxsuite.Outcome(
        "signals", output, status), linuxsuite.load_differences(), t)
    assert t.failing == []
    assert t.matched + t.listed == len(peer["signals"].lines()) and t.listed <= 2


@pytest.fixture(scope="module")
def job_shell(peer):
    """A shell with the console as its controlling tty and job control (busybox
    `setsid -c sh` from init's shell, which has none, as on Linux)."""
    s = boot({"unix": "mk"}, timeout=60, lifetime=600)
    try:
        s.send("setsid -c sh\r")
        s.expect(r"setsid -c sh\n")
        s.expect(r"ondol\$ ")
        yield s
    finally:
        s.close()


# The job prints "go" once it runs in the foreground group with the tty in canonical
# mode (ash sets the group in the child too), so the key cannot reach the line editor
# or the shell instead.
JOB = 'sh -c "echo go; exec sleep 100"'


def test_ctrl_c_ends_the_foreground_job(job_shell):
    s = job_shell
    s.send(JOB + "\r")
    s.expect(r"\ngo\n")
    s.send("\x03")
    s.expect(r"\^C")
    s.expect(r"ondol\$ ")
    assert s.cmd("echo status $?") == "status 130\n"
    assert s.cmd("echo still here") == "still here\n"


def test_ctrl_z_stops_the_foreground_job(job_shell):
    s = job_shell
    s.send(JOB + "\r")
    s.expect(r"\ngo\n")
    s.send("\x1a")
    s.expect(r"Stopped")
    s.expect(r"ondol\$ ")
    stopped = "[1]+  Stopped                    " + JOB + "\n"
    assert s.cmd("jobs") == stopped
    # a stopped process keeps SIGTERM pending (as Linux) until SIGCONT lets it act
    s.cmd("kill -TERM %1")
    assert s.cmd("jobs") == stopped
    assert s.cmd("kill -CONT %1; wait %1; echo status $?").startswith("status 143\n")
    assert s.cmd("jobs; echo none") == "none\n"
