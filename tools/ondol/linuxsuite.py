"""The differential suite (tests/linux/): build it, run it on a target, compare targets.

A `Target` is a system the suite runs on: a name, a function
`run(archive: Path, build: Path) -> str` that runs the whole suite from the root archive and
returns the frames tests/linux/run.sh wrote (`@@pass N`, then per program `@@begin NAME`,
its output, `@@end NAME STATUS`), and the files besides the archive that its result depends
on. Today there is one, `PEER` (Debian's Linux in the same QEMU as ondol); ondol's MK and IK
forms will be two more, booting ondol with `unix=mk|ik` and the same archive. `parse()` turns
frames into `Outcome`s per pass, and `compare()` lists the lines where two targets differ,
minus the known differences of tests/linux/differences.txt.

    build = Path("build")
    archive = rootfs_archive(build)                 # build/rootfs.cpio with the suite
    passes = parse(run_cached(PEER, archive, build))  # [ {name: Outcome}, ... ]
    problems = compare(passes[0], other[0], load_differences())

Results are cached under build/linuxsuite/cache/ by a hash of everything they depend on
(the archive with the programs and scripts, the target's inputs, this file), so a second
`make test` does not boot the peer again. docs/unix.md describes how to add a case.
"""
from __future__ import annotations

import fcntl
import functools
import hashlib
import importlib.util
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # tools/: qemucmd, ondol
import qemucmd  # noqa: E402

if __package__:
    from . import rootfs
else:  # run as a script: tools/ondol/ is sys.path[0]
    import rootfs

REPO = Path(__file__).resolve().parents[2]
SRC = REPO / "tests" / "linux"
DIFFERENCES = SRC / "differences.txt"
CFLAGS = ["-static", "-O2", "-std=c11", "-Wall", "-Wextra", "-Werror"]
DYN_CFLAGS = ["-O2", "-std=c11", "-Wall", "-Wextra", "-Werror", "-Wno-stringop-overflow",
              "-Wno-stringop-overread", "-Wno-nonnull"]  # the cases pass bad pointers on purpose
PEER_APPEND = "console=ttyS0 quiet panic=-1"
PEER_TIMEOUT = 900.0


class SuiteError(Exception):
    """Building or running the suite failed; str(e) is one line."""


@dataclass(frozen=True)
class Target:
    """A system the suite runs on. `run(archive, build)` returns the frames; `inputs()`
    lists the files besides the archive that the result depends on (its kernel...), which
    the cache key covers."""
    name: str
    run: Callable[[Path, Path], str]
    inputs: Callable[[], list]


@dataclass(frozen=True)
class Program:
    """One line of tests/linux/suite.list."""
    name: str
    kind: str          # "c", "dyn" or "sh"
    status: int        # the exit status it must end with
    compare: bool      # output compared byte for byte
    args: tuple = ()


@dataclass(frozen=True)
class Outcome:
    """What one program did on a target: its output (stdout and stderr) and status."""
    name: str
    output: str
    status: int

    def lines(self) -> list[str]:
        return self.output.splitlines()


def programs() -> list[Program]:
    """The suite, in run order (tests/linux/suite.list)."""
    out = []
    for line in (SRC / "suite.list").read_text().splitlines():
        words = line.split()
        if not words or words[0].startswith("#"):
            continue
        name, kind, status, compare, *args = words
        out.append(Program(name, kind, int(status), compare == "yes", tuple(args)))
    return out


# Programs built into /suite/bin that the suite does not run: sock needs a peer on the
# network (tests/test_net_sockets.py runs sock against Linux in a namespace); aim is the
# P4 experiment's multi-process mix (`./ondol bench aim`, tools/ondol/aim.py); unlocked
# shows the MK server's helpers at work while its main thread is stuck (tests/test_smp.py).
EXTRA_PROGRAMS = ("sock", "aim", "unlocked")


def _compile(cmd: list[str], name: str) -> None:
    try:
        p = subprocess.run(cmd, capture_output=True, text=True)
    except FileNotFoundError:
        raise SuiteError(f"{cmd[0]} not found (scripts/deps.sh installs it)") from None
    if p.returncode != 0:
        raise SuiteError(f"compiling {name} failed: {(p.stderr.strip().splitlines() or ['?'])[0]}")


def dyn_source(prog: Program) -> Path:
    """The C file a "dyn" program is built from: its name without "dyn_"."""
    return SRC / f"{prog.name.removeprefix('dyn_')}.c"


