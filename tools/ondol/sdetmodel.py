"""SDET under the cache model (`./ondol bench sdet --cache pentiumpro[,l2=off]`, docs/sdet.md):
the model's misses and modelled cycles of each run of N users, per domain (kernel, UNIX
server, user), for the table a run writes and for the P0 figures of the report.

bench.sh makes each run of N users one cache window (/dev/window) and the bench attaches
it to the run's result row (cache.merge). In MK the UNIX server is its own task
("unixsrv"), which the kernel counts in the user domain; in IK it is part of the kernel.
Counts are exact for the model; cycles, CPI and scripts per hour are modelled.

    cache_outputs(doc, directory)   # results/sdet-cache-SPEC.md (table), .json (points)
    figure_rows(doc, directory)     # the flat rows the P0 figures read (benchmarks.py)

A figure point is one flat row: {unix, users, model, l2, domain, metric, value, unit};
unix "mk/ik" marks a ratio of MK over IK. The L2-on and L2-off sweeps are separate runs
(the last one's result file replaces the other's), so each run also records its points in
sdet-cache-SPEC.json, and figure_rows gathers the points of every run recorded beside
the document: that is how one figure shows both.
"""
import json
from pathlib import Path

#: P0's Pentium Pro clock, for scripts per modelled hour
CLOCK_HZ = 150e6
#: the model's counters as P0's metrics: (window field, figure metric, table column)
EVENTS = (("l1i_misses", "l1i", "L1I/insn"), ("l1d_misses", "l1d", "L1D lines in/insn"),
          ("itlb_misses", "itlb", "ITLB/insn"), ("l2_misses", "l2", "L2/insn"))
#: the MK UNIX server's task name: the kernel marks every task a user domain, so the
#: server's counts are its task's, taken out of the user total
SERVER_TASK = "unixsrv"
SPLIT_FIELDS = ("instructions", "modelled_cycles", *(f for f, _, _ in EVENTS))
#: the units of the figure points; everything the model gives is labelled modelled
MISS_UNIT = "% of instructions (modelled caches)"
CPI_UNIT = "CPI (modelled)"
HOUR_UNIT = f"scripts/hour (modelled, {CLOCK_HZ / 1e6:g} MHz)"
RATIO_UNIT = "ratio MK/IK (modelled)"


def _domains(cache: dict) -> list[tuple[str, dict]]:
    """kernel (in IK with the server in it), UNIX server (MK: its task), user (the rest)."""
    domains = cache["domains"]
    server = [t for t in cache.get("tasks", []) if t.get("name") == SERVER_TASK]
    user = dict(domains.get("user", {}))
    for task in server:
        for f in SPLIT_FIELDS:
            user[f] = user.get(f, 0) - task.get(f, 0)
    server_total = {f: sum(t.get(f, 0) for t in server) for f in SPLIT_FIELDS}
    return [("kernel", domains.get("kernel", {})), ("UNIX server", server_total),
            ("user", user)]


def _windowed(doc: dict) -> list[dict]:
    """The result rows that carry one cache window, by user count then form."""
    rows = [r for r in doc["results"] if isinstance(r.get("cache"), dict)]
    return sorted(rows, key=lambda r: (r["users"], r["unix"]))


def _cache_lines(row: dict) -> list[dict]:
    """Per domain (kernel, UNIX server, user, all) of a row's cache window: its share of
    the instructions, misses per instruction of the domain (the model's L1D misses are the
    lines brought in) and modelled CPI; "all" also scripts per modelled hour at 150 MHz."""
    cache = row["cache"]
    total = cache["total"]
    out = []
    for name, d in _domains(cache) + [("all", total)]:
        insns = d.get("instructions", 0)
        if not insns:
            continue
        line = {"unix": row["unix"], "users": row["users"], "domain": name,
                "insn share": round(insns / total["instructions"], 3)}
        for field, _, label in EVENTS:
            line[label] = round(d.get(field, 0) / insns, 5)
        line["CPI (modelled)"] = round(d["modelled_cycles"] / insns, 3)
        if name == "all":
            line["scripts/hour (modelled)"] = _per_hour(row)
        out.append(line)
    return out


def _per_hour(row: dict) -> float:
    """Scripts per modelled hour of a row's window: N users ran N scripts."""
    hours = row["cache"]["total"]["modelled_cycles"] / CLOCK_HZ / 3600
    return round(row["users"] / hours, 1)


def cache_outputs(doc: dict, directory: Path) -> list[Path]:
    """With --cache: results/sdet-cache-SPEC.md, the per-domain table and the modelled
    MK/IK throughput ratios by user count, and sdet-cache-SPEC.json, the run's figure
    points (figure_rows). Nothing without cache windows."""
    rows = _windowed(doc)
    if not rows:
        return []
    lines = [line for r in rows for line in _cache_lines(r)]
    cols = list(dict.fromkeys(list(lines[0]) + ["scripts/hour (modelled)"]))
    text = [f"Cache model `{doc.get('cache')}`, mode {doc.get('mode')}, commit "
            f"{doc.get('commit')}: counts exact for the model, cycles modelled (CPI from "
            f"the model's latencies; scripts per hour at P0's {CLOCK_HZ / 1e6:g} MHz).", "",
            "| " + " | ".join(cols) + " |", "|" + "---|" * len(cols)]
    text += ["| " + " | ".join("–" if l.get(c) is None else str(l.get(c)) for c in cols) + " |"
             for l in lines]
    text += ["", "| users | MK/IK throughput (modelled) |", "|---|---|"]
    text += [f"| {p['users']} | {p['value']} |" for p in model_points(doc)
             if p["unix"] == "mk/ik" and p["metric"] == "throughput"]
    stem = "sdet-cache-" + str(doc.get("cache")).replace(",", "-").replace("=", "")
    table, points = directory / f"{stem}.md", directory / f"{stem}.json"
    table.write_text("\n".join(text) + "\n")
    record = {k: doc.get(k) for k in ("cache", "mode", "commit", "date")}
    points.write_text(json.dumps({**record, "points": model_points(doc)}, indent=1) + "\n")
    return [table, points]


