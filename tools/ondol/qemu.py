"""Finding QEMU and building its command line: the one place that knows QEMU's flags."""
import os
import shutil
import subprocess
from dataclasses import dataclass, field
from pathlib import Path

from ondol import OndolError

DEFAULT_BINARY = "qemu-system-x86_64"

# Deterministic mode: one instruction per virtual ns (so the TSC counts instructions), no
# idle warping by host time, and fixed seed and clock so repeated boots are byte-identical.
ICOUNT_FLAGS = ["-icount", "shift=0,sleep=off", "-seed", "1",
                "-rtc", "base=2024-01-01T00:00:00,clock=vm"]


@dataclass(frozen=True)
class Machine:
    """One boot of ondol: what to boot, with which options, and where COM2 goes.

    COM1 is QEMU's stdio, which the caller connects to the terminal or a log file; on a
    terminal (`interactive`) the QEMU monitor shares it (Ctrl-A C; Ctrl-A X quits), as in
    `make run`. `plugin` holds extra QEMU arguments that load a TCG plugin (ondol.cache).
    """
    kernel: Path
    initrd: Path
    results: Path
    options: dict[str, str] = field(default_factory=dict)
    icount: bool = True
    plugin: tuple[str, ...] = ()
    interactive: bool = False
    memory: str = "256M"
    smp: int = 1


def find() -> str:
    """The QEMU binary: $ONDOL_QEMU if set, else qemu-system-x86_64 on PATH."""
    wanted = os.environ.get("ONDOL_QEMU") or DEFAULT_BINARY
    found = shutil.which(wanted)
    if not found:
        raise OndolError(f"QEMU not found ({wanted}); run scripts/deps.sh or set ONDOL_QEMU")
    return found


def version(binary: str) -> str:
    """The version string, e.g. "7.2.22 (Debian 1:7.2+dfsg-7+deb12u18+b3)"."""
    try:
        out = subprocess.run([binary, "--version"], capture_output=True, text=True,
                             timeout=30)
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise OndolError(f"cannot run {binary} --version: {exc}") from None
    first = out.stdout.strip().splitlines()[0] if out.stdout.strip() else ""
    if out.returncode != 0 or not first:
        raise OndolError(f"{binary} --version failed (status {out.returncode})")
    return first.removeprefix("QEMU emulator version ").strip()


def append_line(options: dict[str, str]) -> str:
    """Kernel options as the -append string; values may not contain spaces."""
    for key, value in options.items():
        if not key or " " in key + value or "=" in key:
            raise OndolError(f"bad kernel option {key}={value!r}: no spaces allowed "
                             "(commas stand for spaces in run=)")
    return " ".join(f"{k}={v}" for k, v in options.items())


def command(binary: str, machine: Machine) -> list[str]:
    cmd = [binary, "-machine", "pc", "-cpu", "max", "-m", machine.memory,
           "-smp", str(machine.smp), "-display", "none", "-no-reboot",
           "-kernel", str(machine.kernel), "-initrd", str(machine.initrd),
           "-append", append_line(machine.options),
           "-serial", "mon:stdio" if machine.interactive else "stdio",
           "-serial", f"file:{machine.results}"]
    if machine.icount:
        cmd += ICOUNT_FLAGS
    return cmd + list(machine.plugin)
