"""The declarations that everything else derives from: lib/include/ondol/syscalls.def,
errors.def and kernel/boot/options.def.

Checks that the Python readers (tools/ondol/abi.py, options.py) agree with the C compiler,
that the docs tables match the declarations, and that the kernel's option code (compiled
for the host here) parses, reports and switches options as docs/options.md says.
"""
import json
import re
import subprocess
from pathlib import Path

import pytest

from ondol import abi, options

REPO = Path(__file__).resolve().parents[2]
CFLAGS = ["-std=c11", "-Wall", "-Wextra", "-Werror"]


def compile_and_run(tmp_path: Path, source: str, extra: list[str], *args: str) -> str:
    c = tmp_path / "probe.c"
    c.write_text(source)
    exe = tmp_path / "probe"
    subprocess.run(["gcc", *CFLAGS, *extra, str(c), "-o", str(exe)], check=True)
    return subprocess.run([str(exe), *args], check=True, capture_output=True, text=True).stdout


# ---- system calls and error codes ---------------------------------------------------------

def test_python_constants_equal_the_compilers(tmp_path):
    names = ([f"SYS_{c.NAME}" for c in abi.SYSCALLS] + [f"E_{e.NAME}" for e in abi.ERRORS]
             + ["NSYSCALLS", "E_COUNT", "SYS_IPC_FIRST", "SYS_IPC_LAST"])
    body = "".join(f'    printf("{n} %d\\n", (int){n});\n' for n in names)
    out = compile_and_run(tmp_path, f"#include <stdio.h>\n#include <ondol/abi.h>\n"
                                    f"int main(void)\n{{\n{body}    return 0;\n}}\n",
                          ["-I", str(REPO / "lib" / "include")])
    compiled = {k: int(v) for k, v in (line.split() for line in out.splitlines())}
    python = {n: getattr(abi, n, None) for n in names}
    python["E_COUNT"] = len(abi.ERRORS)
    python["SYS_IPC_FIRST"] = min(c.number for c in abi.SYSCALLS if c.kind == "ipc")
    python["SYS_IPC_LAST"] = max(c.number for c in abi.SYSCALLS if c.kind == "ipc")
    assert compiled == python


def test_numbers_are_dense_and_names_agree():
    assert [c.number for c in abi.SYSCALLS] == list(range(abi.NSYSCALLS))
    assert [e.value for e in abi.ERRORS] == list(range(-1, -len(abi.ERRORS) - 1, -1))
    for c in abi.SYSCALLS:
        assert c.name == c.NAME.lower(), c
    # the IPC calls form one range: the kernel sends that range to ipc_syscall
    ipc = [c.number for c in abi.SYSCALLS if c.kind == "ipc"]
    assert ipc == list(range(ipc[0], ipc[-1] + 1))


def test_every_ordinary_call_has_a_user_stub(tmp_path):
    """<ondol/sys.h> makes sys_<name>() for each non-IPC line; this takes every address."""
    gcc_include = subprocess.run(["gcc", "-print-file-name=include"], check=True,
                                 capture_output=True, text=True).stdout.strip()
    refs = ", ".join(f"(void *)sys_{c.name}" for c in abi.SYSCALLS if c.kind != "ipc")
    src = tmp_path / "stubs.c"
    src.write_text(f"#include <ondol/sys.h>\nvoid *stubs[] = {{{refs}}};\n")
    subprocess.run(["gcc", *CFLAGS, "-ffreestanding", "-nostdinc", "-isystem", gcc_include,
                    "-I", str(REPO / "lib" / "libc" / "include"),
                    "-I", str(REPO / "lib" / "include"), "-c", str(src),
                    "-o", str(tmp_path / "stubs.o")], check=True)


def doc_rows(heading: str) -> list[list[str]]:
    """The body rows of the first table under `## heading` in docs/syscalls.md."""
    text = (REPO / "docs" / "syscalls.md").read_text()
    section = text.split(f"## {heading}\n", 1)[1].split("\n## ", 1)[0]
    rows = [line for line in section.splitlines() if line.startswith("|")][2:]
    return [[cell.strip() for cell in row.strip("|").split("|")] for row in rows]