# ---- the P0 figures' points -----------------------------------------------------------------

def _sig(value: float) -> float:
    """Four significant digits: enough for a plot, short in the JSON."""
    return float(f"{value:.4g}")


def _model(cache: dict) -> dict:
    """Which model a window came from: its preset, and whether it had an L2 (None when the
    window does not say)."""
    geometry = cache.get("geometry", {})
    l2 = None if "l2" not in geometry else "off" if geometry["l2"] is None else "on"
    return {"model": geometry.get("preset"), "l2": l2}


def _row_points(row: dict) -> list[dict]:
    """One row's points, P0's way: per domain each event per 100 instructions of the whole
    window, and the domain's modelled cycles per instruction of the whole window, so the
    domains add up to the whole machine ("all"); and scripts per modelled hour."""
    cache = row["cache"]
    insns = cache["total"]["instructions"]
    base = {"unix": row["unix"], "users": row["users"], **_model(cache)}
    out = []
    for name, d in _domains(cache) + [("all", cache["total"])]:
        if not d.get("instructions"):
            continue
        here = {**base, "domain": name}
        out += [{**here, "metric": metric, "value": _sig(100 * d.get(field, 0) / insns),
                 "unit": MISS_UNIT} for field, metric, _ in EVENTS]
        out.append({**here, "metric": "cpi", "value": _sig(d["modelled_cycles"] / insns),
                    "unit": CPI_UNIT})
    out.append({**base, "domain": "all", "metric": "throughput", "value": _per_hour(row),
                "unit": HOUR_UNIT})
    return out


def _ratios(points: list[dict]) -> list[dict]:
    """MK over IK at each user count, as P0 gives them: throughput (scripts per modelled
    hour), and each miss metric and CPI of the system side (MK kernel + UNIX server over
    the IK kernel, which holds the server)."""
    value = {(p["unix"], p["users"], p["domain"], p["metric"]): p["value"] for p in points}
    model = {k: points[0][k] for k in ("model", "l2")} if points else {}
    out = []
    for users in sorted({p["users"] for p in points}):
        def get(form, domain, metric):
            return value.get((form, users, domain, metric), 0)
        pairs = [("throughput", get("mk", "all", "throughput"), get("ik", "all", "throughput"))]
        pairs += [(m, get("mk", "kernel", m) + get("mk", "UNIX server", m), get("ik", "kernel", m))
                  for m in (*(metric for _, metric, _ in EVENTS), "cpi")]
        out += [{"unix": "mk/ik", "users": users, **model, "domain": "system", "metric": m,
                 "value": _sig(mk / ik), "unit": RATIO_UNIT} for m, mk, ik in pairs if mk and ik]
    return out


def model_points(doc: dict) -> list[dict]:
    """The figure points of one cache run (see the module's docstring)."""
    points = [p for row in _windowed(doc) for p in _row_points(row)]
    return points + _ratios(points)


def _instruction_ratios(doc: dict) -> list[dict]:
    """MK/IK throughput by instructions per script (icount: exact), from the MK rows."""
    unit = "ratio MK/IK (icount, exact)" if doc.get("mode") == "icount" else "ratio MK/IK (TSC)"
    return [{"unix": "mk/ik", "users": r["users"], "domain": "all", "metric": "throughput",
             "basis": "instructions", "value": r["mk_ik"], "unit": unit}
            for r in doc["results"] if r.get("unix") == "mk" and r.get("mk_ik") is not None]


def _recorded(directory: Path | None) -> list[list[dict]]:
    """The points of every cache run recorded in DIRECTORY, one list per run; files that
    are not such a record are skipped, as load_directory skips foreign JSON."""
    found = []
    for path in sorted(directory.glob("sdet-cache-*.json")) if directory else ():
        try:
            points = json.loads(path.read_text()).get("points")
        except (OSError, json.JSONDecodeError, AttributeError):
            continue
        if isinstance(points, list) and all(isinstance(p, dict) for p in points):
            found.append(points)
    return found


def figure_rows(doc: dict, directory: Path | None) -> list[dict]:
    """The rows sdet's figures read: the document's result rows (Table 2), MK/IK by
    instructions, the document's own model points, and those of the other cache runs
    recorded in DIRECTORY; one run per model and L2 setting, the document's first."""
    own = model_points(doc)
    rows = [*doc["results"], *_instruction_ratios(doc), *own]
    seen = {(p["model"], p["l2"]) for p in own}
    for points in _recorded(directory):
        kinds = {(p.get("model"), p.get("l2")) for p in points}
        if not kinds & seen:
            seen |= kinds
            rows += points
    return rows
