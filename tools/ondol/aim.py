"""`./ondol bench aim` (docs/smp.md, "The P4 experiment"): tests/linux/aim.c, an AIM7-like
multi-process mix, as pid 1 of ondol's UNIX server with -smp N for each reverse-map mode
(global, lock, family: P4's Linux's locking, log: P4's), and on the Linux peer in the same
QEMU and mode.

One boot per (rmap mode, CPU count): N workers of JOBS jobs each (weak scaling: the work
grows with the CPUs). Under icount QEMU runs the vCPUs one at a time, so the TSC figure
(instructions, exact) is the machine's total work per job, never a speed-up; the cache
plugin's coherence model (tools/cacheplugin/coher.c) replays the run with a clock per vCPU
and gives the MODELLED makespan, from which the modelled throughput comes. The program
opens the model's window around its run (an ioctl on /dev/results) and reads the kernel's
counters before and after (/proc/ondol/kernel): reverse-map operations, log-mode
cancellations, probe ticks (the boot option probes=on), frames and objects.

The program takes its configuration from its name (linux_init= takes no arguments): the
archive holds a symbolic link /bench/aim-W-J -> /suite/bin/aim for every configuration.

Two parts (PARTS): "mix", the AIM7-like mix (`./ondol bench aim`), and "rmap", its
rmap-heavy part (`./ondol bench aim-rmap`, links /bench/aim-rmap-W-J, the program's
`rmap` argument on the peer): copy-on-write breaks on frames every worker maps, in page
faults that take no big kernel lock (docs/smp.md, "The rmap-heavy part").
"""
from __future__ import annotations

import tempfile
from contextlib import contextmanager
from pathlib import Path

import qemucmd

if __package__:
    from . import rootfs
else:  # imported by linuxsuite run as a script: tools/ondol/ is sys.path[0]
    import rootfs

MODES = ("global", "lock", "family", "log")   # rmap=family: P4's Linux, a lock per fork family
CPUS = (1, 2, 4, 8, 16, 32, 64)    # MAX_CPUS (kernel/arch/x86_64/include/cpu.h)
QUICK_CPUS = (1, 2)
JOBS = 4                     # jobs per worker
QUICK_JOBS = 2
SOAK_JOBS = 20               # `make soak`: 8 workers on 8 vCPUs, SOAK_RUNS runs
SOAK_SHORT_JOBS = 2          # the soak's short form in make test (2 runs)
PARTS = ("mix", "rmap")
RMAP_JOBS = 8                # the rmap part: jobs per worker, each RMAP_PAGES COW breaks
QUICK_RMAP_JOBS = 2
RMAP_PAGES = 64              # tests/linux/aim.c's RMAP_PAGES
WORKERS = (1, 2, 4, 8, 16, 32, 64)
LATENCY_PRESET = "p4"        # P4's 8-socket machine (tools/cacheplugin/README.md)
CACHE_PRESET = "modern"
PROGRAM = "/suite/bin/aim"
UNIT = "jobs per 10^9 instructions"
MODEL_UNIT = "jobs per 10^9 modelled cycles"

_windows: dict[str, list[dict]] = {}   # the model's windows of each boot, by config label
REPO = Path(__file__).resolve().parents[2]


class AimError(Exception):
    """Running the peer failed; str(e) is one line."""


def link(workers: int, jobs: int, part: str = "mix") -> str:
    return f"/bench/aim-{workers}-{jobs}" if part == "mix" else \
        f"/bench/aim-{part}-{workers}-{jobs}"


def archive_entries() -> list:
    """The symbolic links naming every configuration the host boots."""
    jobs = {"mix": sorted({JOBS, QUICK_JOBS, SOAK_JOBS, SOAK_SHORT_JOBS}),
            "rmap": sorted({RMAP_JOBS, QUICK_RMAP_JOBS})}
    return [rootfs.Entry(link(w, j, part).lstrip("/"), rootfs.S_IFLNK | 0o777,
                         PROGRAM.encode())
            for part in PARTS for w in WORKERS for j in jobs[part]]


