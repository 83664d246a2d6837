"""`./ondol bench net`: P3's per-layer cost of sending and receiving one TCP segment, on
ondol's network server in MK and IK placement against the host's Linux stack (docs/net.md,
"P3's per-layer cost in QEMU").

Each boot runs in a network namespace of its own with a tap (tools/ondol/netns.py) and the
host side, tools/ondol/netpeer.py, inside it; the guest program is bench/netbench.c.
QEMU runs under icount with sleep=on: instruction counts are exact, and while the guest
waits for Linux its clock follows host time, so its TCP timers do not run out first.

Besides the result rows, `outputs` writes `net-p3.md` (P3's tables: one per phase, a row
per module, MK and IK per size, P3's FreeBSD numbers where the paper gives them) and
`net-layers.{png,svg}` (one stacked bar per phase and placement, one panel per size).
The benchmark itself is declared in benchmarks.py from what this module provides.
"""
from __future__ import annotations

import os
import subprocess
import sys
from contextlib import contextmanager
from pathlib import Path

from ondol import OndolError, netns

SIZES = (100, 300, 500, 1440)
PLACEMENTS = ("mk", "ik")
# Iterations per size and phase (after 3 warm-up ones); the fast test lowers it.
N = int(os.environ.get("ONDOL_NET_N", "50"))
PEER = Path(__file__).resolve().parent / "netpeer.py"

# P3's modules per phase, in the paper's order: (layer as the guest names it, label).
PHASES = {
    "send": ("send one segment", (
        ("sock", "copy from user (socket send)"),
        ("tcp_output", "TCP output incl. checksum"),
        ("ip_output", "IP output"),
        ("driver_output", "driver (Ethernet, virtio-net send)"),
        ("other", "other layers"))),
    "ack_in": ("ACK input (sender)", (
        ("driver_input", "driver (copy into an mbuf, Ethernet input)"),
        ("ip_input", "IP input"),
        ("tcp_input", "TCP ACK input and buffer release"),
        ("other", "other layers (TCP output after the ACK)"))),
    "recv": ("receive one segment", (
        ("driver_input", "driver (copy into an mbuf, Ethernet input)"),
        ("ip_input", "IP input"),
        ("tcp_input", "TCP input incl. checksum, append, wake-up"),
        ("sock", "copy to user (socket receive)"),
        ("other", "other layers (TCP output: window check)"))),
    "ack_out": ("ACK output (receiver)", (
        ("tcp_output", "TCP output (delayed ACK)"),
        ("ip_output", "IP output"),
        ("driver_output", "driver (Ethernet, virtio-net send)"),
        ("other", "other layers"))),
    "call": ("the whole write call seen by the client (IPC, dispatch, stack), probes off", (
        ("write call", "write call"),)),
}
# What P3 gives in its text for 1,440 bytes (FreeBSD 2.1, Pentium 166 cycles; the per-module
# bars of its figures 5.1-5.6 are not given as numbers): papers.json P3.modules.
P3_CYCLES_1440 = {("send", "tcp_output"): 10111, ("recv", "sock"): 10986}
P3_MEMREFS_1440 = {("send", "tcp_output"): 1029, ("recv", "sock"): 3148}
LAYER_COLOURS = {"sock": "#4c72b0", "tcp_output": "#dd8452", "ip_output": "#55a868",
                 "driver_output": "#c44e52", "driver_input": "#8172b3", "ip_input": "#937860",
                 "tcp_input": "#da8bc3", "other": "#8c8c8c"}


@contextmanager
def environment(config):
    """A namespace with its tap, netpeer.py serving in it, for one boot (a BootEnv)."""
    from ondol.benchmarks import BootEnv  # benchmarks.py imports this module
    placement = config.params["placement"]
    with netns.Namespace(f"ondolb{os.getpid()}{placement}") as ns:
        peer = subprocess.Popen([*ns.prefix(), sys.executable, str(PEER), netns.LINUX_IP],
                                stdout=subprocess.PIPE, text=True)
        try:
            if peer.stdout.readline().strip() != "ready":
                raise OndolError("net: the host peer (netpeer.py) did not start")
            yield BootEnv(prefix=tuple(ns.prefix()), extra=netns.qemu_flags(),
                          options=netns.kernel_options(placement))
        finally:
            peer.kill()
            peer.wait()


