"""Hosted tests of ondol's allocator (lib/malloc/, docs/alloc.md).

- the unit tests (tests/host/malloc/test_malloc.c) and the randomised stress with its
  overlap/corruption checker (tests/host/malloc/stress.c), both built with the allocator
  under om_* names and run under ASan/UBSan like the libc's host tests;
- the same stress with ondol's allocator as the process malloc: LD_PRELOAD of
  libondolmalloc.so in every lock kind (and with malloc_check=on), and a static link with
  libondolmalloc.a; glibc runs it too, so a checker failure there would be the checker's;
- real programs (Python, gcc) running with the allocator preloaded.
"""
import json
import os
import pathlib
import re
import subprocess

import pytest

ROOT = pathlib.Path(__file__).resolve().parent.parent
BUILD = ROOT / "build"
SO = BUILD / "malloc" / "libondolmalloc.so"
SAN_ENV = dict(os.environ, ASAN_OPTIONS="detect_leaks=0")
# Small enough for seconds, large enough that every path (remote frees, full spans,
# large blocks, aligned blocks, realloc across sizes) runs many times.
STRESS = ["4", "20000"]


@pytest.fixture(scope="module", autouse=True)
def built():
    r = subprocess.run(["make", "-C", str(ROOT), "-j2", "malloc"], capture_output=True,
                       text=True, timeout=600)
    assert r.returncode == 0, f"build failed:\n{r.stdout[-3000:]}\n{r.stderr[-3000:]}"


def _run(cmd, env=None, timeout=120):
    return subprocess.run([str(c) for c in cmd], capture_output=True, text=True,
                          timeout=timeout, env=env or SAN_ENV)


def test_unit_tests_under_sanitizers():
    r = _run([BUILD / "host" / "test_malloc"])
    print(r.stdout)
    assert r.returncode == 0, f"{r.stdout}\n{r.stderr[-5000:]}"
    groups = dict(re.findall(r"^(\w+)\s+(\d+) checks\s+0 failed$", r.stdout, re.M))
    for group in ("sizes", "calloc", "realloc", "aligned", "returned", "threads", "misuse",
                  "lockopt"):
        assert int(groups.get(group, 0)) > 0, f"group {group} missing or failed"


def test_checker_catches_overlap_and_corruption():
    r = _run([BUILD / "host" / "stress_malloc", "selftest"])
    assert r.returncode == 0 and "overlap caught, corruption caught" in r.stdout, r.stdout


@pytest.mark.parametrize("seed", [1, 2])
def test_stress_under_sanitizers(seed):
    r = _run([BUILD / "host" / "stress_malloc", *STRESS, seed])
    assert r.returncode == 0 and " 0 failures" in r.stdout, r.stdout + r.stderr[-3000:]


@pytest.mark.parametrize("env", ["malloc_lock=lock-free", "malloc_lock=blocking",
                                 "malloc_lock=sleep-retry", "malloc_check=on"])
def test_stress_preloaded(env):
    key, value = env.split("=")
    r = _run([BUILD / "malloc" / "stress", *STRESS, 3],
             env=dict(os.environ, LD_PRELOAD=str(SO), **{key: value}))
    assert r.returncode == 0 and " 0 failures" in r.stdout, r.stdout + r.stderr[-3000:]


def test_stress_static_library():
    exe = BUILD / "malloc" / "stress_static"
    nm = subprocess.run(["nm", str(exe)], capture_output=True, text=True).stdout
    assert re.search(r" T ondol_malloc_info$", nm, re.M), "libondolmalloc.a not linked in"
    r = _run([exe, *STRESS, 4])
    assert r.returncode == 0 and " 0 failures" in r.stdout, r.stdout + r.stderr[-3000:]


def test_stress_glibc_baseline():
    r = _run([BUILD / "malloc" / "stress", "2", "5000", 5])
    assert r.returncode == 0 and " 0 failures" in r.stdout, r.stdout + r.stderr[-3000:]


def test_real_programs_preloaded(tmp_path):
    env = dict(os.environ, LD_PRELOAD=str(SO), malloc_check="on")
    r = _run(["python3", "-c", "import json, threading\n"
              "def work(): json.dumps([{'k': str(i) * (i % 50)} for i in range(20000)])\n"
              "ts = [threading.Thread(target=work) for _ in range(4)]\n"
              "[t.start() for t in ts]; [t.join() for t in ts]; print('python ok')"], env=env)
    assert r.returncode == 0 and "python ok" in r.stdout, r.stderr[-3000:]
    src = tmp_path / "hello.c"
    src.write_text('#include <stdio.h>\nint main(void) { puts("hello"); return 0; }\n')
    r = _run(["gcc", "-O2", "-o", tmp_path / "hello", src], env=env)
    assert r.returncode == 0, r.stderr[-3000:]
    assert _run([tmp_path / "hello"]).stdout == "hello\n"


@pytest.mark.parametrize("workload", ["churn", "larson", "xthread", "scratch", "realloc",
                                      "sizes"])
def test_benchmark_workloads_run(workload):
    """The head-to-head's workloads (tools/allocbench) run on ondol's allocator and report
    what hostbench.py reads."""
    r = _run([BUILD / "malloc" / "allocbench", workload, "2", "2000", "latency"],
             env=dict(os.environ, LD_PRELOAD=str(SO)))
    assert r.returncode == 0, r.stderr[-2000:]
    line = json.loads(r.stdout)
    assert line["workload"] == workload and line["wall_s"] > 0 and line["peak_rss_kib"] > 0
    assert line["lat_max_ns"] >= line["lat_p9999_ns"] / 2 > 0 or workload == "realloc"


def test_trace_record_and_replay(tmp_path):
    """The recorder sees every call of a real program; the replayer plays it back on
    ondol's allocator (which then counts them as allocations of its own)."""
    data = tmp_path / "in.txt"
    data.write_text("".join(f"{(i * 7919) % 1000}\n" for i in range(2000)))
    env = dict(os.environ, LD_PRELOAD=str(BUILD / "malloc" / "libondoltrace.so"),
               ondol_trace=str(tmp_path / "t.%p.trace"))
    r = subprocess.run(["python3", "-c", "import sys; d=open(sys.argv[1]).read().split(); "
                        "print(len(sorted(d, key=int)))", str(data)],
                       env=env, capture_output=True, text=True, timeout=60)
    assert r.returncode == 0 and r.stdout.strip() == "2000", r.stderr[-2000:]
    trace = max(tmp_path.glob("t.*.trace"), key=lambda p: p.stat().st_size)
    lines = trace.read_text().splitlines()
    assert lines[0] == "# ondol alloc trace v1"
    kinds = {line.split()[0] for line in lines[1:]}
    assert {"m", "f"} <= kinds and kinds <= {"m", "f", "c", "r", "a"}
    r = _run([BUILD / "malloc" / "allocreplay", trace], env=dict(os.environ, LD_PRELOAD=str(SO),
                                                               malloc_check="on"))
    assert r.returncode == 0, r.stderr[-2000:]
    assert json.loads(r.stdout)["events"] == len(lines) - 1