def plugin_args(out: Path, order: tuple[str, ...] = ()) -> tuple[str, ...]:
    """The model's arguments; percpu= lets it learn the running vCPU on QEMU 10; `order`
    the replay order's argument, if any (`ondol bench --order`, benchmarks._run_order)."""
    return (f"preset={CACHE_PRESET}", f"coherence={LATENCY_PRESET}", *order,
            *cache_args(), f"out={qemucmd.escape(str(out))}")


def cache_args() -> tuple[str, ...]:
    from ondol import cache
    return cache.percpu_args(REPO)


@contextmanager
def environment(config):
    """The root archive (built when missing or older than the program), -smp N and,
    under icount, the plugin with the coherence model (markers on), built for the QEMU of
    the run (QEMU 10 by default, `ondol bench --qemu`)."""
    from ondol import cache
    from ondol.benchmarks import BootEnv, _run_mode, _run_order, _run_qemu, unix_archive_ready
    unix_archive_ready()
    smp = ("-smp", str(config.params["cpus"]))
    if _run_mode() != "icount" or not config.params.get("model"):
        yield BootEnv(extra=smp)
        return
    with tempfile.TemporaryDirectory(prefix="ondol-aim-") as tmp:
        out = Path(tmp) / "windows.jsonl"
        plugin = qemucmd.Plugin(cache.plugin_for(REPO, _run_qemu()),
                                plugin_args(out, _run_order()))
        yield BootEnv(extra=(*smp, *plugin.flags()), options={"markers": "on"})
        _windows[config.label] = cache.read_windows(out)


def _delta(row: dict, name: str) -> int | None:
    before, after = row.get("before", {}), row.get("after", {})
    if before.get(name, -1) < 0 or after.get(name, -1) < 0:
        return None
    return after[name] - before[name]


def _per_job(value, jobs: int, digits: int = 1):
    return round(value / jobs, digits) if value is not None and jobs else None


def counter_fields(row: dict) -> dict:
    """Per job: reverse-map operations, probe ticks; the log mode's cancellation rate
    (removes that met their insert still in a log, of all removes); the change of frames
    and objects over the run (the soak's baseline check: 0 when everything was freed)."""
    jobs = row.get("jobs") or 0
    inserts, removes = _delta(row, "rmap_inserts"), _delta(row, "rmap_removes")
    cancelled, ticks = _delta(row, "rmap_cancelled"), _delta(row, "rmap_ticks")
    out = {"rmap_ops_per_job": _per_job((inserts or 0) + (removes or 0), jobs)
           if inserts is not None else None,
           "rmap_ticks_per_job": _per_job(ticks, jobs) if ticks else None,
           "cancel_rate": round(cancelled / removes, 3) if removes and cancelled is not None
           and row.get("rmap") == "log" else None}
    for name in ("frames_free", "tasks", "threads", "aspaces", "kobj_bytes"):
        out[f"d_{name}"] = _delta(row, name)
    for cause in ("wake", "steal", "balance"):      # threads moved between CPUs (exact)
        out[f"moves_{cause}_per_job"] = _per_job(_delta(row, f"moves_{cause}"), jobs, 2)
    return out


# The kernel's MARK_LOCK ids (kernel/measure/marker.h, kernel/mm/rmap.c): the big kernel
# lock, and the reverse map's (4 the global lock, 5..260 the frame locks hashed by frame,
# 261..516 the family locks of rmap=family by the family's serial number, 517..580 the
# logs' locks of rmap=log by CPU).
LOCK_ID_BKL = 3
LOCK_IDS_RMAP = range(4, 4 + 1 + 256 + 256 + 64)
LOCK_CLASSES = ("bkl", "rmap", "other")


def lock_class(lock_id: int) -> str:
    return ("bkl" if lock_id == LOCK_ID_BKL else "rmap" if lock_id in LOCK_IDS_RMAP
            else "other")


def lock_class_fields(locks: list[dict], jobs: int) -> dict:
    """The model's lock figures per class of lock (bkl / rmap / other), per job: which lock
    the waits, the wait cycles and the hand-offs belong to (all MODELLED)."""
    out = {}
    for cls in LOCK_CLASSES:
        mine = [lk for lk in locks if lock_class(lk["id"]) == cls]
        out[f"lock_waits_per_job_{cls}"] = _per_job(sum(lk["waits"] for lk in mine), jobs, 2)
        out[f"lock_wait_cycles_per_job_{cls}"] = _per_job(
            sum(lk["wait_cycles"] for lk in mine), jobs)
        out[f"handoffs_per_job_{cls}"] = _per_job(sum(lk["handoffs"] for lk in mine), jobs, 2)
    return out


