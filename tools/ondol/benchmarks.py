"""The benchmark registry: what `./ondol bench NAME` boots and how it shows the results.

To add a benchmark, append a `Benchmark(...)` to BENCHMARKS at the end of this file:

- `name`: what the user types; also the "bench" field of the guest's result rows.
- `configs`: one `Config` per boot: the guest `command` (run by init's shell; spaces become
  commas in the `run=` kernel option), extra kernel `options`, and `params` that describe
  the configuration and are copied into each of its rows unless the guest reports them.
- `key`: the row fields that identify one measurement; `compare`, `--runs` and the cache
  merge match rows on them.
- `columns`: the row fields shown in the table, in order.
- `plot`: a `Plot`: "line" (x against y, one line per `series` value) or "bar" (one bar per
  x value); `logy` for a log-scale y axis. Error bars span the rows' min..max.
- `paper`: "P<n>.<table id>" of the table in data/papers.json the results sit beside,
  or None when no paper published a comparable number.
- Optional: `icount` (default mode), `timeout` (seconds per boot) and `rows`, a function
  (guest result rows of this bench, Config) -> table rows, for benchmarks whose guest rows
  need reshaping.
"""
from dataclasses import dataclass, field
from typing import Callable

from ondol import OndolError


@dataclass(frozen=True)
class Config:
    command: str
    options: dict[str, str] = field(default_factory=dict)
    params: dict[str, object] = field(default_factory=dict)

    @property
    def label(self) -> str:
        return " ".join(f"{k}={v}" for k, v in self.params.items()) or self.command


@dataclass(frozen=True)
class Plot:
    kind: str
    x: str
    y: str = "median"
    series: str | None = None
    logy: bool = False


def with_params(results: list[dict], config: Config) -> list[dict]:
    """The default row conversion: guest rows as they are, plus the config's params."""
    return [{**config.params, **row} for row in results]


@dataclass(frozen=True)
class Benchmark:
    name: str
    description: str
    configs: tuple[Config, ...]
    key: tuple[str, ...]
    columns: tuple[str, ...]
    plot: Plot
    paper: str | None
    icount: bool = True
    timeout: float = 300.0
    rows: Callable[[list[dict], Config], list[dict]] = with_params


STATS = ("median", "min", "max", "n")

# The P1 Table 2 points; the guest command is settled by the IPC issue.
IPC_THREADS = (0, 30, 60, 90, 120, 150, 180, 200)

BENCHMARKS = (
    Benchmark(
        name="null",
        description="null system call round trip",
        configs=(Config(command="nullbench"),),
        key=("test",),
        columns=("test", *STATS),
        plot=Plot(kind="bar", x="test"),
        paper=None,
        timeout=120.0,
    ),
    Benchmark(
        name="ipc",
        description="IPC send-to-receive latency with other busy threads, DTS on and off",
        configs=tuple(Config(command=f"ipcbench busy {threads}", options={"dts": dts},
                             params={"dts": dts, "threads": threads})
                      for dts in ("off", "on") for threads in IPC_THREADS),
        key=("test", "scenario", "threads", "dts"),
        columns=("scenario", "dts", "threads", *STATS),
        plot=Plot(kind="line", x="threads", series="dts", logy=True),
        paper="P1.table2",
        timeout=900.0,
    ),
)


def get(name: str) -> Benchmark:
    for bench in BENCHMARKS:
        if bench.name == name:
            return bench
    known = ", ".join(b.name for b in BENCHMARKS)
    raise OndolError(f"no benchmark named {name!r} (known: {known})")