def test_syscalls_doc_lists_every_call_in_order():
    documented = [(int(r[0]), r[1].strip("`")) for r in doc_rows("Calls")]
    assert documented == [(c.number, f"SYS_{c.NAME}") for c in abi.SYSCALLS]


def test_syscalls_doc_lists_every_error_code():
    documented = [(r[0].strip("`"), int(r[1])) for r in doc_rows("Error codes")]
    assert documented == [(f"E_{e.NAME}", e.value) for e in abi.ERRORS]


# ---- options -------------------------------------------------------------------------------

def test_options_doc_table_is_generated_from_the_declarations():
    text = options.DOC.read_text()
    assert options.render_doc(text, options.read_options()) == text, \
        "docs/options.md is stale: run `make docs`"


def test_option_declarations_are_well_formed():
    opts = options.read_options()
    assert len({o.key for o in opts}) == len(opts)
    for o in opts:
        assert o.scope in options.SCOPE_TEXT, o
        assert (o.variable == "none") == (o.scope == "USER"), o
        if o.type == "INT":
            assert o.min <= int(o.default) <= o.max, o
        elif o.type == "BOOL":
            assert o.default in ("on", "off"), o
        elif o.type == "ENUM":
            assert o.default in o.values and len(set(o.values)) == len(o.values), o


def test_build_option_defaults_match_the_makefile_and_header():
    slots = next(o for o in options.read_options() if o.variable == "PCNT_SLOTS")
    mk = (REPO / "kernel" / "kernel.mk").read_text()
    header = (REPO / "kernel" / "measure" / "pcnt.h").read_text()
    assert re.search(rf"^PCNT_SLOTS \?= {slots.default}$", mk, re.M)
    assert re.search(rf"#define PCNT_SLOTS {slots.default}\b", header)


HARNESS = r"""
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <ondol/abi.h>
#include "kernel.h"
#include "options.h"

u64 timer_hz, slice_ticks, balance_ticks, smpbench_iters, lockcheck_spin_ms;
bool ipc_dts, ipc_fastpath_on, fwd_pull, mmu_on, pcid_on, smp_on, smp_sched, markers_on, pcnt_probes_boot,
     lockcheck_opt, msix_on;
const char *init_program;
int selftest_mode, srv_placement_echo, srv_placement_net, srv_placement_unix, rmap_mode, smpbench_mode;

int printk(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int n = vprintf(fmt, ap);
    va_end(ap);
    return n;
}

int ksnprintf(char *buf, size_t n, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int r = vsnprintf(buf, n, fmt, ap);
    va_end(ap);
    return r;
}

void panic(const char *fmt, ...)
{
    (void)fmt;
    exit(3);
}

void kernel_lock_flags_update(void) {}     /* klock.c's, in the kernel */

/* argv[1]: the command line; then key value pairs for options_set. */
int main(int argc, char **argv)
{
    char buf[512];
    options_parse(argv[1]);
    options_format(buf, sizeof buf, OPT_SCOPES(BOOT) | OPT_SCOPES(RUN), false);
    printf("settings: %s\n", buf);
    options_format(buf, sizeof buf, OPT_SCOPES(BUILD), true);
    printf("build json: {%s}\n", buf);
    options_format(buf, sizeof buf, OPT_SCOPES(BOOT) | OPT_SCOPES(RUN), true);
    printf("settings json: {%s}\n", buf);
    options_format_given(buf, sizeof buf, true);
    printf("given json: {%s}\n", buf);
    printf("vars: hz=%lu dts=%d selftest=%d init=%s\n", (unsigned long)timer_hz, ipc_dts,
           selftest_mode, init_program);
    for (int i = 2; i + 1 < argc; i += 2)
        printf("set %s=%s -> %ld\n", argv[i], argv[i + 1], options_set(argv[i], argv[i + 1]));
    printf("dts after: %d markers after: %d\n", ipc_dts, markers_on);
    return 0;
}
"""