def model_fields(coherence: dict, jobs: int) -> dict:
    """The modelled figures of one run, from the window's "coherence" object."""
    cpus = coherence["cpus"]
    total = {k: sum(c.get(k, 0) for c in cpus) for k in
             ("transfers", "lock_waits", "lock_wait_cycles", "handoffs", "transfer_cycles",
              "miss_cycles", "transfer_served", "memory_cycles_saved")}
    makespan = coherence["makespan"]
    insns = sum(c["instructions"] for c in cpus)
    shares = [round(c["instructions"] / insns, 3) if insns else None for c in cpus]
    return {
        # which CPU ran what: each vCPU's share of the window's instructions (exact), and
        # the smallest and largest (ideal with one worker a CPU: 1 / N each)
        "cpu_insn_share": shares,
        "cpu_share_min": min(shares) if insns else None,
        "cpu_share_max": max(shares) if insns else None,
        # each vCPU's modelled clock at the window's end (MODELLED; the largest is the
        # makespan): which vCPU bounds the throughput, and by how much
        "cpu_clock": [round(c["clock"]) for c in cpus],
        "modelled_throughput": round(jobs * 1e9 / makespan, 1) if makespan else None,
        "model_unit": MODEL_UNIT,
        "makespan": round(makespan),
        "transfers_per_job": _per_job(total["transfers"], jobs),
        "lock_waits_per_job": _per_job(total["lock_waits"], jobs, 2),
        "lock_wait_cycles_per_job": _per_job(total["lock_wait_cycles"], jobs),
        "handoffs_per_job": _per_job(total["handoffs"], jobs, 2),
        # where the vCPUs' modelled cycles went besides instructions x cpi (summed over
        # vCPUs): waiting for lines (transfers, queued on their lines) and private misses
        "transfer_cycles_per_job": _per_job(total["transfer_cycles"], jobs),
        "miss_cycles_per_job": _per_job(total["miss_cycles"], jobs),
        # accesses that missed the private hierarchy to memory but whose line came from
        # another vCPU's cache: served by the transfer alone, and the memory latency they
        # did not pay (not in the miss cycles; plugin README, "The coherence model")
        "transfer_served_per_job": _per_job(total["transfer_served"], jobs, 2),
        "memory_cycles_saved_per_job": _per_job(total["memory_cycles_saved"], jobs),
        "latency_preset": coherence["preset"],
        "replay_order": coherence.get("order", "recorded"),      # coherence_order=
        # who takes a line into a socket (socket_fetch=; plugin README, "Which vCPU pays a
        # socket's fetches"): "clock" in exclusive order by default, and the fetches it moved
        "socket_fetch": coherence.get("socket_fetch", "recorded"),
        "fetch_swaps": coherence.get("fetch_swaps"),
        # exclusive order: how much its bounded memory forgot or joined (plugin README)
        "hold_merges": coherence.get("hold_merges"),
        "transfer_merges": coherence.get("transfer_merges"),
        "transfers_forgotten": coherence.get("transfers_forgotten"),
        "modelled": True,
        **(lock_class_fields(coherence["locks"], jobs) if "locks" in coherence else {}),
    }


def vcpu_fields(window: dict) -> dict:
    """What each vCPU's modelled clock is made of and what it ran (docs/smp.md, "What the
    busiest vCPU runs"): per vCPU its private-miss, transfer and lock-wait cycles (MODELLED)
    and its kernel instructions and the address spaces it ran, [asid, name, instructions
    in that space's user half], most first (exact; the plugin's `asids`). The kernel's
    instructions go to no address space: a system call's or fault's are its vCPU's."""
    cpus = window["coherence"]["cpus"]
    vcpus = window.get("vcpus") or []
    return {
        "cpu_miss_cycles": [round(c.get("miss_cycles", 0)) for c in cpus],
        "cpu_transfer_cycles": [round(c.get("transfer_cycles", 0)) for c in cpus],
        "cpu_lock_wait_cycles": [round(c.get("lock_wait_cycles", 0)) for c in cpus],
        "cpu_memory_cycles_saved": [round(c.get("memory_cycles_saved", 0)) for c in cpus],
        "cpu_remote_transfers": [c.get("remote_transfers", 0) for c in cpus],
        "cpu_kernel_insns": [v["domains"]["kernel"]["instructions"] for v in vcpus],
        "cpu_spaces": [sorted(([a["asid"], a["name"], a["instructions"]]
                               for a in v.get("asids", [])), key=lambda x: -x[2])
                       for v in vcpus],
    }


