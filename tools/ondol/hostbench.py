"""`./ondol bench alloc --host`: ondol's allocator against glibc, jemalloc, tcmalloc and
mimalloc on this Linux machine (issue 14, docs/alloc.md). No QEMU: the workloads of
tools/allocbench/allocbench.c run natively, the allocator chosen with LD_PRELOAD.

Per workload and allocator: wall time (median of --runs repetitions, allocators
interleaved in every repetition, ratios to glibc and mimalloc from the same run), peak RSS
(ru_maxrss), instructions per operation (callgrind, exact: (Ir(2N) - Ir(N)) / N, so setup
and exit cancel out), the longest and the 99.99th-percentile malloc call (a separate timed
run, wall clock). Once per allocator: the instructions of every small malloc call of a
churn run (callgrind dump before/after each call; system calls count one instruction,
the kernel's work is not seen), worst and 99.99th percentile after the first
WARMUP_CALLS calls (which include lazy symbol binding and initialisation).
Debian's libraries are fetched with `apt-get download` into build/alloc-libs once.
"""
import os
import re
import shutil
import statistics
import subprocess
import sys
from pathlib import Path

from ondol import OndolError, alloctrace, project, results
from ondol.progress import BenchProgress

NAME = "alloc-host"
DESCRIPTION = ("ondol's malloc against glibc, jemalloc, tcmalloc, mimalloc (LD_PRELOAD, "
               "hosted, wall clock + callgrind)")
# workload -> (threads, allocations per thread) for the timed runs: each run takes a
# fraction of a second on a 2-core machine.
WORKLOADS = {
    "churn": (1, 2_000_000), "larson": (4, 500_000), "xthread": (4, 300_000),
    "scratch": (4, 300_000), "realloc": (4, 500_000), "sizes": (4, 100_000),
}
CALLGRIND_OPS = 20_000          # N for (Ir(2N) - Ir(N)) / N
WORST_CASE_CALLS = 30_000       # small mallocs whose instructions are counted one by one
WARMUP_CALLS = 12_000           # the churn's 10,000 slots fill first
TRACE_LINES = 300_000          # lines of the file busybox sort sorts
DEBIAN = {"jemalloc": ("libjemalloc2", "libjemalloc.so.2"),
          "tcmalloc": ("libtcmalloc-minimal4", "libtcmalloc_minimal.so.4"),
          "mimalloc": ("libmimalloc2.0", "libmimalloc.so.2")}
KEY = ("workload", "allocator")
COLUMNS = ("workload", "allocator", "threads", "median", "vs_glibc", "vs_mimalloc",
           "peak_rss_kib", "insns_per_op", "lat_max_ns", "lat_p9999_ns")


def allocators(top: Path) -> dict[str, Path | None]:
    """name -> library to preload (None: the system's glibc malloc)."""
    found = {"glibc": None, "ondol": top / "build" / "malloc" / "libondolmalloc.so"}
    libdir = top / "build" / "alloc-libs" / "root" / "usr" / "lib" / "x86_64-linux-gnu"
    for name, (package, soname) in DEBIAN.items():
        if not (libdir / soname).exists():
            _fetch(top / "build" / "alloc-libs", package)
        if (libdir / soname).exists():
            found[name] = libdir / soname
        else:
            print(f"ondol: note: {package} unavailable; {name} left out", file=sys.stderr)
    return found


def _fetch(directory: Path, package: str) -> None:
    """apt-get download + dpkg-deb -x: no root needed, nothing installed system-wide."""
    directory.mkdir(parents=True, exist_ok=True)
    subprocess.run(["apt-get", "download", package], cwd=directory, capture_output=True)
    for deb in directory.glob(f"{package}_*.deb"):
        subprocess.run(["dpkg-deb", "-x", str(deb), "root"], cwd=directory, check=True)


def _env(lib: Path | None) -> dict:
    env = dict(os.environ)
    env.pop("LD_PRELOAD", None)
    if lib is not None:
        env["LD_PRELOAD"] = str(lib)
    return env


