#!/usr/bin/env python3
"""Same counts, less time: the cache plugin of this tree against a reference plugin.

Builds the reference cachesim.so from a git revision (default HEAD, so edits in the work
tree are compared with the last commit), boots fixed ondol workloads under icount with
no plugin, the reference plugin and this tree's plugin, alternating, and checks that the
two plugins write byte-identical JSON lines for every window the guest closes (every
counter, domain, task and vCPU). The unix workloads open no window: they run with
always=on, and of the window written at exit (whose kernel part ends wherever QEMU stopped
the CPU after the power-off request, a few instructions later or earlier from boot to
boot) the tasks and the server and user domains must be identical. Prints wall times, medians and overhead factors (plugin
run / plain run). Wall clock on whatever machine this runs on: alternate, and compare
only runs made side by side.

    python3 tools/cacheplugin/samecounts.py [--base REV] [--spec pentiumpro] [--reps 3]
        [--workload ipcbusy --workload ipc ...]

Exit status 1 when any output differs. Needs `make all` (and `make rootfs` for unix*).
"""
import argparse
import json
import resource
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "tools"))
import qemucmd  # noqa: E402

# name -> kernel options (run= is the command, commas for spaces).
WORKLOADS = {
    "ipc": {"dts": "on", "hz": "10000", "run": "ipcbench,cacheroundtrip,500,0"},
    "ipcbusy": {"dts": "off", "hz": "10000", "run": "ipcbench,cacheroundtrip,1,200"},
    "ipcdev": {"dts": "off", "hz": "10000", "run": "ipcbench,cacheroundtrip,1,40"},
    "unix": {"unix": "mk", "linux_init": "/bench/unixbench", "run": "unixbench"},
    "unixik": {"unix": "ik", "linux_init": "/bench/unixbench", "run": "unixbench"},
    # the coherence model (tests/test_coherence.py's workloads, 4 vCPUs)
    **{f"coher-{t}": {"smpbench": t, "smpbench_n": "200"} for t in ("private", "shared",
                                                                     "pingpong")},
}
# more plugin arguments and QEMU flags by workload name prefix
EXTRA_ARGS = {"coher-": ["coherence=die"], "unix": ["always=on"]}
EXTRA_FLAGS = {"coher-": ["-smp", "4"]}
TIMEOUT = 3600


def build_reference(rev: str, work: Path) -> Path:
    """cachesim.so of tools/cacheplugin at `rev`, built in `work` (rebuilt every time)."""
    if work.exists():
        shutil.rmtree(work)
    work.mkdir(parents=True)
    archive = subprocess.run(["git", "-C", str(REPO), "archive", rev, "tools/cacheplugin"],
                             check=True, capture_output=True).stdout
    subprocess.run(["tar", "-x", "-C", str(work)], input=archive, check=True)
    # The copy has no tools/qemucmd.py to ask: the API version of the QEMU in use is passed
    # (revisions from before QEMU 10 support build for version 1 whatever it says).
    api = qemucmd.plugin_api(qemucmd.binary())
    subprocess.run(["make", "-s", "-f", "tools/cacheplugin/plugin.mk", "BUILD=build",
                    f"CACHESIM_API={api}", "cacheplugin"], cwd=work, check=True)
    return work / "build" / "tools" / "cachesim.so"


def by_prefix(table: dict, name: str) -> list[str]:
    return next((v for k, v in table.items() if name.startswith(k)), [])


def command(options: dict, plugin: Path | None, args: list[str], out: Path,
            com2: Path, extra: list[str]) -> list[str]:
    build = REPO / "build"
    append = qemucmd.append_line(options)
    knobs = {}
    if plugin is not None:
        out.unlink(missing_ok=True)
        knobs["plugin"] = qemucmd.Plugin(plugin, (*args, f"out={qemucmd.escape(str(out))}"))
    return qemucmd.ondol(build / "ondol.bin", build / "bootfs.tar", append,
                         rootfs=qemucmd.unix_rootfs(build, append), com2=f"file:{com2}",
                         icount=True, extra=tuple(extra), **knobs)


