"""Plots of result documents as PNG and SVG (matplotlib, no display needed)."""
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402  (the backend must be chosen first)

from ondol import OndolError  # noqa: E402
from ondol.benchmarks import Plot  # noqa: E402
from ondol.results import units  # noqa: E402

# Reproducible SVG bytes: no random ids, no creation date.
matplotlib.rcParams["svg.hashsalt"] = "ondol"


def draw(doc: dict, spec: Plot, directory: Path) -> tuple[Path, Path]:
    """Write NAME.png and NAME.svg; error bars span each row's min..max."""
    rows = doc["results"]
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
