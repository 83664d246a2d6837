"""results/report.html: one section per paper with its figures redrawn (the paper's series
beside ondol's), ondol's tables and the paper's, and the conditions of each run."""
import json
from datetime import datetime, timezone
from html import escape
from pathlib import Path

from ondol import OndolError, benchmarks, cachetable
from ondol.compare import key_fields
from ondol.figure import Figure
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
table { border-collapse: collapse; margin: 0.5em 0 1em; font-size: 0.9em; }
th, td { border: 1px solid #ccc; padding: 0.2em 0.6em; text-align: right; }
th:first-child, td:first-child { text-align: left; }
caption { text-align: left; font-weight: bold; padding-bottom: 0.3em; }
.meta { color: #555; font-size: 0.85em; }
figure { margin: 1em 0; max-width: 60em; }
figure svg { width: 100%; height: auto; }
figcaption { font-size: 0.9em; }
section { border-top: 2px solid #ddd; margin-top: 2em; }
"""


def load_papers() -> dict:
    return json.loads(PAPERS.read_text())["papers"]


def write(directory: Path) -> Path:
    """Write report.html for the result files in `directory`; an error if there are none.

    One section per paper (its figures, ondol's tables and the paper's, then the conditions
    the results were measured under), then the results no paper compares with. Figures are
    drawn from the benchmarks' declarations (Benchmark.figures) as inline SVG, so the page is
    one self-contained file."""
    docs = load_directory(directory)
    if not docs:
        raise OndolError(f"no result files in {directory}; run ./ondol bench NAME first")
    papers = load_papers()
    sections = [_paper_section(pid, paper, docs, papers, directory)
                for pid, paper in papers.items()]
    unpapered = [doc for doc in docs if _section_of(doc) not in papers]
    if unpapered:
        sections.append(_other_section(unpapered, directory))
    contents = "".join(f'<li><a href="#{sid}">{escape(title)}</a></li>'
                       for sid, title, _ in sections)
    body = [f"<h1>ondol results</h1><p class=meta>generated "
            f"{datetime.now(timezone.utc).isoformat(timespec='seconds')}</p>", UNITS_NOTE,
            f"<nav><ul>{contents}</ul></nav>"]
    body += [f'<section id="{sid}"><h2>{escape(title)}</h2>{html}</section>'
             for sid, title, html in sections]
    out = directory / "report.html"
    out.write_text("<!doctype html><html lang=en><head><meta charset=utf-8><title>ondol results"
                   f"</title><style>{STYLE}</style></head><body>\n"
                   + "\n".join(body) + "\n</body></html>\n")
    return out


def _section_of(doc: dict) -> str | None:
    """The paper ("P1") whose section shows a result document, from its table reference."""
    return (doc.get("paper") or "").partition(".")[0] or None


def _paper_section(pid: str, paper: dict, docs: list[dict], papers: dict,
                   directory: Path) -> tuple[str, str, str]:
    """A paper's figures (from any benchmark that declares one for it), ondol's tables for
    the benchmarks that compare with it, its published tables, then the conditions."""
    ours = [doc for doc in docs if _section_of(doc) == pid]
    parts = [_figures_html(doc, pid, papers, directory) for doc in docs]
    parts += [_plot(doc["benchmark"], directory) for doc in ours if not _bench_figures(doc)]
    if not ours:
        parts.append("<p>No ondol results for this paper yet: its benchmark arrives with "
                     "its issue, or has not been run (<code>./ondol bench NAME</code>).</p>")
    parts += [_results_tables(doc) for doc in ours]
    parts.append(_paper(pid, paper))
    parts += [_conditions(doc) for doc in ours]
    return pid, f"{pid}: {paper['title']}", "".join(parts)


def _other_section(docs: list[dict], directory: Path) -> tuple[str, str, str]:
    parts = [f"<h3>{escape(doc['benchmark'])}: {escape(doc.get('description', ''))}</h3>"
             + _plot(doc["benchmark"], directory) + _results_tables(doc) + _conditions(doc)
             for doc in docs]
    return "other", "Other measurements (no paper published a comparable number)", \
        "".join(parts)


def _bench_of(doc: dict) -> benchmarks.Benchmark | None:
    """The document's benchmark; None for one that is no longer registered (an old file)."""
    return {bench.name: bench for bench in benchmarks.BENCHMARKS}.get(doc["benchmark"])


def _bench_figures(doc: dict) -> tuple[Figure, ...]:
    bench = _bench_of(doc)
    return bench.figures if bench else ()


def _figures_html(doc: dict, pid: str, papers: dict, directory: Path) -> str:
    """The figures of paper PID that the document's benchmark declares, drawn from the
    rows the benchmark gives its figures (Benchmark.figure_input)."""
    figures = [fig for fig in _bench_figures(doc) if fig.paper == pid]
    if not figures:
        return ""
    from ondol import plot  # matplotlib takes ~0.4 s to import; only figures need it
    rows = _bench_of(doc).figure_input(doc, directory)
    return "".join(_figure_html(fig, doc, plot.figure_svg(fig, rows, papers))
                   for fig in figures)


def _figure_html(fig: Figure, doc: dict, svg: str) -> str:
    return (f'<figure id="{escape(fig.id)}">{_inline(svg)}<figcaption>'
            f"<b>{escape(fig.title)}</b> {escape(fig.caption)} "
            f"(from {escape(doc['benchmark'])}.json; also {escape(fig.id)}.svg after "
            f"<code>./ondol bench {escape(doc['benchmark'])}</code>)</figcaption></figure>")


def _inline(svg: str) -> str:
    """matplotlib's SVG file without its XML prolog and doctype, to sit inside HTML."""
    return svg[svg.index("<svg"):]


def _results_tables(doc: dict) -> str:
    rows = doc["results"]
    found = units(rows)
    columns = key_fields(doc) + [s for s in STATS if any(s in r for r in rows)]
    columns += ["unit"] * (len(found) > 1)
    caption = (f"ondol {doc['benchmark']}: {doc.get('description', '')}; mode {doc['mode']}"
               + (f" [{found[0]}]" if len(found) == 1 else ""))
    ours = _table(caption, columns, [[r.get(c) for c in columns] for r in rows])
    per_domain = cachetable.domain_rows(rows, tuple(key_fields(doc)))
    if per_domain:
        per_ipc = any(r["insns/IPC"] is not None for r in per_domain)
        cols = cachetable.columns(tuple(key_fields(doc)), per_ipc)
        ours += _table(f"cache model {doc.get('cache')} by domain (P0's metric: misses per "
                       f"{'IPC' if per_ipc else 'instruction'}; cycles modelled)", cols,
                       [[r.get(c) for c in cols] for r in per_domain])
    return ours


def _conditions(doc: dict) -> str:
    return (f"<p class=meta>Conditions of {escape(doc['benchmark'])}.json: "
            f"{_meta(doc)}</p>")


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
    """The benchmark's generic plot (NAME.svg from `./ondol bench`), inline."""
    svg = directory / f"{name}.svg"
    if not svg.is_file():
        return f"<p>No plot: {escape(svg.name)} is missing.</p>"
    return f'<figure id="plot-{escape(name)}">{_inline(svg.read_text())}</figure>'


def _paper(pid: str, paper: dict) -> str:
    notes = "".join(f"<li>{escape(n)}</li>" for n in paper.get("notes", []))
    return (f"<h3>Published by {escape(pid)}</h3>"
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
