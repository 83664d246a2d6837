"""The UNIX server's file system unpacks the real root archive (tools/ondol/rootfs.py:
Debian's busybox, its applet links, /etc, /tmp): the hosted test_cpio, given the archive
in ONDOL_ROOTFS, unpacks it into tmpfs, looks busybox and its links up through the
system calls, and fuzzes the archive."""
import os
import re
import subprocess
from pathlib import Path

from ondol import rootfs

ROOT = Path(__file__).resolve().parent.parent.parent


def test_unpack_real_rootfs(tmp_path):
    archive = rootfs.assemble([], tmp_path)
    binary = ROOT / "build" / "unix" / "host" / "test_cpio"
    r = subprocess.run([str(binary)], env={**os.environ, "ONDOL_ROOTFS": str(archive)},
                       capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stdout + r.stderr
    m = re.search(r"rootfs: /bin/busybox (\d+) bytes, (\d+) applet links in /bin", r.stdout)
    assert m, r.stdout
    assert int(m.group(1)) == (tmp_path / "rootfs" / "bin" / "busybox").stat().st_size
    assert int(m.group(2)) == sum(1 for p in (tmp_path / "rootfs" / "bin").iterdir()
                                  if p.is_symlink() and os.readlink(p) == "/bin/busybox")
