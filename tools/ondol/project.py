"""The repository the CLI works on: where it is, how to build it, what it is at."""
import os
import platform
import shutil
import subprocess
from pathlib import Path

from ondol import OndolError


def root() -> Path:
    """The repository root; ONDOL_ROOT overrides it (tests use a scratch tree)."""
    override = os.environ.get("ONDOL_ROOT")
    return Path(override) if override else Path(__file__).resolve().parents[2]


def kernel_images(top: Path) -> tuple[Path, Path]:
    """The kernel and boot archive QEMU boots; an error if either is missing."""
    kernel, initrd = top / "build" / "ondol.bin", top / "build" / "bootfs.tar"
    for path in (kernel, initrd):
        if not path.is_file():
            raise OndolError(f"kernel not built: {display(path)} is missing (run make)")
    return kernel, initrd


def build(top: Path, log: Path) -> None:
    """Run make quietly; its output goes to `log`, a failure becomes one line."""
    if not shutil.which("make"):
        raise OndolError("make not found; install build-essential")
    log.parent.mkdir(parents=True, exist_ok=True)
    with open(log, "wb") as out:
        status = subprocess.run(["make", "-s"], cwd=top, stdin=subprocess.DEVNULL,
                                stdout=out, stderr=subprocess.STDOUT).returncode
    if status != 0:
        raise OndolError(f"make failed: {_first_error(log)} (log: {display(log)})")


def _first_error(log: Path) -> str:
    """The line of make's output most likely to say what went wrong."""
    lines = [l.strip() for l in log.read_text(errors="replace").splitlines() if l.strip()]
    for line in lines:
        if "error" in line.lower():
            return line
    return lines[-1] if lines else "no output"


def commit(top: Path) -> str:
    """`git rev-parse HEAD`, with -dirty if the work tree has changes; "unknown" outside git."""
    def git(*args: str) -> subprocess.CompletedProcess:
        return subprocess.run(["git", "-C", str(top), *args], capture_output=True, text=True)
    try:
        head = git("rev-parse", "HEAD")
        status = git("status", "--porcelain")
    except FileNotFoundError:
        return "unknown"
    if head.returncode != 0:
        return "unknown"
    dirty = "-dirty" if status.returncode == 0 and status.stdout.strip() else ""
    return head.stdout.strip() + dirty


def host() -> dict:
    return {"name": platform.node(), "platform": platform.platform(),
            "cpus": os.cpu_count(), "python": platform.python_version()}


def display(path: Path) -> str:
    """A path as the user should see it: relative to the working directory when inside it."""
    try:
        return str(Path(path).resolve().relative_to(Path.cwd()))
    except ValueError:
        return str(path)