def boot(cmd: list[str], log: Path) -> tuple[float, float]:
    """Wall and CPU seconds of one boot (the guest powers off at the end of its command)."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.monotonic()
    with open(log, "wb") as f:
        p = subprocess.run(cmd, stdin=subprocess.DEVNULL, stdout=f, stderr=subprocess.STDOUT,
                           timeout=TIMEOUT)
    wall = time.monotonic() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if p.returncode != 0:
        sys.exit(f"samecounts: qemu exited with {p.returncode} (log {log})")
    return wall, (after.ru_utime + after.ru_stime) - (before.ru_utime + before.ru_stime)


def complete_windows(path: Path) -> list[str]:
    """The window lines the guest closed. A line written at exit (always=on without a
    begin marker, "complete":false) ends wherever QEMU stopped the CPU after the guest's
    power-off request, which varies by a few instructions from boot to boot."""
    if not path.is_file():
        return []
    return [line for line in path.read_text().splitlines() if '"complete":true' in line]


def exit_window(path: Path) -> list:
    """What must match in the window written at exit: everything not charged to the kernel."""
    if not path.is_file():
        return []
    last = [json.loads(line) for line in path.read_text().splitlines()
            if '"complete":false' in line]
    return [[w["tasks"], w["domains"]["server"], w["domains"]["user"], w["domains"]["unknown"]]
            for w in last]


def run_workload(name: str, ref: Path, new: Path, args: list[str], reps: int,
                 work: Path) -> bool:
    opts = WORKLOADS[name]
    wall = {"plain": [], "ref": [], "new": []}
    cpu = {"plain": [], "ref": [], "new": []}
    same = True
    for rep in range(reps):
        for kind, so in (("plain", None), ("ref", ref), ("new", new)):
            out = work / f"{name}-{kind}-{rep}.cache.jsonl"
            cmd = command(opts, so, args + by_prefix(EXTRA_ARGS, name), out,
                          work / f"{name}-{kind}-{rep}.com2", by_prefix(EXTRA_FLAGS, name))
            w, c = boot(cmd, work / f"{name}-{kind}-{rep}.log")
            wall[kind].append(w)
            cpu[kind].append(c)
        a = complete_windows(work / f"{name}-ref-{rep}.cache.jsonl")
        b = complete_windows(work / f"{name}-new-{rep}.cache.jsonl")
        identical = a == b and bool(a)
        if name.startswith("unix"):
            a = exit_window(work / f"{name}-ref-{rep}.cache.jsonl")
            identical = bool(a) and a == exit_window(work / f"{name}-new-{rep}.cache.jsonl")
        print(f"  {name} rep {rep}: wall plain {wall['plain'][-1]:.1f} s, ref "
              f"{wall['ref'][-1]:.1f} s, new {wall['new'][-1]:.1f} s; {len(a)} windows "
              f"{'IDENTICAL' if identical else 'DIFFER'}", flush=True)
        same &= identical
    for what, t in (("wall", wall), ("cpu", cpu)):
        med = {k: statistics.median(v) for k, v in t.items()}
        print(f"{name} {' '.join(args)}: {what} medians of {reps}: plain {med['plain']:.2f} s, "
              f"ref {med['ref']:.2f} s (x{med['ref'] / med['plain']:.2f}), new "
              f"{med['new']:.2f} s (x{med['new'] / med['plain']:.2f})", flush=True)
    print(f"{name}: counts {'identical' if same else 'DIFFER (or no window to compare)'}")
    return same


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--base", default="HEAD", help="git revision of the reference plugin")
    p.add_argument("--spec", default="pentiumpro", help="plugin arguments, comma-separated "
                   "(a bare word is the preset)")
    p.add_argument("--reps", type=int, default=3)
    p.add_argument("--workload", action="append", choices=sorted(WORKLOADS))
    p.add_argument("--work", default=str(REPO / "build" / "samecounts"))
    a = p.parse_args()
    work = Path(a.work)
    ref = build_reference(a.base, work / "ref")
    new = REPO / "build" / "tools" / "cachesim.so"
    subprocess.run(["make", "-s", "-C", str(REPO), "cacheplugin"], check=True)
    args = [x if "=" in x else f"preset={x}" for x in a.spec.split(",") if x]
    ok = True
    for name in a.workload or ["ipc", "ipcbusy"]:
        ok &= run_workload(name, ref, new, args, a.reps, work)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
