"""Running QEMU: interactively on the terminal, or headless while following COM2."""
import subprocess
import time
from pathlib import Path

from ondol import OndolError
from ondol.project import display
from ondol.stream import GuestStream, ProgressCallback, StreamParser

POLL_SECONDS = 0.05


def interactive(cmd: list[str]) -> int:
    """Run QEMU attached to the terminal and return its exit status.

    On a terminal QEMU takes raw mode and Ctrl-C goes to the guest. Where a SIGINT does
    reach us, it reached QEMU too (same process group): keep waiting for QEMU to finish
    rather than leave it running.
    """
    proc = _start(cmd)
    while True:
        try:
            return proc.wait()
        except KeyboardInterrupt:
            continue


def headless(cmd: list[str], stream_path: Path, log: Path, timeout: float,
             on_progress: ProgressCallback | None = None) -> GuestStream:
    """Boot with COM1 (and QEMU's own messages) in `log`, parsing COM2 as it is written."""
    stream_path.unlink(missing_ok=True)  # QEMU truncates it, but maybe after our first read
    parser = StreamParser(display(stream_path), on_progress)
    tail = _Tail(stream_path, parser)
    with open(log, "wb") as out:
        proc = _start(cmd, stdin=subprocess.DEVNULL, stdout=out, stderr=subprocess.STDOUT)
    try:
        _follow(proc, tail, timeout)
    except OndolError as exc:
        raise _with_log(exc, log) from None
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    if proc.returncode != 0:
        raise OndolError(f"qemu exited with status {proc.returncode}: {_last_line(log)} "
                         f"(log: {display(log)})")
    try:
        tail.drain()
        return parser.finish()
    except OndolError as exc:
        raise _with_log(exc, log) from None


def _with_log(exc: OndolError, log: Path) -> OndolError:
    """The error, pointing at the console log, where the guest says what it was doing."""
    return OndolError(f"{exc} (log: {display(log)})")


def _start(cmd: list[str], **kwargs) -> subprocess.Popen:
    try:
        return subprocess.Popen(cmd, **kwargs)
    except OSError as exc:
        raise OndolError(f"cannot run {cmd[0]}: {exc.strerror}") from None


def _follow(proc: subprocess.Popen, tail: "_Tail", timeout: float) -> None:
    deadline = time.monotonic() + timeout
    while proc.poll() is None:
        if time.monotonic() > deadline:
            raise OndolError(f"guest timed out after {timeout:g} s")
        tail.poll()
        time.sleep(POLL_SECONDS)


def _last_line(log: Path) -> str:
    lines = [l.strip() for l in log.read_text(errors="replace").splitlines() if l.strip()]
    return lines[-1] if lines else "no output"


class _Tail:
    """Feeds complete lines appended to a file to a parser."""

    def __init__(self, path: Path, parser: StreamParser):
        self.path, self.parser = path, parser
        self.offset, self.partial = 0, b""

    def poll(self) -> None:
        if not self.path.exists():
            return
        with open(self.path, "rb") as f:
            f.seek(self.offset)
            data = f.read()
        self.offset += len(data)
        *lines, self.partial = (self.partial + data).split(b"\n")
        for line in lines:
            self.parser.feed(line.decode("utf-8", errors="replace"))

    def drain(self) -> None:
        """Read what is left once the writer has gone, including an unterminated line."""
        self.poll()
        if self.partial:
            self.parser.feed(self.partial.decode("utf-8", errors="replace"))
            self.partial = b""
