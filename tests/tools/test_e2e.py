"""`./ondol bench null` against the real kernel; skipped until build/ondol.bin exists."""
import json
import subprocess
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]


def test_bench_null_end_to_end(tmp_path):
    if not (REPO / "build" / "ondol.bin").exists():
        pytest.skip("build/ondol.bin not built")
    # --no-build: `make test` has built the kernel already and must not recurse into make.
    proc = subprocess.run([str(REPO / "ondol"), "bench", "null", "--no-build", "--runs", "2",
                           "--timeout", "300", "--results", str(tmp_path)],
                          capture_output=True, text=True, timeout=900)
    assert proc.returncode == 0, proc.stderr
    doc = json.loads((tmp_path / "null.json").read_text())
    assert doc["mode"] == "icount" and doc["options"]["run"] == "nullbench"
    assert doc["qemu"].startswith(("7.2", "10.0"))     # the installed one or scripts/qemu.sh's
    (row,) = [r for r in doc["results"] if r["test"] == "syscall"]
    assert row["unit"] == "instructions (icount)"
    assert 0 < row["min"] <= row["median"] <= row["max"] and row["n"] > 0
    # icount with a fixed seed and clock: two boots measure the same thing exactly.
    assert row["run_medians"][0] == row["run_medians"][1]
    assert (tmp_path / "null.png").stat().st_size > 0
