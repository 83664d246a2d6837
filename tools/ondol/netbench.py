"""`./ondol bench net`: P3's per-layer cost of sending and receiving one TCP segment, on
ondol's network server in MK and IK placement against the host's Linux stack (docs/net.md,
"P3's per-layer cost in QEMU").

Each boot runs in a network namespace of its own with a tap (tools/ondol/netns.py) and the
host side, tools/ondol/netpeer.py, inside it; the guest program is bench/netbench.c.
QEMU runs under icount with sleep=on: instruction counts are exact, and while the guest
waits for Linux its clock follows host time, so its TCP timers do not run out first.

Three more boots run tools/netcalls/netcalls.c, a static Linux program, on the UNIX server
(unix=mk net=mk, unix=ik net=ik, and the mixed unix=ik net=mk as placement "ik-mk"; pid 1):
the cost of one write and one recv of each size, and bulk transfers to and from the host. The first of them also boots the Linux guest
(Debian's kernel, tools/peer) in the same QEMU and mode, in a namespace of its own with its
virtio-net driver loaded from the kernel package, running the same program: its rows have
placement "linux", and every ondol row of the program gets `linux` and `ratio`.

Besides the result rows, `outputs` writes `net-p3.md` (P3's tables: one per phase, a row
per module, MK and IK per size, P3's FreeBSD numbers where the paper gives them; then the
per-call and bulk tables beside the Linux guest) and `net-layers.{png,svg}` (one stacked
bar per phase and placement, one panel per size). With `--cache SPEC` the cache model's
windows (one per measured iteration) become modelled cycles and memory references on each
P3 row (`attach_windows`), with their tables and `net-layers-cycles.{png,svg}`. The
benchmark itself is declared in benchmarks.py from what this module provides.
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
# The program's boots: both forms, and the mixed one "UNIX-NET" (docs/net.md, "Mixed forms").
FORMS = (*PLACEMENTS, "ik-mk")
CALL_PHASES = ("write", "recv", "peek", "sendto", "recvfrom")   # tools/netcalls/netcalls.c
# Iterations per size and phase (after 3 warm-up ones); the fast test lowers it.
N = int(os.environ.get("ONDOL_NET_N", "50"))
PEER = Path(__file__).resolve().parent / "netpeer.py"
# The Linux-ABI program (tools/netcalls/netcalls.c in the root archive); the quick one when
# the fast test lowers N.
PROGRAM = "/bench/netcalls" if N >= 10 else "/bench/netcalls-quick"
# The Linux guest's virtio-net driver: these modules of Debian's kernel package, loaded in
# this order (each needs only the ones before it).
LINUX_MODULES = ("drivers/virtio/virtio_ring.ko", "drivers/virtio/virtio.ko",
                 "drivers/virtio/virtio_pci_modern_dev.ko",
                 "drivers/virtio/virtio_pci_legacy_dev.ko", "drivers/virtio/virtio_pci.ko",
                 "net/core/failover.ko", "drivers/net/net_failover.ko",
                 "drivers/net/virtio_net.ko")
LINUX_TIMEOUT = 900.0

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
# The cache model's windows (bench/netbench.c, with --cache): id = size index << 9 |
# phase << 7 | iteration + 1, 0 = the calibration stretches; an end id that differs from
# it (bit 11 set) is an iteration P3's filter left out. Each pcnt stretch is the bucket of
# its slot; the layers' slots in servers/net/net_probe.h's order from the row's first_slot.
WINDOW_PHASES = ("send", "ack_in", "recv", "ack_out")
SLOT_LAYERS = ("sock", "tcp_output", "ip_output", "driver_output", "driver_input", "ip_input",
               "tcp_input")
# Row field <- the model's counter, per layer and iteration (medians over the kept ones).
MODEL_FIELDS = {"modelled_cycles": ("modelled_cycles",), "model_instructions": ("instructions",),
                "mem_reads": ("loads",), "mem_writes": ("stores",),
                "mem_refs": ("loads", "stores")}
LAYER_COLOURS = {"sock": "#4c72b0", "tcp_output": "#dd8452", "ip_output": "#55a868",
                 "driver_output": "#c44e52", "driver_input": "#8172b3", "ip_input": "#937860",
                 "tcp_input": "#da8bc3", "other": "#8c8c8c"}


@contextmanager
def host_peer(tag: str):
    """A namespace with its tap and netpeer.py serving in it."""
    with netns.Namespace(f"ondolb{os.getpid()}{tag}") as ns:
        peer = subprocess.Popen([*ns.prefix(), sys.executable, str(PEER), netns.LINUX_IP],
                                stdout=subprocess.PIPE, text=True)
        try:
            if peer.stdout.readline().strip() != "ready":
                raise OndolError("net: the host peer (netpeer.py) did not start")
            yield ns
        finally:
            peer.kill()
            peer.wait()


def program_configs():
    """The boots of the Linux-ABI program: the UNIX server and the network server in the
    same form, and the mixed unix=ik net=mk; none with ONDOL_NET_PROGRAM=off (P3's tables
    alone, e.g. under the cache model, where the bulk transfers would take long)."""
    from ondol.benchmarks import Config  # benchmarks.py imports this module
    if os.environ.get("ONDOL_NET_PROGRAM", "on").lower() in ("0", "off", "no", "false"):
        return ()
    return tuple(Config(command="netcalls", options={"unix": f.split("-")[0], "linux_init": PROGRAM},
                        params={"placement": f, "program": "netcalls"}) for f in FORMS)


def _root_archive_current() -> None:
    """build/rootfs.cpio with the program, rebuilt when it is missing or older than the
    program's source."""
    from ondol import linuxsuite, unixbench
    archive = linuxsuite.REPO / "build" / "rootfs.cpio"
    program = archive.parent / "rootfs" / PROGRAM.lstrip("/")
    if not program.exists() or unixbench.NETCALLS_SOURCE.stat().st_mtime > archive.stat().st_mtime:
        try:
            linuxsuite.rootfs_archive(archive.parent)
        except linuxsuite.SuiteError as exc:
            raise OndolError(f"root archive for bench net: {exc}") from None


