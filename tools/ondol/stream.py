"""The guest result stream (COM2): one JSON object a line, each with a "type".

Types understood here: hello (written by the kernel at boot), progress, result and end
(written by user programs), and panic ({"type":"panic","message":...}, from the kernel when
it stops, so the host fails at once instead of waiting for its timeout). Lines of other
types are accepted and ignored, so guests can add new kinds of record without breaking
older hosts.
"""
import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

from ondol import OndolError

ProgressCallback = Callable[[dict], None]


@dataclass
class GuestStream:
    """Everything one boot reported."""
    hello: dict | None = None
    results: list[dict] = field(default_factory=list)
    ends: list[dict] = field(default_factory=list)


class StreamParser:
    """Validates stream lines one at a time, so a run can be followed while it happens."""

    def __init__(self, source: str, on_progress: ProgressCallback | None = None):
        self.source = source
        self.lineno = 0
        self.stream = GuestStream()
        self._progress_callback = on_progress
        self._handlers = {"hello": self._hello, "progress": self._progress,
                          "result": self._result, "end": self._end,
                          "panic": self._panic}

    def feed(self, line: str) -> None:
        self.lineno += 1
        text = line.strip()
        if not text:
            return
        try:
            obj = json.loads(text)
        except json.JSONDecodeError as exc:
            raise self._error(f"not JSON ({exc.msg})") from None
        if not isinstance(obj, dict):
            raise self._error("not a JSON object")
        kind = obj.get("type")
        if not isinstance(kind, str):
            raise self._error('no "type" field')
        handler = self._handlers.get(kind)
        if handler:
            handler(obj)

    def finish(self) -> GuestStream:
        """The parsed stream; an error unless it ended, and ended well."""
        if not self.stream.ends:
            raise OndolError(f'guest stream {self.source} has no "end" line '
                             f"after {self.lineno} lines")
        for end in self.stream.ends:
            if end["status"] != 0:
                raise OndolError(f"guest benchmark {end.get('bench', '?')} ended with "
                                 f"status {end['status']} ({self.source})")
        return self.stream

    def _hello(self, obj: dict) -> None:
        if not isinstance(obj.get("options", {}), dict):
            raise self._error('hello "options" is not an object')
        self.stream.hello = obj

    def _progress(self, obj: dict) -> None:
        self._require_int(obj, "done")
        self._require_int(obj, "total")
        if self._progress_callback:
            self._progress_callback(obj)

    def _result(self, obj: dict) -> None:
        if not isinstance(obj.get("bench"), str):
            raise self._error('result has no "bench" name')
        self.stream.results.append({k: v for k, v in obj.items() if k != "type"})

    def _end(self, obj: dict) -> None:
        self._require_int(obj, "status")
        self.stream.ends.append(obj)

    def _panic(self, obj: dict) -> None:
        raise OndolError(f"guest kernel panic: {obj.get('message', 'no message')} "
                         f"(line {self.lineno} of {self.source})")

    def _require_int(self, obj: dict, key: str) -> None:
        value = obj.get(key)
        if not isinstance(value, int) or isinstance(value, bool):
            raise self._error(f'{obj["type"]} "{key}" is not an integer')

    def _error(self, why: str) -> OndolError:
        return OndolError(f"malformed guest line {self.lineno} in {self.source}: {why}")


def parse_file(path: Path) -> GuestStream:
    """Parse a complete recorded stream."""
    parser = StreamParser(str(path))
    with open(path, encoding="utf-8", errors="replace") as f:
        for line in f:
            parser.feed(line)
    return parser.finish()
