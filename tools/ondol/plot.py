"""Plots of result documents as PNG and SVG (matplotlib, no display needed): the generic
plot of every benchmark and the paper figures a benchmark declares (figure.py)."""
import io
import textwrap
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402  (the backend must be chosen first)

from ondol import OndolError  # noqa: E402
from ondol.benchmarks import Plot  # noqa: E402
from ondol.figure import Figure, points  # noqa: E402
from ondol.results import units  # noqa: E402

# Reproducible SVG bytes: no random ids, no creation date.
matplotlib.rcParams["svg.hashsalt"] = "ondol"


def draw(doc: dict, spec: Plot, directory: Path) -> tuple[Path, Path]:
    """Write NAME.png and NAME.svg; error bars span each row's min..max."""
    rows = [r for r in doc["results"] if all(r.get(k) == v for k, v in spec.where.items())]
    for field in filter(None, (spec.x, spec.y, spec.series)):
        if not all(field in row for row in rows):
            raise OndolError(f"cannot plot {doc['benchmark']}: a result row has no "
                             f"{field!r} field")
    fig, ax = plt.subplots(figsize=(7, 4.5))
    if spec.kind == "line":
        _lines(ax, rows, spec)
    else:
        _bars(ax, rows, spec)
    if spec.logy:
        ax.set_yscale("log")
    if spec.logx:
        ax.set_xscale("log", base=2)
    ax.set_xlabel(spec.x)
    ax.set_ylabel(f"{spec.y} [{', '.join(units(rows)) or 'no unit reported'}]")
    ax.set_title(f"{doc['benchmark']}: {doc.get('description', '')}\n"
                 f"mode {doc['mode']}, commit {doc['commit'][:12]}", fontsize=10)
    ax.grid(True, which="both", alpha=0.3)
    fig.tight_layout()
    png, svg = directory / f"{doc['benchmark']}.png", directory / f"{doc['benchmark']}.svg"
    fig.savefig(png, dpi=120)
    fig.savefig(svg, metadata={"Date": None})
    plt.close(fig)
    return png, svg


def _span(rows: list[dict], y: str) -> list[list[float]] | None:
    """Asymmetric error bars (below, above) from min and max, if every row has them."""
    if not all("min" in r and "max" in r for r in rows):
        return None
    return [[max(0, r[y] - r["min"]) for r in rows], [max(0, r["max"] - r[y]) for r in rows]]


def _lines(ax, rows: list[dict], spec: Plot) -> None:
    groups: dict[object, list[dict]] = {}
    for row in rows:
        groups.setdefault(row.get(spec.series) if spec.series else None, []).append(row)
    for series, group in groups.items():
        group.sort(key=lambda r: r[spec.x])
        label = f"{spec.series}={series}" if spec.series else None
        ax.errorbar([r[spec.x] for r in group], [r[spec.y] for r in group],
                    yerr=_span(group, spec.y), marker="o", capsize=3, label=label)
    if spec.series:
        ax.legend()


def _bars(ax, rows: list[dict], spec: Plot) -> None:
    labels = [str(r[spec.x]) for r in rows]
    ax.bar(labels, [r[spec.y] for r in rows], yerr=_span(rows, spec.y), capsize=4)


# ---- paper figures (tools/ondol/figure.py) ------------------------------------------------
# Paper series are dashed with hollow squares, ondol's solid with dots; the n-th paper
# series and the n-th ondol series share a colour, so a figure declares them in matching
# order (P1's DTS beside ondol's DTS).
PAPER_STYLE = {"linestyle": "--", "marker": "s", "fillstyle": "none"}
OURS_STYLE = {"linestyle": "-", "marker": "o"}


def figure_svg(spec: Figure, rows: list[dict], papers: dict) -> str:
    """The figure as SVG text, for the report to inline."""
    fig = _paper_figure(spec, rows, papers)
    text = _svg_text(fig, spec.id)
    plt.close(fig)
    return text


