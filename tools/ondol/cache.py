"""The cache/TLB model plugin (tools/cacheplugin): how to load it, and its output.

A spec is a comma-separated list: at most one bare preset name and any number of key=value
pairs, e.g. "pentiumpro", "modern,l3=off" or "pentiumpro,seed=2". The plugin writes one
JSON object per measurement window to the file named by its out= argument (JSON lines, or
one JSON array). Windows are matched to result rows by the key fields both carry.
"""
import json
from pathlib import Path

import qemucmd
from ondol import OndolError

PLUGIN = Path("build/tools/cachesim.so")


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


def plugin(spec: str, top: Path, out: Path, log: Path) -> qemucmd.Plugin:
    """The model loaded with `spec`, writing windows to `out` and its messages to `log`."""
    path = top / PLUGIN
    if not path.is_file():
        raise OndolError(f"cache plugin not built: {path} is missing (run make)")
    return qemucmd.Plugin(path, (*parse_spec(spec), f"out={qemucmd.escape(str(out))}"), log)


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