def net_rows(results: list[dict], config) -> list[dict]:
    """Guest rows plus the placement, P3's module label, P3's number where it gives one,
    and `bar` (what the generic plot's x axis shows)."""
    rows = []
    for guest in results:
        row = {**config.params, **guest}
        labels = dict(PHASES.get(row["phase"], ("", ()))[1])
        row["module"] = labels.get(row["layer"], row["layer"])
        key = (row["test"], row["layer"])
        row["p3_cycles"] = P3_CYCLES_1440.get(key) if row["size"] == 1440 else None
        row["bar"] = f"{row['placement']} {row['layer']}"
        rows.append(row)
    return rows


def _value(rows: list[dict], phase: str, layer: str, size: int, placement: str):
    return next((r["median"] for r in rows if r.get("phase") == phase and r.get("layer") == layer
                 and r.get("size") == size and r.get("placement") == placement), None)


def _cell(value) -> str:
    return "–" if value is None else f"{value:,}"


def p3_tables(doc: dict) -> str:
    """P3's tables in Markdown: per phase, a row per module, ondol MK and IK per size and
    P3's FreeBSD cycles for 1,440 bytes where the paper gives them; a total row."""
    rows = doc["results"]
    unit = rows[0].get("unit", "") if rows else ""
    out = [f"Mode {doc['mode']}; ondol in {unit}, median per segment; P3: FreeBSD 2.1 "
           "cycles (Pentium 166), only where its text gives a number.", ""]
    head = ["module"] + [f"{s} B {p.upper()}" for s in SIZES for p in PLACEMENTS] + \
        ["P3 1440 B (cycles)"]
    for phase, (title, modules) in PHASES.items():
        out += [f"**{title}**", "", "| " + " | ".join(head) + " |",
                "|---|" + "---:|" * (len(head) - 1)]
        totals = {(s, p): 0 for s in SIZES for p in PLACEMENTS}
        for layer, label in modules:
            cells = []
            for s in SIZES:
                for p in PLACEMENTS:
                    v = _value(rows, phase, layer, s, p)
                    cells.append(_cell(v))
                    totals[(s, p)] += v or 0
            test = "recv" if phase in ("recv", "ack_out") else "send"
            p3 = P3_CYCLES_1440.get((test, layer)) if phase in ("send", "recv") else None
            out.append(f"| {label} | " + " | ".join(cells) + f" | {_cell(p3)} |")
        if len(modules) > 1:
            out.append("| **total** | " + " | ".join(f"**{totals[(s, p)]:,}**" for s in SIZES
                                                      for p in PLACEMENTS) + " | – |")
        out.append("")
    return "\n".join(out)


def stacked_plot(doc: dict, directory: Path) -> list[Path]:
    """net-layers.{png,svg}: per size a panel; per phase and placement a bar stacked by
    layer (the median per segment of each)."""
    import matplotlib.pyplot as plt  # the plot module has chosen the Agg backend
    rows = doc["results"]
    phases = [p for p in PHASES if p != "call"]
    fig, axes = plt.subplots(1, len(SIZES), figsize=(16, 5), sharey=True)
    seen = set()
    for ax, size in zip(axes, SIZES):
        names = []
        for x, (phase, placement) in enumerate((p, q) for p in phases for q in PLACEMENTS):
            names.append(f"{phase}\n{placement.upper()}")
            bottom = 0
            for layer, _ in PHASES[phase][1]:
                v = _value(rows, phase, layer, size, placement) or 0
                label = None if layer in seen else layer
                seen.add(layer)
                ax.bar(x, v, bottom=bottom, color=LAYER_COLOURS[layer], label=label)
                bottom += v
        ax.set_xticks(range(len(names)), names, fontsize=7)
        ax.set_title(f"{size} bytes")
        ax.grid(True, axis="y", alpha=0.3)
    unit = rows[0].get("unit", "") if rows else ""
    axes[0].set_ylabel(f"per segment [{unit}]")
    fig.legend(loc="upper right", fontsize=8)
    fig.suptitle(f"P3's per-layer cost of one TCP segment on ondol, MK and IK "
                 f"(mode {doc['mode']}, commit {doc['commit'][:12]})", fontsize=10)
    fig.tight_layout(rect=(0, 0, 0.92, 0.95))
    png, svg = directory / "net-layers.png", directory / "net-layers.svg"
    fig.savefig(png, dpi=110)
    fig.savefig(svg, metadata={"Date": None})
    plt.close(fig)
    return [png, svg]


def outputs(doc: dict, directory: Path) -> list[Path]:
    md = directory / "net-p3.md"
    md.write_text(p3_tables(doc) + "\n")
    print(md.read_text(), file=sys.stderr)
    return [md, *stacked_plot(doc, directory)]
