"""Linux peer runner: measure Debian's stock kernel in the same QEMU setup as ondol.

The peer is Debian's ``linux-image-amd64`` kernel booted with a small initramfs
(busybox + the static programs in ``tools/peer/``). Its ``/init`` reads the
request from the kernel command line (``peer=pipe,n=2000,unit=icount``), runs
the benchmark and writes ondol's result-stream JSON lines to COM2, then powers
off. See ``tools/peer/README.md``.

API (everything else in this module is private):

``build_peer(refresh=False) -> PeerBuild``
    Run ``tools/peer/build-initramfs.sh`` (cached downloads; rebuilds the
    programs and the initramfs). Returns the paths of the products.

``run_peer(test, n, icount=True, timeout=DEFAULT_TIMEOUT, *, warmup=None,
raw=False, build=None, workdir=None) -> list[dict]``
    Boot the peer once and return every JSON record it wrote, in order:
    ``hello``, then ``result`` / ``end`` per program, then the final
    ``{"type":"end","bench":"peer",...}``. ``test`` is a short name from
    ``TESTS`` (``"pipe"``, ``"futex"``, ``"futex_proc"``, ``"syscall"``), a
    result test name such as ``"linux_pipe_roundtrip"``, or a list of them
    (run in one boot). ``warmup`` overrides the default of 2000
    untimed rounds; ``raw=True`` adds a ``{"type":"raw","samples":[...]}``
    record (samples in the order taken) before each result. ``build`` is a
    ``PeerBuild`` to reuse (default: call ``build_peer()``); ``workdir`` keeps
    ``console.log`` and ``results.jsonl`` there (default: a scratch directory
    under ``build/peer/runs/``, removed after a successful run, kept and named
    in the error message after a failed one).
    Use ``results(records)`` to keep the result records.

``boot_peer(tests, n, icount=True, timeout=DEFAULT_TIMEOUT, *, warmup=None,
raw=False, build=None, workdir=None) -> PeerRun``
    Same boot, returning records plus wall time, the QEMU command and the
    console text (for reports and for measuring boot time).

``qemu_argv(build, append, icount, console_log, results_log) -> list[str]``
    The exact QEMU command line used (tools/qemucmd.py: the same machine as ondol's).

``results(records) -> list[dict]``
    The ``"type": "result"`` records.

``PeerError``
    Raised with a one-line message when anything fails: the build or a
    download, QEMU missing, a timeout, a non-zero exit, no or bad output, an
    error record from the guest, a requested test without a result.

Units: with ``icount=True`` QEMU runs ``-icount shift=0,sleep=off``, the guest
TSC advances once per instruction, and results are in
``"instructions (icount)"``; otherwise in ``"TSC ticks"`` (host-time based,
noisy).
"""
from __future__ import annotations

import json
import shutil
import subprocess
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Iterable, Sequence, Union

import qemucmd  # tools/qemucmd.py: the one QEMU command line

__all__ = [
    "PeerError",
    "PeerBuild",
    "PeerRun",
    "TESTS",
    "DEFAULT_TIMEOUT",
    "build_peer",
    "run_peer",
    "boot_peer",
    "qemu_argv",
    "results",
]

REPO = Path(__file__).resolve().parents[2]
SCRIPT = REPO / "tools" / "peer" / "build-initramfs.sh"
QEMU = qemucmd.binary()

#: short name (as written in ``peer=``) -> test name in the result record
TESTS = {
    "pipe": "linux_pipe_roundtrip",
    "futex": "linux_futex_handoff",
    "futex_proc": "linux_futex_handoff_proc",
    "syscall": "linux_null_syscall",
    "fork0": "linux_fork0",
    "fork64": "linux_fork64",
    "pagefault": "linux_pagefault",
    "cowfault": "linux_cowfault",
    "mmap16": "linux_mmap16",
}

#: seconds; a boot plus a few thousand samples takes ~10-20 s under TCG here
DEFAULT_TIMEOUT = 300.0

