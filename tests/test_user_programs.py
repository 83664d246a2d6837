"""User programs and the shell, driven through the serial console of a booted ondol.

Needs build/ondol.bin and build/bootfs.tar (`make`). Each test boots its own guest
with tests/qemu_harness.py and powers it off with `halt`.
"""
import re

import pytest

from ondol import abi
from ondol.abi import E_FAULT
from qemu_harness import PROMPT, boot, run_to_halt

KILL_LINE = (r"ondol: killed task (?P<task>\d+) \((?P<name>[^)]*)\) thread (?P<thread>\d+): "
             r"(?P<cause>[^\n]*?) rip=(?P<rip>0x[0-9a-f]+|0) addr=(?P<addr>0x[0-9a-f]+|0)\n")
USER_IMAGE = (0x400000, 0x800000)           # where user programs are linked and loaded
STACK_TOP = 0x00007ffffffff000              # kernel/mm/memlayout.h USER_STACK_TOP
STACK_SIZE = 256 * 1024                     # USER_STACK_SIZE; one guard page below it


@pytest.fixture
def shell():
    s = boot(lifetime=600)
    try:
        # Warm-up: the shell's first program run touches the pages of its waiter thread's
        # stack for the first time (demand paging), so tests that compare memory before and
        # after a program measure from there.
        s.cmd("hello warm-up")
        yield s
        assert s.halt() == 0, "halt did not power off cleanly"
    finally:
        s.close()


def meminfo(s):
    out = s.cmd("meminfo")
    m = re.search(r"frames:\s+total (\d+) \(\d+ KiB\)\s+free (\d+) \(\d+ KiB\)", out)
    o = re.search(r"objects: tasks (\d+)\s+threads (\d+)\s+aspaces (\d+)", out)
    k = re.search(r"kobj:\s+(\d+) bytes in use", out)
    assert m and o and k, out
    return {"total": int(m[1]), "free": int(m[2]), "tasks": int(o[1]), "threads": int(o[2]),
            "aspaces": int(o[3]), "kobj_bytes": int(k[1])}


def check_hello(out, *args):
    assert "hello from ondol" in out, out
    assert f"argc={len(args) + 1}" in out, out
    assert "argv[0]=hello" in out, out
    for i, a in enumerate(args, 1):
        assert f"argv[{i}]={a}\n" in out, out


# ---- shell basics ------------------------------------------------------------------------

def test_hello_with_args(shell):
    check_hello(shell.cmd("hello one two three"), "one", "two", "three")
    check_hello(shell.cmd("run hello via-run"), "via-run")
    check_hello(shell.cmd("   hello    spaced   args  "), "spaced", "args")


def test_unknown_program(shell):
    out = shell.cmd("nosuchprog x y")
    assert "sh: nosuchprog: not found" in out
    assert "sh: nope: not found" in shell.cmd("run nope")
    check_hello(shell.cmd("hello"))


def test_nonzero_exit_status_is_reported(shell):
    out = shell.cmd("faulttest")
    assert "usage: faulttest" in out and "[exit 2]" in out
    assert "[exit" not in shell.cmd("true")
    assert "[exit" not in shell.cmd("hello")


def test_builtins(shell):
    assert shell.cmd("echo a  b c").strip() == "a b c"
    assert "meminfo" in shell.cmd("help")
    ps = shell.cmd("ps")
    rows = [l.split() for l in ps.splitlines()[1:] if l.strip()]
    names = {r[-1]: r for r in rows}
    assert "init" in names and "sh" in names, ps
    sh = [r for r in rows if r[-1] == "sh"]
    assert len(sh) == 2 and sh[0][3] == "running", ps   # the shell runs ps itself ...
    assert sh[1][3] in ("blocked", "ready"), ps         # ... and its console reader waits
    assert sh[0][2] == sh[1][2] == "250", ps            # above every program's ceiling
    assert names["init"][3] == "blocked", ps        # init waits for the shell
    m = meminfo(shell)
    assert 0 < m["free"] <= m["total"]
    assert m["tasks"] >= 2 and m["threads"] >= 4 and m["aspaces"] >= 2, m   # init, sh x2 (+ idle)
    # a program's task, thread and address space exist only while it runs
    assert meminfo(shell) == m


