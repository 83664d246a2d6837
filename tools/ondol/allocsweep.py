"""`./ondol bench alloc-cache --sweep`: P2's hardware sweeps (issue 14 item 6, docs/alloc.md
"Hardware sweeps"). One alloc-cache run per geometry of GEOMETRIES, each the base preset
(`--cache`, default pentiumpro) with one parameter changed; every run's result files go to
RESULTS/alloc-sweep/GEOMETRY/, and the sweep writes RESULTS/alloc-sweep.{json,md} (the
modelled CPI of each workload's window per geometry) and the figure
RESULTS/alloc-sweep.{png,svg}: one panel per parameter (L1 D size, L2 size, memory
latency), a line per workload, as P2 plotted malloc's speed against cache size and the
CPU-to-memory speed ratio. Cycles are the model's (modelled), not measured.
"""
from __future__ import annotations

import json
import sys
from pathlib import Path

from ondol import bench as bench_runner
from ondol import results

BASE = "pentiumpro"
# (parameter, value as the plugin takes it, value on the panel's axis); the base preset's
# own point (8 KiB L1 D, 256 KiB L2, 35-cycle memory) is the l1d_size=8k run.
GEOMETRIES = (
    ("l1d", "l1d_size=8k", 8), ("l1d", "l1d_size=16k", 16), ("l1d", "l1d_size=32k", 32),
    ("l1d", "l1d_size=64k", 64),
    ("l2", "l2_size=128k", 128), ("l2", "l2_size=512k", 512), ("l2", "l2_size=2m", 2048),
    ("l2", "l2=off", 0),
    ("mem", "lat_mem=70", 70), ("mem", "lat_mem=140", 140),
)
BASE_POINTS = {"l2": 256, "mem": 35}           # the base run seen on the other panels
PANELS = {"l1d": "L1 D size (KiB)", "l2": "L2 size (KiB; 0: no L2)",
          "mem": "memory latency (cycles; CPU-to-memory speed)"}


def _cpi(doc: dict) -> dict[str, float]:
    """Workload -> modelled CPI of its window (kernel and user together)."""
    out = {}
    for row in doc["results"]:
        cache = row.get("cache")
        if row.get("table") == "workloads" and isinstance(cache, dict):
            out[row["workload"]] = cache["total"]["modelled_cpi"]
    return out


def run(bench, request, top: Path, binary: str) -> dict:
    """Every geometry in turn; the sweep document."""
    base = request.cache or BASE
    points = []
    for param, geometry, x in GEOMETRIES:
        print(f"alloc-sweep: {base},{geometry}", file=sys.stderr)
        sub = bench_runner.Request(options=request.options, icount=request.icount,
                                   runs=request.runs, cache=f"{base},{geometry}",
                                   timeout=request.timeout,
                                   results_dir=request.results_dir / "alloc-sweep" / geometry)
        doc = bench_runner.run(bench, sub, top, binary)
        results.write(doc, sub.results_dir)
        points.append({"parameter": param, "geometry": geometry, "x": x, "cpi": _cpi(doc)})
    return {"benchmark": "alloc-sweep", "base": base, "mode": "modelled (cache model)",
            "points": points}


def _series(sweep: dict, param: str) -> tuple[list, dict[str, list]]:
    """The panel's x values and, per workload, the CPI at each (base point included)."""
    chosen = [p for p in sweep["points"] if p["parameter"] == param]
    if param in BASE_POINTS:
        base = next(p for p in sweep["points"] if p["geometry"] == "l1d_size=8k")
        chosen.append({**base, "x": BASE_POINTS[param]})
    chosen.sort(key=lambda p: p["x"])
    workloads = sorted({w for p in chosen for w in p["cpi"]})
    return [p["x"] for p in chosen], {w: [p["cpi"].get(w) for p in chosen] for w in workloads}


def markdown(sweep: dict) -> str:
    workloads = sorted({w for p in sweep["points"] for w in p["cpi"]})
    out = [f"Modelled CPI of each workload's window (cache model, {sweep['base']} with one "
           "parameter changed; modelled, not measured).", "",
           f"| geometry ({sweep['base']} +) | " + " | ".join(workloads) + " |",
           "|---|" + "---:|" * len(workloads)]
    for p in sweep["points"]:
        cells = [f"{p['cpi'][w]:.3f}" if w in p["cpi"] else "–" for w in workloads]
        out.append(f"| {p['geometry']} | " + " | ".join(cells) + " |")
    return "\n".join(out)


def draw(sweep: dict, directory: Path) -> list[Path]:
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    fig, axes = plt.subplots(1, len(PANELS), figsize=(13, 4.2), sharey=True)
    for ax, (param, label) in zip(axes, PANELS.items()):
        xs, series = _series(sweep, param)
        for workload, ys in series.items():
            ax.plot(range(len(xs)), ys, marker="o", label=workload)
        ax.set_xticks(range(len(xs)), [str(x) for x in xs])
        ax.set_xlabel(label)
        ax.grid(True, alpha=0.3)
    axes[0].set_ylabel("modelled cycles per instruction")
    axes[-1].legend(fontsize=8)
    fig.suptitle(f"P2's hardware sweeps on ondol: mallocbench's workloads in the cache model "
                 f"({sweep['base']}, one parameter changed at a time; modelled)", fontsize=10)
    fig.tight_layout()
    paths = [directory / "alloc-sweep.png", directory / "alloc-sweep.svg"]
    for path in paths:
        fig.savefig(path, dpi=120)
    plt.close(fig)
    return paths


def write(sweep: dict, directory: Path) -> list[Path]:
    directory.mkdir(parents=True, exist_ok=True)
    js, md = directory / "alloc-sweep.json", directory / "alloc-sweep.md"
    js.write_text(json.dumps(sweep, indent=2) + "\n")
    md.write_text(markdown(sweep) + "\n")
    print(md.read_text(), file=sys.stderr)
    return [js, md, *draw(sweep, directory)]