def compile_programs(build: Path) -> dict[str, bytes]:
    """Build the suite's C programs into BUILD/linuxsuite/bin/: kind "c" static with
    musl-gcc, kind "dyn" with gcc against glibc, dynamically linked (a PIE, as Debian's
    gcc makes by default) and run by the archive's ld.so (debroot.py); return name ->
    executable bytes."""
    bindir = build / "linuxsuite" / "bin"
    bindir.mkdir(parents=True, exist_ok=True)
    out = {}
    extra = [Program(name, "c", 0, False, ()) for name in EXTRA_PROGRAMS]
    for prog in [p for p in programs() if p.kind in ("c", "dyn")] + extra:
        exe = bindir / prog.name
        if prog.kind == "c":
            cmd = ["musl-gcc", *CFLAGS, "-o", str(exe), str(SRC / f"{prog.name}.c"), "-lpthread"]
        else:
            cmd = ["gcc", *DYN_CFLAGS, "-o", str(exe), str(dyn_source(prog))]
        _compile(cmd, exe.name)
        out[prog.name] = exe.read_bytes()
    return out


def elf_corpus() -> dict[str, bytes]:
    """The malformed-ELF files of tests/linux/gen_elf.py, by name."""
    spec = importlib.util.spec_from_file_location("gen_elf", SRC / "gen_elf.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod.corpus()


def suite_entries(build: Path) -> list:
    """The suite's files as root-archive members under /suite: bin/ (programs), sh/
    (scripts), elf/ (the malformed-ELF corpus), lib.sh, list and run."""
    E, reg = rootfs.Entry, rootfs.S_IFREG
    entries = [E(f"suite/bin/{n}", reg | 0o755, b) for n, b in compile_programs(build).items()]
    entries += [E(f"suite/sh/{p.name}.sh", reg | 0o644, (SRC / f"{p.name}.sh").read_bytes())
                for p in programs() if p.kind == "sh"]
    entries += [E(f"suite/elf/{n}", reg | 0o755, b) for n, b in elf_corpus().items()]
    entries.append(E("suite/lib.sh", reg | 0o644, (SRC / "lib.sh").read_bytes()))
    entries.append(E("suite/list", reg | 0o644, (SRC / "suite.list").read_bytes()))
    entries.append(E("suite/run", reg | 0o755, (SRC / "run.sh").read_bytes()))
    return entries


def rootfs_archive(build: Path) -> Path:
    """Build BUILD/rootfs/ and BUILD/rootfs.cpio with the suite, the UNIX benchmark's
    program (unixbench.py), the SDET-like workload (sdet.py), the links naming aim's
    configurations (aim.py) and the Debian packages of debroot.py; return the archive."""
    if __package__:
        from . import aim, debroot, sdet, unixbench
    else:
        import aim
        import debroot
        import sdet
        import unixbench
    try:
        return rootfs.assemble(suite_entries(build) + unixbench.archive_entries(build) +
                               sdet.archive_entries(build) + aim.archive_entries() +
                               list(debroot.entries()), build)
    except (rootfs.RootfsError, unixbench.UnixBenchError, sdet.SdetError) as e:
        raise SuiteError(str(e)) from None


# ---- the Linux peer as a target -------------------------------------------------------

def peer_initrd(archive: Path, build: Path) -> Path:
    """The root archive followed by a second cpio holding only /init (peer-init): Linux
    unpacks both, so the peer boots the very archive ondol will."""
    overlay = rootfs.newc([rootfs.Entry("init", rootfs.S_IFREG | 0o755,
                                        (SRC / "peer-init").read_bytes())])
    out = build / "linuxsuite" / "peer-initrd.cpio"
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_bytes(archive.read_bytes() + overlay)
    return out


@functools.lru_cache(maxsize=None)
def peer_kernel() -> Path:
    """Debian's stock kernel, fetched by the peer's build script (once per process)."""
    from ondol import peer
    try:
        return peer.build_peer().vmlinuz
    except peer.PeerError as e:
        raise SuiteError(str(e)) from None


def peer_frames(archive: Path, build: Path) -> str:
    """Boot the Linux peer once (icount mode) on ARCHIVE; return its frames (two passes)."""
    initrd = peer_initrd(archive, build)
    work = build / "linuxsuite" / "peer-run"
    work.mkdir(parents=True, exist_ok=True)
    console, frames = work / "console.log", work / "frames.txt"
    for f in (console, frames):
        f.unlink(missing_ok=True)
    argv = qemucmd.peer(peer_kernel(), initrd, PEER_APPEND, console, frames, icount=True)
    try:
        p = subprocess.run(argv, stdin=subprocess.DEVNULL, capture_output=True, text=True,
                           timeout=PEER_TIMEOUT)
    except subprocess.TimeoutExpired:
        raise SuiteError(f"peer timed out after {PEER_TIMEOUT:g} s (logs in {work})") from None
    text = frames.read_text(errors="replace").replace("\r", "") if frames.exists() else ""
    if p.returncode != 0 or not text.rstrip().endswith("@@done"):
        raise SuiteError(f"peer run incomplete (QEMU status {p.returncode}; logs in {work})")
    return text


PEER = Target("linux", peer_frames, lambda: [peer_kernel(), SRC / "peer-init"])


def cache_key(target: Target, archive: Path) -> str:
    """A hash of what a target's result depends on: the archive, this runner and the
    target's inputs."""
    h = hashlib.sha256()
    for path in [archive, Path(__file__), *target.inputs()]:
        h.update(Path(path).read_bytes())
    return h.hexdigest()[:20]


def run_cached(target: Target, archive: Path, build: Path) -> str:
    """TARGET's frames for ARCHIVE, from build/linuxsuite/cache/ when the same inputs
    ran before. Only the newest result per target is kept."""
    cache = build / "linuxsuite" / "cache" / f"{target.name}-{cache_key(target, archive)}.txt"
    if cache.exists():
        return cache.read_text()
    text = target.run(archive, build)
    cache.parent.mkdir(parents=True, exist_ok=True)
    for stale in cache.parent.glob(f"{target.name}-*.txt"):  # results of older inputs
        stale.unlink()
    cache.write_text(text)
    return text


def suite_on_peer(build: Path) -> list[dict[str, Outcome]]:
    """Build the archive and run it on the Linux peer (cached): the outcomes per pass.
    A lock on build/linuxsuite/.lock serialises parallel callers (pytest-xdist)."""
    lock = build / "linuxsuite" / ".lock"
    lock.parent.mkdir(parents=True, exist_ok=True)
    with open(lock, "w") as f:
        fcntl.flock(f, fcntl.LOCK_EX)
        return parse(run_cached(PEER, rootfs_archive(build), build))


# ---- results ----------------------------------------------------------------------------

def parse(text: str) -> list[dict[str, Outcome]]:
    """Frames -> one {name: Outcome} per pass, in pass order."""
    passes: list[dict[str, Outcome]] = []
    current, body = None, []
    for line in text.splitlines():
        if line.startswith("@@pass "):
            passes.append({})
        elif line.startswith("@@begin "):
            current, body = line.split()[1], []
        elif line.startswith("@@end ") and current is not None:
            _, name, status = line.split()
            if not passes:
                passes.append({})
            passes[-1][name] = Outcome(name, "".join(l + "\n" for l in body), int(status))
            current = None
        elif current is not None:
            body.append(line)
    return passes


def case_count(outcomes: dict[str, Outcome]) -> int:
    """Cases reported by the compared programs (one output line each, totals excluded)."""
    compared = {p.name for p in programs() if p.compare}
    return sum(1 for o in outcomes.values() if o.name in compared
               for ln in o.lines() if ": " in ln)


def load_differences(path: Path = DIFFERENCES) -> dict[str, str]:
    """tests/linux/differences.txt: "PROGRAM/CASE | reason" per line ("PROGRAM/*" for a
    whole program) -> {"PROGRAM/CASE": reason}."""
    out = {}
    for line in path.read_text().splitlines():
        if line.strip() and not line.startswith("#"):
            key, _, reason = line.partition("|")
            out[key.strip()] = reason.strip()
    return out


def _case(line: str) -> str:
    """The case name of an output line ("FAIL " dropped), or the line itself."""
    line = line[5:] if line.startswith("FAIL ") else line
    return line.split(": ", 1)[0]


def compare(a: dict[str, Outcome], b: dict[str, Outcome],
            differences: dict[str, str] | None = None) -> list[str]:
    """Where B differs from A, program by program and line by line, skipping programs
    that are not compared and the known DIFFERENCES; one text line per difference."""
    differences = differences or {}
    problems = []
    for prog in (p for p in programs() if p.compare):
        if f"{prog.name}/*" in differences:
            continue
        x, y = a.get(prog.name), b.get(prog.name)
        if x is None or y is None:
            problems.append(f"{prog.name}: missing on {'first' if x is None else 'second'}")
            continue
        if x.status != y.status:
            problems.append(f"{prog.name}: status {x.status} vs {y.status}")
        lx, ly = x.lines(), y.lines()
        for i in range(max(len(lx), len(ly))):
            l1 = lx[i] if i < len(lx) else "(none)"
            l2 = ly[i] if i < len(ly) else "(none)"
            if l1 != l2 and f"{prog.name}/{_case(l1)}" not in differences:
                problems.append(f"{prog.name} line {i + 1}: {l1!r} vs {l2!r}")
    return problems


if __name__ == "__main__":
    b = REPO / "build"
    print(run_cached(PEER, rootfs_archive(b), b), end="")
