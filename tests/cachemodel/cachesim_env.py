"""Paths and helpers shared by the cachesim tests (fixtures are in conftest.py)."""
import pathlib
import shutil
import subprocess

import pytest

from qemu_harness import qemucmd

REPO = pathlib.Path(__file__).resolve().parents[2]
PLUGIN_DIR = REPO / "tools" / "cacheplugin"
HERE = pathlib.Path(__file__).resolve().parent
QEMU = shutil.which(qemucmd.binary()) or "/usr/bin/qemu-system-x86_64"
# The executable behind QEMU (scripts/qemu.sh's QEMU 10 is a wrapper script), for `nm -D`.
QEMU_ELF = qemucmd.executable(QEMU)
PLUGIN_API = qemucmd.plugin_api(QEMU) if shutil.which(QEMU) else 1
CFLAGS = ["-std=c11", "-O2", "-Wall", "-Wextra", "-Werror"]


def run(cmd, **kw):
    """Runs a command, failing the test with its output if it fails."""
    p = subprocess.run(cmd, capture_output=True, text=True, **kw)
    if p.returncode != 0:
        pytest.fail(f"{' '.join(map(str, cmd))} failed ({p.returncode}):\n{p.stdout}\n{p.stderr}")
    return p


def model_sources():
    return sorted(p for p in PLUGIN_DIR.glob("*.c") if p.name != "plugin.c")


def qemu_guest_cmd(image, plugin_so, *plugin_args):
    """QEMU command line for the tiny test guest (guest/guest.S), deterministic, with the
    plugin loaded with `plugin_args` ("key=value" each)."""
    return qemucmd.bare_guest(image, qemu=QEMU, icount=True,
                              plugin=qemucmd.Plugin(plugin_so, plugin_args))