def test_too_many_arguments(shell):
    out = shell.cmd("hello " + " ".join(str(i) for i in range(20)))
    assert "too many arguments" in out and "hello from ondol" not in out
    check_hello(shell.cmd("hello " + " ".join(str(i) for i in range(15))),
                *[str(i) for i in range(15)])


# ---- line editing ------------------------------------------------------------------------

def test_backspace_editing(shell):
    # "hellp", DEL, "o" -> "hello"; " xy", BS (0x08), "z" -> " xz"
    shell.send("hellp\x7fo xy\x08z\r")
    shell.expect(r"hellp\x08 \x08o xy\x08 \x08z\n", timeout=10)     # erase echoes
    shell.expect(r"hello from ondol\nargc=2\nargv\[0\]=hello\nargv\[1\]=xz\n", timeout=30)
    shell.expect(re.escape(PROMPT), timeout=30)
    # backspace on an empty line does nothing; erase a whole word and retype
    shell.send("\x7f\x7fhello abc\x7f\x7f\x7fdef\r")
    shell.expect(r"argv\[1\]=def\n", timeout=30)
    shell.expect(re.escape(PROMPT), timeout=30)


def test_escape_sequences_and_control_chars_ignored(shell):
    # arrow keys (CSI), F1 (SS3), a CSI with parameters, Tab and Ctrl-A are dropped
    shell.send("\x1b[Ahel\x1bOPlo\x1b[1;5C\t\x01 q\r")
    shell.expect(r"argv\[1\]=q\n", timeout=30)
    shell.expect(re.escape(PROMPT), timeout=30)
    assert "argv[2]" not in shell.output
    # Ctrl-C drops the line; "\r\n" is a single Enter (no extra prompt)
    shell.send("faulttest null\x03")
    shell.expect(r"\^C\n" + re.escape(PROMPT), timeout=10)
    out = shell.cmd("echo one")
    assert out.strip() == "one"
    shell.send("echo two\r\n")
    shell.expect(r"two\n" + re.escape(PROMPT), timeout=10)
    out = shell.cmd("echo three")
    assert out.strip() == "three", out
    assert "killed" not in shell.output


# ---- faults ------------------------------------------------------------------------------

FAULTS = {
    # mode: (cause text in the kernel's line, exception vector)
    "null": ("page fault", 14),
    "div0": ("divide error", 0),
    "cli": ("general protection", 13),
    "hlt": ("general protection", 13),
    "cr3": ("general protection", 13),
    "stack": ("page fault", 14),
    "ud": ("invalid opcode", 6),
}


@pytest.mark.parametrize("mode", sorted(FAULTS))
def test_fault_kills_program(shell, mode):
    cause, vector = FAULTS[mode]
    before = meminfo(shell)
    out = shell.cmd(f"faulttest {mode}")
    m = re.search(KILL_LINE, out)
    assert m, f"no kill report:\n{out}"
    assert m["name"] == "faulttest", out
    assert cause in m["cause"], out
    rip = int(m["rip"], 16)
    assert USER_IMAGE[0] <= rip < USER_IMAGE[1], f"rip {rip:#x} not in the program: {out}"
    addr = int(m["addr"], 16)
    if mode == "null":
        assert addr == 0 and "write" in m["cause"], out
    if mode == "stack":
        guard = STACK_TOP - STACK_SIZE
        assert guard - 4096 <= addr < guard, f"fault at {addr:#x}, guard page below {guard:#x}"
    assert f"(vector {vector}), status {128 + vector}]" in out, out
    assert "survived" not in out
    # the kernel and the shell are fine afterwards
    check_hello(shell.cmd("hello after"), "after")
    after = meminfo(shell)
    for key in ("tasks", "threads", "aspaces", "kobj_bytes"):
        assert before[key] == after[key], (key, before, after)


def test_bad_pointers_are_refused(shell):
    out = shell.cmd("faulttest badptr")
    assert f"badptr kernel={E_FAULT} unmapped={E_FAULT} noncanon={E_FAULT}" in out, out
    assert "[exit" not in out and "killed" not in out
    check_hello(shell.cmd("hello"))


