"""Boot ondol in QEMU and drive its serial console from tests.

    with boot({"hz": "100"}) as s:
        out = s.cmd("hello a b")          # types the line, returns output up to the next prompt
        s.expect(r"regex", timeout=5)      # waits for text on the console
        assert s.halt() == 0               # `halt` powers off; returns QEMU's exit status

Every QEMU started here is killed after `lifetime` seconds at the latest, so a hung guest
fails a test instead of stalling the run. COM1 is the console; COM2 (the machine-readable
result stream) goes to a file, read with `s.results()`. The QEMU command line itself comes
from tools/qemucmd.py (`qemu_command` below picks the test variant); `qemucmd` is importable
from here for other test helpers.
"""
from __future__ import annotations

import json
import re
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
BUILD = ROOT / "build"
PROMPT = "ondol$ "
# The command line comes from tools/qemucmd.py; tools/ may not be on the path when this
# file is imported by a script (tests/fuzz_campaign.py), so put it there.
if str(ROOT / "tools") not in sys.path:
    sys.path.insert(0, str(ROOT / "tools"))
import qemucmd  # noqa: E402


class GuestError(AssertionError):
    """The guest did not do what the test waited for; carries the console log."""


def qemu_command(options: dict | None = None, *, iso: bool = False, com2: str | None = None,
                 rootfs: Path | None = None, **knobs) -> list[str]:
    """The QEMU command of a test boot: console on stdio (a pipe), COM2 into `com2` or
    nowhere, ondol from build/ (or its GRUB image with `iso`); `rootfs` instead of
    build/rootfs.cpio as the UNIX server's archive. `knobs` are those of
    tools/qemucmd.py (icount=True, plugin=qemucmd.Plugin(...), memory=..., extra=[...])."""
    ports = dict(com1="stdio", com2=f"file:{com2}" if com2 else "null")
    if iso:
        return qemucmd.ondol_iso(BUILD / "ondol.iso", **ports, **knobs)
    append = qemucmd.append_line(options or {})
    return qemucmd.ondol(BUILD / "ondol.bin", BUILD / "bootfs.tar", append,
                         rootfs=rootfs or qemucmd.unix_rootfs(BUILD, append), **ports, **knobs)


class Session:
    def __init__(self, options: dict | None = None, *, lifetime: float = 300, boot_timeout: float = 30,
                 wait_prompt: bool = True, **qemu_kw):
        for f in ("ondol.bin", "bootfs.tar"):
            if not (BUILD / f).exists():
                raise GuestError(f"build/{f} is missing: run `make` first")
        self._dir = tempfile.TemporaryDirectory(prefix="ondol-test-")
        self.com2 = Path(self._dir.name) / "com2.jsonl"
        self.command = qemu_command(options, com2=str(self.com2), **qemu_kw)
        self.proc = subprocess.Popen(self.command, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                     stderr=subprocess.STDOUT)
        self._buf = ""
        self._pos = 0
        self._cond = threading.Condition()
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()
        self._watchdog = threading.Timer(lifetime, self.kill)
        self._watchdog.daemon = True
        self._watchdog.start()
        self.boot_seconds = None
        if wait_prompt:
            t0 = time.monotonic()
            try:
                self.expect(re.escape(PROMPT), timeout=boot_timeout)
            except BaseException:
                self.close()    # the caller never gets the session: stop QEMU now, not at lifetime
                raise
            self.boot_seconds = time.monotonic() - t0

    # ---- output ------------------------------------------------------------------------
    def _read(self) -> None:
        while True:
            chunk = self.proc.stdout.read1(4096) if self.proc.stdout else b""
            if not chunk:
                break
            text = chunk.decode("utf-8", "replace").replace("\r", "")
            with self._cond:
                self._buf += text
                self._cond.notify_all()
        with self._cond:
            self._cond.notify_all()

    @property
    def output(self) -> str:
        with self._cond:
            return self._buf

    def expect(self, pattern: str, timeout: float = 30) -> re.Match:
        """Wait for `pattern` in console output after the previous match; return the match."""
        rx = re.compile(pattern)
        deadline = time.monotonic() + timeout
        with self._cond:
            while True:
                m = rx.search(self._buf, self._pos)
                if m:
                    self._pos = m.end()
                    return m
                left = deadline - time.monotonic()
                if left <= 0 or (self.proc.poll() is not None and not self._reader.is_alive()):
                    why = "timed out" if left <= 0 else f"QEMU exited ({self.proc.returncode})"
                    raise GuestError(f"{why} waiting for {pattern!r}; console tail:\n{self._buf[-3000:]}")
                self._cond.wait(min(left, 0.5))

    # ---- input -------------------------------------------------------------------------
    def send(self, text: str) -> None:
        assert self.proc.stdin
        self.proc.stdin.write(text.encode())
        self.proc.stdin.flush()

    def cmd(self, line: str, timeout: float = 30) -> str:
        """Type `line` + Enter at the prompt; return what it printed before the next prompt."""
        self.send(line + "\r")
        start = self.expect(re.escape(line) + r"\n", timeout=timeout).end()
        m = self.expect(re.escape(PROMPT), timeout=timeout)
        return self.output[start:m.start()]

    def halt(self, timeout: float = 20) -> int:
        self.send("halt\r")
        return self.wait(timeout)

    def wait(self, timeout: float = 30) -> int:
        """QEMU's exit status, once the console reader has taken everything QEMU wrote
        (the last lines, "powering off" say, may still be in the pipe when it exits)."""
        try:
            status = self.proc.wait(timeout)
        except subprocess.TimeoutExpired as e:
            self.kill()
            raise GuestError(f"QEMU did not exit within {timeout} s; console tail:\n{self.output[-3000:]}") from e
        self._reader.join(timeout=10)
        return status

    def results(self) -> list[dict]:
        if not self.com2.exists():
            return []
        return [json.loads(l) for l in self.com2.read_text().splitlines() if l.strip()]

    def kill(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()

    def close(self) -> None:
        self._watchdog.cancel()
        self.kill()
        self.proc.wait()
        self._reader.join(timeout=5)
        for f in (self.proc.stdin, self.proc.stdout):
            if f:
                f.close()
        self._dir.cleanup()

    def __enter__(self) -> "Session":
        return self

    def __exit__(self, *exc) -> None:
        self.close()


def boot(options: dict | None = None, timeout: float = 30, **kw) -> Session:
    """Boot ondol and wait for the shell prompt (`timeout` bounds the boot)."""
    return Session(options, boot_timeout=timeout, **kw)


def run_to_halt(options: dict, timeout: float = 120, **kw) -> tuple[int, str, list[dict]]:
    """Boot with options that make the guest power off by itself (e.g. run=...); return
    (QEMU exit status, console text, COM2 records)."""
    s = Session(options, wait_prompt=False, lifetime=timeout + 10, **kw)
    try:
        status = s.wait(timeout)
        s._reader.join(timeout=5)
        return status, s.output, s.results()
    finally:
        s.close()
