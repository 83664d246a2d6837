"""The root archive (tools/ondol/rootfs.py, `make rootfs`): busybox with its applet links,
/etc, mount points and the suite, byte-identical when rebuilt."""
import stat
import subprocess

import pytest

from ondol import linuxsuite, rootfs


def parse_newc(data):
    """{name: (mode, uid, gid, mtime, body)} and the member order, from a newc archive."""
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
            assert off == len(data)
            return out, order
        out[name] = (mode, uid, gid, mtime, body)
        order.append(name)


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    """Two independent builds of the archive."""
    a = linuxsuite.rootfs_archive(tmp_path_factory.mktemp("one"))
    b = linuxsuite.rootfs_archive(tmp_path_factory.mktemp("two"))
    return a, b


def test_rebuild_is_byte_identical(built):
    a, b = built
    assert a.read_bytes() == b.read_bytes()


def test_metadata_is_fixed(built):
    files, order = parse_newc(built[0].read_bytes())
    assert order == sorted(order)
    for name, (mode, uid, gid, mtime, _) in files.items():
        assert (uid, gid, mtime) == (0, 0, rootfs.EPOCH), name


def test_busybox_and_applet_links(built):
    files, _ = parse_newc(built[0].read_bytes())
    assert files["bin/busybox"][4][:4] == b"\x7fELF"
    for applet in ("bin/sh", "bin/ls", "bin/cat", "sbin/halt", "sbin/poweroff", "usr/bin/awk"):
        mode, *_, body = files[applet]
        assert stat.S_ISLNK(mode) and body == b"/bin/busybox", applet


def test_etc_and_mount_points(built):
    files, _ = parse_newc(built[0].read_bytes())
    assert b"PS1='ondol$ '" in files["etc/profile"][4]
    assert files["etc/passwd"][4].startswith(b"root:x:0:0:")
    assert files["etc/group"][4].startswith(b"root:x:0:")
    for d in ("dev", "proc", "sys", "tmp"):
        assert stat.S_ISDIR(files[d][0]), d
    assert files["tmp"][0] & 0o1777 == 0o1777


def test_suite_programs_are_complete_static_or_dynamic_as_listed(built):
    files, _ = parse_newc(built[0].read_bytes())
    for prog in linuxsuite.programs():
        key = f"suite/sh/{prog.name}.sh" if prog.kind == "sh" else f"suite/bin/{prog.name}"
        mode, *_, body = files[key]
        if prog.kind != "sh":
            assert mode & 0o111 and body[:4] == b"\x7fELF"
            assert b"ld-musl" not in body, prog.name
            assert (b"/lib64/ld-linux-x86-64.so.2" in body) == (prog.kind == "dyn"), prog.name
    for extra in ("suite/run", "suite/list", "suite/lib.sh"):
        assert extra in files
    assert {n[len("suite/elf/"):] for n in files if n.startswith("suite/elf/")} == set(linuxsuite.elf_corpus())


def test_debian_packages_for_dynamic_programs(built):
    """glibc's loader and libc, tcc with its headers and start files, make and hello
    (debroot.py), and none of what is left out (static libraries, gconv)."""
    files, _ = parse_newc(built[0].read_bytes())
    mode, *_, body = files["lib64/ld-linux-x86-64.so.2"]
    assert stat.S_ISLNK(mode) and body == b"/lib/x86_64-linux-gnu/ld-linux-x86-64.so.2"
    for path in ("lib/x86_64-linux-gnu/ld-linux-x86-64.so.2", "lib/x86_64-linux-gnu/libc.so.6",
                 "usr/bin/tcc", "usr/bin/make", "usr/bin/hello"):
        mode, *_, body = files[path]
        assert stat.S_ISREG(mode) and mode & 0o111 and body[:4] == b"\x7fELF", path
    for path in ("usr/include/stdio.h", "usr/include/x86_64-linux-gnu/asm/errno.h",
                 "usr/lib/x86_64-linux-gnu/crt1.o", "usr/lib/x86_64-linux-gnu/libc.so",
                 "usr/lib/x86_64-linux-gnu/tcc/libtcc1.a"):
        assert stat.S_ISREG(files[path][0]), path
    assert not [n for n in files if n.endswith("libc.a") or "/gconv/" in n]
    for path in ("usr/bin/pr", "usr/bin/col", "usr/bin/troff", "usr/bin/grotty",
                 "usr/lib/x86_64-linux-gnu/libstdc++.so.6.0.30"):     # SDET (docs/sdet.md)
        mode, *_, body = files[path]
        assert stat.S_ISREG(mode) and body[:4] == b"\x7fELF", path
    # about 14 MB with SDET's programs (libstdc++ and groff's are 3 MB of it)
    assert built[0].stat().st_size < 16 << 20


def test_tree_matches_archive(built):
    files, _ = parse_newc(built[0].read_bytes())
    tree = built[0].parent / "rootfs"
    on_disk = sorted(str(p.relative_to(tree)) for p in tree.rglob("*"))
    assert on_disk == sorted(files)
    assert (tree / "bin" / "sh").is_symlink()


def test_make_rootfs_target(tmp_path):
    """`make rootfs` runs tools/ondol/rootfs.py with plain python3 (no venv), which builds
    the archive into the build directory it is given."""
    dry = subprocess.run(["make", "-n", "--no-print-directory", "rootfs", f"BUILD={tmp_path}"],
                         cwd=rootfs.REPO, capture_output=True, text=True)
    assert f"python3 tools/ondol/rootfs.py --build {tmp_path}" in dry.stdout
    p = subprocess.run(["python3", "tools/ondol/rootfs.py", "--build", str(tmp_path)],
                       cwd=rootfs.REPO, capture_output=True, text=True)
    assert p.returncode == 0, p.stderr
    assert (tmp_path / "rootfs.cpio").read_bytes()[:6] == b"070701"
