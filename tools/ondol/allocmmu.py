"""`./ondol bench alloc-mmu`: P2's MMU against no-MMU comparison on ondol (docs/alloc.md).

P2 ran the same programs on ARM9 Linux (MMU) and uClinux (no MMU): malloc was ~5 % faster
and synchronisation latency ~70 % better without the MMU. ondol's stand-in is the boot
option mmu=off (every task in one address space, no CR3 switch, eager mmap). Each
configuration boots once per mode, interleaved, so the two modes sit side by side in one
run:
  - `pcnt stat mallocbench sizes`: malloc, free and first-touch cost per size (P2's lock),
  - `mallocbench contend 2 N`: lock latency of two threads at 1 ms slices (P2's lock),
  - `ipcbench roundtrip N`: call/reply round trips between two tasks and two threads.
`outputs` writes alloc-mmu.md: each figure under mmu=on and mmu=off and the ratio off/on
beside P2's.
"""
import sys
from pathlib import Path

MODES = ("on", "off")
P2_LOCK = "sleep-retry"
CONTEND_N = 100000
CONTEND_HZ = "1000"
IPC_N = 2000
SIZES = (16, 1024, 32768, 65536, 1048576)
P2_MALLOC = 0.95            # P2: malloc ~5 % faster without the MMU
P2_SYNC = 0.30              # P2: synchronisation latency ~70 % better


def configs(config_type) -> tuple:
    out = []
    for mmu in MODES:
        out.append(config_type(command="pcnt stat mallocbench sizes",
                               options={"malloc_lock": P2_LOCK, "mmu": mmu},
                               params={"lock": P2_LOCK, "mmu": mmu}))
        out.append(config_type(command=f"mallocbench contend 2 {CONTEND_N}",
                               options={"malloc_lock": P2_LOCK, "hz": CONTEND_HZ, "mmu": mmu},
                               params={"lock": P2_LOCK, "threads": 2, "mmu": mmu}))
        out.append(config_type(command=f"ipcbench roundtrip {IPC_N}", options={"mmu": mmu},
                               params={"mmu": mmu}))
    return tuple(out)


def rows(results: list[dict], config, alloc_rows) -> list[dict]:
    """mallocbench rows as `./ondol bench alloc` shapes them; ipcbench rows in table "ipc"."""
    if config.command.startswith("ipcbench"):
        return [{**config.params, **g, "table": "ipc"} for g in results]
    return alloc_rows(results, config)


def _find(rows: list[dict], mmu: str, **match) -> dict | None:
    for r in rows:
        if r.get("mmu") == mmu and all(r.get(k) == v for k, v in match.items()):
            return r
    return None


def metrics(rows: list[dict]) -> list[tuple[str, str, dict, str, float | None]]:
    """(label, field, row match, P2 kind, P2 ratio) of each compared figure."""
    out = []
    for size in SIZES:
        for test, rnd in (("malloc", "cold"), ("malloc", "warm"), ("touch", "cold"),
                          ("free", "warm")):
            out.append((f"{test} {size} B ({rnd}), mean per call", "mean",
                        {"table": "sizes", "test": test, "size": size, "round": rnd},
                        "malloc" if test == "malloc" else "", P2_MALLOC if test == "malloc" else None))
    for field in ("median", "mean", "p999", "max"):
        out.append((f"2 threads contending, {field} per call", field,
                    {"table": "contention", "threads": 2}, "sync", P2_SYNC))
    for scenario in ("tasks", "threads"):
        out.append((f"IPC round trip between {scenario}, median", "median",
                    {"table": "ipc", "test": "roundtrip", "scenario": scenario}, "sync", P2_SYNC))
    return out


def _cell(v) -> str:
    return f"{v:,}" if isinstance(v, (int, float)) else "–"


def _first_use(results: list[dict], mmu: str, size: int) -> int | None:
    """malloc (cold) plus the first touch of its pages, per block: with mmu=off the frames
    come in the malloc (eager mapping), with mmu=on in the touch's page faults, so only
    the sum compares the two."""
    parts = [_find(results, mmu, table="sizes", test=t, size=size, round="cold")
             for t in ("malloc", "touch")]
    return sum(p["mean"] for p in parts) if all(parts) else None