def hot_fields(coherence: dict) -> dict:
    """The lines and 4 KiB pages whose transfers cost the vCPUs most in the window (the
    plugin's `hot_lines` and `hot_pages`, dearest first; MODELLED cycles, exact transfer
    counts), each named by the kernel symbol at its address (`kernel_symbol`; "frame" for
    memory outside the kernel image: user pages, page tables, the allocator's frames), and
    the share of all the vCPUs' transfer cycles each took; and the plugin's `line_spread`
    with the same shares (docs/smp.md, "Where a COW break's modelled cycles go")."""
    from ondol import cache
    total = sum(c.get("transfer_cycles", 0) for c in coherence["cpus"]) or 1

    def named(entry: dict) -> dict:
        return {"pa": hex(entry["pa"]),
                "symbol": cache.kernel_symbol(REPO, entry["pa"]) or "frame",
                **{k: entry[k] for k in ("lines", "transfers") if k in entry},
                "cycles": entry["cycles"], "share": round(entry["cycles"] / total, 4)}
    return {"hot_lines": [named(e) for e in coherence.get("hot_lines", [])],
            "hot_pages": [named(e) for e in coherence.get("hot_pages", [])],
            # the lines by how many transfers each had: flowing data (many lines, a few
            # each) against shared lines (few lines, hundreds each)
            "line_spread": [{**e, "share": round(e["cycles"] / total, 4)}
                            for e in coherence.get("line_spread", [])]}


def rows(results: list[dict], config) -> list[dict]:
    """Guest rows: jobs per 10^9 instructions (icount: exact) as the median, the counters
    per job, and the model's figures when the boot had the plugin."""
    windows = _windows.pop(config.label, [])
    out = []
    for result in results:
        row = {**config.params, **result}
        row.update(counter_fields(row))
        row["median"] = round(row["jobs"] * 1e9 / row["tsc"], 2) if row.get("tsc") else None
        row["unit"] = UNIT
        window = next((w for w in windows if w.get("window") == result.get("window")
                       and "coherence" in w), None)
        if window:
            row.update(model_fields(window["coherence"], row["jobs"]))
            row.update(vcpu_fields(window))
            row.update(hot_fields(window["coherence"]))
        out.append(row)
    return out


def configs(cpus: tuple[int, ...], jobs: int, probes: bool = False,
            part: str = "mix", modes: tuple[str, ...] = MODES) -> tuple:
    """One boot per mode and CPU count, N workers on N CPUs, the UNIX server in MK form;
    the first mode's boots also boot the Linux peer (params "peer")."""
    from ondol.benchmarks import Config
    return tuple(Config(command="aim", options={"unix": "mk", "rmap": mode,
                                               "linux_init": link(n, jobs, part),
                                               **({"probes": "on"} if probes else {})},
                        params={"part": part, "rmap": mode, "cpus": n, "workers": n,
                                "unix": "mk", "model": not probes,
                                "probes": "on" if probes else "off",
                                "peer": mode == modes[0] and not probes})
                 for mode in modes for n in cpus)


# ---- the Linux peer ---------------------------------------------------------------------

def peer_init(workers: int, jobs: int, part: str = "mix") -> bytes:
    """/init of the peer boot: the program with its record on COM2."""
    from ondol import unixbench
    args = f"{workers} {jobs}" if part == "mix" else f"{part} {workers} {jobs}"
    return unixbench.peer_init_running(f"{PROGRAM} {args}")


def peer_vcpus(cpus: int, icount: bool, qemu: str) -> int:
    """The peer's vCPUs for `cpus` workers: as many, except under QEMU 7.2's icount, where
    Debian's kernel does not boot with -smp 2 (it stops at "x86: Booting SMP
    configuration": 7.2's round robin starves the AP it waits for) and the N workers run on
    one vCPU (the same total work per job, instructions, exact). QEMU 8.1 on shares the
    icount period out, and the peer boots with N there."""
    return cpus if not icount or qemucmd.fair_icount(qemu) else 1


