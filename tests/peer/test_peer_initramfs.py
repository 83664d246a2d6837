"""build-initramfs.sh: kernel, busybox, programs and a reproducible newc cpio."""
import hashlib
import re
import stat

import pytest

EPOCH = 1704067200  # the fixed mtime the script stamps on every member
PROGS = ("pingpong_pipe", "pingpong_futex", "null_syscall", "vm_ops")


def parse_newc(data):
    """Minimal reader for the cpio 'newc' format: {name: (mode, uid, gid, mtime, body)}."""
    out, order, off = {}, [], 0
    while True:
        hdr = data[off:off + 110]
        assert hdr[:6] == b"070701", f"bad newc magic at {off}"
        f = [int(hdr[6 + 8 * i:14 + 8 * i], 16) for i in range(13)]
        mode, uid, gid, mtime, size, namesize = f[1], f[2], f[3], f[5], f[6], f[11]
        name = data[off + 110:off + 110 + namesize - 1].decode()
        off = (off + 110 + namesize + 3) & ~3
        body = data[off:off + size]
        off = (off + size + 3) & ~3
        if name == "TRAILER!!!":
            return out, order
        out[name] = (mode, uid, gid, mtime, body)
        order.append(name)


@pytest.fixture(scope="module")
def archive(peer_build):
    return parse_newc(peer_build.initramfs.read_bytes())


def test_contents(archive, peer_build):
    files, order = archive
    init = files["init"]
    assert stat.S_ISREG(init[0]) and init[0] & 0o111
    assert init[4].startswith(b"#!/bin/sh\n")
    for prog in PROGS:
        mode, *_, body = files[f"bin/{prog}"]
        assert stat.S_ISREG(mode) and mode & 0o111
        assert body == (peer_build.bin_dir / prog).read_bytes()
        assert body[:4] == b"\x7fELF"
    assert files["bin/busybox"][4][:4] == b"\x7fELF"
    for applet in ("sh", "mount", "poweroff", "stty", "cat"):
        mode, *_, body = files[f"bin/{applet}"]
        assert stat.S_ISLNK(mode) and body == b"busybox"
    for d in ("dev", "proc", "sys", "bin"):
        assert stat.S_ISDIR(files[d][0])


def test_reproducible_metadata(archive):
    files, order = archive
    assert order == sorted(order)
    for name, (mode, uid, gid, mtime, _) in files.items():
        assert (uid, gid, mtime) == (0, 0, EPOCH), name


def test_programs_are_static(peer_build):
    for prog in PROGS:
        elf = (peer_build.bin_dir / prog).read_bytes()
        assert b"/lib64/ld-linux" not in elf, f"{prog} is dynamically linked"


def test_kernel_image(peer_build):
    assert re.fullmatch(r"\d+\.\d+\.\d+-\d+-amd64", peer_build.kernel_version)
    img = peer_build.vmlinuz.read_bytes()
    assert img[0x202:0x206] == b"HdrS"  # x86 boot protocol header: a bzImage
    # The header's kernel_version field points (offset - 0x200) at the
    # uname release string, which must match the one the build reported.
    ptr = int.from_bytes(img[0x20E:0x210], "little") + 0x200
    release = img[ptr:img.index(b"\0", ptr)].split(b" ")[0].decode()
    assert release == peer_build.kernel_version


def test_rebuild_is_identical(peer, peer_build):
    before = hashlib.sha256(peer_build.initramfs.read_bytes()).hexdigest()
    again = peer.build_peer()
    assert again == peer_build
    assert hashlib.sha256(again.initramfs.read_bytes()).hexdigest() == before