def test_fault_leaves_no_leak(shell):
    shell.cmd("faulttest null")              # warm-up (first use of some kernel caches)
    before = meminfo(shell)
    for mode in sorted(FAULTS):
        shell.cmd(f"faulttest {mode}")
    after = meminfo(shell)
    assert before == after


# ---- scheduling --------------------------------------------------------------------------

def test_schedtest_preempt(shell):
    out = shell.cmd("schedtest preempt", timeout=120)
    m = re.search(r"preempt ok spinner=(\d+) main=(\d+)", out)
    assert m, out
    assert int(m[1]) > 0 and int(m[2]) > 0
    check_hello(shell.cmd("hello"))


def test_schedtest_fpu_state_survives_preemption(shell):
    out = shell.cmd("schedtest fpu", timeout=120)
    assert re.search(r"fpu ok rounds=\d+ switches=[1-9]", out), out


def test_schedtest_prio(shell):
    out = shell.cmd("schedtest prio", timeout=60)
    assert "prio order: H M L" in out, out
    assert "prio ok" in out
    assert "[exit" not in out


# ---- stress and fuzz ---------------------------------------------------------------------

def _stress(shell, mode, count):
    out = shell.cmd(f"stress {mode} {count}", timeout=600)
    assert "stress LEAK" not in out, out
    assert re.search(rf"stress ok mode={mode} count={count}\b", out), out
    before = re.search(r"before: (.*)\n", out)[1]
    after = re.search(r"after : (.*)\n", out)[1]
    assert before == after, out
    return out


def test_stress_threads(shell):
    out = _stress(shell, "threads", 10000)
    assert re.search(r"ran=(\d+)", out) and int(re.search(r"ran=(\d+)", out)[1]) >= 10000


def test_stress_tasks(shell):
    _stress(shell, "tasks", 1000)
    check_hello(shell.cmd("hello"))


def pcnt_facility(s):
    """What the kernel measures for everyone: the events and probes switch (`pcnt get`) and
    the overhead slot 0 and the probes' slots (`pcnt list`) of `pcnt dump` (the user slots
    after them are anybody's)."""
    state = s.cmd("pcnt get").strip()
    probes = {int(m[1]) for m in re.finditer(r"^probe \S+ (\d+)$", s.cmd("pcnt list"), re.M)}
    assert probes, "pcnt list names no probe"
    kernel_slots = [l for l in s.cmd("pcnt dump").splitlines()
                    if (m := re.match(r"\[(\d+):", l)) and int(m[1]) <= max(probes)]
    return state, kernel_slots


def test_fuzz(shell):
    facility = pcnt_facility(shell)
    assert "probes=off" in facility[0] and "ev0=none ev1=none" in facility[0], facility
    before = meminfo(shell)
    out = shell.cmd("fuzz 1 200000", timeout=900)
    assert "fuzz done seed=1 n=200000" in out, out[-3000:]
    assert "fuzz: 0 violations" in out, "\n".join(l for l in out.splitlines() if "VIOLATION" in l)
    assert "fuzz: 200000/200000 calls" in out
    assert not re.search(r"ondol: killed task \d+ \(fuzz\)", out), "the fuzzer was killed"
    assert "panic" not in out.lower()
    # the histogram has a row per call number, and invalid numbers gave E_NOSYS
    # columns: ok, one per error code (E_NOSYS first), other
    inv = re.search(rf"^\(invalid\)\s+0\s+(\d+)(\s+0){{{len(abi.ERRORS)}}}$", out, re.M)
    assert inv and int(inv[1]) > 0, out[-3000:]
    check_hello(shell.cmd("hello still", timeout=60), "still")
    after = meminfo(shell)
    assert before == after, "kernel resources differ after the fuzzer exited"
    # nor did it switch probes or events on, or leave the kernel's slots changed
    assert pcnt_facility(shell) == facility
    # the result stream holds only well-formed JSON (results() parses every line),
    # ending with the fuzzer's own record
    records = [r for r in shell.results() if r.get("bench") == "fuzz"]
    assert len(records) == 1, shell.results()
    rec = records[0]
    assert rec["seed"] == 1 and rec["n"] == 200000 and rec["violations"] == 0, rec
    assert rec["pcnt_probes"] is False, rec
    assert rec["invalid_numbers"] == int(inv[1]), (rec, inv[1])


