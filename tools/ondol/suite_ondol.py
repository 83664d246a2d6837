"""The differential suite on ondol (tests/linux/, docs/unix.md "The differential suite"):
ondol boots with the UNIX server in one form (`unix=mk`) and the very root archive the
Linux peer ran (build/rootfs.cpio), busybox sh as init on the console runs `/suite/run 1`
once, and the frames it prints on the console are the target's result. One boot runs
every program. Results are cached as the peer's are (linuxsuite.run_cached), by a hash of
the archive, ondol's kernel and boot archive and this file.

    passes = suite_on_ondol(Path("build"), "mk")      # [ {name: Outcome} ]
    tally(peer_pass, passes[0], differences)          # matched / listed / failing
"""
from __future__ import annotations

import fcntl
import os
import select
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # tools/: qemucmd, ondol
import qemucmd  # noqa: E402

if __package__:
    from . import linuxsuite
else:  # run as a script: tools/ondol/ is sys.path[0]
    import linuxsuite

PROMPT = b"ondol$ "
# Typed at the prompt. The marker is split by quotes so that the echoed command line
# does not contain it; only echo's output does. The runner is a "#!/bin/sh" script run
# directly, as on the peer.
COMMAND = b"/suite/run 1; echo @@do''ne\r"
DONE = b"\n@@done\n"
TIMEOUT = 900.0            # seconds for the boot and the whole run (icount mode)


class _Console:
    """QEMU's console (COM1 on a pipe), read with a deadline and copied to a log."""

    def __init__(self, argv: list[str], log: Path):
        self.log = open(log, "wb")
        self.proc = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                     stderr=subprocess.STDOUT)
        self.buf = b""

    def wait_for(self, marker: bytes, deadline: float) -> None:
        fd = self.proc.stdout.fileno()
        while marker not in self.buf.replace(b"\r", b""):
            left = deadline - time.monotonic()
            if left <= 0 or self.proc.poll() is not None:
                tail = self.buf[-2000:].decode(errors="replace")
                why = "timed out" if left <= 0 else f"QEMU exited ({self.proc.returncode})"
                raise linuxsuite.SuiteError(f"ondol {why} waiting for {marker!r}: ...{tail!r}")
            if select.select([fd], [], [], min(left, 1.0))[0]:
                chunk = os.read(fd, 65536)
                self.buf += chunk
                self.log.write(chunk)
                self.log.flush()

    def close(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
        self.proc.wait()
        for f in (self.proc.stdin, self.proc.stdout, self.log):
            f.close()


def frames_of(console: bytes) -> str:
    """The frames in console output: from the first `@@begin` to `@@done`, carriage
    returns dropped (the tty's ONLCR, as the peer's frames drop them), as one pass."""
    text = console.decode(errors="replace").replace("\r", "")
    start = text.find("@@begin ")
    end = text.find("\n@@done\n", start)
    if start < 0 or end < 0:
        raise linuxsuite.SuiteError("ondol printed no frames")
    return "@@pass 1\n" + text[start:end + 1] + "@@done\n"


def ondol_runner(form: str):
    """The `run(archive, build)` of the target: boot ondol with unix=FORM, run the suite
    at the shell prompt, return its frames."""
    def run(archive: Path, build: Path) -> str:
        append = qemucmd.append_line({"unix": form})
        argv = qemucmd.ondol(build / "ondol.bin", build / "bootfs.tar", append,
                             rootfs=archive, com1="stdio", com2="null", icount=True)
        log = build / "linuxsuite" / f"ondol-{form}-console.log"
        console = _Console(argv, log)
        try:
            deadline = time.monotonic() + TIMEOUT
            console.wait_for(PROMPT, deadline)
            console.proc.stdin.write(COMMAND)
            console.proc.stdin.flush()
            console.wait_for(DONE, deadline)
            return frames_of(console.buf)
        finally:
            console.close()
    return run


def target(form: str, build: Path) -> linuxsuite.Target:
    """ondol in FORM as a target: its result depends on the kernel, the boot archive (the
    server) and this runner."""
    return linuxsuite.Target(f"ondol-{form}", ondol_runner(form),
                             lambda: [build / "ondol.bin", build / "bootfs.tar", Path(__file__)])


def suite_on_ondol(build: Path, form: str) -> list[dict[str, linuxsuite.Outcome]]:
    """Build the archive and run the suite on ondol in FORM (cached): [pass 1 outcomes].
    Serialised with the peer's runs by the same lock (they share build/rootfs.cpio)."""
    lock = build / "linuxsuite" / ".lock"
    lock.parent.mkdir(parents=True, exist_ok=True)
    with open(lock, "w") as f:
        fcntl.flock(f, fcntl.LOCK_EX)
        archive = linuxsuite.rootfs_archive(build)
        return linuxsuite.parse(linuxsuite.run_cached(target(form, build), archive, build))


@dataclass
class Tally:
    """The compared programs' output lines of the peer, by what ondol did with each."""
    matched: int = 0
    listed: int = 0                      # differ, and differences.txt gives the reason
    failing: list[str] = field(default_factory=list)   # differ, not listed: one line each

    @property
    def total(self) -> int:
        return self.matched + self.listed + len(self.failing)


def _listed(name: str, line: str, differences: dict[str, str]) -> bool:
    return f"{name}/*" in differences or f"{name}/{linuxsuite._case(line)}" in differences


def compare_program(name: str, peer, ondol, differences: dict[str, str], t: Tally) -> None:
    """One program's lines into T. A line matches, is listed (PROGRAM/CASE or PROGRAM/*
    in differences.txt) or fails. Once a case of the program is listed, its totals line
    ("cases N failed M") and its exit status follow from it and count as listed too."""
    if ondol is None:
        t.failing.append(f"{name}: missing on ondol")
        return
    mine, theirs = peer.lines(), ondol.lines()
    listed_here = 0
    for i in range(max(len(mine), len(theirs))):
        a = mine[i] if i < len(mine) else "(none)"
        b = theirs[i] if i < len(theirs) else "(none)"
        if a == b and f"{name}/*" not in differences:
            t.matched += 1
        elif _listed(name, a, differences) or (listed_here and a.startswith("cases ")):
            t.listed += 1
            listed_here += 1
        else:
            t.failing.append(f"{name} line {i + 1}: {a!r} vs {b!r}")
    if peer.status != ondol.status and not listed_here:
        t.failing.append(f"{name}: status {peer.status} vs {ondol.status}")


def tally(peer: dict, ondol: dict, differences: dict[str, str]) -> Tally:
    """Every compared program of the suite (suite.list), peer against ondol."""
    t = Tally()
    for prog in (p for p in linuxsuite.programs() if p.compare):
        compare_program(prog.name, peer[prog.name], ondol.get(prog.name), differences, t)
    return t


if __name__ == "__main__":
    b = linuxsuite.REPO / "build"
    peer_pass = linuxsuite.suite_on_peer(b)[0]
    ondol_pass = suite_on_ondol(b, sys.argv[1] if len(sys.argv) > 1 else "mk")[0]
    t = tally(peer_pass, ondol_pass, linuxsuite.load_differences())
    print("\n".join(t.failing))
    print(f"matched {t.matched} listed {t.listed} failing {len(t.failing)} of {t.total} lines")
