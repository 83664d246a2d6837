"""End-to-end checks of the QEMU glue with the tiny multiboot guest of guest/guest.S.

The guest follows ondol's conventions (kernel text at 0xFFFFFFFF80000000 + physical,
markers at 0xFFFFFFFFC0000000) and runs six windows whose counts follow from the code:
see the comments in guest.S. Expected values below are derived from that code and the
cache geometry, not copied from a run."""
import json
import subprocess

import pytest

from .cachesim_env import qemu_guest_cmd

KARR_PASSES, KARR_LINES = 8, 4096 // 32
BIG_PASSES, BIG_LINES32 = 2, 512 * 1024 // 32
NPAGES = 20
USER_PASS_INSNS = 2 + NPAGES * 4 + 1          # mov, mov, 20 x (load, add, dec, jnz), ret


def run_guest(plugin_so, guest_bin, tmp_path, *args):
    out = tmp_path / "windows.jsonl"
    p = subprocess.run(qemu_guest_cmd(guest_bin, plugin_so, f"out={out}", *args),
                       capture_output=True, text=True, timeout=120)
    assert p.returncode == 1, p.stderr
    text = out.read_text()
    return text, {w["window"]: w for w in map(json.loads, text.splitlines())}


@pytest.fixture(scope="module")
def ppro(env_ok, plugin_so, guest_bin, tmp_path_factory):
    return run_guest(plugin_so, guest_bin, tmp_path_factory.mktemp("ppro"))[1]


@pytest.fixture(scope="module")
def modern(env_ok, plugin_so, guest_bin, tmp_path_factory):
    return run_guest(plugin_so, guest_bin, tmp_path_factory.mktemp("modern"),
                     "preset=modern")[1]


def task(window, name):
    [t] = [t for t in window["tasks"] if t["name"] == name]
    return t


def test_small_array_compulsory_misses_only(ppro, modern):
    k = ppro[1]["domains"]["kernel"]
    # lea/mov, 8 x (mov, mov, 128 x 4, dec, jnz), and the end marker's load instruction
    assert k["instructions"] == 2 + KARR_PASSES * (2 + KARR_LINES * 4 + 2) + 1
    assert k["loads"] == KARR_PASSES * KARR_LINES   # marker loads are not counted
    assert k["l1d_accesses"] == KARR_PASSES * KARR_LINES
    assert k["l1d_misses"] == KARR_LINES            # 32-byte lines
    assert modern[1]["domains"]["kernel"]["l1d_misses"] == 4096 // 64
    assert ppro[1]["domains"]["user"]["instructions"] == 0


def test_large_array_misses_every_line_every_pass(ppro, modern):
    k = ppro[2]["domains"]["kernel"]
    assert k["instructions"] == 2 + BIG_PASSES * (2 + BIG_LINES32 * 4 + 2) + 1
    assert k["l1d_misses"] == BIG_PASSES * BIG_LINES32
    # 512 KiB through a 256 KiB LRU L2: every line misses in both passes (plus at most a
    # few instruction lines of the new loop code).
    assert BIG_PASSES * BIG_LINES32 <= k["l2_misses"] <= BIG_PASSES * BIG_LINES32 + 4
    # The modern L2 (1 MiB) holds the array: only the first pass misses.
    m = modern[2]["domains"]["kernel"]
    lines64 = 512 * 1024 // 64
    assert m["l1d_misses"] == BIG_PASSES * lines64
    assert lines64 <= m["l2_misses"] <= lines64 + 4


def test_user_task_attribution_and_tlb_reuse(ppro):
    w = ppro[3]
    ut = task(w, "ut")
    assert ut["kind"] == "user"
    assert ut["instructions"] == 3 * USER_PASS_INSNS
    assert w["domains"]["user"]["instructions"] == 3 * USER_PASS_INSNS
    assert ut["dtlb_misses"] == NPAGES               # fits the DTLB: first pass only
    # 20 lines 4 KiB apart share one set of the 4-way L1 D: they thrash every pass.
    assert ut["l1d_misses"] == 3 * NPAGES
    assert ut["loads"] == 3 * NPAGES + 3             # + the three returns' stack reads
    # the calls (kernel instructions) are kernel events
    assert w["domains"]["kernel"]["stores"] == 3


def test_cr3_write_flushes_user_entries(ppro):
    w = ppro[4]
    srv = task(w, "srv")
    assert srv["kind"] == "server"
    assert w["domains"]["server"]["instructions"] == 3 * USER_PASS_INSNS
    assert srv["dtlb_misses"] == 3 * NPAGES          # every pass after a CR3 write
    assert srv["itlb_misses"] == 3
    assert w["domains"]["kernel"]["tlb_flushes"] == 3
    assert w["domains"]["kernel"]["itlb_misses"] == 0  # global kernel entries survive


def test_instruction_and_data_sides_are_physically_indexed(ppro):
    """probe ran through the kernel alias; running it again at another virtual address
    hits every line, so both sides are indexed by guest-physical address."""
    ut = task(ppro[5], "ut")
    assert ut["instructions"] == 256 + 4 + 1
    assert ut["l1i_accesses"] >= 261
    assert ut["l1i_misses"] == 0
    assert ut["l1d_misses"] == 0
    assert ut["itlb_misses"] == 1                    # a different virtual page, though
    assert ppro[5]["iphys"] == {"calibrated": True, "conflicts": 0,
                                "fallbacks": ppro[5]["iphys"]["fallbacks"]}


def test_wrong_kernel_text_base_breaks_instruction_addresses(env_ok, plugin_so, guest_bin,
                                                             tmp_path):
    """Negative control for the test above: without calibration the I-side falls back to
    virtual addresses and the alias run misses."""
    _, w = run_guest(plugin_so, guest_bin, tmp_path, "ktext_base=0xFFFFFFFF90000000")
    assert w[5]["iphys"]["calibrated"] is False
    assert task(w[5], "ut")["l1i_misses"] >= 256 // 32


def test_invlpg_with_and_without_hint(ppro):
    w = ppro[6]
    ut = task(w, "ut")
    assert ut["dtlb_misses"] == 1 + NPAGES
    assert w["domains"]["kernel"]["invlpg"] == 2
    assert w["invlpg_without_hint"] == 1


def test_l2_off(env_ok, plugin_so, guest_bin, tmp_path):
    _, w = run_guest(plugin_so, guest_bin, tmp_path, "l2=off")
    assert w[2]["geometry"]["l2"] is None
    k = w[2]["domains"]["kernel"]
    assert k["l2_accesses"] == 0 and k["l2_misses"] == 0
    assert k["l1d_misses"] == BIG_PASSES * BIG_LINES32
    pen = w[2]["penalties"]
    assert k["modelled_stall_cycles"] == round(
        (k["l1i_misses"] + k["l1d_misses"]) * pen["lat_mem"] + k["page_walks"] * pen["lat_walk"])


def test_deterministic(env_ok, plugin_so, guest_bin, tmp_path):
    runs = []
    for name in ("a", "b"):
        (tmp_path / name).mkdir()
        runs.append(run_guest(plugin_so, guest_bin, tmp_path / name)[0])
    assert runs[0] == runs[1] and runs[0].count("\n") == 6
