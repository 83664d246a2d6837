"""Allocation traces of real programs running on ondol (issue 14 item 4; docs/alloc.md,
"Traces taken on ondol").

Debian's dynamically linked programs run unmodified on ondol's UNIX server (docs/unix.md,
"Dynamic programs"), so the hosted trace recorder (build/malloc/libondoltrace.so,
tools/allocbench/trace.c) is preloaded into them there as on Linux: tcc compiling and
linking tools/allocbench/replay.c, coreutils' sort on a file of SORT_LINES numbers, and
make -n on a generated Makefile (MAKE_TARGETS targets over variables built with make's
functions), and SDET's dynamically linked commands pr, col and nroff as SDET's steps run
them on its clone tree (docs/sdet.md; busybox's commands are static, nothing preloads into
them). A root archive of their own (build/alloc-traces/ondol/rootfs.cpio: Debian's
packages as debroot.py keeps them, coreutils' sort, one more kernel header tcc needs for
replay.c, SDET's clone tree, the recorder, the inputs and /trace/run) boots with unix=mk
and linux_init=/trace/run, which runs the programs and copies each trace to /dev/results
(COM2, the result stream) behind a line "#@ PATH". The host splits the stream into
build/alloc-traces/ondol-PROGRAM.trace (each program's largest process trace); `./ondol
bench alloc --host` replays them against every allocator (hostbench.py).

    traces(top)     # {"trace:ondol-PROGRAM": path} for each of PROGRAMS, recorded once
    table2(path)    # P2's Table 2 row of one trace: calls per function
"""
from __future__ import annotations

import random
import re
import subprocess
import tempfile
from pathlib import Path

import qemucmd
from ondol import OndolError, debroot, rootfs, sdet

SORT_LINES = 200_000
MAKE_TARGETS = 400
#: SDET's steps (tools/sdet/steps.txt) whose dynamic commands are traced, and those commands
SDET_STEPS = ("pr1", "col1", "nroff1")
SDET_PROGRAMS = ("pr", "col", "nroff")
PROGRAMS = ("tcc", "sort", "make", *SDET_PROGRAMS)
TRACE_BITS = 18          # the recorder's table: 4 MiB, ~200,000 live blocks (trace.c)
BOOT_TIMEOUT = 1800.0
MEMORY = "512M"
PRELOAD = "LD_PRELOAD=/trace/libondoltrace.so"


def sdet_steps() -> str:
    """SDET_STEPS as SDET's scripts run them, in the clone tree with the scripts' locale
    (nroff then picks the ASCII device, the one in the archive), each command of
    SDET_PROGRAMS with the recorder preloaded: nroff's trace files hold groff's, troff's
    and grotty's processes (the busybox sh running the nroff script is static)."""
    command = re.compile(rf"(^|\|\s*)({'|'.join(SDET_PROGRAMS)})\b", re.M)
    by_name = {s.name: s for s in sdet.steps()}
    out = []
    for name in SDET_STEPS:
        body = command.sub(lambda m: f"{m[1]}{PRELOAD} ondol_trace=/tmp/{m[2]}.%p.trace {m[2]}",
                           by_name[name].body)
        out.append(f"(\ncd /sdet/clone\n{body}) > /dev/null"
                   f" || echo \"alloctrace: {name} failed\"\n")
    return "export LC_ALL=C\n" + "".join(out)


def run_script() -> str:
    """/trace/run, pid 1 of the trace boot: each program with the recorder preloaded, then
    every trace to the result stream behind a "#@ PATH" line."""
    return f"""#!/bin/sh
# pid 1 of the trace boot (tools/ondol/alloctrace.py)
export ondol_trace_bits={TRACE_BITS}
cd /trace
{PRELOAD} ondol_trace=/tmp/tcc.%p.trace \\
    tcc -o /tmp/replay /trace/replay.c || echo "alloctrace: tcc failed"
{PRELOAD} ondol_trace=/tmp/sort.%p.trace \\
    /usr/bin/sort -n -o /tmp/sorted /trace/numbers.txt || echo "alloctrace: sort failed"
{PRELOAD} ondol_trace=/tmp/make.%p.trace \\
    make -n -f /trace/Makefile > /dev/null || echo "alloctrace: make failed"
{sdet_steps()}for f in /tmp/*.trace; do
    echo "#@ $f"
    cat "$f"
done > /dev/results
echo "alloctrace: done"
"""


def makefile() -> str:
    """Targets whose commands expand variables grown with make's functions: make's own
    allocation pattern (strings, variables, rules), with nothing to run under -n."""
    lines = ["V0 := a0"]
    for i in range(1, MAKE_TARGETS + 1):
        lines.append(f"V{i} := $(patsubst a%,b%,$(V{i - 1})) a{i}")
    lines.append("all: " + " ".join(f"t{i}" for i in range(1, MAKE_TARGETS + 1)))
    for i in range(1, MAKE_TARGETS + 1):
        lines.append(f"t{i}:\n\t@echo $(words $(V{i})) $(sort $(V{i}))")
    return "\n".join(lines) + "\n"


