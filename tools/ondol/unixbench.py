"""`./ondol bench unix` (docs/unix.md, "Benchmark"): tools/unixbench/unixbench.c, one static
musl program, on ondol's UNIX server (unix=mk and unix=ik, as pid 1) and on the Linux peer in
the same QEMU and mode.

The program goes into the root archive (build/rootfs.cpio) twice: /bench/unixbench (the full
run) and /bench/unixbench-quick (a few samples; the test suite's shape check); so does
`./ondol bench net`'s Linux-ABI program, tools/netcalls/netcalls.c (/bench/netcalls and
/bench/netcalls-quick, and /bench/netcalls-bulk for `./ondol bench net-offload`;
netbench.py boots the peer for it through peer_boot). On ondol it
writes its records to /dev/results (the server's device for the result stream); on the peer
to stdout, which the peer's /init (a second cpio appended to the archive, as the
differential suite's peer-init is) sends to COM2.
"""
from __future__ import annotations

import subprocess
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # tools/: qemucmd, ondol
import qemucmd  # noqa: E402

if __package__:
    from . import rootfs
else:  # imported by linuxsuite run as a script: tools/ondol/ is sys.path[0]
    import rootfs

REPO = Path(__file__).resolve().parents[2]
SOURCE = REPO / "tools" / "unixbench" / "unixbench.c"
NETCALLS_SOURCE = REPO / "tools" / "netcalls" / "netcalls.c"
CFLAGS = ["-static", "-O2", "-std=c11", "-Wall", "-Wextra", "-Werror"]
PROGRAM = "/bench/unixbench"
QUICK_PROGRAM = "/bench/unixbench-quick"
PEER_APPEND = "console=ttyS0 quiet panic=-1"
PEER_TIMEOUT = 900.0


class UnixBenchError(Exception):
    """Building or running the program failed; str(e) is one line."""


def program_path(quick: bool) -> str:
    return QUICK_PROGRAM if quick else PROGRAM


def compile_program(build: Path, source: Path = SOURCE) -> bytes:
    """A program (unixbench.c) built static with musl-gcc into BUILD/unixbench/; its bytes."""
    exe = build / "unixbench" / source.stem
    exe.parent.mkdir(parents=True, exist_ok=True)
    try:
        p = subprocess.run(["musl-gcc", *CFLAGS, "-o", str(exe), str(source)],
                           capture_output=True, text=True)
    except FileNotFoundError:
        raise UnixBenchError("musl-gcc not found (Debian package musl-tools; "
                             "scripts/deps.sh)") from None
    if p.returncode != 0:
        raise UnixBenchError(f"compiling {source.name} failed: "
                             f"{(p.stderr.strip().splitlines() or ['?'])[0]}")
    return exe.read_bytes()


def archive_entries(build: Path) -> list:
    """The programs' root-archive members: each under its full and its quick name (and
    netcalls also as netcalls-bulk: its bulk transfers alone)."""
    mode = rootfs.S_IFREG | 0o755
    out = []
    for source in (SOURCE, NETCALLS_SOURCE):
        data = compile_program(build, source)
        suffixes = ("", "-quick", "-bulk") if source == NETCALLS_SOURCE else ("", "-quick")
        out += [rootfs.Entry(f"bench/{source.stem}{suffix}", mode, data) for suffix in suffixes]
    return out


def peer_init(quick: bool) -> bytes:
    """/init of the peer boot: the benchmark program (peer_init_running)."""
    return peer_init_running(program_path(quick))


def peer_init_running(command: str) -> bytes:
    """/init of a peer boot that runs one command: tmpfs on /tmp (as on ondol), the
    command's records on COM2, power off."""
    return (
        "#!/bin/sh\n"
        "export PATH=/bin:/sbin:/usr/bin:/usr/sbin\n"
        "mount -t proc proc /proc\n"
        "mount -t devtmpfs devtmpfs /dev\n"
        "mount -t tmpfs tmpfs /tmp\n"
        "exec </dev/console >/dev/console 2>&1\n"
        "stty -F /dev/ttyS1 raw -echo\n"
        f"{command} >/dev/ttyS1\n"
        "poweroff -f\n").encode()


def peer_records(build: Path, quick: bool, icount: bool) -> list[dict]:
    """Boot the Linux peer once on the root archive (which must hold the program) and
    return the records the program wrote."""
    return peer_boot(build, build / "unixbench" / "peer", peer_init(quick), icount=icount)


def peer_run(build: Path, work: Path, init: bytes, more: tuple = (),
             timeout: float = PEER_TIMEOUT, **knobs) -> str:
    """Boot the Linux peer once on the root archive with `init` as /init and the entries
    `more` added (a second cpio); return what it wrote to its COM2 (carriage returns
    dropped). knobs go to qemucmd.peer (icount, icount_sleep, qemu, extra); logs stay in
    work."""
    from ondol import linuxsuite
    archive = build / "rootfs.cpio"
    work.mkdir(parents=True, exist_ok=True)
    initrd, console, results = work / "initrd.cpio", work / "console.log", work / "results.jsonl"
    overlay = rootfs.newc([rootfs.Entry("init", rootfs.S_IFREG | 0o755, init), *more])
    initrd.write_bytes(archive.read_bytes() + overlay)
    for f in (console, results):
        f.unlink(missing_ok=True)
    try:
        kernel = linuxsuite.peer_kernel()
    except linuxsuite.SuiteError as e:
        raise UnixBenchError(str(e)) from None
    argv = qemucmd.peer(kernel, initrd, PEER_APPEND, console, results, **knobs)
    try:
        subprocess.run(argv, stdin=subprocess.DEVNULL, capture_output=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        raise UnixBenchError(f"peer timed out after {timeout:g} s (logs in {work})") from None
    return results.read_text(errors="replace").replace("\r", "") if results.exists() else ""


def peer_boot(build: Path, work: Path, init: bytes, more: tuple = (), **knobs) -> list[dict]:
    """peer_run, and the records of ondol's result stream that the peer wrote."""
    from ondol import stream
    text = peer_run(build, work, init, more, **knobs)
    parser = stream.StreamParser(str(work / "results.jsonl"))
    try:
        for line in text.splitlines():
            parser.feed(line)
        return parser.finish().results
    except Exception as e:  # an OndolError from the parser: no end record, bad JSON
        raise UnixBenchError(f"peer run: {e} (logs in {work})") from None
