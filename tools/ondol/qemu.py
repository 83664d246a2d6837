"""Finding QEMU and the command of one ondol boot; the flags themselves are written once,
in tools/qemucmd.py (shared with `make run`, the tests and the Linux peer)."""
import os
import shutil
import subprocess
from dataclasses import dataclass, field
from pathlib import Path

import qemucmd
from ondol import OndolError


@dataclass(frozen=True)
class Machine:
    """One boot of ondol: what to boot, with which options, and where COM2 goes.

    COM1 is QEMU's stdio, which the caller connects to the terminal or a log file; on a
    terminal (`interactive`) the QEMU monitor shares it (Ctrl-A C; Ctrl-A X quits), as in
    `make run`. `plugin` loads a TCG plugin (ondol.cache makes it).
    """
    kernel: Path
    initrd: Path
    results: Path
    options: dict[str, str] = field(default_factory=dict)
    icount: bool = True
    icount_sleep: bool = False        # icount with idle time in host time (qemucmd)
    plugin: qemucmd.Plugin | None = None
    interactive: bool = False
    memory: str = qemucmd.DEFAULT_MEMORY
    smp: int = 1
    extra: tuple[str, ...] = ()       # more QEMU flags, verbatim (e.g. a network device)


def find() -> str:
    """The QEMU binary: $ONDOL_QEMU if set, else qemu-system-x86_64 on PATH."""
    wanted = qemucmd.binary()
    found = shutil.which(wanted)
    if not found:
        raise OndolError(f"QEMU not found ({wanted}); run scripts/deps.sh or set ONDOL_QEMU")
    return found


QEMU10 = Path("build/qemu/bin/qemu-system-x86_64")   # scripts/qemu.sh's wrapper


def qemu10(top: Path) -> str:
    """QEMU 10.0.2 of this tree, unpacked by scripts/qemu.sh on first use (downloads six
    pinned packages once; idempotent and quiet afterwards)."""
    made = subprocess.run(["bash", "scripts/qemu.sh"], cwd=top, capture_output=True, text=True)
    if made.returncode != 0:
        raise OndolError(f"cannot unpack QEMU 10 (scripts/qemu.sh): "
                         f"{(made.stderr or made.stdout).strip()[-500:]}; "
                         "--qemu 7.2 runs the installed QEMU instead")
    return str(top / QEMU10)


def for_bench(top: Path, wanted: str | None, model_qemu: bool, icount: bool) -> str:
    """The QEMU a benchmark runs on: `wanted` ("7.2": the installed one, "10": QEMU 10)
    if given; else QEMU 10 for a model benchmark under icount (its fair round robin, the
    running vCPU learnt by the plugin) unless $ONDOL_QEMU names one; else find()."""
    if wanted == "10" or (wanted is None and model_qemu and icount
                          and not os.environ.get(qemucmd.BINARY_VARIABLE)):
        return qemu10(top)
    if wanted == "7.2":
        found = shutil.which(qemucmd.DEFAULT_BINARY)
        if not found:
            raise OndolError(f"QEMU not found ({qemucmd.DEFAULT_BINARY}); run scripts/deps.sh")
        return found
    return find()


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
    try:
        return qemucmd.append_line(options)
    except ValueError as exc:
        raise OndolError(str(exc)) from None


def command(binary: str, machine: Machine) -> list[str]:
    """The QEMU command booting `machine` with `binary`."""
    append = append_line(machine.options)
    return qemucmd.ondol(machine.kernel, machine.initrd, append,
                         rootfs=qemucmd.unix_rootfs(Path(machine.kernel).parent, append),
                         com1="mon:stdio" if machine.interactive else "stdio",
                         com2=f"file:{machine.results}", qemu=binary, memory=machine.memory,
                         smp=machine.smp, icount=machine.icount,
                         icount_sleep=machine.icount_sleep, plugin=machine.plugin,
                         extra=machine.extra)