# ---- startup modes, init, halt -------------------------------------------------------------

def test_halt_exits_qemu_with_status_0():
    with boot() as s:
        s.cmd("hello")
        assert s.halt() == 0
        s._reader.join(timeout=5)          # everything QEMU printed has been read
        assert "ondol: powering off" in s.output


def test_run_option_runs_commands_and_powers_off():
    status, out, _ = run_to_halt({"run": "hello,a,b;echo,x,y;nosuch"}, timeout=60)
    assert status == 0, out
    assert f"{PROMPT}hello a b\n" in out
    check_hello(out, "a", "b")
    assert f"{PROMPT}echo x y\nx y\n" in out
    assert f"{PROMPT}nosuch\nsh: nosuch: not found\n" in out
    # nothing interactive happened: the last command is followed by the power-off
    tail = out.split("sh: nosuch: not found\n", 1)[1]
    assert "ondol: powering off" in tail and PROMPT not in tail, tail


def test_run_option_then_shell():
    with boot({"run": "echo,scripted", "then": "shell"}) as s:
        out = s.cmd("echo interactive")
        assert out.strip() == "interactive"
        assert f"{PROMPT}echo scripted\nscripted\n" in s.output
        assert s.halt() == 0


def test_init_restarts_the_shell():
    with boot({"run": "echo,once", "then": "shell"}) as s:
        s.cmd("echo ready")
        s.send("exit 3\r")
        s.expect(r"init: sh exited with status 3, restarting it\n", timeout=30)
        s.expect(re.escape(PROMPT), timeout=30)
        check_hello(s.cmd("hello again"), "again")
        # the restarted shell is interactive only: the run= script did not run again
        assert s.output.count("\nonce\n") == 1, s.output
        assert s.halt() == 0


# ---- programs that spawn a partner ---------------------------------------------------------

def test_ipcping_tasks_survives_a_tick_during_spawn():
    """ipcping's server may run before its parent's grant (a timer tick during the spawn);
    it must retry its hello instead of leaving both tasks waiting. At hz=10000 a tick falls
    inside the spawn in a few percent of runs (before the fix: a hang about every 20 runs)."""
    with boot({"hz": "10000"}, lifetime=600) as s:
        for i in range(200):
            out = s.cmd("ipcping tasks 2", timeout=30)
            assert "ipcping ok n=2" in out and "failed" not in out, (i, out)
        assert s.halt() == 0


@pytest.mark.parametrize("count", ["0", "-5", "x", "3x", "10000001"])
def test_ipcping_rejects_bad_counts(shell, count):
    out = shell.cmd(f"ipcping tasks {count}")
    assert "usage: ipcping threads|tasks N" in out and "[exit 2]" in out, out
    assert "killed" not in out


# ---- hostile programs: priorities, kill, privileged calls ---------------------------------

def test_privileged_checks_idle_priority_and_pcnt_switches():
    """Run as init (privileged): SYS_SET_PRIORITY on the idle thread is refused instead of
    corrupting the ready queues (a ready priority-63 thread must still run)."""
    status, out, _ = run_to_halt({"init": "privtest"}, timeout=60)
    fails = [l for l in out.splitlines() if l.startswith("FAIL")]
    assert not fails and "privtest ok" in out, out[-2000:]
    assert "PANIC" not in out and status == 0


def ps_rows(s):
    return [l.split() for l in s.cmd("ps").splitlines()[1:] if l.strip()]


def test_hog_is_refused_the_raise_and_ctrl_c_ends_it(shell):
    shell.send("schedtest hog\r")
    m = shell.expect(r"hog raise255=(-?\d+)\nhog ceiling=(\d+) thread_above=(-?\d+)\n", timeout=30)
    assert int(m[1]) == abi.E_PERM and int(m[3]) == abi.E_PERM, m[0]
    assert int(m[2]) == 250, m[0]            # the shell's priority: it still gets its turn
    shell.send("\x03")
    shell.expect(r"\^C\n\[interrupted\]\n" + re.escape(PROMPT), timeout=30)
    assert not [r for r in ps_rows(shell) if r[-1] == "schedtest"]
    check_hello(shell.cmd("hello after"), "after")