def run_once(exe: Path, lib: Path | None, args: list[str]) -> dict:
    """One allocbench/allocreplay run: its JSON line (wall_s, peak_rss_kib: VmHWM)."""
    import json
    r = subprocess.run([str(exe), *args], capture_output=True, text=True, env=_env(lib))
    if r.returncode != 0:
        raise OndolError(f"{exe.name} {' '.join(args)} failed with {lib or 'glibc'}: "
                         f"{r.stderr[-300:]}")
    return json.loads(r.stdout)


def traces(top: Path) -> dict[str, Path]:
    """Sample traces, recorded once into build/alloc-traces (not committed): busybox sort
    on a file of TRACE_LINES shuffled numbers, and gcc compiling lib/malloc/malloc.c (the
    largest trace of its processes, cc1's)."""
    directory = top / "build" / "alloc-traces"
    directory.mkdir(parents=True, exist_ok=True)
    recorder = top / "build" / "malloc" / "libondoltrace.so"
    found = {}
    busybox = top / "build" / "alloc-libs" / "root" / "bin" / "busybox"
    if not busybox.exists():
        _fetch(top / "build" / "alloc-libs", "busybox")
    if busybox.exists() and not (directory / "sort.trace").exists():
        data = directory / "sort-input.txt"
        rng = __import__("random").Random(14)
        data.write_text("".join(f"{rng.randrange(10**9)}\n" for _ in range(TRACE_LINES)))
        _record(recorder, directory / "sort", [str(busybox), "sort", str(data)])
    if (directory / "sort.trace").exists():
        found["trace:busybox-sort"] = directory / "sort.trace"
    if not (directory / "gcc.trace").exists():
        _record(recorder, directory / "gcc", ["gcc", "-O2", "-c", "-Ilib/malloc",
                                               "lib/malloc/malloc.c", "-o",
                                               str(directory / "malloc.o")], cwd=top)
    if (directory / "gcc.trace").exists():
        found["trace:gcc"] = directory / "gcc.trace"
    try:
        found.update(alloctrace.traces(top))     # taken on ondol: one boot, once
    except OndolError as e:
        print(f"ondol: note: no traces taken on ondol: {e}", file=sys.stderr)
    return found


def _record(recorder: Path, stem: Path, command: list[str], cwd: Path | None = None) -> None:
    """Runs command with the recorder preloaded; keeps the largest per-process trace."""
    parts = stem.parent / f"{stem.name}.parts"
    parts.mkdir(exist_ok=True)
    env = dict(os.environ, LD_PRELOAD=str(recorder), ondol_trace=str(parts / "%p.trace"))
    subprocess.run(command, env=env, cwd=cwd, stdout=subprocess.DEVNULL, check=True)
    largest = max(parts.glob("*.trace"), key=lambda p: p.stat().st_size, default=None)
    if largest is not None:
        largest.rename(stem.with_suffix(".trace"))
    shutil.rmtree(parts)


def callgrind(exe: Path, lib: Path | None, args: list[str], out: Path,
              extra: tuple[str, ...] = ()) -> str:
    subprocess.run(["valgrind", "--tool=callgrind", f"--callgrind-out-file={out}", *extra,
                    str(exe), *args], env=_env(lib), capture_output=True, check=True)
    text = out.read_text()
    out.unlink()
    return text


def instructions(exe: Path, lib: Path | None, workload: str, threads: int, work: Path) -> float:
    def total(ops: int) -> int:
        text = callgrind(exe, lib, [workload, str(threads), str(ops)], work / "cg.out")
        return int(re.search(r"^summary: (\d+)", text, re.M).group(1))
    return (total(2 * CALLGRIND_OPS) - total(CALLGRIND_OPS)) / (CALLGRIND_OPS * threads)


SYSCALL_WRAPPERS = {"mmap", "mmap64", "munmap", "madvise", "syscall", "mremap", "brk", "sbrk",
                    "__brk", "__sbrk", "sched_yield", "nanosleep", "__futex_abstimed_wait_common"}