@contextmanager
def environment(config):
    """A namespace with its tap, netpeer.py serving in it, for one boot (a BootEnv)."""
    from ondol.benchmarks import BootEnv  # benchmarks.py imports this module
    placement = config.params["placement"]
    if config.params.get("program"):
        _root_archive_current()
    with host_peer(placement + config.params.get("program", "")[:1]) as ns:
        yield BootEnv(prefix=tuple(ns.prefix()), extra=netns.qemu_flags(),
                      options=netns.kernel_options(placement.split("-")[-1]))


# ---- the Linux guest: the same program on Debian's kernel in the same QEMU ----

def _linux_modules(work: Path) -> list:
    """LINUX_MODULES from the kernel package the peer boots, as root-archive entries under
    /lib/modules (extracted once into work)."""
    from ondol import linuxsuite, rootfs
    debs = sorted(linuxsuite.peer_kernel().parent.glob("**/linux-image-*.deb")) or \
        sorted((linuxsuite.REPO / "build" / "peer" / "debs").glob("linux-image-*.deb"))
    if not debs:
        raise OndolError("net: no linux-image package under build/peer/debs (tools/peer)")
    out = work / "modules"
    missing = [m for m in LINUX_MODULES if not any(out.glob(f"lib/modules/*/kernel/{m}"))]
    if missing:
        out.mkdir(parents=True, exist_ok=True)
        tar = subprocess.Popen(["dpkg-deb", "--fsys-tarfile", str(debs[-1])],
                               stdout=subprocess.PIPE)
        subprocess.run(["tar", "-x", "-C", str(out), "--wildcards",
                        *(f"./lib/modules/*/kernel/{m}" for m in LINUX_MODULES)],
                       stdin=tar.stdout, check=True, timeout=300)
        tar.wait()
    entries = [rootfs.Entry("lib/netmods", rootfs.S_IFDIR | 0o755)]
    for i, m in enumerate(LINUX_MODULES):
        found = next(out.glob(f"lib/modules/*/kernel/{m}"))
        entries.append(rootfs.Entry(f"lib/netmods/{i}-{found.name}", rootfs.S_IFREG | 0o644,
                                    found.read_bytes()))
    return entries


