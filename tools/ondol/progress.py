"""The progress display of a benchmark run, on stderr so stdout keeps only the table.

On a terminal: live bars. Elsewhere (CI logs, pipes): one plain line per boot.
"""
from rich.console import Console
from rich.progress import (BarColumn, MofNCompleteColumn, Progress, SpinnerColumn,
                           TextColumn, TimeElapsedColumn)


class BenchProgress:
    """Boots done out of all, and the current boot's guest `progress` lines."""

    def __init__(self, name: str, boots: int):
        self._console = Console(stderr=True)
        self._live = self._console.is_terminal
        self._name, self._total, self._started = name, boots, 0
        self._progress = Progress(SpinnerColumn(), TextColumn("{task.description}"),
                                  BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
                                  console=self._console, transient=True,
                                  disable=not self._live)
        self._boots = self._progress.add_task(f"{name}: boots", total=boots)
        self._guest = self._progress.add_task("", total=None, visible=False)

    def __enter__(self) -> "BenchProgress":
        if self._live:
            self._progress.start()
        return self

    def __exit__(self, *exc) -> None:
        if self._live:
            self._progress.stop()

    def boot_started(self, label: str) -> None:
        self._started += 1
        if not self._live:
            self._console.print(f"{self._name} [{self._started}/{self._total}] {label}",
                                highlight=False)
        self._progress.reset(self._guest, description=f"  {label}", total=None,
                             visible=True)

    def guest(self, line: dict) -> None:
        """Follow a guest progress line {"done": N, "total": M}."""
        self._progress.update(self._guest, completed=line["done"], total=line["total"])

    def boot_done(self) -> None:
        self._progress.advance(self._boots)
