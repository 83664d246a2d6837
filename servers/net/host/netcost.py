#!/usr/bin/env python3
"""P3's per-layer send/receive cost of the hosted stack, in exact instruction counts.

Runs build/net/netcost under `valgrind --tool=callgrind` once per (size, phase), collecting
only the measured calls of that phase (--toggle-collect=cost_PHASE), and splits each
phase's instructions by layer from the inclusive cost of each layer's entry function
(a layer = its function minus the next layer's). Prints a Markdown table (docs/net.md) or,
with --json, the numbers.

Usage: python3 servers/net/host/netcost.py [--sizes 100,300,500,1440] [--iter 10] [--json]
"""
import argparse
import json
import os
import re
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[3]
BINARY = ROOT / "build" / "net" / "netcost"
LINE = re.compile(r"^\s*([\d,]+)\s+\([\s\d.]+%\)\s+(\S+?):(\w+)\s+\[(.+)\]\s*$")

# phase -> [(row label, function, function whose cost is subtracted)], top layer first.
# "driver" is the hosted stand-in: a copy into/out of a one-frame device slot.
PHASES = {
    "send": [
        ("socket send, copy from user", "net_send", "tcp_output"),
        ("TCP output incl. checksum", "tcp_output", "ip_output"),
        ("IP output incl. ARP lookup", "ip_output", "ether_output"),
        ("Ethernet output", "ether_output", "driver_send"),
        ("driver", "driver_send", None),
    ],
    "ack_input": [
        ("driver", "driver_receive", "ether_input"),
        ("Ethernet input", "ether_input", "ip_input"),
        ("IP input", "ip_input", "tcp_input"),
        ("TCP ACK input, buffer release", "tcp_input", None),
    ],
    "receive": [
        ("driver", "driver_receive", "ether_input"),
        ("Ethernet input", "ether_input", "ip_input"),
        ("IP input", "ip_input", "tcp_input"),
        ("TCP input incl. checksum, append", "tcp_input", None),
        ("socket receive, copy to user", "net_recv", None),
    ],
    "ack_output": [
        ("timer: net_tick (ARP and socket deadlines)", "net_tick", "tcp_output"),
        ("TCP output (delayed ACK)", "tcp_output", "ip_output"),
        ("IP output incl. ARP lookup", "ip_output", "ether_output"),
        ("Ethernet output", "ether_output", "driver_send"),
        ("driver", "driver_send", None),
    ],
}
# Detail rows: functions inside a layer worth showing on their own.
DETAIL = {"send": ["cksum_add", "ring_write"], "receive": ["cksum_add", "ring_peek"]}


def inclusive_costs(size, phase, iters):
    """Function -> inclusive instructions per measured call of `phase`."""
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "cg.out"
        subprocess.run(["valgrind", "--tool=callgrind", f"--callgrind-out-file={out}",
                        f"--toggle-collect=cost_{phase}", str(BINARY), str(size), str(iters)],
                       check=True, capture_output=True, text=True, timeout=600)
        text = subprocess.run(["callgrind_annotate", "--inclusive=yes", "--threshold=100", str(out)],
                              check=True, capture_output=True, text=True).stdout
    costs = {}
    for line in text.splitlines():
        m = LINE.match(line)
        if m and m.group(4).endswith("netcost"):
            costs[m.group(3)] = int(m.group(1).replace(",", "")) / iters
    costs["total"] = costs.get(f"cost_{phase}", 0.0)
    return costs


def measure(sizes, iters):
    result = {}
    for size in sizes:
        for phase, rows in PHASES.items():
            c = inclusive_costs(size, phase, iters)
            layers = {label: c.get(fn, 0.0) - (c.get(sub, 0.0) if sub else 0.0)
                      for label, fn, sub in rows}
            detail = {fn: c.get(fn, 0.0) for fn in DETAIL.get(phase, [])}
            result.setdefault(phase, {})[size] = {"layers": layers, "detail": detail,
                                                  "total": c["total"]}
    return result


def table(result, sizes):
    out = []
    titles = {"send": "Send one segment", "ack_input": "ACK input (sender)",
              "receive": "Receive one segment", "ack_output": "ACK output (receiver)"}
    header = "| layer | " + " | ".join(f"{s} B" for s in sizes) + " |"
    sep = "|---|" + "---:|" * len(sizes)
    for phase, rows in PHASES.items():
        out.append(f"**{titles[phase]}** (instructions per segment)\n")
        out += [header, sep]
        for label, _, _ in rows:
            vals = [result[phase][s]["layers"][label] for s in sizes]
            out.append(f"| {label} | " + " | ".join(f"{v:,.0f}" for v in vals) + " |")
        for fn in DETAIL.get(phase, []):
            vals = [result[phase][s]["detail"][fn] for s in sizes]
            out.append(f"| &nbsp;&nbsp;of which `{fn}` | " + " | ".join(f"{v:,.0f}" for v in vals) + " |")
        vals = [result[phase][s]["total"] for s in sizes]
        out.append("| **total** | " + " | ".join(f"**{v:,.0f}**" for v in vals) + " |")
        out.append("")
    return "\n".join(out)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", default="100,300,500,1440")
    ap.add_argument("--iter", type=int, default=10)
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args()
    if not BINARY.exists():
        sys.exit(f"{BINARY} missing: run `make net` first")
    sizes = [int(s) for s in args.sizes.split(",")]
    result = measure(sizes, args.iter)
    print(json.dumps(result, indent=1) if args.json else table(result, sizes))


if __name__ == "__main__":
    main()
