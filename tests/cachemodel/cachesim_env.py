"""Paths and helpers shared by the cachesim tests (fixtures are in conftest.py)."""
import pathlib
import shutil
import subprocess

import pytest

REPO = pathlib.Path(__file__).resolve().parents[2]
PLUGIN_DIR = REPO / "tools" / "cacheplugin"
HERE = pathlib.Path(__file__).resolve().parent
QEMU = shutil.which("qemu-system-x86_64") or "/usr/bin/qemu-system-x86_64"
CFLAGS = ["-std=c11", "-O2", "-Wall", "-Wextra", "-Werror"]


def run(cmd, **kw):
    """Runs a command, failing the test with its output if it fails."""
    p = subprocess.run(cmd, capture_output=True, text=True, **kw)
    if p.returncode != 0:
        pytest.fail(f"{' '.join(map(str, cmd))} failed ({p.returncode}):\n{p.stdout}\n{p.stderr}")
    return p


def model_sources():
    return sorted(p for p in PLUGIN_DIR.glob("*.c") if p.name != "plugin.c")


def qemu_guest_cmd(image, plugin_arg, deterministic=True):
    """QEMU command line for the tiny test guest (guest/guest.S)."""
    cmd = [QEMU, "-machine", "pc", "-cpu", "max", "-m", "64M", "-smp", "1",
           "-display", "none", "-no-reboot", "-nodefaults",
           "-device", "isa-debug-exit,iobase=0xf4,iosize=0x04",
           "-kernel", str(image), "-plugin", plugin_arg]
    if deterministic:
        cmd += ["-icount", "shift=0,sleep=off", "-seed", "1",
                "-rtc", "base=2024-01-01T00:00:00,clock=vm"]
    return cmd
