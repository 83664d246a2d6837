"""The command line as a user meets it: launcher, exit codes, no tracebacks."""
import subprocess
from pathlib import Path

import pytest

from ondol.benchmarks import BENCHMARKS

REPO = Path(__file__).resolve().parents[2]


def test_missing_qemu_is_one_line_without_traceback(ondol_process, scratch):
    proc = ondol_process("bench", "null", "--no-build", env={"ONDOL_QEMU": "",
                                                            "PATH": "/nonexistent"})
    assert proc.returncode == 1
    assert proc.stderr == ("ondol: error: QEMU not found (qemu-system-x86_64); "
                           "run scripts/deps.sh or set ONDOL_QEMU\n")


def test_unknown_benchmark(ondol_process):
    """The message names every registered benchmark, in the registry's order (taken from
    the registry, so a new benchmark does not need this test changed)."""
    proc = ondol_process("bench", "nosuch")
    assert proc.returncode == 1
    known = ", ".join(b.name for b in BENCHMARKS)
    assert {"null", "ipc", "net", "aim"} <= {b.name for b in BENCHMARKS}
    assert proc.stderr == f"ondol: error: no benchmark named 'nosuch' (known: {known})\n"


def test_order_only_for_the_model_benchmarks(ondol_process):
    proc = ondol_process("bench", "null", "--no-build", "--order", "exclusive")
    assert proc.returncode == 1
    assert proc.stderr == ("ondol: error: --order is for the coherence model's benchmarks, "
                           "not null\n")


def test_bad_opt(ondol_process, fake_qemu, scratch):
    proc = ondol_process("bench", "null", "--no-build", "--opt", "hz")
    assert proc.returncode == 1
    assert proc.stderr == "ondol: error: bad --opt 'hz': expected key=value\n"


def test_launcher_runs_the_cli_from_anywhere(tmp_path):
    proc = subprocess.run([str(REPO / "ondol"), "compare", "--help"], capture_output=True,
                          text=True, cwd=tmp_path, timeout=120)
    assert proc.returncode == 0 and "B.json" in proc.stdout


@pytest.mark.parametrize("args", [["run"], ["bench", "null"]])
def test_run_and_bench_refuse_unbuilt_kernel(ondol_process, fake_qemu, scratch, args):
    (scratch / "build" / "bootfs.tar").unlink()
    proc = ondol_process(*args, "--no-build")
    assert proc.returncode == 1
    assert proc.stderr.startswith("ondol: error: kernel not built: ")
    assert proc.stderr.count("\n") == 1


def test_run_boots_interactively_and_passes_options(ondol_process, fake_qemu, scratch):
    fake_qemu.stream({"type": "end", "bench": "x", "status": 0})
    proc = ondol_process("run", "--no-build", "--opt", "run=sh,-c,halt", "--icount")
    assert proc.returncode == 0
    assert "fake ondol console" in proc.stdout  # COM1 on our stdout
    (call,) = fake_qemu.calls()
    assert call[call.index("-append") + 1] == "run=sh,-c,halt"
    assert "-icount" in call and call[call.index("-serial") + 1] == "mon:stdio"
    assert (scratch / "results" / "run.jsonl").is_file()
