"""QEMU command construction and the cache plugin glue."""
import json

import pytest

import qemucmd
from ondol import OndolError, cache, qemu

IMAGES = dict(kernel="k.bin", initrd="fs.tar", results="out.jsonl")


def test_command_has_the_documented_machine_and_serial_ports():
    cmd = qemu.command("qemu", qemu.Machine(**IMAGES, options={"hz": "100", "run": "a,b"},
                                             icount=False))
    assert cmd[:5] == ["qemu", "-machine", "pc", "-cpu", "max"]
    assert cmd[cmd.index("-append") + 1] == "hz=100 run=a,b"
    serials = [cmd[i + 1] for i, a in enumerate(cmd) if a == "-serial"]
    assert serials == ["stdio", "file:out.jsonl"]
    assert "-icount" not in cmd and "-plugin" not in cmd


def test_icount_and_plugin_flags_are_added():
    plugin = qemucmd.Plugin("m.so", ("a=1",), "p.log")
    cmd = qemu.command("qemu", qemu.Machine(**IMAGES, icount=True, plugin=plugin,
                                             interactive=True))
    assert cmd[cmd.index("-icount") + 1] == "shift=0,sleep=off"
    assert "-seed" in cmd and "-rtc" in cmd
    assert cmd[-6:] == ["-plugin", "m.so,a=1", "-d", "plugin", "-D", "p.log"]
    assert cmd[cmd.index("-serial") + 1] == "mon:stdio"


def test_options_with_spaces_are_refused():
    with pytest.raises(OndolError, match="no spaces"):
        qemu.append_line({"run": "a b"})


def test_missing_qemu_is_an_error(monkeypatch):
    monkeypatch.setenv("ONDOL_QEMU", "/nonexistent/qemu")
    with pytest.raises(OndolError, match=r"QEMU not found \(/nonexistent/qemu\)"):
        qemu.find()


def test_version_of_the_fake(fake_qemu):
    assert qemu.version(qemu.find()) == "7.2.22 (fake)"


@pytest.mark.parametrize("spec, args", [
    ("ppro", ["preset=ppro"]),
    ("l2=off, ppro", ["preset=ppro", "l2=off"]),
    ("l1d_size=32768,l1d_assoc=8", ["l1d_size=32768", "l1d_assoc=8"]),
])
def test_cache_spec_parsing(spec, args):
    assert cache.parse_spec(spec) == args


@pytest.mark.parametrize("spec", ["", "ppro,modern", "out=x", "=3"])
def test_bad_cache_specs(spec):
    with pytest.raises(OndolError, match="bad cache spec"):
        cache.parse_spec(spec)


def test_cache_plugin(tmp_path):
    with pytest.raises(OndolError, match="cache plugin not built"):
        cache.plugin("ppro", tmp_path, tmp_path / "o", tmp_path / "l")
    so = tmp_path / cache.PLUGIN
    so.parent.mkdir(parents=True)
    so.write_bytes(b"")
    plugin = cache.plugin("ppro,l2=off", tmp_path, tmp_path / "o,1", tmp_path / "l")
    assert plugin.flags() == ["-plugin", f"{so},preset=ppro,l2=off,out={tmp_path}/o,,1",
                              "-d", "plugin", "-D", f"{tmp_path}/l"]


def test_read_windows_accepts_lines_or_an_array(tmp_path):
    path = tmp_path / "w.json"
    assert cache.read_windows(path) == []
    path.write_text('{"window": 1}\n\n{"window": 2}\n')
    assert cache.read_windows(path) == [{"window": 1}, {"window": 2}]
    path.write_text(json.dumps([{"window": 1}]))
    assert cache.read_windows(path) == [{"window": 1}]
    path.write_text('{"window": 1}\n{oops\n')
    with pytest.raises(OndolError, match="not JSON.*line 2"):
        cache.read_windows(path)


def test_merge_matches_windows_to_rows_by_shared_key_fields():
    rows = [{"test": "a", "median": 1}, {"test": "b", "median": 2}]
    windows = [{"test": "a", "l1i_misses": 5}, {"test": "a", "l1i_misses": 6},
               {"test": "c", "l1i_misses": 7}, {"other": 1}]
    unmatched = cache.merge(rows, windows, ("test",))
    assert rows[0]["cache"] == [windows[0], windows[1]]
    assert "cache" not in rows[1]
    assert unmatched == [windows[2], windows[3]]


def test_the_qemu_of_a_benchmark(monkeypatch, tmp_path):
    """QEMU 10 for a model benchmark under icount unless --qemu or ONDOL_QEMU chooses;
    --qemu 10 for any; otherwise the default."""
    monkeypatch.setattr(qemu, "qemu10", lambda top: "q10")
    monkeypatch.setattr(qemu, "find", lambda: "default")
    monkeypatch.setattr(qemu.shutil, "which", lambda name: f"/usr/bin/{name}")
    monkeypatch.delenv("ONDOL_QEMU", raising=False)
    assert qemu.for_bench(tmp_path, None, model_qemu=True, icount=True) == "q10"
    assert qemu.for_bench(tmp_path, None, model_qemu=True, icount=False) == "default"
    assert qemu.for_bench(tmp_path, None, model_qemu=False, icount=True) == "default"
    assert qemu.for_bench(tmp_path, "10", model_qemu=False, icount=False) == "q10"
    assert qemu.for_bench(tmp_path, "7.2", model_qemu=True, icount=True) == \
        "/usr/bin/qemu-system-x86_64"
    monkeypatch.setenv("ONDOL_QEMU", "/opt/qemu")
    assert qemu.for_bench(tmp_path, None, model_qemu=True, icount=True) == "default"


def test_percpu_args_locate_cpus_in_the_kernel(tmp_path):
    """cpus[] of build/ondol.elf and one entry's size (the array's over MAX_CPUS)."""
    (tmp_path / "kernel" / "arch" / "x86_64" / "include").mkdir(parents=True)
    (tmp_path / "kernel" / "arch" / "x86_64" / "include" / "cpu.h").write_text(
        "#define MAX_CPUS 16\n")
    (tmp_path / "build").mkdir()
    src = tmp_path / "k.c"
    src.write_text("char cpus[16 * 96] = {1};\nchar other[8] = {1};\n")
    import subprocess
    subprocess.run(["gcc", "-c", "-o", str(tmp_path / "build" / "ondol.elf"), str(src)],
                   check=True)
    base, size = cache.percpu_args(tmp_path)
    assert base.startswith("percpu=0x") and size == "percpu_size=96"


def test_kernel_symbol_names_a_physical_address_in_the_image(tmp_path, monkeypatch):
    """Physical + KERNEL_BASE inside a sized symbol: its name, with the offset past its
    start; outside every one (a frame of the allocator): None."""
    (tmp_path / "build").mkdir()
    (tmp_path / "build" / "ondol.elf").write_bytes(b"")
    base = cache.KERNEL_BASE
    monkeypatch.setattr(cache, "_sized_symbols", lambda elf, mtime: (
        (base + 0x100000, 0x40, "ipi_stats"), (base + 0x100040, 0x1000, "cpus")))
    assert cache.kernel_symbol(tmp_path, 0x100000) == "ipi_stats"
    assert cache.kernel_symbol(tmp_path, 0x100048) == "cpus+0x8"
    assert cache.kernel_symbol(tmp_path, 0x101040) is None
    assert cache.kernel_symbol(tmp_path / "nowhere", 0x100000) is None
