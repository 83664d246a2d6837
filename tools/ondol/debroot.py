"""Debian packages in the root archive (docs/unix.md, "Dynamic programs"): glibc's loader
and libraries (libc6), tcc with the headers and start files it compiles against (libc6-dev,
linux-libc-dev), make, GNU hello as a small dynamically linked Debian program, and the SDET workload's
programs busybox lacks (pr, col, nroff; docs/sdet.md).

Each package is fetched with `apt-get download` into build/debs/ (the newest cached .deb
of a package is used again; nothing needs root) and unpacked with `dpkg-deb -x`. Only the
files KEEP names go into the archive: whole, the packages are about 40 MB unpacked (static
libraries, gconv modules, the kernel's uapi headers), the archive gets about 8 MB. What is
left out and matters: the uapi headers beyond those <errno.h>, <limits.h> and <signal.h>
include, and libc6-dev's static libraries (tcc links dynamically).

    entries()          # [rootfs.Entry] for the archive, sorted by path
"""
from __future__ import annotations

import fcntl
import fnmatch
import functools
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

if __package__:
    from . import rootfs
else:  # run as a script: tools/ondol/ is sys.path[0]
    import rootfs

REPO = Path(__file__).resolve().parents[2]
CACHE = REPO / "build" / "debs"
MULTI = "x86_64-linux-gnu"
#: package -> the paths (fnmatch patterns, "*" crosses "/") that go into the archive
KEEP = {
    "libc6": ["lib64/ld-linux-x86-64.so.2", f"lib/{MULTI}/ld-linux-x86-64.so.2",
              *(f"lib/{MULTI}/{lib}" for lib in ("libc.so.6", "libm.so.6", "libdl.so.2",
                                                  "libpthread.so.0", "librt.so.1"))],
    "libc6-dev": ["usr/include/*",
                  *(f"usr/lib/{MULTI}/{f}" for f in ("crt1.o", "crti.o", "crtn.o", "Scrt1.o",
                                                      "libc.so", "libc_nonshared.a"))],
    "linux-libc-dev": [f"usr/include/{MULTI}/asm/*", "usr/include/asm-generic/*",
                       *(f"usr/include/linux/{h}" for h in ("errno.h", "limits.h", "param.h",
                                                            "types.h", "posix_types.h",
                                                            "stddef.h", "ioctl.h"))],
    "tcc": ["usr/bin/tcc", f"usr/lib/{MULTI}/tcc/libtcc1.a", f"usr/lib/{MULTI}/tcc/include/*"],
    "make": ["usr/bin/make"],
    "hello": ["usr/bin/hello"],
    # SDET's commands that busybox lacks (docs/sdet.md): pr, col, nroff (groff's troff and
    # grotty are C++: libstdc++ and libgcc_s) with the macros and the ASCII device.
    "coreutils": ["usr/bin/pr"],
    "bsdextrautils": ["usr/bin/col"],
    "groff-base": [*(f"usr/bin/{b}" for b in ("nroff", "groff", "troff", "grotty")),
                   "etc/groff/*", "usr/share/groff/current", "usr/share/groff/site-tmac",
                   "usr/share/groff/1.22.4/tmac/*", "usr/share/groff/1.22.4/font/devascii/*"],
    "libstdc++6": [f"usr/lib/{MULTI}/libstdc++.so.6*"],
    "libgcc-s1": [f"lib/{MULTI}/libgcc_s.so.1"],
}


# Pauses between download tries (seconds): the archive is sometimes unreachable for a
# while, and a root file system that waits five minutes beats a test run that fails.
RETRY_PAUSES = (0, 10, 20, 40, 60, 60, 60, 60)


def _download(pkg: str, dest: Path) -> None:
    """apt-get download PKG into DEST; on failure `apt-get update` and try again."""
    cmd = ["apt-get", "download", "-q", "-o", "APT::Sandbox::User=root", pkg]
    for attempt, pause in enumerate(RETRY_PAUSES):
        if attempt:
            print(f"ondol: apt-get download {pkg} failed; again in {pause} s", file=sys.stderr)
            time.sleep(pause)
            subprocess.run(["apt-get", "update", "-q"], capture_output=True)
        p = subprocess.run(cmd, cwd=dest, capture_output=True, text=True)
        if p.returncode == 0:
            return
    err = (p.stderr.strip().splitlines() or ["?"])[-1]
    raise rootfs.RootfsError(f"apt-get download {pkg} failed: {err}")


def deb(pkg: str) -> Path:
    """PKG's .deb in build/debs/: the newest cached one, else downloaded."""
    CACHE.mkdir(parents=True, exist_ok=True)
    cached = sorted(CACHE.glob(f"{pkg}_*_amd64.deb"))
    if cached:
        return cached[-1]
    with tempfile.TemporaryDirectory(dir=CACHE) as tmp:
        _download(pkg, Path(tmp))
        got = sorted(Path(tmp).glob(f"{pkg}_*.deb"))
        if not got:
            raise rootfs.RootfsError(f"apt-get download {pkg} gave no .deb")
        return Path(shutil.move(str(got[0]), CACHE / got[0].name))


def _unpacked(path: Path) -> Path:
    """The .deb at PATH unpacked (dpkg-deb -x) next to it, once."""
    root = path.with_suffix(".root")
    if not root.is_dir():
        tmp = Path(tempfile.mkdtemp(dir=path.parent))
        p = subprocess.run(["dpkg-deb", "-x", str(path), str(tmp)], capture_output=True, text=True)
        if p.returncode != 0:
            shutil.rmtree(tmp)
            raise rootfs.RootfsError(f"dpkg-deb -x {path.name} failed: {p.stderr.strip()}")
        tmp.rename(root)
    return root


def _entry(root: Path, rel: str) -> rootfs.Entry | None:
    """The archive member for ROOT/REL (a file or a symlink; directories come from
    rootfs.with_parents)."""
    p = root / rel
    if p.is_symlink():
        return rootfs.Entry(rel, rootfs.S_IFLNK | 0o777, os.readlink(p).encode())
    if p.is_file():
        return rootfs.Entry(rel, rootfs.S_IFREG | (p.stat().st_mode & 0o755), p.read_bytes())
    return None


def package_entries(pkg: str, keep: list[str] | None = None) -> list[rootfs.Entry]:
    """The kept files of PKG (KEEP's patterns, or `keep`), sorted; an error when a pattern
    keeps nothing."""
    root = _unpacked(deb(pkg))
    paths = sorted(str(p.relative_to(root)) for p in root.rglob("*"))
    out = []
    for pattern in keep or KEEP[pkg]:
        hits = [e for e in (_entry(root, r) for r in paths if fnmatch.fnmatchcase(r, pattern)) if e]
        if not hits:
            raise rootfs.RootfsError(f"{pkg}: nothing matches {pattern}")
        out += hits
    return sorted({e.path: e for e in out}.values(), key=lambda e: e.path)


@functools.lru_cache(maxsize=None)
def entries() -> tuple:
    """Every package's kept files, sorted by path (once per process). A lock on
    build/debs/.lock serialises processes that fill the cache (pytest-xdist workers)."""
    CACHE.mkdir(parents=True, exist_ok=True)
    with open(CACHE / ".lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        out = [e for pkg in KEEP for e in package_entries(pkg)]
    return tuple(sorted(out, key=lambda e: e.path))