def linux_init() -> bytes:
    """/init of the Linux guest: the driver, ondol's address, the program's records on COM2,
    power off."""
    ip, prefix = netns.ONDOL_IP, netns.PREFIX
    mask = ".".join(str((0xffffffff << (32 - prefix) >> s) & 255) for s in (24, 16, 8, 0))
    return ("#!/bin/sh\n"
            "export PATH=/bin:/sbin:/usr/bin:/usr/sbin\n"
            "mount -t proc proc /proc\n"
            "mount -t devtmpfs devtmpfs /dev\n"
            "mount -t sysfs sysfs /sys\n"
            "mount -t tmpfs tmpfs /tmp\n"
            "exec </dev/console >/dev/console 2>&1\n"
            "for m in $(ls /lib/netmods | sort -n); do insmod /lib/netmods/$m; done\n"
            f"ifconfig eth0 {ip} netmask {mask} up\n"
            "stty -F /dev/ttyS1 raw -echo\n"
            f"{PROGRAM} >/dev/ttyS1\n"
            "poweroff -f\n").encode()


def linux_rows(mode: str) -> list[dict]:
    """The program on the Linux guest in the same QEMU and mode (icount: with sleep=on, as
    ondol's boots), against netpeer.py in a namespace of its own; its rows with placement
    "linux". None, with a note, when it cannot run."""
    from ondol import linuxsuite, unixbench
    if os.environ.get("ONDOL_PEER", "on").lower() in ("0", "off", "no", "false"):
        return []
    build = linuxsuite.REPO / "build"
    work = build / "netbench" / "linux"
    try:
        more = tuple(_linux_modules(work))
        with host_peer("l") as ns:
            wrapper = work / "qemu-in-ns"
            qemu = os.environ.get("ONDOL_QEMU") or "qemu-system-x86_64"
            wrapper.write_text(f'#!/bin/sh\nexec {" ".join(ns.prefix())} {qemu} "$@"\n')
            wrapper.chmod(0o755)
            records = unixbench.peer_boot(build, work, linux_init(), more,
                                          icount=mode == "icount", icount_sleep=True,
                                          qemu=str(wrapper), extra=netns.qemu_flags())
    except (OndolError, unixbench.UnixBenchError, linuxsuite.SuiteError,
            subprocess.SubprocessError, StopIteration) as exc:
        print(f"ondol: note: no Linux guest rows for net: {exc}", file=sys.stderr)
        return []
    return [{**r, "placement": "linux", "program": "netcalls", "kernel": "linux"}
            for r in records if r.get("bench") == "net"]


# The Linux guest's rows of the run in progress (booted with the first program config).
_linux: list[dict] = []


def net_rows(results: list[dict], config) -> list[dict]:
    """Guest rows plus the placement, P3's module label, P3's number where it gives one,
    and `bar` (what the generic plot's x axis shows). The first program boot adds the
    Linux guest's rows; every program row gets `linux` (the guest's median) and `ratio`."""
    results = list(results)
    if config.params.get("program") and config.params["placement"] == PLACEMENTS[0]:
        from ondol.benchmarks import _run_mode
        _linux[:] = linux_rows(_run_mode() or "icount")
        results += _linux
    base = {(r["test"], r["phase"], r["size"]): r["median"] for r in _linux}
    rows = []
    for guest in results:
        row = {**config.params, **guest}
        labels = dict(PHASES.get(row["phase"], ("", ()))[1])
        row["module"] = labels.get(row["layer"], row["layer"])
        key = (row["test"], row["layer"])
        row["p3_cycles"] = P3_CYCLES_1440.get(key) if row["size"] == 1440 else None
        row["bar"] = f"{row['placement']} {row['layer']}"
        if row.get("program"):
            linux = base.get((row["test"], row["phase"], row["size"]))
            row["linux"] = linux if row["placement"] != "linux" else None
            row["ratio"] = round(row["median"] / linux, 3) if linux and row["linux"] else None
        rows.append(row)
    return rows