def comparison(doc: dict) -> str:
    """The Markdown table: each figure with mmu=on and mmu=off, off/on, P2's ratio."""
    results = doc["results"]
    unit = "instructions (icount, exact)" if doc.get("mode") == "icount" else \
        f"TSC ticks ({doc.get('mode')})"
    out = [f"Mode {doc.get('mode')}: {unit}. malloc_lock={P2_LOCK} (P2's). Ratio off/on "
           "below 1: faster without the MMU. P2: ARM9 Linux against uClinux.", "",
           "| figure | mmu=on | mmu=off | off/on | P2 no-MMU/MMU |", "|---|---:|---:|---:|---:|"]
    for label, field, match, _kind, p2 in metrics(results):
        on, off = _find(results, "on", **match), _find(results, "off", **match)
        a, b = (on or {}).get(field), (off or {}).get(field)
        ratio = f"{b / a:.3f}" if a and b is not None else "–"
        out.append(f"| {label} | {_cell(a)} | {_cell(b)} | {ratio} | "
                   f"{'%.2f' % p2 if p2 else '–'} |")
    for size in SIZES:
        a, b = _first_use(results, "on", size), _first_use(results, "off", size)
        ratio = f"{b / a:.3f}" if a and b is not None else "–"
        out.append(f"| malloc + first touch {size} B (cold), per block | {_cell(a)} | "
                   f"{_cell(b)} | {ratio} | {P2_MALLOC:.2f} |")
    return "\n".join(out)


def outputs(doc: dict, directory: Path) -> list[Path]:
    md = directory / "alloc-mmu.md"
    md.write_text(comparison(doc) + "\n")
    print(md.read_text(), file=sys.stderr)
    return [md]


# ---- `./ondol bench alloc-mmu-cache --cache PRESET`: what icount cannot see --------------
# Under icount a CR3 load is one instruction: the TLB refills after it are not. The cache
# model sees them (its TLBs drop untagged entries at each address-space switch marker), so
# the IPC round trips are also measured as cache-model windows, in modelled cycles, under
# mmu=on and mmu=off. pcid=off in both: P2's ARM9 had no address-space tags (and QEMU's
# TCG CPU has no PCID, so pcid=on would change nothing there either).
CACHE_MODES = ({"mmu": "on", "pcid": "off"}, {"mmu": "off", "pcid": "off"})
CACHE_IPC_N = 500


def cache_configs(config_type) -> tuple:
    return tuple(config_type(command=f"ipcbench cacheroundtrip {CACHE_IPC_N} 0",
                             options=dict(mode), params=dict(mode))
                 for mode in CACHE_MODES)


def _per_ipc(row: dict, field: str) -> float | None:
    total = (row.get("cache") or {}).get("total") if isinstance(row.get("cache"), dict) else None
    return total[field] / row["ipcs"] if total and row.get("ipcs") else None


def cache_comparison(doc: dict) -> str:
    """Modelled cycles and TLB misses per round trip in each mode, ratios to mmu=off."""
    rows = [r for r in doc["results"] if r.get("test") == "roundtrip"]
    out = [f"Cache model {doc.get('cache')}: modelled cycles (not measured) per IPC round "
           f"trip, each measured loop a window; ratio mmu=off / the mode. P2's "
           f"synchronisation latency without the MMU: {P2_SYNC:.2f}x.", "",
           "| scenario | mode | modelled cycles | iTLB misses | dTLB misses | off / mode |",
           "|---|---|---:|---:|---:|---:|"]
    for scenario in ("tasks", "threads"):
        chosen = [r for r in rows if r.get("scenario") == scenario]
        off = next((r for r in chosen if r.get("mmu") == "off"), None)
        base = _per_ipc(off, "modelled_cycles") if off else None
        for r in chosen:
            cyc = _per_ipc(r, "modelled_cycles")
            ratio = f"{base / cyc:.3f}" if base and cyc else "–"
            fmt = (lambda v: f"{v:,.1f}" if v is not None else "–")
            out.append(f"| {scenario} | mmu={r['mmu']} pcid={r.get('pcid')} | {fmt(cyc)} | "
                       f"{fmt(_per_ipc(r, 'itlb_misses'))} | {fmt(_per_ipc(r, 'dtlb_misses'))} "
                       f"| {ratio} |")
    return "\n".join(out)


def cache_outputs(doc: dict, directory: Path) -> list[Path]:
    md = directory / "alloc-mmu-cache.md"
    md.write_text(cache_comparison(doc) + "\n")
    print(md.read_text(), file=sys.stderr)
    return [md]
