"""Per-domain cache-model figures for result rows that carry a cache window.

P0 reports misses per retired instruction, split by kernel / server / user; for IPC the
natural unit is also misses per IPC (a row's "ipcs" field says how many IPCs the window
held). Every figure here comes from the model: counts are exact for the model, cycles are
modelled (see tools/cacheplugin/README.md).
"""
EVENTS = (("l1i_misses", "L1I"), ("l1d_misses", "L1D"), ("l2_misses", "L2"),
          ("itlb_misses", "ITLB"), ("dtlb_misses", "DTLB"))


def _domains(cache: dict) -> list[tuple[str, dict]]:
    """Kernel first, then each named task or server, then the user total."""
    found = []
    domains = cache.get("domains", {})
    if domains.get("kernel", {}).get("instructions"):
        found.append(("kernel", domains["kernel"]))
    for task in cache.get("tasks", []):
        if task.get("instructions"):
            found.append((f"{task.get('kind', 'task')}:{task.get('name', '?')}", task))
    for name in ("server", "user"):
        if domains.get(name, {}).get("instructions"):
            found.append((f"{name} (all)", domains[name]))
    return found


def domain_rows(rows: list[dict], key: tuple[str, ...]) -> list[dict]:
    """One row per (result row, domain) with per-IPC counts and per-instruction rates."""
    out = []
    for row in rows:
        cache = row.get("cache")
        if not isinstance(cache, dict):
            continue
        ipcs = row.get("ipcs")
        for name, d in _domains(cache):
            insns = d["instructions"]
            line = {k: row.get(k) for k in key}
            line["domain"] = name
            line["insns/IPC"] = insns / ipcs if ipcs else None
            for field, label in EVENTS:
                misses = d.get(field, 0)
                line[f"{label}/IPC"] = misses / ipcs if ipcs else None
                line[f"{label}/insn"] = misses / insns if insns else None
            line["modelled CPI"] = d.get("modelled_cpi")
            out.append(line)
    return out


def columns(key: tuple[str, ...], per_ipc: bool) -> list[str]:
    unit = "IPC" if per_ipc else "insn"
    return [*key, "domain", *(["insns/IPC"] if per_ipc else []),
            *(f"{label}/{unit}" for _, label in EVENTS), "modelled CPI"]


def _cell(value) -> str:
    if value is None:
        return "–"
    if isinstance(value, float):
        return f"{value:.3g}" if abs(value) < 100 else f"{value:,.0f}"
    return str(value)


def markdown(doc: dict) -> str:
    """The per-domain tables of one result document, as Markdown."""
    key = tuple(doc.get("key") or ())
    rows = domain_rows(doc["results"], key)
    if not rows:
        return "(no cache windows in this result)\n"
    preset = doc.get("cache")
    first = next(r["cache"] for r in doc["results"] if isinstance(r.get("cache"), dict))
    lines = [f"Cache model `{preset}` (geometry: {first.get('geometry', {}).get('name', preset)}), "
             f"mode {doc.get('mode')}, commit {doc.get('commit')}. Counts are exact for the model; "
             f"cycles are modelled.", ""]
    for per_ipc in (True, False):
        cols = columns(key, per_ipc)
        lines.append("| " + " | ".join(cols) + " |")
        lines.append("|" + "---|" * len(cols))
        for r in rows:
            lines.append("| " + " | ".join(_cell(r.get(c)) for c in cols) + " |")
        lines.append("")
    return "\n".join(lines)
