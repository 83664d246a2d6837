"""The plugin builds with the project flags, matches the API symbols the QEMU in use exports
(QEMU 7.2: plugin API version 1; QEMU 10.0: version 3), and really loads into it."""
import json
import re
import subprocess

import pytest

from qemu_harness import qemucmd

from .cachesim_env import PLUGIN_API, PLUGIN_DIR, QEMU, QEMU_ELF, REPO, qemu_guest_cmd


def dynamic_symbols(path, *flags):
    out = subprocess.run(["nm", "-D", *flags, str(path)], capture_output=True, text=True,
                         check=True).stdout
    return {line.split()[-1] for line in out.splitlines() if line.strip()}


def declared_functions(api):
    """The functions qemu_plugin_api.h declares for API version `api` (preprocessed)."""
    header = subprocess.run(["gcc", "-E", "-P", f"-DCACHESIM_QEMU_API={api}",
                             str(PLUGIN_DIR / "qemu_plugin_api.h")], capture_output=True,
                            text=True, check=True).stdout
    return set(re.findall(r"\b(qemu_plugin_\w+)\s*\(", header))


def test_header_versions_differ_where_the_api_does():
    v1, v3 = declared_functions(1), declared_functions(3)
    assert v1 - v3 == {"qemu_plugin_register_vcpu_insn_exec_inline"}
    assert v3 - v1 == {"qemu_plugin_register_vcpu_insn_exec_inline_per_vcpu",
                       "qemu_plugin_scoreboard_new", "qemu_plugin_u64_get",
                       # the running vCPU learnt from its GS base (plugin.c)
                       "qemu_plugin_register_vcpu_init_cb", "qemu_plugin_get_registers",
                       "qemu_plugin_register_vcpu_tb_exec_cb", "qemu_plugin_read_register"}


def test_header_functions_exist_in_qemu(env_ok):
    exported = dynamic_symbols(QEMU_ELF, "--defined-only")
    declared = declared_functions(PLUGIN_API) - {"qemu_plugin_install"}  # the plugin's own
    assert len(declared) >= 15
    missing = sorted(declared - exported)
    assert not missing, f"declared but not exported by {QEMU}: {missing}"


def test_plugin_imports_resolve_and_exports_are_minimal(env_ok, plugin_so):
    exported = dynamic_symbols(QEMU_ELF, "--defined-only")
    wanted = {s for s in dynamic_symbols(plugin_so, "--undefined-only")
              if s.startswith("qemu_plugin_")}
    assert wanted and wanted <= exported
    # Hidden visibility: QEMU exports e.g. tlb_init and cache_init, which must not
    # interpose on the plugin's own functions.
    assert dynamic_symbols(plugin_so, "--defined-only") == {"qemu_plugin_install",
                                                            "qemu_plugin_version"}


def test_default_goal_is_left_alone(tmp_path):
    """Including the fragment before 'all' must not make cachesim the default target."""
    mk = tmp_path / "Makefile"
    mk.write_text(f"BUILD := {tmp_path}/b\ninclude tools/cacheplugin/plugin.mk\n"
                  "all:\n\t@echo top-level-all\n")
    p = subprocess.run(["make", "-s", "-f", str(mk)], cwd=REPO, capture_output=True, text=True)
    assert p.returncode == 0 and p.stdout.strip() == "top-level-all"


def test_loads_and_writes_windows(env_ok, plugin_so, guest_bin, tmp_path):
    out = tmp_path / "w.jsonl"
    p = subprocess.run(qemu_guest_cmd(guest_bin, plugin_so, f"out={out}"),
                       capture_output=True, text=True, timeout=120)
    assert p.returncode == 1, p.stderr     # isa-debug-exit(0) -> status 1
    lines = [json.loads(l) for l in out.read_text().splitlines()]
    assert [w["window"] for w in lines] == [1, 2, 3, 4, 5, 6]
    assert all(w["complete"] for w in lines)


@pytest.mark.parametrize("arg, message", [
    ("bogus=1", "unknown argument 'bogus=1'"),
    ("l1d_size=3000", "bad geometry"),
    ("preset=vax", "unknown preset"),
    ("out=/nonexistent-dir/x.jsonl", "cannot open"),
])
def test_bad_arguments_refuse_to_load(env_ok, plugin_so, guest_bin, arg, message):
    p = subprocess.run(qemu_guest_cmd(guest_bin, plugin_so, arg),
                       capture_output=True, text=True, timeout=60)
    assert p.returncode != 0
    assert message in p.stderr
    assert "qemu_plugin_install returned error" in p.stderr


@pytest.mark.skipif(PLUGIN_API == 1, reason="QEMU 7.2 passes callbacks the running vCPU")
def test_coherence_on_several_vcpus_needs_percpu_from_api_2(env_ok, plugin_so, guest_bin):
    """QEMU 10 under -icount tells callbacks the vCPU that translated a block: without
    percpu= (how the plugin learns the running one) the coherence model's per-vCPU replay
    would be wrong, so the plugin refuses it; with it, or on one vCPU, it loads."""
    def run(smp, *args):
        cmd = qemucmd.bare_guest(guest_bin, qemu=QEMU, icount=True, smp=smp,
                                 plugin=qemucmd.Plugin(plugin_so, ("coherence=die", *args)))
        return subprocess.run(cmd, capture_output=True, text=True, timeout=60)
    p = run(2)
    assert p.returncode != 0 and "coherence= on several vCPUs needs percpu=" in p.stderr
    assert run(1).returncode == 1
    assert run(2, "percpu=0x100000", "percpu_size=4096").returncode == 1, p.stderr


def test_percpu_and_its_size_go_together(env_ok, plugin_so, guest_bin):
    p = subprocess.run(qemu_guest_cmd(guest_bin, plugin_so, "percpu=0x100000"),
                       capture_output=True, text=True, timeout=60)
    assert p.returncode != 0 and "percpu= and percpu_size= go together" in p.stderr


def test_each_api_builds_apart_and_the_copy_follows_the_qemu(tmp_path):
    """plugin.mk: every API version in build/tools/cacheplugin/apiN, and cachesim.so the
    copy of the one asked for, checked on every make (it once stayed API 3 while a stamp
    said 1)."""
    def make(api):
        p = subprocess.run(["make", "-s", "-f", "tools/cacheplugin/plugin.mk",
                            f"BUILD={tmp_path}", f"CACHESIM_API={api}", "cacheplugin"],
                           cwd=REPO, capture_output=True, text=True)
        assert p.returncode == 0, p.stderr
        return (tmp_path / "tools" / "cachesim.so").read_bytes()
    one = make(1)
    three = make(3)
    assert one != three
    assert three == (tmp_path / "tools" / "cacheplugin" / "api3" / "cachesim.so").read_bytes()
    assert make(1) == one == (tmp_path / "tools" / "cacheplugin" / "api1" / "cachesim.so").read_bytes()
