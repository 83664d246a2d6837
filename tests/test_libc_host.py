"""Host unit tests of the ondol libc (tests/host/test_libc.c).

Builds build/host/test_libc with the top-level Makefile (which includes
lib/libc/libc.mk) and runs it; the program compares our formatting, string,
number-parsing and allocator code with the host C library and fixed expectations.
"""
import os
import pathlib
import re
import subprocess

import pytest

ROOT = pathlib.Path(__file__).resolve().parent.parent
BINARY = ROOT / "build" / "host" / "test_libc"


def _make(target):
    makefile = ROOT / "Makefile"
    cmd = ["make", "-C", str(ROOT)]
    if not makefile.exists():  # fragment on its own (before the top-level Makefile exists)
        cmd += ["-f", "lib/libc/libc.mk"]
    return subprocess.run(cmd + [target], capture_output=True, text=True, timeout=600)


@pytest.fixture(scope="module")
def test_binary():
    r = _make("build/host/test_libc")
    assert r.returncode == 0, f"build failed:\n{r.stdout[-3000:]}\n{r.stderr[-3000:]}"
    assert BINARY.exists()
    return BINARY


def test_libc_host_unit_tests(test_binary):
    r = subprocess.run([str(test_binary)], capture_output=True, text=True, timeout=600,
                       env=dict(os.environ, ASAN_OPTIONS="detect_leaks=0"))
    print(r.stdout)
    assert r.returncode == 0, f"failures:\n{r.stdout}\n{r.stderr[-5000:]}"
    groups = dict(re.findall(r"^(\w+)\s+(\d+) checks\s+0 failed$", r.stdout, re.M))
    for group in ("fmt", "string", "ctype", "strtol", "rand", "json", "malloc", "total"):
        assert group in groups, f"group {group} missing or failed:\n{r.stdout}"
        assert int(groups[group]) > 0
    assert int(groups["fmt"]) > 10000  # the combinatorial format comparison really ran


def test_user_libc_builds():
    """The freestanding libc and crt0 compile with -Werror and export the kernel's
    shared files."""
    r = _make("build/user/libc.a")
    assert r.returncode == 0, r.stderr[-3000:]
    r2 = _make("build/user/crt0.o")
    assert r2.returncode == 0, r2.stderr[-3000:]
    nm = subprocess.run(["nm", "--defined-only", str(ROOT / "build/user/libc.a")],
                        capture_output=True, text=True, check=True).stdout
    for sym in ("fmt_format", "memcpy", "vsnprintf", "printf", "malloc", "free", "realloc",
                "strtol", "rand64", "result_printf", "thread_start", "exit"):
        assert re.search(rf" T {sym}$", nm, re.M), f"{sym} not defined in libc.a"
    undefined = subprocess.run(["nm", "--undefined-only", str(ROOT / "build/user/libc.a")],
                               capture_output=True, text=True, check=True).stdout
    # Everything libc needs must come from libc itself (or main from the program, the TLS
    # template's bounds from the linker script, user/user.ld, and the GOT's address, which
    # position-independent code may name, from the linker).
    defined = set(re.findall(r" [TDBRC] (\S+)$", nm, re.M))
    linker = {"__tls_start", "__tls_data_end", "__tls_end", "__tls_align_at",
              "_GLOBAL_OFFSET_TABLE_"}
    missing = {s for s in re.findall(r" U (\S+)$", undefined, re.M)} - defined - {"main"} - linker
    assert not missing, f"libc.a needs undefined symbols: {sorted(missing)}"
