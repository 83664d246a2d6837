"""`./ondol bench coherence`: the coherence model's validation (docs/smp.md, "The coherence
model"; the model is tools/cacheplugin/coher.c).

Each boot runs one workload of kernel/measure/smpbench.c (option smpbench: per-CPU private
counters, one shared `lock xadd` counter, a ticket-lock ping-pong) on N vCPUs under icount,
with the cache plugin's coherence model loaded, on QEMU 10 unless `--qemu 7.2` or
$ONDOL_QEMU chooses (both give the same modelled figures; docs/smp.md). The guest's row (iterations, jobs, whether
every counter came out right) is joined with the model's window: the modelled makespan,
throughput, transfers, invalidations, hand-offs and lock waits. Every number but `tsc` is
MODELLED. Without icount (`--no-icount`, real concurrency on the host's cores) the plugin
is not loaded and only the guest's TSC time is reported, as a sanity check of the order.
"""
from __future__ import annotations

import tempfile
from contextlib import contextmanager
from pathlib import Path

import qemucmd
from ondol import cache

TESTS = ("private", "shared", "pingpong")
CPUS = (1, 2, 4, 8, 16, 32)   # 16 and 32: about 1 min a boot on QEMU 10 under icount
ITERS = 200
CACHE_PRESET = "modern"
LATENCY_PRESET = "die"
UNIT = "jobs per million modelled cycles"
REPO = Path(__file__).resolve().parents[2]

_windows: dict[str, list[dict]] = {}   # the model's windows of each boot, by config label


def plugin_args(out: Path, latency: str = LATENCY_PRESET,
                order: tuple[str, ...] = ()) -> tuple[str, ...]:
    """The model's arguments; percpu= lets it learn the running vCPU on QEMU 10; `order`
    the replay order's argument, if any (benchmarks._run_order)."""
    return (f"preset={CACHE_PRESET}", f"coherence={latency}", *order,
            *cache.percpu_args(REPO), f"out={qemucmd.escape(str(out))}")


@contextmanager
def environment(config):
    """-smp N and, under icount, the plugin with the coherence model (markers on), built
    for the QEMU of the run (QEMU 10 by default, `ondol bench --qemu`)."""
    from ondol.benchmarks import BootEnv, _run_mode, _run_order, _run_qemu
    smp = ("-smp", str(config.params["cpus"]))
    if _run_mode() != "icount":
        yield BootEnv(extra=smp)
        return
    with tempfile.TemporaryDirectory(prefix="ondol-coherence-") as tmp:
        out = Path(tmp) / "windows.jsonl"
        plugin = qemucmd.Plugin(cache.plugin_for(REPO, _run_qemu()),
                                plugin_args(out, order=_run_order()))
        yield BootEnv(extra=(*smp, *plugin.flags()), options={"markers": "on"})
        _windows[config.label] = cache.read_windows(out)


def model_fields(coherence: dict, row: dict) -> dict:
    """The modelled figures of one run, from the window's "coherence" object."""
    cpus = coherence["cpus"]
    total = {k: sum(c[k] for c in cpus) for k in
             ("transfers", "invalidations", "handoffs", "lock_wait_cycles", "instructions")}
    makespan = coherence["makespan"]
    jobs = row["jobs"]
    return {
        "median": round(jobs * 1e6 / makespan, 1) if makespan else None,
        "unit": UNIT,
        "makespan": makespan,
        "cycles_per_iter": round(makespan / row["iters"], 1),
        "transfers": total["transfers"],
        "transfers_per_job": round(total["transfers"] / jobs, 3),
        "invalidations": total["invalidations"],
        "handoffs": total["handoffs"],
        "transfers_per_handoff": (round(total["transfers"] / total["handoffs"], 3)
                                  if total["handoffs"] else None),
        "lock_wait_cycles": total["lock_wait_cycles"],
        "latency_preset": coherence["preset"],
        "replay_order": coherence.get("order", "recorded"),      # coherence_order=
        "socket_fetch": coherence.get("socket_fetch", "recorded"),   # socket_fetch=
        "modelled": True,
    }


def rows(results: list[dict], config) -> list[dict]:
    windows = _windows.pop(config.label, [])
    out = []
    for result in results:
        row = {**config.params, **result, "unit": "tsc"}
        window = next((w for w in windows if w.get("window") == result.get("window")
                       and "coherence" in w), None)
        if window:
            row.update(model_fields(window["coherence"], result))
        else:
            row["median"] = result["tsc"]
        out.append(row)
    return out


def configs(cpus: tuple[int, ...] = CPUS, iters: int = ITERS) -> tuple:
    from ondol.benchmarks import Config
    return tuple(Config(command="true", options={"smpbench": test, "smpbench_n": str(iters)},
                        params={"test": test, "cpus": n})
                 for test in TESTS for n in cpus)