def test_ctrl_c_kills_the_program_and_its_children(shell):
    ps_rows(shell)                           # the shell's heap has grown for ps once
    before = meminfo(shell)
    shell.send("pcnt stat schedtest hog\r")
    shell.expect(r"hog ceiling=100 ", timeout=30)   # pcnt's child: ceiling of pcnt's thread
    shell.send("\x03")
    shell.expect(r"\^C\n\[interrupted\]\n" + re.escape(PROMPT), timeout=30)
    # The shell waits for pcnt only; its child, killed with it, ends when it next runs (a
    # killed thread exits at its next kernel exit), which may be after the prompt is back.
    names = [r[-1] for r in ps_rows(shell)]
    for _ in range(20):
        if "schedtest" not in names:
            break
        shell.cmd("hello")                   # a command lets the ready threads run
        names = [r[-1] for r in ps_rows(shell)]
    assert "schedtest" not in names and "pcnt" not in names, names
    shell.cmd("pcnt reset")                  # pcnt was killed with its probes on
    assert "probes=off" in shell.cmd("pcnt get")
    assert meminfo(shell) == before


def test_kill_rights():
    """SYS_TASK_KILL from an unprivileged program: its child (and the grandchild with it) yes,
    the shell no, itself no, no such task E_SRCH."""
    status, out, _ = run_to_halt({"run": "schedtest,kill"}, timeout=60)
    fails = [l for l in out.splitlines() if l.startswith("FAIL")]
    assert not fails and "kill ok" in out, out[-2000:]
    assert status == 0


# ---- the shell's line editor ----------------------------------------------------------------

def test_long_line_is_refused_not_cut(shell):
    shell.send("echo " + "x" * 300 + "\r")
    m = shell.expect(r"(x*)\a\n(.*)\n" + re.escape(PROMPT), timeout=30)
    assert len(m[1]) == 256 - 5, m[0]        # the editor took 256 characters, rang the bell
    assert m[2] == "sh: line too long (305 characters, at most 256): not run", m[0]
    check_hello(shell.cmd("hello"))


def test_escape_strings_do_not_leak(shell):
    # an OSC title string (BEL-terminated), a DCS string (ESC \\-terminated), then a command
    shell.send("\x1b]0;title text\x07\x1bPq#0;junk\x1b\\")
    check_hello(shell.cmd("hello esc"), "esc")


def test_ctrl_d_on_an_empty_line_leaves_the_shell():
    with boot({"run": "echo,x", "then": "shell"}) as s:
        s.cmd("echo ready")
        s.send("ab\x04")                      # not empty: ignored
        s.send("\x15\x04")                    # Ctrl-U, then Ctrl-D on the empty line
        s.expect(r"exit\ninit: sh exited with status 0, restarting it\n", timeout=30)
        s.expect(re.escape(PROMPT), timeout=30)
        check_hello(s.cmd("hello again"), "again")
        assert s.halt() == 0


# ---- long kernel command lines ----------------------------------------------------------------

def test_long_run_option_is_accepted_whole():
    """150 commands, about 1.6 KB of run= (more than the 1 KiB the kernel once cut silently)."""
    run = ";".join(f"echo,c{i:03d}" for i in range(150))
    status, out, _ = run_to_halt({"run": run}, timeout=120)
    assert status == 0, out[-2000:]
    assert all(f"\nc{i:03d}\n" in out for i in range(150)), out[-2000:]
    assert "only the first" not in out and "truncated" not in out


def test_too_long_command_line_is_reported():
    run = ";".join(f"echo,c{i:04d}" for i in range(400))      # about 4.4 KB
    status, out, _ = run_to_halt({"run": run}, timeout=120)
    assert re.search(r"ondol: the command line has 44\d\d bytes; only the first 4095 are read\n",
                     out), out[:3000]
    assert status == 0 and "\nc0360\n" in out                 # what was read still runs
    extra = {f"x{i}": "1" for i in range(70)}                   # more words than the kernel keeps
    status, out, _ = run_to_halt({"run": "echo,hi", **extra}, timeout=60)
    assert "ondol: more than 64 options; ignored from: x63=1 x64=1" in out, out[:3000]
    assert status == 0 and "\nhi\n" in out
