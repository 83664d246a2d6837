"""tools/qemucmd.py, the one QEMU command line: each variant holds what it must, every
variant runs on the same machine, and `make run` / `make debug` still give the command
they always gave. Host only: nothing here starts QEMU."""
import os
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

import qemucmd

REPO = Path(__file__).resolve().parents[2]
ICOUNT = "-icount shift=0,sleep=off -seed 1 -rtc base=2024-01-01T00:00:00,clock=vm"


def value(cmd: list[str], flag: str) -> str:
    return cmd[cmd.index(flag) + 1]


def serials(cmd: list[str]) -> list[str]:
    return [cmd[i + 1] for i, a in enumerate(cmd) if a == "-serial"]


def machine_part(cmd: list[str]) -> list[str]:
    """The flags between the binary and the first flag that says what to load."""
    loads = [i for i, a in enumerate(cmd) if a in ("-kernel", "-cdrom", "-nodefaults")]
    return cmd[1:min(loads)]


VARIANTS = {
    "ondol": lambda **k: qemucmd.ondol("k.bin", "fs.tar", "hz=100", **k),
    "iso": lambda **k: qemucmd.ondol_iso("o.iso", **k),
    "peer": lambda **k: qemucmd.peer("vmlinuz", "initrd.cpio", "quiet", "c.log", "r.jsonl", **k),
    "bare": lambda **k: qemucmd.bare_guest("guest.bin", **k),
}


@pytest.mark.parametrize("name", VARIANTS)
def test_every_variant_runs_on_the_same_machine(name):
    cmd = VARIANTS[name](qemu="q", memory="256M")
    assert cmd[0] == "q"
    assert machine_part(cmd) == ["-machine", "pc", "-cpu", "max", "-m", "256M", "-smp", "1",
                                 "-display", "none", "-no-reboot"]
    assert "-icount" not in cmd and "-plugin" not in cmd and "-S" not in cmd


@pytest.mark.parametrize("name", VARIANTS)
def test_icount_gives_the_deterministic_flags(name):
    assert ICOUNT in " ".join(VARIANTS[name](icount=True))


@pytest.mark.parametrize("name", VARIANTS)
def test_gdb_and_extra_flags_come_last(name):
    cmd = VARIANTS[name](gdb=True, extra=("-d", "int"))
    assert cmd[-4:] == ["-s", "-S", "-d", "int"]


def test_ondol_loads_kernel_archive_and_options():
    cmd = qemucmd.ondol("k.bin", "fs.tar", "hz=100 run=a,b", com1="mon:stdio", com2="file:o")
    assert (value(cmd, "-kernel"), value(cmd, "-initrd")) == ("k.bin", "fs.tar")
    assert value(cmd, "-append") == "hz=100 run=a,b"
    assert serials(cmd) == ["mon:stdio", "file:o"]
    assert value(cmd, "-m") == qemucmd.DEFAULT_MEMORY == "256M"


def test_iso_boots_the_cd_without_a_kernel():
    cmd = qemucmd.ondol_iso("b/ondol.iso", com2="file:o")
    assert value(cmd, "-cdrom") == "b/ondol.iso" and value(cmd, "-boot") == "d"
    assert "-kernel" not in cmd and "-append" not in cmd
    assert serials(cmd) == ["stdio", "file:o"]


def test_peer_writes_console_and_results_to_files():
    cmd = qemucmd.peer("vmlinuz", "initrd.cpio", "console=ttyS0 peer=pipe", "c.log", "r.jsonl")
    assert (value(cmd, "-kernel"), value(cmd, "-initrd")) == ("vmlinuz", "initrd.cpio")
    assert value(cmd, "-append") == "console=ttyS0 peer=pipe no_timer_check"
    again = qemucmd.peer("v", "i", "console=ttyS0 no_timer_check", "c.log", "r.jsonl")
    assert value(again, "-append") == "console=ttyS0 no_timer_check"
    assert serials(cmd) == ["file:c.log", "file:r.jsonl"]


