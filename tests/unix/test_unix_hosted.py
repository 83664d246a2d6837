"""The UNIX server's parts as hosted unit tests (servers/unix/host/test_*.c, built with
ASan and UBSan by servers/unix/unix.mk): each program prints "N checks, M failed" and
exits 0 only when M is 0."""
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent.parent
SOURCES = sorted((ROOT / "servers" / "unix" / "host").glob("test_*.c"))


@pytest.mark.parametrize("source", SOURCES, ids=[s.stem for s in SOURCES])
def test_hosted(source):
    binary = ROOT / "build" / "unix" / "host" / source.stem
    r = subprocess.run([str(binary)], capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stdout + r.stderr
    last = r.stdout.strip().splitlines()[-1]
    checks = int(last.split()[0])
    assert checks > 0 and last.endswith(" 0 failed"), r.stdout