@pytest.fixture(scope="module")
def options_exe(tmp_path_factory):
    """kernel/boot/options.c built for the host with a stub pcnt.h and the harness above."""
    d = tmp_path_factory.mktemp("options")
    (d / "stub").mkdir()
    (d / "stub" / "pcnt.h").write_text("#define PCNT_SLOTS 24\n")
    (d / "harness.c").write_text(HARNESS)
    exe = d / "options"
    subprocess.run(["gcc", *CFLAGS, "-I", str(d / "stub"), "-I", str(REPO / "kernel" / "boot"),
                    "-I", str(REPO / "kernel" / "base"),
                    "-I", str(REPO / "lib" / "include"), str(REPO / "kernel" / "boot" / "options.c"),
                    str(d / "harness.c"), "-o", str(exe)], check=True)
    return exe


def run_options(exe, cmdline, *sets):
    return subprocess.run([str(exe), cmdline, *sets], check=True, capture_output=True,
                          text=True).stdout


def test_defaults_when_no_option_is_given(options_exe):
    out = run_options(options_exe, "/boot/ondol.bin")
    assert "settings: hz=100 slice=1 dts=on ipc_fastpath=on fwd_pull=on mmu=on pcid=on smp=on smp_sched=on balance_ticks=4 probes=off msix=off markers=off init=init selftest=none echo=off net=off unix=off rmap=lock lockcheck=off lockcheck_spin_ms=5000 smpbench=none smpbench_n=1000\n" in out
    assert "build json: {\"pcnt_slots\":24}" in out
    assert "given json: {}" in out


def test_given_values_set_the_variables_and_are_recorded_as_given(options_exe):
    out = run_options(options_exe, "ondol.bin hz=250 dts=off selftest=panic colour=blue dts")
    assert "settings: hz=250 slice=1 dts=on ipc_fastpath=on fwd_pull=on mmu=on pcid=on smp=on smp_sched=on balance_ticks=4 probes=off msix=off markers=off init=init selftest=panic" in out
    assert "vars: hz=250 dts=1 selftest=1 init=init" in out       # the last dts (=1) wins
    assert "ondol: unknown option colour" in out
    given = json.loads(re.search(r"given json: (.*)", out)[1])
    assert given == {"hz": "250", "dts": "1", "selftest": "panic", "colour": "blue"}
    settings = json.loads(re.search(r"settings json: (.*)", out)[1])
    assert settings["hz"] == 250 and settings["selftest"] == "panic"


@pytest.mark.parametrize("word, message", [
    ("hz=fast", "option hz=fast is not a number; using 100"),
    ("hz=5", "option hz=5 out of range [10, 10000]; using 100"),
    ("hz=", "option hz= is not a number; using 100"),
    ("hz=" + "9" * 25, "option hz=" + "9" * 25 + " out of range [10, 10000]; using 100"),
    ("dts=maybe", "option dts=maybe is not on/off; using on"),
    ("selftest=boom", "option selftest=boom is not one of none|panic; using none"),
    ("then=later", "option then=later is not one of poweroff|shell; using poweroff"),
])
def test_bad_values_fall_back_to_the_default_with_a_message(options_exe, word, message):
    out = run_options(options_exe, word)
    assert f"ondol: {message}\n" in out
    assert "settings: hz=100 slice=1 dts=on ipc_fastpath=on fwd_pull=on mmu=on pcid=on smp=on smp_sched=on balance_ticks=4 probes=off msix=off markers=off init=init selftest=none" in out


def test_only_run_time_options_can_be_set_later(options_exe):
    out = run_options(options_exe, "", "dts", "off", "markers", "1", "hz", "200",
                      "run", "x", "nosuch", "on", "dts", "maybe")
    assert "set dts=off -> 0\nset markers=1 -> 0\n" in out
    assert f"set hz=200 -> {abi.E_NOENT}\nset run=x -> {abi.E_NOENT}\n" in out
    assert f"set nosuch=on -> {abi.E_NOENT}\nset dts=maybe -> {abi.E_INVAL}\n" in out
    assert "dts after: 0 markers after: 1" in out