def peer_records(build: Path, cpus: int, jobs: int, icount: bool, qemu: str,
                 part: str = "mix") -> list[dict]:
    """Boot the Linux peer once on the root archive on `qemu`, `cpus` workers on
    peer_vcpus() vCPUs; the program's records."""
    from ondol import unixbench
    work = build / "aim" / (f"peer-{cpus}" if part == "mix" else f"peer-{part}-{cpus}")
    try:
        return unixbench.peer_boot(build, work, peer_init(cpus, jobs, part), icount=icount,
                                   smp=peer_vcpus(cpus, icount, qemu), qemu=qemu)
    except unixbench.UnixBenchError as e:
        raise AimError(str(e)) from None


# ---- the plot beside P4's curve shape ----------------------------------------------------

# P4 published only a summary (data/papers.json, P4.summary): stock Linux scales to about 60
# cores, then stays flat; the log mode matches it up to 75 cores and reaches 1.5x at 120.
# The shape drawn from that summary, normalised to 1 at 60 cores (a sketch, not data).
P4_SHAPE = {"stock (lock)": ((1, 60, 75, 120), (1 / 60, 1.0, 1.0, 1.0)),
            "log": ((1, 60, 75, 120), (1 / 60, 1.0, 1.25, 1.5))}


def _series_points(rows: list[dict], mode: str, field: str) -> tuple[list, list]:
    pts = sorted((r["cpus"], r[field]) for r in rows
                 if r.get("rmap") == mode and r.get("kernel") == "ondol"
                 and r.get("probes") == "off" and r.get(field))
    return [p[0] for p in pts], [p[1] for p in pts]


def outputs(doc: dict, directory: Path, part: str = "mix") -> list[Path]:
    """aim-scaling.png/.svg (the rmap part: aim-rmap-scaling): left, ondol's MODELLED
    speed-up per mode against CPUs (the modelled throughput over the same mode's at one
    CPU; ideal: y = x); right, P4's curve shape."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    rows = doc["results"]
    fig, (ax, ref) = plt.subplots(1, 2, figsize=(12, 4.8))
    top = 1
    for mode in MODES:
        x, y = _series_points(rows, mode, "modelled_throughput")
        if x and x[0] == 1:
            ax.plot(x, [v / y[0] for v in y], marker="o", label=f"rmap={mode}")
            top = max(top, x[-1])
    ax.plot([1, top], [1, top], linestyle=":", color="grey", label="ideal (y = x)")
    ax.set_xscale("log", base=2)
    ax.set_yscale("log", base=2)
    what = ("AIM7-like mix" if part == "mix" else
            f"rmap-heavy part ({RMAP_PAGES} COW breaks a job)")
    ax.set_xlabel(f"CPUs (one worker of {JOBS if part == 'mix' else RMAP_JOBS} jobs each)")
    ax.set_ylabel("MODELLED speed-up (throughput / 1 CPU's)")
    order = next((r["replay_order"] for r in rows if r.get("replay_order")), "recorded")
    ax.set_title(f"ondol, {what} on the UNIX server (MK), coherence model "
                 f"({LATENCY_PRESET} preset)\nMODELLED (QEMU under icount), replay order "
                 f"{order}", fontsize=9)
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize=8)
    for label, (x, y) in P4_SHAPE.items():
        ref.plot(x, y, marker="o", label=f"P4 {label}")
    ref.set_xlabel("cores")
    ref.set_ylabel("throughput, normalised to stock at 60 cores")
    ref.set_title("P4's curve shape, drawn from its summary (no published points)",
                  fontsize=9)
    ref.grid(True, alpha=0.3)
    ref.legend(fontsize=8)
    fig.tight_layout()
    written = []
    for ext in ("png", "svg"):
        path = directory / (f"aim-scaling.{ext}" if part == "mix" else
                            f"aim-{part}-scaling.{ext}")
        fig.savefig(path)
        written.append(path)
    plt.close(fig)
    return written


def rootfs_build() -> Path:
    """build/ of this tree (the root archive's directory)."""
    return Path(__file__).resolve().parents[2] / "build"
