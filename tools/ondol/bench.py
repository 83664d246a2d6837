"""Running a registered benchmark: boot each configuration, collect and combine its rows."""
import statistics
import time
from contextlib import nullcontext
from dataclasses import dataclass
from pathlib import Path

from ondol import OndolError, boot, cache, project, qemu
from ondol.benchmarks import Benchmark, BootEnv, Config
from ondol.progress import BenchProgress
from ondol.results import document, label_unit, mode_name


@dataclass(frozen=True)
class Request:
    """What the user asked for on the command line."""
    options: dict[str, str]
    icount: bool | None
    runs: int
    cache: str | None
    timeout: float | None
    results_dir: Path
    coherence_order: str | None = None    # --order: the coherence model's replay order


@dataclass(frozen=True)
class _Context:
    """Everything one boot needs besides its configuration."""
    bench: Benchmark
    request: Request
    top: Path
    binary: str
    kernel: Path
    initrd: Path
    mode: str


@dataclass
class _Boot:
    record: dict
    rows: list[dict]
    unmatched_windows: list[dict]


def overridden(row: dict, config: Config, request: Request) -> dict:
    """A row's columns that name a configuration's option (aim's `unix`, `rmap`) hold
    the value the boot ran with: --opt KEY=VALUE overrides the configuration's."""
    for key, value in request.options.items():
        if key in config.options and key in row:
            row[key] = value
    return row


def run(bench: Benchmark, request: Request, top: Path, binary: str) -> dict:
    """Boot every configuration `request.runs` times and return the result document."""
    if "run" in request.options:
        raise OndolError("run= is set by the benchmark; it cannot be given with --opt")
    kernel, initrd = project.kernel_images(top)
    qemu_version = qemu.version(binary)
    icount = bench.icount if request.icount is None else request.icount
    ctx = _Context(bench, request, top, binary, kernel, initrd, mode_name(icount))
    (request.results_dir / "logs").mkdir(parents=True, exist_ok=True)

    boots, rows, windows = [], [], []
    total = len(bench.configs) * request.runs
    with BenchProgress(bench.name, total) as progress:
        for index, config in enumerate(bench.configs):
            config_rows = []
            for attempt in range(request.runs):
                progress.boot_started(config.label)
                done = _boot(ctx, index, config, attempt, progress)
                progress.boot_done()
                boots.append(done.record)
                config_rows.append(done.rows)
                windows += done.unmatched_windows
            rows += combine_runs(config_rows, bench.key)

    doc = document(benchmark=bench.name, description=bench.description, paper=bench.paper,
                   key=bench.key, commit=project.commit(top), qemu=qemu_version,
                   mode=ctx.mode, cache=request.cache, host=project.host(), boots=boots,
                   rows=rows, cache_windows=windows)
    if request.cache:
        doc["plugin_overhead"] = plugin_overhead(boots)
    return doc


def plugin_overhead(boots: list[dict]) -> dict:
    """Wall time with the cache plugin against the same boots without it (one reference
    boot per configuration), so the model's cost is on record; no bound is implied."""
    with_plugin = sum(b["wall_s"] for b in boots if b["run"] == 0)
    without = sum(b["reference_wall_s"] for b in boots if "reference_wall_s" in b)
    return {"wall_s_with_plugin": round(with_plugin, 3), "wall_s_without": round(without, 3),
            "ratio": round(with_plugin / without, 2) if without else None}