def attach_windows(rows: list[dict], windows: list[dict]) -> list[dict]:
    """With --cache: the model's per-layer cost on each P3 row of one boot, as medians over
    the iterations P3's filter kept (the same ones as the row's instructions): modelled
    cycles, the model's instructions, memory reads, writes and both (`mem_refs`). Each
    iteration's value of a layer is its slot's bucket less its stretches times the fixed
    cost of one stretch (window 0, _stretch_cost), as the instructions subtract pcnt's. The
    windows are used up; the rows record how many (`model_windows`)."""
    guest = [r for r in rows if not r.get("program") and "first_slot" in r]
    if not guest:
        return windows
    first = guest[0]["first_slot"]
    cal = next((w for w in windows if w.get("window") == 0), None)
    stretch = _stretch_cost(cal, first) if cal else {}
    kept: dict[tuple, list[dict]] = {}
    for w in windows:
        wid = w.get("window", 0)
        if wid and w.get("complete") and w.get("end_window") == wid:
            key = (SIZES[wid >> 9], WINDOW_PHASES[(wid >> 7) & 3])
            kept.setdefault(key, []).append(_layer_costs(w, first, stretch))
    for row in guest:
        samples = kept.get((row["size"], row["phase"]))
        if not samples:
            continue
        layers = _row_layers(row)
        for field in MODEL_FIELDS:
            values = sorted(sum(s[layer][field] for layer in layers) for s in samples)
            row[field] = round(values[len(values) // 2])
        row["model_windows"] = len(samples)
        row["model_stretch_cycles"] = round(stretch.get("modelled_cycles", 0))
    return []


def _bucket_costs(window: dict, slot: int, per_stretch: bool = False) -> dict:
    """MODEL_FIELDS of bucket `slot` in a window (per stretch: divided by its stretches)."""
    bucket = next((b for b in window.get("buckets", ()) if b["bucket"] == slot), None)
    if not bucket:
        return {field: 0 for field in MODEL_FIELDS} | {"stretches": 0}
    div = bucket["stretches"] if per_stretch and bucket["stretches"] else 1
    costs = {field: sum(bucket[c] for c in counters) / div
             for field, counters in MODEL_FIELDS.items()}
    return costs | {"stretches": bucket["stretches"]}


def _stretch_cost(cal: dict, first: int) -> dict:
    """The fixed cost of one stretch: the calibration's mean instructions and references
    (the same in every stretch), and as cycles those instructions at the model's base CPI.
    The calibration runs right after the server has touched all its memory, so its first
    stretch misses everywhere; in a measured iteration the probes' edges run many times
    and stay cached, so their misses are not subtracted (any left stay in the layer)."""
    cost = _bucket_costs(cal, first, per_stretch=True)
    cost["modelled_cycles"] = cost["model_instructions"] * cal["penalties"]["cpi"]
    return cost


def _layer_costs(window: dict, first: int, stretch: dict) -> dict:
    """Per layer of one iteration: its bucket less the fixed cost of its stretches."""
    out = {}
    for i, layer in enumerate(SLOT_LAYERS):
        raw = _bucket_costs(window, first + i)
        out[layer] = {f: max(0.0, raw[f] - raw["stretches"] * stretch.get(f, 0))
                      for f in MODEL_FIELDS}
    return out


def _row_layers(row: dict) -> list[str]:
    """The slot layers a row stands for: its own, or for "other" those outside the phase."""
    if row["layer"] != "other":
        return [row["layer"]]
    mine = {layer for layer, _ in PHASES[row["phase"]][1]}
    return [layer for layer in SLOT_LAYERS if layer not in mine]


def _value(rows: list[dict], phase: str, layer: str, size: int, placement: str,
           field: str = "median"):
    return next((r.get(field) for r in rows if r.get("phase") == phase and r.get("layer") == layer
                 and r.get("size") == size and r.get("placement") == placement
                 and not r.get("program")), None)


def _cell(value) -> str:
    return "–" if value is None else f"{value:,}"


# The tables of P3's modules: (row field, what it is, P3's numbers for 1,440 bytes).
P3_TABLES = (("median", None, P3_CYCLES_1440),
             ("modelled_cycles", "modelled cycles (cache model {cache}; not hardware cycles)",
              P3_CYCLES_1440),
             ("mem_refs", "memory references, reads + writes (cache model {cache})",
              P3_MEMREFS_1440))


def p3_tables(doc: dict) -> str:
    """P3's tables in Markdown: per phase, a row per module, ondol MK and IK per size and
    P3's FreeBSD number for 1,440 bytes where the paper gives one; a total row. In
    instructions, and with --cache also in modelled cycles and in memory references."""
    rows = doc["results"]
    unit = rows[0].get("unit", "") if rows else ""
    out = [f"Mode {doc['mode']}; ondol in {unit}, median per segment; P3: FreeBSD 2.1 "
           "cycles (Pentium 166), only where its text gives a number.", ""]
    for field, what, p3 in P3_TABLES:
        if not any(r.get(field) is not None for r in rows if not r.get("program")):
            continue
        if what:
            out += [f"**In {what.format(cache=doc.get('cache'))}**, median per segment over "
                    "the same kept iterations; P3's column in the same unit.", ""]
        out += _phase_tables(rows, field, p3)
    return "\n".join(out)


def _phase_tables(rows: list[dict], field: str, p3_numbers: dict) -> list[str]:
    head = ["module"] + [f"{s} B {p.upper()}" for s in SIZES for p in PLACEMENTS] + \
        ["P3 1440 B"]
    out = []
    for phase, (title, modules) in PHASES.items():
        if field != "median" and phase == "call":
            continue
        out += [f"**{title}**", "", "| " + " | ".join(head) + " |",
                "|---|" + "---:|" * (len(head) - 1)]
        totals = {(s, p): 0 for s in SIZES for p in PLACEMENTS}
        for layer, label in modules:
            cells = []
            for s in SIZES:
                for p in PLACEMENTS:
                    v = _value(rows, phase, layer, s, p, field)
                    cells.append(_cell(v))
                    totals[(s, p)] += v or 0
            test = "recv" if phase in ("recv", "ack_out") else "send"
            p3 = p3_numbers.get((test, layer)) if phase in ("send", "recv") else None
            out.append(f"| {label} | " + " | ".join(cells) + f" | {_cell(p3)} |")
        if len(modules) > 1:
            out.append("| **total** | " + " | ".join(f"**{totals[(s, p)]:,}**" for s in SIZES
                                                      for p in PLACEMENTS) + " | – |")
        out.append("")
    return out


PROGRAM_PLACEMENTS = (*FORMS, "linux")


def _program_row(rows: list[dict], test: str, phase: str, size: int, placement: str):
    return next((r for r in rows if r.get("program") and r["test"] == test and
                 r["phase"] == phase and r["size"] == size and r["placement"] == placement),
                None)


def _ratio(row, linux) -> str:
    return f"{row['median'] / linux['median']:.2f}" if row and linux and linux["median"] else "–"


def program_tables(doc: dict) -> str:
    """The Linux program's tables: instructions per call (CALL_PHASES) on ondol MK, IK and
    the Linux guest with ondol / Linux (the issue's goal: at most 0.5); bulk transfers in
    instructions per byte and the host's MB/s (the goal: at least the Linux guest's)."""
    rows = [r for r in doc["results"] if r.get("program")]
    if not rows:
        return ""
    out = [f"**One call of a static Linux program (tools/netcalls/netcalls.c)**, mode "
           f"{doc['mode']}: instructions of the whole machine per call, median; ratio = "
           "ondol / Linux guest (goal ≤ 0.5).", "",
           "IK-MK: unix=ik net=mk.", "",
           "| call | size | MK | IK | IK-MK | Linux guest | MK / Linux | IK / Linux | "
           "IK-MK / Linux |", "|---|---:|---:|---:|---:|---:|---:|---:|---:|"]
    for phase in CALL_PHASES:
        for size in SIZES:
            mk, ik, mixed, lx = (_program_row(rows, "call", phase, size, p)
                                 for p in PROGRAM_PLACEMENTS)
            cells = [_cell(r["median"] if r else None) for r in (mk, ik, mixed, lx)]
            out.append(f"| {phase} | {size} | " + " | ".join(cells) +
                       f" | {_ratio(mk, lx)} | {_ratio(ik, lx)} | {_ratio(mixed, lx)} |")
    per = "ins/B" if doc["mode"] == "icount" else "ticks/B"   # the TSC counts instructions
    out += ["", "**Bulk TCP transfer** (16 KiB calls): instructions per byte (the whole "
            "machine's TSC ticks less its halted time: ondol's kernel count, Linux's "
            "/proc/timer_list) and MB/s on the host's wall clock "
            f"(mode {doc['mode']}; goal: ondol's MB/s ≥ the Linux guest's).", "",
            f"| direction | bytes | MK {per} | IK {per} | IK-MK {per} | Linux {per} | MK MB/s | "
            "IK MB/s | IK-MK MB/s | Linux MB/s |", "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|"]
    for phase, label in (("to_host", "ondol → host"), ("from_host", "host → ondol")):
        got = [next((r for r in rows if r["test"] == "bulk" and r["phase"] == phase and
                     r["placement"] == p), None) for p in PROGRAM_PLACEMENTS]
        size = next((r["size"] for r in got if r), None)
        ipb = [f"{r['ins_per_byte']:.2f}" if r else "–" for r in got]
        mbs = [f"{r['mb_s']:.1f}" if r else "–" for r in got]
        out.append(f"| {label} | {_cell(size)} | " + " | ".join(ipb + mbs) + " |")
    return "\n".join(out) + "\n"


def stacked_plot(doc: dict, directory: Path, field: str = "median",
                 name: str = "net-layers") -> list[Path]:
    """NAME.{png,svg}: per size a panel; per phase and placement a bar stacked by layer
    (the median per segment of each, of `field`: instructions, or modelled cycles)."""
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
                v = _value(rows, phase, layer, size, placement, field) or 0
                label = None if layer in seen else layer
                seen.add(layer)
                ax.bar(x, v, bottom=bottom, color=LAYER_COLOURS[layer], label=label)
                bottom += v
        ax.set_xticks(range(len(names)), names, fontsize=7)
        ax.set_title(f"{size} bytes")
        ax.grid(True, axis="y", alpha=0.3)
    unit = rows[0].get("unit", "") if rows else ""
    if field == "modelled_cycles":
        unit = f"modelled cycles, cache model {doc.get('cache')}"
    axes[0].set_ylabel(f"per segment [{unit}]")
    fig.legend(loc="upper right", fontsize=8)
    fig.suptitle(f"P3's per-layer cost of one TCP segment on ondol, MK and IK "
                 f"(mode {doc['mode']}, commit {doc['commit'][:12]})", fontsize=10)
    fig.tight_layout(rect=(0, 0, 0.92, 0.95))
    png, svg = directory / f"{name}.png", directory / f"{name}.svg"
    fig.savefig(png, dpi=110)
    fig.savefig(svg, metadata={"Date": None})
    plt.close(fig)
    return [png, svg]


def outputs(doc: dict, directory: Path) -> list[Path]:
    md = directory / "net-p3.md"
    md.write_text(p3_tables(doc) + "\n" + program_tables(doc))
    print(md.read_text(), file=sys.stderr)
    paths = [md, *stacked_plot(doc, directory)]
    if any(r.get("modelled_cycles") is not None for r in doc["results"]):
        paths += stacked_plot(doc, directory, "modelled_cycles", "net-layers-cycles")
    return paths


# ---- `./ondol bench net-offload`: the virtio-net offloads off and on, bulk TCP ----------
# Per placement (unix=P net=P) and offload set, one boot of /bench/netcalls-bulk (8 MiB each
# way in 16 KiB calls against netpeer.py): instructions per byte (icount: exact; the
# machine's TSC ticks less its halted time) and MB/s (the host's wall clock, of the same
# boot: under icount the guest runs slower than without). `--runs N` boots each N times
# and keeps the median (bench.combine_runs). The options each boot had are in its rows.
OFFLOAD_PROGRAM = "/bench/netcalls-bulk"
OFFLOADS = {                       # label -> the options (docs/net.md, "Offloads measured")
    "off": {"net_csum": "off", "net_tso": "off", "net_rxtso": "off"},
    "csum": {"net_csum": "on", "net_tso": "off", "net_rxtso": "off"},
    "csum+tso": {"net_csum": "on", "net_tso": "on", "net_rxtso": "off"},
    "csum+rxtso": {"net_csum": "on", "net_tso": "off", "net_rxtso": "on"},
    "csum+tso+rxtso": {"net_csum": "on", "net_tso": "on", "net_rxtso": "on"},
}
OFFLOAD_METRICS = ("ins_per_byte", "mb_s")
OFFLOAD_DIRECTIONS = (("to_host", "ondol → host"), ("from_host", "host → ondol"))


def offload_configs():
    from ondol.benchmarks import Config  # benchmarks.py imports this module
    return tuple(Config(command="netcalls",
                        options={"unix": p, "linux_init": OFFLOAD_PROGRAM, **options},
                        params={"placement": p, "program": "netcalls", "offload": label,
                                **options})
                 for p in PLACEMENTS for label, options in OFFLOADS.items())


def offload_rows(results: list[dict], config) -> list[dict]:
    """One row per bulk direction and metric (its value as median, min and max of this
    boot: --runs takes the median over boots), with the boot's placement and options."""
    rows = []
    for r in results:
        if r.get("test") != "bulk":
            continue
        for metric in OFFLOAD_METRICS:
            v = r[metric]
            rows.append({**config.params, "direction": r["phase"], "metric": metric,
                         "bytes": r["size"], "median": v, "min": v, "max": v, "n": 1,
                         "bar": f"{config.params['placement']} {r['phase']} "
                                f"{config.params['offload']}"})
    return rows


def offload_table(doc: dict) -> str:
    """The offloads' tables: per direction and placement, instructions per byte, then MB/s,
    with each offload set."""
    rows = doc["results"]
    labels = list(OFFLOADS)
    runs = max((len(r.get("run_medians") or [1]) for r in rows), default=1)
    exact = "exact, icount" if doc["mode"] == "icount" else "TSC ticks, not exact"
    out = [f"**Bulk TCP, 8 MiB each way in 16 KiB calls**, mode {doc['mode']}, median of "
           f"{runs} boot(s) per cell.", ""]
    for metric, title, fmt in (("ins_per_byte", f"instructions per byte ({exact})", "{:.2f}"),
                               ("mb_s", "MB/s (host wall clock of the same boots)", "{:.1f}")):
        out += [f"{title}:", "", "| direction | placement | " + " | ".join(labels) + " |",
                "|---|---|" + "---:|" * len(labels)]
        for direction, label in OFFLOAD_DIRECTIONS:
            for p in PLACEMENTS:
                cells = []
                for offload in labels:
                    r = next((r for r in rows if r["direction"] == direction and
                              r["placement"] == p and r["offload"] == offload and
                              r["metric"] == metric), None)
                    cells.append(fmt.format(r["median"]) if r else "–")
                out.append(f"| {label} | {p.upper()} | " + " | ".join(cells) + " |")
        out.append("")
    return "\n".join(out)


def offload_outputs(doc: dict, directory: Path) -> list[Path]:
    path = directory / "net-offload.md"
    path.write_text(offload_table(doc))
    return [path]
