"""Fixtures for the host CLI tests: a scratch repository and a fake QEMU."""
import json
import os
import stat
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
TOOLS = REPO / "tools"
sys.path.insert(0, str(TOOLS))

HERE = Path(__file__).resolve().parent


@pytest.fixture
def scratch(tmp_path, monkeypatch):
    """A repository root with (empty) kernel images, used through ONDOL_ROOT."""
    build = tmp_path / "repo" / "build"
    build.mkdir(parents=True)
    (build / "ondol.bin").write_bytes(b"kernel")
    (build / "bootfs.tar").write_bytes(b"archive")
    monkeypatch.setenv("ONDOL_ROOT", str(build.parent))
    return build.parent


class FakeQemu:
    """Controls tests/tools/fake_qemu.py through its environment variables."""

    def __init__(self, directory: Path, monkeypatch):
        self.directory = directory
        self.monkeypatch = monkeypatch
        self.argv_log = directory / "argv.jsonl"
        self.binary = directory / "qemu-system-x86_64"
        self.binary.write_text(f"#!{sys.executable}\n"
                               f"import runpy, sys\n"
                               f"sys.argv[0] = {str(HERE / 'fake_qemu.py')!r}\n"
                               f"runpy.run_path(sys.argv[0], run_name='__main__')\n")
        self.binary.chmod(self.binary.stat().st_mode | stat.S_IXUSR)
        monkeypatch.setenv("ONDOL_QEMU", str(self.binary))
        monkeypatch.setenv("FAKE_QEMU_ARGV", str(self.argv_log))

    def stream(self, *lines) -> None:
        """The canned COM2 lines (dicts become JSON, strings are written as they are)."""
        self._template("stream.jsonl", "FAKE_QEMU_STREAM", lines)

    def cache_windows(self, *lines) -> None:
        self._template("cache.jsonl", "FAKE_QEMU_CACHE", lines)

    def mode(self, mode: str) -> None:
        self.monkeypatch.setenv("FAKE_QEMU_MODE", mode)

    def delay(self, seconds: float) -> None:
        self.monkeypatch.setenv("FAKE_QEMU_DELAY", str(seconds))

    def calls(self) -> list[list[str]]:
        if not self.argv_log.exists():
            return []
        return [json.loads(line) for line in self.argv_log.read_text().splitlines()]

    def _template(self, name: str, variable: str, lines) -> None:
        path = self.directory / name
        path.write_text("".join((l if isinstance(l, str) else json.dumps(l)) + "\n"
                                for l in lines))
        self.monkeypatch.setenv(variable, str(path))


@pytest.fixture
def fake_qemu(tmp_path, monkeypatch):
    directory = tmp_path / "fakeqemu"
    directory.mkdir()
    monkeypatch.setenv("ONDOL_PEER", "off")   # fake benchmark runs never boot the real peer
    return FakeQemu(directory, monkeypatch)


@pytest.fixture
def ondol_process():
    """Runs the CLI in a child process (python -m ondol), as the launcher does."""
    def run(*args: str, env: dict | None = None) -> subprocess.CompletedProcess:
        full_env = {**os.environ, "PYTHONPATH": str(TOOLS), **(env or {})}
        return subprocess.run([sys.executable, "-m", "ondol", *args], capture_output=True,
                              text=True, env=full_env, cwd=REPO, timeout=120)
    return run
