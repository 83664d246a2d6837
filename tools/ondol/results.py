"""Result documents: what a benchmark run records, and their JSON and CSV files."""
import csv
import json
from datetime import datetime, timezone
from pathlib import Path

from ondol import OndolError

# Under icount the guest TSC advances once per instruction; without it, it follows host
# time inflated by emulation. Neither is a cycle count, so neither is called one.
TSC_UNITS = {"icount": "instructions (icount)", "tsc": "TSC ticks"}


def mode_name(icount: bool) -> str:
    return "icount" if icount else "tsc"


def label_unit(row: dict, mode: str) -> dict:
    """The row with a guest "tsc" unit replaced by what the TSC measured in this mode."""
    if row.get("unit") == "tsc":
        return {**row, "unit": TSC_UNITS[mode]}
    return row


def units(rows: list[dict]) -> list[str]:
    """The distinct units the rows are measured in."""
    return sorted({str(r["unit"]) for r in rows if "unit" in r})


def common_options(boots: list[dict]) -> dict:
    """The kernel options every boot ran with (those that vary live in the boots)."""
    if not boots:
        return {}
    first = boots[0]["options"]
    return {k: v for k, v in first.items() if all(b["options"].get(k) == v for b in boots)}


def document(*, benchmark: str, description: str, paper: str | None, key: tuple[str, ...],
             commit: str, qemu: str, mode: str, cache: str | None, host: dict,
             boots: list[dict], rows: list[dict], cache_windows: list[dict]) -> dict:
    doc = {"benchmark": benchmark, "description": description, "commit": commit,
           "qemu": qemu, "mode": mode, "options": common_options(boots), "cache": cache,
           "date": datetime.now(timezone.utc).isoformat(timespec="seconds"),
           "host": host, "paper": paper, "key": list(key), "boots": boots, "results": rows}
    if cache_windows:
        doc["cache_windows"] = cache_windows
    return doc


def write(doc: dict, directory: Path) -> tuple[Path, Path]:
    """NAME.json (the whole document) and NAME.csv (the rows, nested fields flattened)."""
    directory.mkdir(parents=True, exist_ok=True)
    json_path = directory / f"{doc['benchmark']}.json"
    csv_path = directory / f"{doc['benchmark']}.csv"
    json_path.write_text(json.dumps(doc, indent=2) + "\n")
    flat = [_flatten(row) for row in doc["results"]]
    fields = list(dict.fromkeys(k for row in flat for k in row))
    with open(csv_path, "w", newline="") as f:
        writer = csv.DictWriter(f, fieldnames=fields)
        writer.writeheader()
        writer.writerows(flat)
    return json_path, csv_path


def _flatten(row: dict, prefix: str = "") -> dict:
    flat = {}
    for key, value in row.items():
        name = prefix + key
        if isinstance(value, dict):
            flat.update(_flatten(value, name + "."))
        elif isinstance(value, list):
            flat[name] = json.dumps(value)
        else:
            flat[name] = value
    return flat


def load(path: Path) -> dict:
    """A result document written by `write`; an error for anything else."""
    try:
        doc = json.loads(Path(path).read_text())
    except OSError as exc:
        raise OndolError(f"cannot read {path}: {exc.strerror}") from None
    except json.JSONDecodeError as exc:
        raise OndolError(f"{path} is not JSON: {exc.msg} (line {exc.lineno})") from None
    if not (isinstance(doc, dict) and "benchmark" in doc
            and isinstance(doc.get("results"), list)):
        raise OndolError(f"{path} is not an ondol result file")
    return doc


def load_directory(directory: Path) -> list[dict]:
    """Every result document in `directory`, by file name; other JSON files are skipped."""
    docs = []
    for path in sorted(directory.glob("*.json")):
        try:
            docs.append(load(path))
        except OndolError:
            continue
    return docs
