"""results/report.html: every result file, its plot, and the papers' numbers beside it."""
import base64
import json
from datetime import datetime, timezone
from html import escape
from pathlib import Path

from ondol import OndolError, cachetable
from ondol.compare import key_fields
from ondol.results import load_directory, units
from ondol.table import fmt

PAPERS = Path(__file__).parent / "data" / "papers.json"
STATS = ("median", "min", "max", "n")

UNITS_NOTE = ("<p>Units: ondol runs under QEMU TCG. In icount mode its time stamp counter "
              "advances once per guest instruction, so its numbers are instructions; "
              "without icount they are TSC ticks of emulated time. The papers report "
              "hardware cycles on their machines. Compare shapes and ratios, not "
              "absolute values.</p>")

STYLE = """
body { font-family: sans-serif; margin: 2em; color: #222; }
.side { display: flex; gap: 2em; flex-wrap: wrap; align-items: flex-start; }
.side > div { flex: 1 1 30em; }
table { border-collapse: collapse; margin: 0.5em 0 1em; font-size: 0.9em; }
th, td { border: 1px solid #ccc; padding: 0.2em 0.6em; text-align: right; }
th:first-child, td:first-child { text-align: left; }
caption { text-align: left; font-weight: bold; padding-bottom: 0.3em; }
.meta { color: #555; font-size: 0.85em; }
img { max-width: 100%; }
"""


def load_papers() -> dict:
    return json.loads(PAPERS.read_text())["papers"]


def write(directory: Path) -> Path:
    """Write report.html for the result files in `directory`; an error if there are none."""
    docs = load_directory(directory)
    if not docs:
        raise OndolError(f"no result files in {directory}; run ./ondol bench NAME first")
    papers = load_papers()
    body = [f"<h1>ondol results</h1><p class=meta>generated "
            f"{datetime.now(timezone.utc).isoformat(timespec='seconds')}</p>", UNITS_NOTE]
    body += [_benchmark(doc, directory, papers) for doc in docs]
    body.append("<h2>Published numbers</h2>")
    body += [_paper(pid, paper) for pid, paper in papers.items()]
    out = directory / "report.html"
    out.write_text("<!doctype html><html><head><meta charset=utf-8><title>ondol results"
                   f"</title><style>{STYLE}</style></head><body>\n"
                   + "\n".join(body) + "\n</body></html>\n")
    return out


def _benchmark(doc: dict, directory: Path, papers: dict) -> str:
    rows = doc["results"]
    found = units(rows)
    columns = key_fields(doc) + [s for s in STATS if any(s in r for r in rows)]
    columns += ["unit"] * (len(found) > 1)
    caption = f"ondol, mode {doc['mode']}" + (f" [{found[0]}]" if len(found) == 1 else "")
    ours = _table(caption, columns, [[r.get(c) for c in columns] for r in rows])
    per_domain = cachetable.domain_rows(rows, tuple(key_fields(doc)))
    if per_domain:
        per_ipc = any(r["insns/IPC"] is not None for r in per_domain)
        cols = cachetable.columns(tuple(key_fields(doc)), per_ipc)
        ours += _table(f"cache model {doc.get('cache')} by domain (P0's metric: misses per "
                       f"{'IPC' if per_ipc else 'instruction'}; cycles modelled)", cols,
                       [[r.get(c) for c in cols] for r in per_domain])
    return (f"<h2>{escape(doc['benchmark'])}: {escape(doc.get('description', ''))}</h2>"
            f"<p class=meta>{_meta(doc)}</p><div class=side><div>{ours}"
            f"{_plot(doc['benchmark'], directory)}</div>"
            f"<div>{_beside(doc.get('paper'), papers)}</div></div>")


def _meta(doc: dict) -> str:
    options = " ".join(f"{k}={v}" for k, v in doc.get("options", {}).items())
    host = doc.get("host", {})
    items = [("commit", doc.get("commit")), ("qemu", doc.get("qemu")),
             ("mode", doc.get("mode")), ("cache", doc.get("cache") or "none"),
             ("date", doc.get("date")),
             ("host", host.get("name") if isinstance(host, dict) else host),
             ("options", options)]
    return " &middot; ".join(f"{k}: {escape(str(v))}" for k, v in items)


def _plot(name: str, directory: Path) -> str:
    png, svg = directory / f"{name}.png", directory / f"{name}.svg"
    parts = []
    if png.is_file():
        data = base64.b64encode(png.read_bytes()).decode()
        parts.append(f'<img alt="{escape(name)} plot" src="data:image/png;base64,{data}">')
    if svg.is_file():
        parts.append(f'<p><a href="{escape(svg.name)}">{escape(svg.name)}</a></p>')
    return "".join(parts)


def _beside(ref: str | None, papers: dict) -> str:
    if not ref:
        return "<p>No paper published a comparable number.</p>"
    pid, _, tid = ref.partition(".")
    paper = papers.get(pid, {})
    for table in paper.get("tables", []):
        if table["id"] == tid:
            return f"<h3>{escape(pid)}: {escape(paper['title'])}</h3>" + _paper_table(table)
    return f"<p>Paper table {escape(ref)} not found in {PAPERS.name}.</p>"


def _paper(pid: str, paper: dict) -> str:
    notes = "".join(f"<li>{escape(n)}</li>" for n in paper.get("notes", []))
    return (f"<h3>{escape(pid)}: {escape(paper['title'])}</h3>"
            f"<p class=meta>{escape(paper.get('setup', ''))}</p>"
            + "".join(_paper_table(t) for t in paper["tables"])
            + (f"<ul>{notes}</ul>" if notes else ""))


def _paper_table(table: dict) -> str:
    return _table(f"{table['caption']} [{table['unit']}]", table["columns"], table["rows"])


def _table(caption: str, columns: list, rows: list[list]) -> str:
    head = "".join(f"<th>{escape(str(c))}</th>" for c in columns)
    body = "".join("<tr>" + "".join(f"<td>{escape(fmt(v))}</td>" for v in row) + "</tr>"
                   for row in rows)
    return f"<table><caption>{escape(caption)}</caption><tr>{head}</tr>{body}</table>"