#: kernel command line before the ``peer=`` request; panic=-1 turns a guest
#: panic into a reboot, which -no-reboot turns into a QEMU exit.
BASE_APPEND = "console=ttyS0 quiet panic=-1"


class PeerError(Exception):
    """A peer build or run failed; str(e) is a one-line explanation."""


@dataclass(frozen=True)
class PeerBuild:
    vmlinuz: Path          # Debian's stock kernel image
    initramfs: Path        # newc cpio with /init, busybox and the peer programs
    kernel_version: str    # e.g. "6.1.0-56-amd64"
    bin_dir: Path          # the static peer programs (runnable on the host)


@dataclass
class PeerRun:
    records: list          # every JSON record from COM2, in order
    wall_s: float          # host seconds from QEMU start to exit
    argv: list             # the QEMU command
    console: str           # COM1 text (kernel messages, /init messages)
    workdir: Path | None   # console.log / results.jsonl; None once removed
    tests: list = field(default_factory=list)  # short names requested


def _one_line(text: str, limit: int = 300) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 3] + "..."


def build_peer(refresh: bool = False) -> PeerBuild:
    """Build (or reuse) the peer kernel + initramfs; see tools/peer/build-initramfs.sh."""
    cmd = ["bash", str(SCRIPT)] + (["--refresh"] if refresh else [])
    try:
        p = subprocess.run(cmd, cwd=REPO, capture_output=True, text=True, timeout=1800)
    except subprocess.TimeoutExpired:
        raise PeerError("peer build timed out after 1800 s") from None
    if p.returncode != 0:
        lines = [ln for ln in p.stderr.splitlines() if ln.strip()]
        # The script's own messages start with "build-initramfs:"; prefer them.
        own = [ln for ln in lines if ln.startswith("build-initramfs:")]
        msg = (own or lines or [f"exit status {p.returncode}"])[-1]
        raise PeerError(f"peer build failed: {_one_line(msg)}")
    kv = dict(ln.split("=", 1) for ln in p.stdout.splitlines() if "=" in ln)
    try:
        b = PeerBuild(vmlinuz=Path(kv["vmlinuz"]), initramfs=Path(kv["initramfs"]),
                      kernel_version=kv["kernel_version"], bin_dir=Path(kv["bin"]))
    except KeyError as e:
        raise PeerError(f"peer build printed no {e.args[0]}= line") from None
    for path in (b.vmlinuz, b.initramfs):
        if not path.is_file():
            raise PeerError(f"peer build did not produce {path}")
    return b


def _short_names(test: Union[str, Sequence[str]]) -> list:
    items = [test] if isinstance(test, str) else list(test)
    if not items:
        raise PeerError("no peer test given")
    by_result = {v: k for k, v in TESTS.items()}
    out = []
    for t in items:
        if t in TESTS:
            out.append(t)
        elif t in by_result:
            out.append(by_result[t])
        else:
            raise PeerError(f"unknown peer test {t!r} (known: {', '.join(TESTS)})")
    return out


def qemu_argv(build: PeerBuild, append: str, icount: bool,
              console_log: Path, results_log: Path) -> list:
    """The QEMU command that boots the peer (COM1 -> console_log, COM2 -> results_log): the
    machine and icount flags are ondol's own (tools/qemucmd.py), so counts compare."""
    return qemucmd.peer(build.vmlinuz, build.initramfs, append, console_log, results_log,
                        qemu=QEMU, icount=icount)


def _parse(path: Path) -> list:
    try:
        text = path.read_text(errors="replace")
    except FileNotFoundError:
        raise PeerError(f"no result stream written ({path})") from None
    records = []
    for i, line in enumerate(text.splitlines(), 1):
        line = line.strip().strip("\x00")
        if not line:
            continue
        try:
            rec = json.loads(line)
        except json.JSONDecodeError:
            raise PeerError(f"bad JSON on result line {i}: {_one_line(line, 120)}") from None
        if not isinstance(rec, dict) or "type" not in rec:
            raise PeerError(f"result line {i} is not a record: {_one_line(line, 120)}")
        records.append(rec)
    return records