def test_bare_guest_has_only_the_exit_port():
    cmd = qemucmd.bare_guest("guest.bin")
    assert "-nodefaults" in cmd and value(cmd, "-device").startswith("isa-debug-exit,")
    assert value(cmd, "-kernel") == "guest.bin" and "-initrd" not in cmd
    assert serials(cmd) == [] and value(cmd, "-m") == "64M"
    assert value(qemucmd.bare_guest("g", memory="128M"), "-m") == "128M"


def test_plugin_names_the_object_and_its_arguments():
    plugin = qemucmd.Plugin("/p,1/cachesim.so", ("preset=modern", "out=w.jsonl"))
    cmd = qemucmd.ondol("k", "i", plugin=plugin)
    assert cmd[-2:] == ["-plugin", "/p,,1/cachesim.so,preset=modern,out=w.jsonl"]
    assert value(cmd, "-append") == "markers=on"       # what the plugin reads
    logged = qemucmd.Plugin("c.so", log="plugin.log").flags()
    assert logged == ["-plugin", "c.so", "-d", "plugin", "-D", "plugin.log"]


def test_markers_only_with_a_plugin_and_never_against_the_options():
    plugin = qemucmd.Plugin("c.so")
    assert value(qemucmd.ondol("k", "i", "hz=100", plugin=plugin), "-append") == "hz=100 markers=on"
    assert value(qemucmd.ondol("k", "i", "markers=off", plugin=plugin), "-append") == "markers=off"
    assert value(qemucmd.ondol("k", "i", "hz=100"), "-append") == "hz=100"


def test_binary_comes_from_the_environment(monkeypatch):
    monkeypatch.setenv("ONDOL_QEMU", "/opt/qemu")
    assert qemucmd.binary() == "/opt/qemu" == qemucmd.ondol("k", "i")[0]
    assert qemucmd.ondol("k", "i", qemu="mine")[0] == "mine"
    monkeypatch.setenv("ONDOL_QEMU", "")
    assert qemucmd.binary() == "qemu-system-x86_64"


def test_plugin_api_follows_the_major_version(tmp_path):
    for version, api in (("7.2.22", 1), ("8.2.0", 1), ("9.0.0", 3), ("10.0.2", 3)):
        fake = tmp_path / f"q{version}"
        fake.write_text(f"#!/bin/sh\necho 'QEMU emulator version {version} (test)'\n")
        fake.chmod(0o755)
        assert qemucmd.plugin_api(str(fake)) == api


def test_fair_icount_from_8_1(tmp_path):
    for version, fair in (("7.2.22", False), ("8.0.5", False), ("8.1.0", True),
                          ("10.0.2", True)):
        fake = tmp_path / f"q{version}"
        fake.write_text(f"#!/bin/sh\necho 'QEMU emulator version {version} (test)'\n")
        fake.chmod(0o755)
        assert qemucmd.fair_icount(str(fake)) == fair


def test_append_line():
    assert qemucmd.append_line({"hz": "100", "run": "a,b;c"}) == "hz=100 run=a,b;c"
    assert qemucmd.append_line({}) == ""
    assert qemucmd.append_line({"hz": 1000, "smp": 2}) == "hz=1000 smp=2"
    for bad in ({"run": "a b"}, {"a=b": "1"}, {"": "1"}):
        with pytest.raises(ValueError, match="bad kernel option"):
            qemucmd.append_line(bad)


# ---- the Makefile's run and debug targets -------------------------------------------