def malloc_calls(exe: Path, lib: Path | None, work: Path) -> list[tuple[int, bool]]:
    """Instructions of each malloc call of a single-thread churn run (16..512 bytes), and
    whether the call entered the kernel (it ran a system-call wrapper)."""
    text = callgrind(exe, lib, ["churn", "1", str(WORST_CASE_CALLS)], work / "cg.out",
                     ("--dump-before=malloc", "--dump-after=malloc", "--combine-dumps=yes"))
    names = dict(re.findall(r"fn=\((\d+)\) (\S+)", text))
    calls = []
    for part in text.split("desc: Trigger: ")[1:]:
        if not part.startswith("--dump-after=malloc"):
            continue
        cost = int(re.search(r"^totals: (\d+)", part, re.M).group(1))
        called = {names.get(i, "") for i in re.findall(r"^c?fn=\((\d+)\)", part, re.M)}
        calls.append((cost, bool(called & SYSCALL_WRAPPERS)))
    return calls


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def run(top: Path, runs: int, directory: Path) -> dict:
    exe = top / "build" / "malloc" / "allocbench"
    if shutil.which("valgrind") is None:
        raise OndolError("valgrind is needed for instruction counts (apt-get install valgrind)")
    libs = allocators(top)
    replay = top / "build" / "malloc" / "allocreplay"
    recorded = traces(top)
    work = directory / "logs"
    work.mkdir(parents=True, exist_ok=True)
    walls: dict[tuple, list[float]] = {}
    rss: dict[tuple, list[int]] = {}
    total = (runs * (len(WORKLOADS) + len(recorded)) * len(libs) + len(WORKLOADS) * len(libs)
             + len(libs))
    with BenchProgress(NAME, total) as progress:
        for _ in range(runs):
            for workload, (threads, ops) in WORKLOADS.items():
                for name, lib in libs.items():
                    progress.boot_started(f"{workload} {name}")
                    line = run_once(exe, lib, [workload, str(threads), str(ops)])
                    walls.setdefault((workload, name), []).append(line["wall_s"])
                    rss.setdefault((workload, name), []).append(line["peak_rss_kib"])
                    progress.boot_done()
            for trace, path in recorded.items():
                for name, lib in libs.items():
                    progress.boot_started(f"{trace} {name}")
                    line = run_once(replay, lib, [str(path)])
                    walls.setdefault((trace, name), []).append(line["wall_s"])
                    rss.setdefault((trace, name), []).append(line["peak_rss_kib"])
                    progress.boot_done()
        rows = []
        for workload, (threads, ops) in WORKLOADS.items():
            for name, lib in libs.items():
                progress.boot_started(f"{workload} {name}: latency, callgrind")
                lat = run_once(exe, lib, [workload, str(threads), str(ops), "latency"])
                rows.append({
                    "workload": workload, "allocator": name, "threads": threads, "ops": ops,
                    "unit": "s (wall clock)", "median": statistics.median(walls[workload, name]),
                    "min": min(walls[workload, name]), "max": max(walls[workload, name]),
                    "n": runs, "runs_s": walls[workload, name],
                    "peak_rss_kib": statistics.median(rss[workload, name]),
                    "insns_per_op": round(instructions(exe, lib, workload, threads, work), 1),
                    "lat_max_ns": lat["lat_max_ns"], "lat_p9999_ns": lat["lat_p9999_ns"],
                    "library": str(lib) if lib else "glibc (system)"})
                progress.boot_done()
        for trace, path in recorded.items():
            for name, lib in libs.items():
                rows.append({
                    "workload": trace, "allocator": name, "threads": 1, "ops": None,
                    "unit": "s (wall clock)", "median": statistics.median(walls[trace, name]),
                    "min": min(walls[trace, name]), "max": max(walls[trace, name]),
                    "n": runs, "runs_s": walls[trace, name],
                    "peak_rss_kib": statistics.median(rss[trace, name]),
                    "insns_per_op": None, "lat_max_ns": None, "lat_p9999_ns": None,
                    "trace": str(path.relative_to(top)), "library": str(lib) if lib else
                    "glibc (system)"})
        worst = []
        for name, lib in libs.items():
            progress.boot_started(f"worst-case malloc {name}")
            measured = malloc_calls(exe, lib, work)[WARMUP_CALLS:]
            calls = [cost for cost, _ in measured]
            no_syscall = [cost for cost, entered in measured if not entered]
            worst.append({"allocator": name, "calls": len(calls), "warmup_skipped": WARMUP_CALLS,
                          "median": statistics.median(calls), "p9999": percentile(calls, 0.9999),
                          "max": max(calls), "max_without_syscalls": max(no_syscall),
                          "calls_with_syscalls": len(calls) - len(no_syscall),
                          "unit": "instructions (callgrind)"})
            progress.boot_done()
    _ratios(rows)
    doc = results.document(benchmark=NAME, description=DESCRIPTION, paper=None, key=KEY,
                           commit=project.commit(top), qemu="none (hosted)",
                           mode="wall clock", cache=None, host=project.host(), boots=[],
                           rows=rows, cache_windows=[])
    doc["options"] = {"malloc_lock": os.environ.get("malloc_lock", "lock-free")}
    doc["worst_case_malloc"] = worst
    doc["table2_traces"] = [{"workload": trace, **alloctrace.table2(path)}
                            for trace, path in recorded.items()]
    doc["median_ratio_vs_mimalloc"] = _median_ratio(rows, "mimalloc")
    return doc