def draw_figures(rows: list[dict], figures: tuple[Figure, ...], papers: dict,
                 directory: Path) -> list[Path]:
    """Write ID.svg and ID.png for each of the benchmark's declared figures, drawn from
    ROWS (Benchmark.figure_input)."""
    written = []
    for spec in figures:
        svg, png = directory / f"{spec.id}.svg", directory / f"{spec.id}.png"
        fig = _paper_figure(spec, rows, papers)
        svg.write_text(_svg_text(fig, spec.id))
        fig.savefig(png, dpi=120)
        plt.close(fig)
        written += [png, svg]
    return written


def _svg_text(fig, salt: str) -> str:
    """SVG without a date, its ids salted with the figure's id: several figures can sit
    inline in one page, and a redraw of the same data gives the same bytes."""
    out = io.StringIO()
    with matplotlib.rc_context({"svg.hashsalt": salt}):
        fig.savefig(out, format="svg", metadata={"Date": None})
    return out.getvalue()


def _paper_figure(spec: Figure, rows: list[dict], papers: dict):
    """Every declared series that has points (a run may lack some configurations), in
    the colour its place among the paper's or ondol's series gives it."""
    every = [points(s, spec, rows, papers) for s in spec.series]
    colours = [f"C{sum(q.published == p.published for q in every[:i])}"
               for i, p in enumerate(every)]
    drawn = [(p, colour) for p, colour in zip(every, colours) if p.y]
    fig, ax = plt.subplots(figsize=(7.5, 5), layout="constrained")
    if not drawn:
        ax.text(0.5, 0.5, "no result rows for this figure's series", ha="center",
                transform=ax.transAxes)
    twin = spec.axes == "twin" and len({p.published for p, _ in drawn}) == 2
    axis_of = {True: ax, False: ax.twinx() if twin else ax}
    categories = list(dict.fromkeys(x for p, _ in drawn for x in p.x))
    for index, (series, colour) in enumerate(drawn):
        style = {**(PAPER_STYLE if series.published else OURS_STYLE), "color": colour,
                 "label": series.label + (f" [{series.unit}]" if twin else "")}
        target = axis_of[series.published]
        if spec.kind == "line":
            target.errorbar(series.x, series.y, yerr=series.span, capsize=3, **style)
        else:
            _grouped_bars(target, series, categories, index, len(drawn), style)
    for axis in set(axis_of.values()):
        axis.set_yscale("log" if spec.logy and drawn else "linear")
    ax.set_xlabel(spec.xlabel)
    _label_axes(axis_of, [p for p, _ in drawn], twin)
    ax.set_title(textwrap.fill(spec.title, 75), fontsize=10)
    ax.grid(True, which="major", alpha=0.3)
    handles = [h for axis in dict.fromkeys(axis_of.values())
               for h in axis.get_legend_handles_labels()[0]]
    # Below the axes, outside them: a legend never covers data.
    fig.legend(handles=handles, loc="outside lower center", ncol=2, fontsize=8)
    return fig


def _grouped_bars(axis, series, categories: list, index: int, count: int, style: dict):
    """Series `index` of `count` as bars beside the others within each category."""
    width = 0.8 / count
    where = [categories.index(x) - 0.4 + width * (index + 0.5) for x in series.x]
    hatch = "//" if style["linestyle"] == "--" else None
    axis.bar(where, series.y, width, yerr=series.span, capsize=3, color=style["color"],
             label=style["label"], hatch=hatch, alpha=0.55 if hatch else 0.9,
             edgecolor=style["color"])
    axis.set_xticks(range(len(categories)), [textwrap.fill(str(c), 14) for c in categories])


def _label_axes(axis_of: dict, drawn: list, twin: bool) -> None:
    """Each y axis names the units of the series on it: with twin axes the paper's on the
    left, ours on the right; on a shared axis every unit, the paper's first."""
    if not twin:
        found = list(dict.fromkeys(p.unit for p in sorted(drawn, key=lambda p: not p.published)))
        if found:
            axis_of[True].set_ylabel(textwrap.fill(", ".join(found), 60))
        return
    for published, axis in axis_of.items():
        found = sorted({p.unit for p in drawn if p.published == published})
        if found:
            axis.set_ylabel(f"{'paper' if published else 'ondol'} [{', '.join(found)}]")