def _boot(ctx: _Context, index: int, config: Config, attempt: int,
          progress: BenchProgress) -> _Boot:
    request, bench = ctx.request, ctx.bench
    logs = request.results_dir / "logs"
    stem = f"{bench.name}-{index:02d}" + (f"-r{attempt}" if request.runs > 1 else "")
    stream_path, log = logs / f"{stem}.jsonl", logs / f"{stem}.log"
    windows_path = logs / f"{stem}.cache.jsonl"
    plugin = None
    if request.cache:
        windows_path.unlink(missing_ok=True)
        plugin = cache.plugin(request.cache, ctx.top, windows_path,
                              logs / f"{stem}.plugin.log", qemu=ctx.binary)
    timeout = request.timeout or bench.timeout
    environment = bench.environment(config) if bench.environment else nullcontext(BootEnv())
    with environment as env:
        options = {**config.options, **env.options, **request.options,
                   "run": config.command.replace(" ", ",")}
        machine = qemu.Machine(kernel=ctx.kernel, initrd=ctx.initrd, results=stream_path,
                               options=options, icount=ctx.mode == "icount",
                               icount_sleep=bench.icount_sleep, plugin=plugin, extra=env.extra)
        started = time.monotonic()
        stream = boot.headless([*env.prefix, *qemu.command(ctx.binary, machine)], stream_path,
                               log, timeout, progress.guest)
        wall = time.monotonic() - started
        if request.cache and attempt == 0:
            reference = _reference_wall(ctx, machine, env, stem, timeout)

    ours = [r for r in stream.results if r["bench"] in bench.stream_names]
    rows = [label_unit(overridden(row, config, request), ctx.mode)
            for row in bench.rows(ours, config)]
    if not rows:
        raise OndolError(f"guest reported no {bench.name!r} results (stream: "
                         f"{project.display(stream_path)}; log: {project.display(log)})")
    windows = cache.read_windows(windows_path)
    unmatched = bench.windows(rows, windows) if bench.windows and windows else \
        cache.merge(rows, windows, bench.key)
    hello = stream.hello or {}
    record = {"config": config.label, "run": attempt,
              "options": {**options, **hello.get("options", {})},
              "guest": {k: v for k, v in hello.items() if k not in ("type", "options")},
              "log": str(log.relative_to(request.results_dir)),
              "stream": str(stream_path.relative_to(request.results_dir)),
              "wall_s": round(wall, 3)}
    if request.cache and attempt == 0:
        record["reference_wall_s"] = round(reference, 3)
    return _Boot(record, rows, unmatched)


def _reference_wall(ctx: _Context, machine: qemu.Machine, env: BootEnv, stem: str,
                    timeout: float) -> float:
    """The same boot without the cache plugin, in the same environment (a benchmark's
    namespace and peer), timed (its results are not used)."""
    logs = ctx.request.results_dir / "logs"
    plain = qemu.Machine(kernel=machine.kernel, initrd=machine.initrd,
                         results=logs / f"{stem}.noplugin.jsonl", options=machine.options,
                         icount=machine.icount, icount_sleep=machine.icount_sleep,
                         extra=machine.extra)
    started = time.monotonic()
    boot.headless([*env.prefix, *qemu.command(ctx.binary, plain)], plain.results,
                  logs / f"{stem}.noplugin.log", timeout)
    return time.monotonic() - started


def combine_runs(runs: list[list[dict]], key: tuple[str, ...]) -> list[dict]:
    """One row per key over repeated boots of one configuration.

    The median is the median of the runs' medians (each run's is kept in "run_medians"),
    min and max are the extremes, n is the total sample count. Other fields come from the
    first run, except a "cache" field that differs between runs, which becomes a list.
    """
    if len(runs) == 1:
        return runs[0]
    groups: dict[tuple, list[dict]] = {}
    for row in (r for rows in runs for r in rows):
        groups.setdefault(tuple(row.get(k) for k in key), []).append(row)
    return [_combine(group) for group in groups.values()]


def _combine(group: list[dict]) -> dict:
    row = dict(group[0])
    for field, reduce in (("median", statistics.median), ("min", min), ("max", max),
                          ("n", sum)):
        values = [r[field] for r in group if field in r]
        if values:
            row[field] = reduce(values)
    if "median" in row:
        row["run_medians"] = [r.get("median") for r in group]
    caches = [r["cache"] for r in group if "cache" in r]
    if caches and any(c != caches[0] for c in caches):
        row["cache"] = caches
    return row
