"""Comparing two result documents row by row: ratios B/A of the medians."""
from ondol.results import units

# Row fields that are measurements, not part of what identifies a row.
MEASUREMENTS = {"median", "min", "max", "n", "unit", "cache", "run_medians", "run"}


def key_fields(doc: dict) -> list[str]:
    """The fields identifying a row: as recorded in the document, else the non-measurements."""
    if doc.get("key"):
        return list(doc["key"])
    first = doc["results"][0] if doc["results"] else {}
    return [k for k in first if k not in MEASUREMENTS]


def compare(a: dict, b: dict) -> tuple[list[str], list[dict], list[str]]:
    """Table columns, one row per key found in either document, and warnings.

    A row present in only one document gets no ratio.
    """
    key = key_fields(a)
    index_a = {_key(row, key): row for row in a["results"]}
    index_b = {_key(row, key): row for row in b["results"]}
    rows = []
    for k in dict.fromkeys([*index_a, *index_b]):
        median_a = index_a.get(k, {}).get("median")
        median_b = index_b.get(k, {}).get("median")
        ratio = median_b / median_a if median_a and median_b is not None else None
        rows.append({**dict(zip(key, k)), "A median": median_a, "B median": median_b,
                     "B/A": ratio})
    return [*key, "A median", "B median", "B/A"], rows, _warnings(a, b)


def _key(row: dict, key: list[str]) -> tuple:
    return tuple(row.get(k) for k in key)


def _warnings(a: dict, b: dict) -> list[str]:
    notes = []
    for field in ("benchmark", "mode", "cache"):
        if a.get(field) != b.get(field):
            notes.append(f"{field} differs: A {a.get(field)}, B {b.get(field)}")
    found = units(a["results"] + b["results"])
    if len(found) > 1:
        notes.append(f"rows use different units ({', '.join(found)}); "
                     "ratios across them mean little")
    return notes
