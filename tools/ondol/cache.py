"""The cache/TLB model plugin (tools/cacheplugin): how to load it, and its output.

A spec is a comma-separated list: at most one bare preset name and any number of key=value
pairs, e.g. "pentiumpro", "modern,l3=off" or "pentiumpro,seed=2". The plugin writes one
JSON object per measurement window to the file named by its out= argument (JSON lines, or
one JSON array). Windows are matched to result rows by the key fields both carry.
"""
import fcntl
import functools
import json
import re
import shutil
import subprocess
from pathlib import Path

import qemucmd
from ondol import OndolError

PLUGIN = Path("build/tools/cachesim.so")     # for the default QEMU (plugin.mk copies it)


def plugin_for(top: Path, qemu: str) -> Path:
    """The plugin built for `qemu`'s plugin API (build/tools/cacheplugin/apiN/cachesim.so),
    made first (a no-op when current): a benchmark may run another QEMU than the one
    build/tools/cachesim.so was copied for. One make at a time (a file lock): two test
    workers must not both rewrite the plugin while a QEMU of the other loads it."""
    api = qemucmd.plugin_api(qemu)
    path = Path("build") / "tools" / "cacheplugin" / f"api{api}" / "cachesim.so"
    (top / path.parent).mkdir(parents=True, exist_ok=True)
    with open(top / path.parent / ".make-lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        made = subprocess.run(["make", "-s", "-f", "tools/cacheplugin/plugin.mk",
                               f"CACHESIM_API={api}", str(path)], cwd=top,
                              capture_output=True, text=True)
    if made.returncode != 0:
        raise OndolError(f"cannot build the cache plugin for API {api}: "
                         f"{(made.stderr or made.stdout).strip()[-500:]}")
    return top / path


@functools.lru_cache(maxsize=4)
def _percpu(elf: Path, mtime: float, max_cpus: int) -> tuple[int, int]:
    out = subprocess.run(["nm", "-S", str(elf)], capture_output=True, text=True).stdout
    for line in out.splitlines():
        words = line.split()
        if len(words) == 4 and words[3] == "cpus":
            return int(words[0], 16), int(words[1], 16) // max_cpus
    raise OndolError(f"no symbol cpus in {elf}: cannot tell the plugin the per-CPU array")


KERNEL_BASE = 0xFFFFFFFF80000000   # ondol's kernel image: virtual = physical + this


@functools.lru_cache(maxsize=4)
def _sized_symbols(elf: Path, mtime: float) -> tuple[tuple[int, int, str], ...]:
    out = subprocess.run(["nm", "-S", "-n", str(elf)], capture_output=True, text=True).stdout
    return tuple((int(w[0], 16), int(w[1], 16), w[3]) for w in map(str.split, out.splitlines())
                 if len(w) == 4 and int(w[1], 16) > 0)


def kernel_symbol(top: Path, pa: int) -> str | None:
    """The kernel symbol (`name` or `name+offset`, offset in hex) of build/ondol.elf whose
    extent holds physical address pa (the image is linked at KERNEL_BASE + physical, as
    the plugin's ktext_base assumes), or None: outside the image's sized symbols (a frame
    from the allocator, a page table, padding). Names the coherence model's hot lines."""
    elf = top / "build" / "ondol.elf"
    if not elf.is_file():
        return None
    va = pa + KERNEL_BASE
    for addr, size, name in _sized_symbols(elf, elf.stat().st_mtime):
        if addr <= va < addr + size:
            return name if va == addr else f"{name}+{va - addr:#x}"
    return None


def coherence_orders() -> tuple[str, ...]:
    """The coherence model's replay orders (the plugin's coherence_order=), read from their
    one declaration, coher.c's order_names; the first is the plugin's default."""
    source = (Path(__file__).resolve().parents[1] / "cacheplugin" / "coher.c").read_text()
    found = re.search(r"order_names\[\] = \{([^}]*)\}", source)
    if not found:
        raise OndolError("no order_names in tools/cacheplugin/coher.c")
    return tuple(re.findall(r'"(\w+)"', found.group(1)))


