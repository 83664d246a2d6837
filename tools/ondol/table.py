"""Rendering rows as rich tables."""
from rich.table import Table


def fmt(value) -> str:
    """Numbers with thousands separators and at most three decimals; missing as a dash."""
    if value is None:
        return "–"
    if isinstance(value, bool):
        return str(value).lower()
    if isinstance(value, float) and 0 < abs(value) < 0.001:
        return f"{value:.3g}"
    if isinstance(value, float):
        value = round(value, 3)
        value = int(value) if value.is_integer() else value
    if isinstance(value, (int, float)):
        return f"{value:,}"
    return str(value)


def rows_table(title: str, columns: list[str], rows: list[dict],
               caption: str | None = None) -> Table:
    """A table of `columns`; numbers are never cut short, text may wrap."""
    table = Table(title=title, caption=caption)
    cells = [[fmt(row.get(c)) for c in columns] for row in rows]
    for i, column in enumerate(columns):
        if all(isinstance(r.get(column), (int, float)) for r in rows):
            width = max([len(column)] + [len(line[i]) for line in cells])
            table.add_column(column, justify="right", no_wrap=True, min_width=width)
        else:
            table.add_column(column)
    for line in cells:
        table.add_row(*line)
    return table