def _ratios(rows: list[dict]) -> None:
    """vs_X: this allocator's median time over X's on the same workload (same run)."""
    base = {(r["workload"], r["allocator"]): r for r in rows}
    for row in rows:
        for other in ("glibc", "mimalloc"):
            ref = base.get((row["workload"], other))
            row[f"vs_{other}"] = round(row["median"] / ref["median"], 3) if ref else None
            ref_rss = ref["peak_rss_kib"] if ref else None
            row[f"rss_vs_{other}"] = round(row["peak_rss_kib"] / ref_rss, 3) if ref_rss else None


def _median_ratio(rows: list[dict], other: str) -> dict:
    ours = [r for r in rows if r["allocator"] == "ondol" and r.get(f"vs_{other}")]
    if not ours:
        return {}
    return {"time": statistics.median(r[f"vs_{other}"] for r in ours),
            "peak_rss": statistics.median(r[f"rss_vs_{other}"] for r in ours)}


def plots(doc: dict, directory: Path) -> list[Path]:
    """One figure per workload: time relative to glibc, peak RSS, instructions per op."""
    from ondol import plot  # noqa: F401  (selects matplotlib's file backend)
    import matplotlib.pyplot as plt
    written = []
    for workload in dict.fromkeys(r["workload"] for r in doc["results"]):
        rows = [r for r in doc["results"] if r["workload"] == workload]
        if not rows:
            continue
        names = [r["allocator"] for r in rows]
        colors = ["tab:red" if n == "ondol" else "tab:gray" for n in names]
        fig, axes = plt.subplots(1, 3, figsize=(11, 3.6))
        panels = (("vs_glibc", "wall time / glibc's (median)"), ("peak_rss_kib", "peak RSS [KiB]"),
                  ("insns_per_op", "instructions per op (callgrind)"))
        for ax, (field, label) in zip(axes, panels):
            ax.bar(names, [r[field] or 0 for r in rows], color=colors)
            ax.set_title(label, fontsize=9)
            ax.tick_params(axis="x", labelrotation=30, labelsize=8)
            ax.grid(True, axis="y", alpha=0.3)
        threads = rows[0]["threads"]
        fig.suptitle(f"alloc --host, {workload} ({threads} thread{'s' * (threads > 1)}): "
                     f"lower is better; commit {doc['commit'][:12]}", fontsize=10)
        fig.tight_layout()
        for ext in ("png", "svg"):
            path = directory / f"{NAME}-{workload.replace(':', '-')}.{ext}"
            fig.savefig(path, dpi=110) if ext == "png" else fig.savefig(path, metadata={"Date": None})
            written.append(path)
        plt.close(fig)
    return written
