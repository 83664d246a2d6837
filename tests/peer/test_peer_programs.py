"""The peer programs run natively on the host: their JSON output and options."""
import json
import os
import subprocess

import pytest

# (program, extra args, bench, test name, scenario)
PROGRAMS = [
    ("pingpong_pipe", [], "ipc", "linux_pipe_roundtrip", "processes"),
    ("pingpong_futex", [], "ipc", "linux_futex_handoff", "threads"),
    ("pingpong_futex", ["-p"], "ipc", "linux_futex_handoff_proc", "processes"),
    ("null_syscall", [], "syscall", "linux_null_syscall", "getppid"),
    *(("vm_ops", [op], "vm", f"linux_{op}", op)
      for op in ("fork0", "fork64", "pagefault", "cowfault", "mmap16")),
]
IDS = [p[3] for p in PROGRAMS]


def run(build, prog, *args, check=True):
    p = subprocess.run([str(build.bin_dir / prog), *args], capture_output=True,
                       text=True, timeout=60)
    if check:
        assert p.returncode == 0, p.stderr
    return p


def records(stdout):
    lines = stdout.splitlines()
    assert lines, "no output"
    return [json.loads(line) for line in lines]


def check_result(r, n, unit):
    assert r["type"] == "result"
    assert r["unit"] == unit
    assert r["n"] == n
    for k in ("median", "min", "max", "q1", "q3", "timer_overhead"):
        assert isinstance(r[k], int), k
    assert 0 < r["min"] <= r["q1"] <= r["median"] <= r["q3"] <= r["max"]
    assert r["min"] <= r["mean"] <= r["max"]
    modes = r["modes"]
    assert 1 <= len(modes) <= 4
    counts = [c for _, c in modes]
    assert counts == sorted(counts, reverse=True)
    assert sum(counts) <= n
    for v, c in modes:
        assert r["min"] <= v <= r["max"] and c >= 1
    assert r["kernel"] == "linux" and r["release"] == os.uname().release


@pytest.mark.parametrize("prog,extra,bench,test,scenario", PROGRAMS, ids=IDS)
def test_output_format(peer_build, prog, extra, bench, test, scenario):
    out = records(run(peer_build, prog, *extra, "-n", "300", "-w", "20").stdout)
    assert [r["type"] for r in out] == ["result", "end"]
    res, end = out
    check_result(res, 300, "TSC ticks")
    assert res["bench"] == bench and res["test"] == test
    assert res["scenario"] == scenario and res["mode"] == "tsc"
    assert res["warmup"] == 20
    assert end == {"type": "end", "bench": bench, "test": test, "status": 0}


@pytest.mark.parametrize("prog,extra,bench,test,scenario", PROGRAMS, ids=IDS)
def test_raw_samples_match_summary(peer_build, prog, extra, bench, test, scenario):
    out = records(run(peer_build, prog, *extra, "-n", "101", "-w", "5", "-u", "icount",
                      "-r").stdout)
    assert [r["type"] for r in out] == ["raw", "result", "end"]
    raw, res, _ = out
    check_result(res, 101, "instructions (icount)")
    assert raw["test"] == test and raw["unit"] == res["unit"]
    s = sorted(raw["samples"])
    assert len(s) == 101
    assert (s[0], s[50], s[-1]) == (res["min"], res["median"], res["max"])
    assert (s[25], s[75]) == (res["q1"], res["q3"])
    assert abs(sum(s) / 101 - res["mean"]) < 0.1
    top_value, top_count = res["modes"][0]
    assert s.count(top_value) == top_count
    assert top_count == max(s.count(v) for v in set(s))


def test_even_n_median_is_lower_middle(peer_build):
    raw, res, _ = records(run(peer_build, "null_syscall", "-n", "10", "-w", "0", "-r").stdout)
    s = sorted(raw["samples"])
    assert res["median"] == s[4]


def test_pin_cpu_reported(peer_build):
    cpu = min(os.sched_getaffinity(0))
    res = records(run(peer_build, "pingpong_pipe", "-n", "50", "-w", "0", "-c", str(cpu)).stdout)[0]
    assert res["cpu"] == cpu


def test_pin_to_missing_cpu_fails_cleanly(peer_build):
    p = run(peer_build, "pingpong_pipe", "-n", "50", "-c", "1000", check=False)
    assert p.returncode == 1
    (end,) = records(p.stdout)
    assert end["type"] == "end" and end["status"] == 1
    assert "sched_setaffinity" in end["error"]


@pytest.mark.parametrize("args", [["-n", "0"], ["-n", "x"], ["-u", "cycles"], ["-w", "-1"],
                                  ["extra"]])
def test_bad_usage(peer_build, args):
    p = run(peer_build, "pingpong_futex", *args, check=False)
    assert p.returncode == 2
    assert p.stdout == ""
    assert "usage:" in p.stderr


def test_round_trip_costs_more_than_null_syscall(peer_build):
    # Two context switches and two pipe transfers against one trap: on any
    # machine the medians must be ordered like this.
    pipe = records(run(peer_build, "pingpong_pipe", "-n", "500").stdout)[0]
    sysc = records(run(peer_build, "null_syscall", "-n", "500").stdout)[0]
    assert pipe["median"] > 2 * sysc["median"]


@pytest.mark.parametrize("args", [[], ["nosuch"], ["-n", "5"], ["fork0", "-n", "0"]])
def test_vm_ops_needs_a_known_operation_first(peer_build, args):
    p = run(peer_build, "vm_ops", *args, check=False)
    assert p.returncode == 2
    assert p.stdout == ""
    assert "usage:" in p.stderr


def test_fork64_breaks_64_copy_on_write_pages_a_fork(peer_build):
    # What makes fork64 dearer than fork0 is its child's 64 copy-on-write breaks: count
    # them as minor faults of the program's waited-for children (getrusage), which repeat
    # exactly, rather than comparing times (a timing goal belongs in `./ondol bench vm`).
    import resource

    def child_faults(op, n):
        before = resource.getrusage(resource.RUSAGE_CHILDREN).ru_minflt
        run(peer_build, "vm_ops", op, "-n", str(n), "-w", "0")
        return resource.getrusage(resource.RUSAGE_CHILDREN).ru_minflt - before

    # The children's breaks are exact; the program's own faults (its stack, shared with a
    # child not yet gone) vary by a few per fork with timing: 62-66 extra seen, so 90 %.
    n = 50
    extra = child_faults("fork64", n) - child_faults("fork0", n)
    assert extra >= n * 64 * 9 // 10, extra
