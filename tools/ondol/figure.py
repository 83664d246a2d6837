"""Paper figures: what a benchmark declares so that the report redraws a paper's table or
figure with ondol's results beside the paper's published numbers.

A benchmark lists its figures in its `figures` field (tools/ondol/benchmarks.py); the
report (report.py) and `./ondol bench` (plot.py) draw every declared figure without
knowing any of them, so a new benchmark adds a figure just by declaring it:

- `Ours`: a series from the result rows (or the flat rows the benchmark's `figure_rows`
  makes of its result document: cache windows, several runs): the rows whose fields
  equal `where` (a missing field equals None), x from the figure's `x` field (renamed through `x_names`, so ondol's
  labels can meet the paper's), y from `y`, error bars from min..max when rows have them.
- `Published`: a series from data/papers.json: table "P<n>.<id>" and either one `row`
  (named by its first cell; x = the column headers) or one `column` (named by its header;
  x = the rows' first cells). Missing (null) values are skipped.
- `Figure`: `kind` "line" (numeric x) or "bar" (categories, grouped), `logy`, and `axes`:
  "twin" puts the paper's series on a left y axis in the paper's unit and ours on a right
  one in ours (for cycles vs icount instructions), "shared" puts every series on one axis
  (same unit). `title` says what the reader should see; `caption` how to read it (units,
  which axis is which). `paper` ("P1") is the report section the figure goes in.
"""
from dataclasses import dataclass, field


@dataclass(frozen=True)
class Ours:
    label: str
    where: dict[str, object]
    y: str = "median"
    x_names: dict[object, object] = field(default_factory=dict)


@dataclass(frozen=True)
class Published:
    label: str
    table: str
    row: str | None = None
    column: str | None = None


@dataclass(frozen=True)
class Figure:
    id: str
    paper: str
    title: str
    caption: str
    kind: str
    x: str
    xlabel: str
    series: tuple[Ours | Published, ...]
    axes: str = "twin"
    logy: bool = False


@dataclass(frozen=True)
class Points:
    """One series ready to draw: x values, y values, (below, above) error spans, unit."""
    label: str
    published: bool
    unit: str
    x: list
    y: list[float]
    span: tuple[list[float], list[float]] | None = None


def points(series: Ours | Published, figure: Figure, rows: list[dict],
           papers: dict) -> Points:
    """The series' points: from the result rows (Ours, sorted by x for lines, in row
    order for bars) or from the paper's table (Published, in the table's order)."""
    if isinstance(series, Published):
        return _published(series, papers)
    chosen = [r for r in rows if all(r.get(k) == v for k, v in series.where.items())]
    chosen = [r for r in chosen if r.get(series.y) is not None]
    if figure.kind == "line":
        chosen.sort(key=lambda r: r[figure.x])
    span = None
    if all("min" in r and "max" in r for r in chosen):
        span = ([max(0, r[series.y] - r["min"]) for r in chosen],
                [max(0, r["max"] - r[series.y]) for r in chosen])
    unit = ", ".join(sorted({str(r["unit"]) for r in chosen if "unit" in r}))
    return Points(series.label, False, unit or "no unit reported",
                  [series.x_names.get(r[figure.x], r[figure.x]) for r in chosen],
                  [r[series.y] for r in chosen], span)


def _published(series: Published, papers: dict) -> Points:
    table = paper_table(papers, series.table)
    if series.row is not None:
        (row,) = [r for r in table["rows"] if r[0] == series.row]
        pairs = zip(table["columns"][1:], row[1:])
    else:
        column = table["columns"].index(series.column)
        pairs = ((r[0], r[column]) for r in table["rows"])
    kept = [(_number(x), y) for x, y in pairs if y is not None]
    return Points(series.label, True, table["unit"], [x for x, _ in kept], [y for _, y in kept])


def paper_table(papers: dict, ref: str) -> dict:
    """The table "P<n>.<id>" of data/papers.json; KeyError when there is none."""
    pid, _, tid = ref.partition(".")
    for table in papers[pid]["tables"]:
        if table["id"] == tid:
            return table
    raise KeyError(ref)


def _number(label: object) -> object:
    """Column headers such as "30" are numbers on a line plot's x axis."""
    return int(label) if isinstance(label, str) and label.isdigit() else label