def boot_peer(tests: Union[str, Sequence[str]], n: int, icount: bool = True,
              timeout: float = DEFAULT_TIMEOUT, *, warmup: int | None = None,
              raw: bool = False, build: PeerBuild | None = None,
              workdir: Path | None = None) -> PeerRun:
    """Boot the peer once and return records, wall time and console (see module doc)."""
    names = _short_names(tests)
    if not isinstance(n, int) or n < 1:
        raise PeerError(f"n must be a positive integer, not {n!r}")
    if warmup is not None and (not isinstance(warmup, int) or warmup < 0):
        raise PeerError(f"warmup must be a non-negative integer, not {warmup!r}")
    if shutil.which(QEMU) is None:
        raise PeerError(f"{QEMU} not found")
    if build is None:
        build = build_peer()

    own_dir = workdir is None
    if own_dir:
        runs = build.initramfs.parent / "runs"
        runs.mkdir(parents=True, exist_ok=True)
        workdir = Path(tempfile.mkdtemp(prefix="+".join(names) + "-", dir=runs))
    else:
        workdir = Path(workdir)
        workdir.mkdir(parents=True, exist_ok=True)
    console_log = workdir / "console.log"
    results_log = workdir / "results.jsonl"
    for f in (console_log, results_log):
        f.unlink(missing_ok=True)

    spec = ",".join(names) + f",n={n}" + (f",w={warmup}" if warmup is not None else "")
    spec += ",unit=" + ("icount" if icount else "tsc") + (",raw=1" if raw else "")
    argv = qemu_argv(build, f"{BASE_APPEND} peer={spec}", icount, console_log, results_log)

    where = f" (logs in {workdir})"
    t0 = time.monotonic()
    try:
        p = subprocess.run(argv, stdin=subprocess.DEVNULL, capture_output=True,
                           text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        raise PeerError(f"peer boot timed out after {timeout:g} s{where}") from None
    except OSError as e:
        raise PeerError(f"cannot run {QEMU}: {e.strerror}") from None
    wall = time.monotonic() - t0
    if p.returncode != 0:
        err = _one_line(p.stderr) or f"exit status {p.returncode}"
        raise PeerError(f"QEMU failed: {err}{where}")

    records = _parse(results_log)
    console = console_log.read_text(errors="replace") if console_log.exists() else ""
    if not records:
        raise PeerError(f"no result: the guest wrote nothing to COM2{where}")
    for r in records:
        if r.get("type") == "error" or (r.get("type") == "end" and r.get("status", 0) != 0):
            msg = r.get("message") or r.get("error") or f"status {r.get('status')}"
            raise PeerError(f"peer test {r.get('test') or '?'} failed: {_one_line(str(msg), 200)}{where}")
    got = {r.get("test") for r in records if r.get("type") == "result"}
    missing = [t for t in names if TESTS[t] not in got]
    if missing:
        raise PeerError(f"no result for {', '.join(missing)}{where}")
    last = records[-1]
    if not (last.get("type") == "end" and last.get("bench") == "peer"):
        raise PeerError(f"result stream ended early{where}")

    kept: Path | None = workdir
    if own_dir:  # our scratch directory: drop it once the run succeeded
        shutil.rmtree(workdir, ignore_errors=True)
        kept = None
    return PeerRun(records=records, wall_s=wall, argv=argv, console=console,
                   workdir=kept, tests=names)


def run_peer(test: Union[str, Sequence[str]], n: int, icount: bool = True,
             timeout: float = DEFAULT_TIMEOUT, *, warmup: int | None = None,
             raw: bool = False, build: PeerBuild | None = None,
             workdir: Path | None = None) -> list:
    """Boot the peer, run `test` with `n` samples, return all JSON records."""
    return boot_peer(test, n, icount, timeout, warmup=warmup, raw=raw, build=build,
                     workdir=workdir).records


def results(records: Iterable[dict]) -> list:
    """Only the result records."""
    return [r for r in records if r.get("type") == "result"]
