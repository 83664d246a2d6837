"""The root file system archive: Debian's busybox-static with its applet links, /etc,
mount points, the differential suite (tests/linux/) and the Debian packages of dynamic
programs (debroot.py), as `build/rootfs/` and `build/rootfs.cpio` (newc). The UNIX
server will unpack the archive into tmpfs at boot;
the Linux peer boots the very same archive (tools/ondol/linuxsuite.py), so runs compare
like for like.

Reproducible: names sorted, owner 0:0, one fixed mtime, inode numbers given in order, so
a rebuild is byte-identical (tests/linux/test_rootfs.py checks this).

Standard library only (the Makefile runs it with plain python3):
    python3 tools/ondol/rootfs.py [--build DIR]     # `make rootfs`
"""
from __future__ import annotations

import argparse
import functools
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
SUITE_SRC = REPO / "tests" / "linux"
PEER_SCRIPT = REPO / "tools" / "peer" / "build-initramfs.sh"
#: every member's mtime: 2024-01-01T00:00:00Z, as in the peer's initramfs
EPOCH = 1704067200
MOUNT_POINTS = ("dev", "proc", "sys", "tmp", "root")
ETC = {
    "etc/passwd": "root:x:0:0:root:/root:/bin/sh\n",
    "etc/group": "root:x:0:\n",
    "etc/profile": "export PATH=/bin:/sbin:/usr/bin:/usr/sbin\nexport HOME=/root\nPS1='ondol$ '\n",
    "etc/hostname": "ondol\n",
}
S_IFDIR, S_IFREG, S_IFLNK = 0o040000, 0o100000, 0o120000


class RootfsError(Exception):
    """The archive could not be built; str(e) says why in one line."""


@dataclass(frozen=True)
class Entry:
    """One archive member: a path without leading slash, its mode (type and permission
    bits) and its content (file data, or a symlink's target)."""
    path: str
    mode: int
    data: bytes = b""


@functools.lru_cache(maxsize=None)
def busybox_path() -> Path:
    """Debian's static busybox, fetched by the peer's build script (cached under
    build/peer/; the script runs once per process)."""
    p = subprocess.run([str(PEER_SCRIPT)], capture_output=True, text=True)
    if p.returncode != 0:
        raise RootfsError(f"peer build failed: {(p.stderr.strip().splitlines() or ['?'])[-1]}")
    path = Path(dict(ln.split("=", 1) for ln in p.stdout.splitlines() if "=" in ln)["busybox"])
    if not path.is_file():
        raise RootfsError(f"no busybox at {path}")
    return path


def applet_paths(busybox: Path) -> list[str]:
    """Where Debian's busybox installs its applets (`busybox --list-full`): bin/sh,
    usr/bin/awk, ..."""
    out = subprocess.run([str(busybox), "--list-full"], capture_output=True, text=True,
                         check=True).stdout
    return sorted(set(ln.strip() for ln in out.splitlines() if ln.strip()) - {"bin/busybox"})


def base_entries(busybox: Path) -> list[Entry]:
    """busybox, its applet links (absolute, to /bin/busybox), /etc and the mount points."""
    entries = [Entry("bin/busybox", S_IFREG | 0o755, busybox.read_bytes())]
    entries += [Entry(p, S_IFLNK | 0o777, b"/bin/busybox") for p in applet_paths(busybox)]
    entries += [Entry(p, S_IFREG | 0o644, text.encode()) for p, text in ETC.items()]
    entries += [Entry(d, S_IFDIR | (0o1777 if d == "tmp" else 0o755)) for d in MOUNT_POINTS]
    return entries


def with_parents(entries: list[Entry]) -> list[Entry]:
    """ENTRIES plus a 0755 directory for every parent not listed, sorted by path."""
    have = {e.path for e in entries}
    extra = {}
    for e in entries:
        parts = e.path.split("/")[:-1]
        for i in range(1, len(parts) + 1):
            d = "/".join(parts[:i])
            if d not in have:
                extra[d] = Entry(d, S_IFDIR | 0o755)
    return sorted([*entries, *extra.values()], key=lambda e: e.path)


def newc(entries: list[Entry]) -> bytes:
    """A cpio archive in the newc format ("070701" headers, 4-byte padding, TRAILER!!!)."""
    out = bytearray()

    def member(ino: int, path: str, mode: int, data: bytes) -> None:
        name = path.encode() + b"\0"
        nlink = 2 if mode & 0o170000 == S_IFDIR else 1
        fields = (ino, mode, 0, 0, nlink, EPOCH, len(data), 0, 0, 0, 0, len(name), 0)
        out.extend(b"070701" + b"".join(b"%08X" % f for f in fields) + name)
        out.extend(b"\0" * (-len(out) % 4))
        out.extend(data)
        out.extend(b"\0" * (-len(out) % 4))

    for ino, e in enumerate(entries, 1):
        member(ino, e.path, e.mode, e.data)
    member(0, "TRAILER!!!", 0, b"")
    return bytes(out)


def write_tree(entries: list[Entry], root: Path) -> None:
    """Materialise ENTRIES under ROOT (replaced), for looking at and for `make run`."""
    if root.exists():
        shutil.rmtree(root)
    root.mkdir(parents=True)
    for e in entries:
        p = root / e.path
        kind = e.mode & 0o170000
        if kind == S_IFDIR:
            p.mkdir(exist_ok=True)
        elif kind == S_IFLNK:
            p.symlink_to(e.data.decode())
        else:
            p.write_bytes(e.data)
        if kind != S_IFLNK:
            p.chmod(e.mode & 0o7777)


def assemble(extra: list[Entry], build: Path, busybox: Path | None = None) -> Path:
    """Build BUILD/rootfs/ and BUILD/rootfs.cpio from the base system plus EXTRA (the
    suite's files); return the archive's path."""
    entries = with_parents(base_entries(busybox or busybox_path()) + extra)
    archive = build / "rootfs.cpio"
    build.mkdir(parents=True, exist_ok=True)
    tmp = archive.with_suffix(".cpio.tmp")
    tmp.write_bytes(newc(entries))
    tmp.replace(archive)
    write_tree(entries, build / "rootfs")
    return archive


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description="Build build/rootfs/ and build/rootfs.cpio.")
    parser.add_argument("--build", default=str(REPO / "build"), help="output directory")
    args = parser.parse_args(argv)
    import linuxsuite  # tools/ondol/ is sys.path[0]: the suite's files go in the archive
    try:
        archive = linuxsuite.rootfs_archive(Path(args.build))
    except linuxsuite.SuiteError as e:
        print(f"rootfs: {e}", file=sys.stderr)
        return 1
    print(archive)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
