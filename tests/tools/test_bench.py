"""`ondol bench` against a fake QEMU playing canned guest streams."""
import csv
import json

import pytest

from ondol import boot, cache, qemu
from ondol.cli import main

NULL_ROW = {"type": "result", "bench": "null", "test": "syscall", "unit": "tsc",
            "median": 150, "min": 140, "max": 900, "n": 1000}
END = {"type": "end", "bench": "null", "status": 0}


def bench(*args):
    return main(["bench", *args, "--no-build"])


def load(scratch, name):
    return json.loads((scratch / "results" / f"{name}.json").read_text())


def test_null_writes_json_csv_and_plots(scratch, fake_qemu, capsys):
    fake_qemu.stream({"type": "progress", "bench": "null", "done": 1, "total": 1},
                     NULL_ROW, END)
    assert bench("null", "--opt", "hz=250") == 0

    doc = load(scratch, "null")
    for field in ("benchmark", "commit", "qemu", "mode", "options", "cache", "date",
                  "host", "results"):
        assert field in doc
    assert doc["benchmark"] == "null" and doc["qemu"] == "7.2.22 (fake)"
    assert doc["mode"] == "icount" and doc["cache"] is None
    # requested options, merged with what the guest's hello line reported
    assert doc["options"] == {"hz": "250", "run": "nullbench"}
    assert doc["results"] == [{"bench": "null", "test": "syscall",
                               "unit": "instructions (icount)", "median": 150,
                               "min": 140, "max": 900, "n": 1000}]
    assert doc["boots"][0]["guest"]["kernel"] == "ondol"
    assert (scratch / "results" / doc["boots"][0]["stream"]).is_file()

    with open(scratch / "results" / "null.csv") as f:
        rows = list(csv.DictReader(f))
    assert rows == [{"bench": "null", "test": "syscall", "unit": "instructions (icount)",
                     "median": "150", "min": "140", "max": "900", "n": "1000"}]
    png = (scratch / "results" / "null.png").read_bytes()
    assert png.startswith(b"\x89PNG") and len(png) > 1000
    assert b"<svg" in (scratch / "results" / "null.svg").read_bytes()

    (call,) = fake_qemu.calls()
    assert call[call.index("-icount") + 1] == "shift=0,sleep=off"
    assert "syscall" in capsys.readouterr().out


def test_without_icount_the_unit_is_tsc_ticks(scratch, fake_qemu):
    fake_qemu.stream(NULL_ROW, END)
    assert bench("null", "--no-icount") == 0
    doc = load(scratch, "null")
    assert doc["mode"] == "tsc"
    assert doc["results"][0]["unit"] == "TSC ticks"
    assert "-icount" not in fake_qemu.calls()[0]


def test_runs_are_combined_per_key(scratch, fake_qemu):
    fake_qemu.stream(NULL_ROW, {**NULL_ROW, "test": "other", "median": 10}, END)
    assert bench("null", "--runs", "3") == 0
    doc = load(scratch, "null")
    assert len(doc["boots"]) == 3
    assert [r["test"] for r in doc["results"]] == ["syscall", "other"]
    assert doc["results"][0]["run_medians"] == [150, 150, 150]
    assert doc["results"][0]["n"] == 3000


def test_cache_windows_are_merged_into_rows(scratch, fake_qemu):
    plugin = scratch / cache.PLUGIN
    plugin.parent.mkdir(parents=True)
    plugin.write_bytes(b"")
    fake_qemu.stream(NULL_ROW, END)
    fake_qemu.cache_windows({"test": "syscall", "l1i_misses": 12, "preset": "ppro"},
                            {"window": "boot", "l1i_misses": 999})
    assert bench("null", "--cache", "ppro") == 0
    doc = load(scratch, "null")
    assert doc["cache"] == "ppro"
    assert doc["results"][0]["cache"]["l1i_misses"] == 12
    assert doc["cache_windows"] == [{"window": "boot", "l1i_misses": 999}]
    call = fake_qemu.calls()[0]
    assert call[call.index("-plugin") + 1].startswith(f"{plugin},preset=ppro,out=")
    assert call[call.index("-d") + 1] == "plugin"


def error_line(capsys) -> str:
    """The one error line on stderr (other lines there are per-boot progress)."""
    lines = capsys.readouterr().err.splitlines()
    errors = [l for l in lines if l.startswith("ondol: error: ")]
    assert len(errors) == 1 and lines[-1] == errors[0] and "Traceback" not in lines
    return errors[0]


def test_timeout_is_one_line_and_kills_qemu(scratch, fake_qemu, capsys):
    fake_qemu.stream(NULL_ROW, END)
    fake_qemu.mode("hang")
    assert bench("null", "--timeout", "1") == 1
    err = error_line(capsys)
    assert err.startswith("ondol: error: guest timed out after 1 s (log: ")
    assert err.endswith("null-00.log)")


@pytest.mark.parametrize("lines, message, at_once", [
    ([NULL_ROW, "{broken", END], "malformed guest line 3 in ", True),
    ([{"type": "panic", "message": "oops"}], "guest kernel panic: oops (line 2 of ", True),
    ([NULL_ROW], 'has no "end" line', False),
    ([{**NULL_ROW, "bench": "ipc"}, END], "guest reported no 'null' results", False),
])
def test_bad_streams_are_one_line_errors(scratch, fake_qemu, capsys, lines, message, at_once):
    """Bad lines stop the boot at once; what only shows at the end waits for QEMU's exit."""
    fake_qemu.stream(*lines)
    if at_once:
        fake_qemu.mode("hang")
    assert bench("null", "--timeout", "20") == 1
    err = error_line(capsys)
    assert message in err and "null-00.log)" in err
    assert not (scratch / "results" / "null.json").exists()


def test_qemu_failure_reports_its_last_line(scratch, fake_qemu, capsys):
    fake_qemu.stream(END)
    fake_qemu.mode("fail")
    assert bench("null") == 1
    assert "qemu exited with status 1: qemu-system-x86_64: fake failure" in \
        error_line(capsys)


def test_failing_make_is_a_one_line_error(scratch, fake_qemu, capsys):
    (scratch / "Makefile").write_text("all:\n\t@echo 'kernel/x.c:1: error: boom' >&2; false\n")
    assert main(["bench", "null"]) == 1
    assert error_line(capsys).startswith(
        "ondol: error: make failed: kernel/x.c:1: error: boom (log: ")


def test_unbuilt_kernel_and_reserved_option(scratch, fake_qemu, capsys):
    assert bench("null", "--opt", "run=sh") == 1
    assert "run= is set by the benchmark" in capsys.readouterr().err
    (scratch / "build" / "ondol.bin").unlink()
    assert bench("null") == 1
    assert "kernel not built: " in capsys.readouterr().err


def test_headless_follows_progress_while_the_guest_runs(tmp_path, fake_qemu):
    """Progress lines arrive one at a time (written slowly), not all at the end."""
    fake_qemu.stream(*({"type": "progress", "bench": "b", "done": i, "total": 3}
                       for i in range(1, 4)), END)
    fake_qemu.delay(0.2)
    seen = []
    machine = qemu.Machine(kernel="k", initrd="i", results=tmp_path / "s.jsonl")
    stream = boot.headless(qemu.command(qemu.find(), machine), tmp_path / "s.jsonl",
                           tmp_path / "c.log", 30,
                           lambda line: seen.append((line["done"], line["total"])))
    assert seen == [(1, 3), (2, 3), (3, 3)]
    assert stream.ends == [END]
    assert "fake ondol console" in (tmp_path / "c.log").read_text()
