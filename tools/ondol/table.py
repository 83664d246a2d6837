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


def rows_table(title: str, columns: list[str], rows: list[dict]) -> Table:
    table = Table(title=title)
    numeric = {c for c in columns if all(isinstance(r.get(c), (int, float)) for r in rows)}
    for column in columns:
        table.add_column(column, justify="right" if column in numeric else "left")
    for row in rows:
        table.add_row(*(fmt(row.get(c)) for c in columns))
    return table