def make_boot_command(target: str, *variables: str) -> list[str]:
    """The command `make TARGET` runs to boot, as make expands it (make -n; the build
    step is replaced by `true`), printed by qemucmd.py instead of run."""
    env = {k: v for k, v in os.environ.items() if k != "ONDOL_QEMU"}   # the default QEMU
    dry = subprocess.run(["make", "-n", target, "MAKE=true", *variables], cwd=REPO, env=env,
                         capture_output=True, text=True, check=True).stdout
    (line,) = [l for l in dry.splitlines() if "tools/qemucmd.py" in l]
    line = line.replace("tools/qemucmd.py", "tools/qemucmd.py --print", 1)
    out = subprocess.run(line, shell=True, cwd=REPO, env=env, capture_output=True, text=True,
                         check=True).stdout
    return shlex.split(out)


# What the Makefile wrote out by hand before tools/qemucmd.py; the same command must come
# out, plus the debug-exit port (a failure power-off's status, docs/unix.md "Reliability").
MAKE_RUN = ("qemu-system-x86_64 -machine pc -cpu max -m 256M -smp 1 -display none -no-reboot "
            "-kernel build/ondol.bin -initrd build/bootfs.tar -append 'hz=1000 run=a,b;c' "
            "-device isa-debug-exit,iobase=0xf4,iosize=0x04 "
            "-serial mon:stdio -serial file:build/com2.jsonl")


def test_make_run_boots_with_the_same_command_as_before():
    """UNIX=off: ondol's native shell, exactly the command of before the UNIX server."""
    assert make_boot_command("run", "UNIX=off", "ARGS=hz=1000 run=a,b;c") == \
        shlex.split(MAKE_RUN)


def test_make_run_boots_busybox_under_the_unix_server_by_default():
    """The UNIX server placed (unix=mk) with the root archive as the second module."""
    expected = shlex.split(MAKE_RUN.replace("'hz=1000", "'unix=mk hz=1000").replace(
        "build/bootfs.tar", "build/bootfs.tar,build/rootfs.cpio"))
    assert make_boot_command("run", "ARGS=hz=1000 run=a,b;c") == expected


def test_make_debug_adds_the_gdb_stub_and_knobs_reach_qemu():
    cmd = make_boot_command("debug", "ARGS=hz=1000 run=a,b;c", "QEMU_MEM=512M",
                            "QEMU_EXTRA=-d int,cpu_reset -D q.log")
    expected = shlex.split(MAKE_RUN.replace("-m 256M", "-m 512M"))
    assert cmd == expected + ["-s", "-S", "-d", "int,cpu_reset", "-D", "q.log"]


def qemucmd_cli(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, str(REPO / "tools" / "qemucmd.py"), *args],
                          capture_output=True, text=True)


def test_command_line_boots_the_iso_and_reports_a_missing_binary():
    p = qemucmd_cli("--print", "--iso", "--build", "b", "--qemu", "q")
    assert shlex.split(p.stdout) == qemucmd.ondol_iso("b/ondol.iso", com1="mon:stdio",
                                                      com2="file:b/com2.jsonl", qemu="q")
    p = qemucmd_cli("--qemu", "/nonexistent/qemu")
    assert p.returncode == 127 and "cannot run /nonexistent/qemu" in p.stderr


def test_measuring_doc_shows_the_icount_flags_in_use():
    assert " ".join(qemucmd.ICOUNT_FLAGS) == ICOUNT
    assert ICOUNT in (REPO / "docs" / "measuring.md").read_text()


def test_executable_behind_the_unpacked_qemus_wrapper(tmp_path):
    """scripts/qemu.sh's layout: bin/x is a script running root/usr/bin/x (nm -D wants it)."""
    wrapper = tmp_path / "bin" / "qemu-system-x86_64"
    elf = tmp_path / "root" / "usr" / "bin" / "qemu-system-x86_64"
    wrapper.parent.mkdir(parents=True)
    wrapper.write_text("#!/bin/sh\n")
    assert qemucmd.executable(str(wrapper)) == wrapper      # no ELF beside it: itself
    elf.parent.mkdir(parents=True)
    elf.write_bytes(b"\x7fELF")
    assert qemucmd.executable(str(wrapper)) == elf
    assert qemucmd.executable(str(elf)) == elf
