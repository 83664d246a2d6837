"""pytest plugin: end the run with the project's one-line summary `N passed, M failed`.

Printed from pytest_unconfigure so it comes after pytest's own summary line."""

_counts = {}


def pytest_terminal_summary(terminalreporter):
    stats = terminalreporter.stats
    _counts["reporter"] = terminalreporter
    _counts["passed"] = len([r for r in stats.get("passed", []) if r.when == "call"])
    _counts["failed"] = len(stats.get("failed", [])) + len(stats.get("error", []))
    _counts["skipped"] = len(stats.get("skipped", []))


def pytest_unconfigure(config):
    rep = _counts.get("reporter")
    if rep is None:
        return
    line = f"{_counts['passed']} passed, {_counts['failed']} failed"
    if _counts["skipped"]:
        line += f", {_counts['skipped']} skipped"
    rep.write_line(line)