def percpu_args(top: Path) -> tuple[str, ...]:
    """percpu= and percpu_size= for the plugin: where the kernel's per-CPU array cpus[]
    lies (build/ondol.elf) and the size of one entry (the array's over MAX_CPUS), from
    which a plugin on QEMU 10 learns which CPU runs a block (plugin README, "Which CPU
    runs a block")."""
    elf = top / "build" / "ondol.elf"
    header = (top / "kernel" / "arch" / "x86_64" / "include" / "cpu.h").read_text()
    found = re.search(r"#define MAX_CPUS (\d+)", header)
    if not elf.is_file() or not found:
        raise OndolError(f"cannot locate cpus[]: {elf} or MAX_CPUS in cpu.h missing")
    base, size = _percpu(elf, elf.stat().st_mtime, int(found.group(1)))
    return f"percpu={base:#x}", f"percpu_size={size}"


def parse_spec(spec: str) -> list[str]:
    """The plugin arguments for a spec: the preset first, as preset=NAME."""
    presets, pairs = [], []
    for item in filter(None, (part.strip() for part in spec.split(","))):
        if "=" not in item:
            presets.append(f"preset={item}")
            continue
        key = item.split("=", 1)[0]
        if not key or key == "out":
            raise OndolError(f"bad cache spec item {item!r} in {spec!r}")
        pairs.append(item)
    if len(presets) > 1 or not presets + pairs:
        raise OndolError(f"bad cache spec {spec!r}: give one preset and/or key=value pairs")
    return presets + pairs


def plugin(spec: str, top: Path, out: Path, log: Path, qemu: str | None = None) -> qemucmd.Plugin:
    """The model loaded with `spec`, writing windows to `out` and its messages to `log`;
    built for `qemu` when that is not the default QEMU (`--qemu`); told where the kernel's
    per-CPU array is when the kernel is built (several vCPUs on QEMU 10 need it)."""
    path = top / PLUGIN
    if qemu and qemu != shutil.which(qemucmd.binary()):
        path = plugin_for(top, qemu)
    percpu = percpu_args(top) if (top / "build" / "ondol.elf").is_file() else ()
    if not path.is_file():
        raise OndolError(f"cache plugin not built: {path} is missing (run make)")
    return qemucmd.Plugin(path, (*parse_spec(spec), *percpu,
                                 f"out={qemucmd.escape(str(out))}"), log)


def read_windows(path: Path) -> list[dict]:
    """The plugin's records, or [] if it wrote none."""
    if not path.is_file():
        return []
    text = path.read_text(errors="replace").strip()
    if not text:
        return []
    chunks = [(1, text)] if text.startswith("[") else [
        (n, line) for n, line in enumerate(text.splitlines(), 1) if line.strip()]
    records = []
    for lineno, chunk in chunks:
        try:
            parsed = json.loads(chunk)
        except json.JSONDecodeError as exc:
            raise OndolError(f"cache plugin output {path} is not JSON: {exc.msg} "
                             f"(line {lineno + exc.lineno - 1})") from None
        records += parsed if isinstance(parsed, list) else [parsed]
    if not all(isinstance(r, dict) for r in records):
        raise OndolError(f"cache plugin output {path}: every record must be an object")
    return records


def merge(rows: list[dict], windows: list[dict], key: tuple[str, ...]) -> list[dict]:
    """Attach each window to the rows it matches under "cache"; return the unmatched ones.

    A window matches a row when it shares at least one key field (or "window") with it and
    every shared one is equal. A row matched by several windows gets a list.
    """
    unmatched = []
    for window in windows:
        hits = [row for row in rows if _matches(window, row, key + ("window",))]
        for row in hits:
            _attach(row, window)
        if not hits:
            unmatched.append(window)
    return unmatched


def _matches(window: dict, row: dict, fields: tuple[str, ...]) -> bool:
    shared = [f for f in fields if f in window and f in row]
    return bool(shared) and all(window[f] == row[f] for f in shared)


def _attach(row: dict, window: dict) -> None:
    if "cache" not in row:
        row["cache"] = window
    elif isinstance(row["cache"], list):
        row["cache"].append(window)
    else:
        row["cache"] = [row["cache"], window]