def _entries(top: Path) -> list[rootfs.Entry]:
    """What the trace boot's archive holds beyond the base system."""
    reg = rootfs.S_IFREG
    rng = random.Random(14)
    numbers = "".join(f"{rng.randrange(10**9)}\n" for _ in range(SORT_LINES)).encode()
    recorder = top / "build" / "malloc" / "libondoltrace.so"
    if not recorder.is_file():
        raise OndolError(f"{recorder} is missing (run make)")
    allocbench = top / "tools" / "allocbench"
    return [*debroot.entries(), *sdet.clone_entries(),
            *debroot.package_entries("coreutils", ["usr/bin/sort"]),
            *debroot.package_entries("linux-libc-dev", ["usr/include/linux/falloc.h"]),
            rootfs.Entry("trace/run", reg | 0o755, run_script().encode()),
            rootfs.Entry("trace/libondoltrace.so", reg | 0o755, recorder.read_bytes()),
            rootfs.Entry("trace/replay.c", reg | 0o644, (allocbench / "replay.c").read_bytes()),
            rootfs.Entry("trace/peak_rss.h", reg | 0o644,
                         (allocbench / "peak_rss.h").read_bytes()),
            rootfs.Entry("trace/Makefile", reg | 0o644, makefile().encode()),
            rootfs.Entry("trace/numbers.txt", reg | 0o644, numbers)]


def _boot(top: Path, archive: Path, work: Path) -> tuple[str, bytes]:
    """One boot of the trace archive; the console text and the raw result stream."""
    console, stream = work / "console.log", work / "stream.raw"
    append = qemucmd.append_line({"unix": "mk", "linux_init": "/trace/run"})
    cmd = qemucmd.ondol(top / "build" / "ondol.bin", top / "build" / "bootfs.tar", append,
                        com1=f"file:{console}", com2=f"file:{stream}", rootfs=archive,
                        memory=MEMORY)
    try:
        subprocess.run(cmd, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                       stderr=subprocess.DEVNULL, timeout=BOOT_TIMEOUT)
    except subprocess.TimeoutExpired:
        raise OndolError(f"the trace boot did not finish in {BOOT_TIMEOUT:.0f} s") from None
    text = console.read_text(errors="replace") if console.exists() else ""
    return text, stream.read_bytes() if stream.exists() else b""


def split(stream: bytes) -> dict[str, list[str]]:
    """The traces in a result stream: "#@ PATH" opens one; JSON records are skipped."""
    out: dict[str, list[str]] = {}
    current = None
    for line in stream.decode(errors="replace").splitlines():
        if line.startswith("#@ "):
            current = out.setdefault(line[3:].strip(), [])
        elif current is not None and line and not line.startswith("{"):
            current.append(line)
    return out


def _keep_largest(parts: dict[str, list[str]], directory: Path) -> dict[str, Path]:
    """Per program, its largest process trace as ondol-PROGRAM.trace."""
    found = {}
    for program in PROGRAMS:
        mine = [lines for path, lines in parts.items() if Path(path).name.startswith(program + ".")]
        if not mine:
            continue
        path = directory / f"ondol-{program}.trace"
        path.write_text("\n".join(max(mine, key=len)) + "\n")
        found[f"trace:ondol-{program}"] = path
    return found


def traces(top: Path) -> dict[str, Path]:
    """The ondol traces, recorded by one boot when any is missing."""
    directory = top / "build" / "alloc-traces"
    paths = {f"trace:ondol-{p}": directory / f"ondol-{p}.trace" for p in PROGRAMS}
    if all(p.exists() for p in paths.values()):
        return paths
    directory.mkdir(parents=True, exist_ok=True)
    try:
        archive = rootfs.assemble(_entries(top), directory / "ondol")
    except rootfs.RootfsError as e:
        raise OndolError(f"trace archive: {e}") from None
    with tempfile.TemporaryDirectory(dir=directory) as tmp:
        console, stream = _boot(top, archive, Path(tmp))
        (directory / "ondol-console.log").write_text(console)
    found = _keep_largest(split(stream), directory)
    if len(found) != len(PROGRAMS):
        raise OndolError("the trace boot recorded "
                         f"{sorted(found) or 'nothing'} (console: build/alloc-traces/"
                         "ondol-console.log)")
    return found


FUNCTIONS = {"m": "malloc", "c": "calloc", "r": "realloc", "a": "memalign", "f": "free"}


def table2(path: Path) -> dict[str, int]:
    """Calls per function in a trace (P2's Table 2 columns; memalign: the aligned calls)."""
    counts = dict.fromkeys(FUNCTIONS.values(), 0)
    with path.open() as f:
        for line in f:
            name = FUNCTIONS.get(line[:1])
            if name:
                counts[name] += 1
    return counts
