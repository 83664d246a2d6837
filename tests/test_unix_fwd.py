"""Linux forwarding (kernel/ipc/fwd.c, docs/unix.md "Forwarding"), driven through the
shell: tests/guest/fwdtest.c is a tiny server whose cloned Linux tasks' system calls and
faults arrive as IPC calls. Frames and kernel objects must come back to baseline."""
import functools
import re

import pytest

from qemu_harness import boot, run_to_halt
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


# ---- the forwarding fastpath against the general path (fwdtest diff, docs/unix.md) -------
DIFF_SEEDS = range(1, 9)
DIFF_STEPS = 300


@functools.cache
def diff_run(fastpath: str, probes: bool = False) -> tuple[list[str], list[int]]:
    """fwdtest diff for every seed in one boot under icount: its "FD" lines in order, and
    with probes the ipc_fastpath probe's counts (pcnt stat: the C twins run instead of the
    assembly)."""
    prefix = "pcnt,stat," if probes else ""
    cmds = ";".join(f"{prefix}fwdtest,diff,{seed},{DIFF_STEPS}" for seed in DIFF_SEEDS)
    status, out, _ = run_to_halt({"ipc_fastpath": fastpath, "run": cmds}, timeout=240,
                                 icount=True)
    assert status == 0 and "PANIC" not in out and "FAIL" not in out, out[-3000:]
    assert out.count("fwdtest ok") == len(DIFF_SEEDS), out[-3000:]
    lines = [line for line in out.splitlines() if line.startswith("FD ")]
    fast = [int(n) for n in re.findall(r"^\s+(\d+)\s+ipc_fastpath\b", out, re.M)]
    return lines, fast


def test_forwarding_fastpath_matches_general_path():
    """The general path is the oracle of forwarded system calls on the fastpath: random
    answers (from anyone: the fastpath's case both ways), deferred answers, register reads
    and writes, interrupts, ends and kills of the Linux threads, and the server's exit with
    every call held, give the same lines with ipc_fastpath on and off. Every call fills
    all registers with patterns and the guest checks that only rax (and rcx, r11) changed,
    except the one register the server rewrote."""
    on, _ = diff_run("on")
    off, fast_off = diff_run("off")
    assert on == off
    assert not fast_off
    ops = [line.split()[3] for line in on if not line.startswith("FD end")]
    count = {op: ops.count(op) for op in set(ops)}
    assert count["answer"] > 1000 and count["took"] > 1500, count
    assert min(count[op] for op in ("get", "set", "interrupt", "end", "kill")) > 50, count
    deferred = sum(1 for line in on if " answer deferred " in line)
    assert 200 < deferred < count["answer"] - 800, deferred
    interrupted = sum(1 for line in on if line.endswith("took interrupt"))
    assert interrupted > 100
    ends = [line for line in on if line.startswith("FD end")]
    assert len(ends) == 3 * len(DIFF_SEEDS) and all(line.endswith("status=512") for line in ends)


def test_probed_forwarding_fastpath_matches_general_path():
    """With probes on, ipc.c's C twins (forward_fast, fast_answer) take the cases, and
    their probe counts them: the same oracle holds them."""
    probed, fast = diff_run("on", probes=True)
    assert probed == diff_run("off")[0]
    assert len(fast) == len(DIFF_SEEDS) and min(fast) > 100, fast
