"""`./ondol bench aim` (tools/ondol/aim.py, tests/linux/aim.c): its configurations, and how
a guest record and the coherence model's window become a row; shapes, not numbers."""
import pytest

from ondol import aim, benchmarks
from ondol import OndolError


def record(jobs=8, tsc=4_000_000, mode_counters=None):
    before = {"frames_free": 100, "tasks": 3, "threads": 5, "aspaces": 3, "kobj_bytes": 1000,
              "rmap_inserts": 10, "rmap_removes": 5, "rmap_cancelled": 2, "rmap_applied": 7,
              "rmap_ticks": 0}
    after = {**before, **(mode_counters or {})}
    return {"type": "result", "bench": "aim", "test": "aim", "workers": 2, "jobs": jobs,
            "ok": True, "tsc": tsc, "window": 13, "before": before, "after": after}


def window(makespan=2_000_000):
    cpu = {"instructions": 1, "transfers": 40, "lock_waits": 4, "lock_wait_cycles": 800,
           "handoffs": 2, "transfer_cycles": 4000, "miss_cycles": 80, "clock": 1_999_999.6,
           "transfer_served": 2, "memory_cycles_saved": 400}
    locks = [{"id": 3, "acquires": 9, "waits": 6, "handoffs": 2, "wait_cycles": 1200},
             {"id": 4, "acquires": 3, "waits": 1, "handoffs": 1, "wait_cycles": 100},
             {"id": 260, "acquires": 3, "waits": 1, "handoffs": 1, "wait_cycles": 300},
             {"id": 516, "acquires": 3, "waits": 2, "handoffs": 0, "wait_cycles": 400},
             {"id": 581, "acquires": 8, "waits": 8, "handoffs": 0, "wait_cycles": 0},
             {"id": 1, "acquires": 1, "waits": 0, "handoffs": 0, "wait_cycles": 0}]
    vcpus = [{"vcpu": i, "domains": {"kernel": {"instructions": 50 + i}},
              "asids": [{"asid": 5, "name": "aim", "kind": "user", "instructions": 7},
                        {"asid": 1, "name": "unixsrv", "kind": "user", "instructions": 9}]}
             for i in range(2)]
    hot_lines = [{"pa": 0x100040, "transfers": 30, "cycles": 4000},
                 {"pa": 0x900000, "transfers": 2, "cycles": 800}]
    hot_pages = [{"pa": 0x900000, "lines": 64, "transfers": 64, "cycles": 6000}]
    spread = [{"transfers_from": 1, "lines": 64, "transfers": 64, "cycles": 2000}]
    return {"window": 13, "coherence": {"preset": "p4", "makespan": makespan,
                                        "cpus": [cpu, cpu], "locks": locks,
                                        "hot_lines": hot_lines, "hot_pages": hot_pages,
                                        "line_spread": spread},
            "vcpus": vcpus}


def test_configs_cover_every_mode_and_cpu_count_with_the_program_as_init():
    bench = benchmarks.get("aim")
    modelled = [c for c in bench.configs if c.params["model"]]
    assert {(c.params["rmap"], c.params["cpus"]) for c in modelled} == {
        (m, n) for m in aim.MODES for n in aim.CPUS}
    assert all(c.options["linux_init"] == aim.link(c.params["cpus"], aim.JOBS)
               and c.options["unix"] == "mk" for c in bench.configs)
    probed = [c for c in bench.configs if not c.params["model"]]
    assert [c.options["probes"] for c in probed] == ["on"] * len(aim.MODES)
    quick = benchmarks.get("aim", quick=True)
    assert {c.params["cpus"] for c in quick.configs} == set(aim.QUICK_CPUS)


def test_every_configuration_has_its_link_in_the_archive():
    links = {"/" + e.path for e in aim.archive_entries()}
    for bench in (benchmarks.get("aim"), benchmarks.get("aim", quick=True)):
        assert {c.options["linux_init"] for c in bench.configs} <= links
    assert aim.link(8, aim.SOAK_JOBS) in links and aim.link(8, aim.SOAK_SHORT_JOBS) in links


def test_a_row_has_jobs_per_instruction_the_counters_per_job_and_the_model(monkeypatch):
    from ondol import cache
    config = next(c for c in aim.configs((2,), 4) if c.params["rmap"] == "log")
    monkeypatch.setitem(aim._windows, config.label, [window()])
    monkeypatch.setattr(cache, "kernel_symbol",
                        lambda top, pa: "cpus+0x40" if pa == 0x100040 else None)
    (row,) = aim.rows([record(mode_counters={"rmap_inserts": 30, "rmap_removes": 25,
                                             "rmap_cancelled": 12, "rmap_ticks": 800})],
                      config)
    assert row["median"] == 2000.0 and row["unit"] == aim.UNIT        # 8 jobs / 4e6
    assert row["rmap_ops_per_job"] == 5.0                             # (20 + 20) / 8
    assert row["rmap_ticks_per_job"] == 100.0
    assert row["cancel_rate"] == 0.5                                  # 10 of 20 removes
    assert row["d_frames_free"] == 0 and row["d_tasks"] == 0
    assert row["modelled"] and row["modelled_throughput"] == 4000.0   # 8 jobs / 2e6 cycles
    assert row["cpu_clock"] == [2_000_000, 2_000_000] and row["cpu_share_max"] == 0.5
    assert row["transfers_per_job"] == 10.0 and row["lock_waits_per_job"] == 1.0
    assert row["transfer_cycles_per_job"] == 1000.0 and row["miss_cycles_per_job"] == 20.0
    assert row["transfer_served_per_job"] == 0.5                      # (2 + 2) / 8
    assert row["memory_cycles_saved_per_job"] == 100.0
    # by class of lock: 3 the BKL, 4..580 the reverse map's (global, frames, families, logs),
    # the rest other (per job)
    assert row["lock_waits_per_job_bkl"] == 0.75 and row["lock_waits_per_job_rmap"] == 0.5
    assert row["lock_waits_per_job_other"] == 1.0
    assert row["lock_wait_cycles_per_job_bkl"] == 150.0
    assert row["lock_wait_cycles_per_job_rmap"] == 100.0
    assert row["handoffs_per_job_rmap"] == 0.25 and row["handoffs_per_job_other"] == 0
    # per vCPU: what its clock is made of, its kernel instructions, the spaces it ran
    assert row["cpu_miss_cycles"] == [80, 80] and row["cpu_transfer_cycles"] == [4000, 4000]
    assert row["cpu_lock_wait_cycles"] == [800, 800] and row["cpu_kernel_insns"] == [50, 51]
    assert row["cpu_memory_cycles_saved"] == [400, 400]
    assert row["cpu_spaces"][1] == [[1, "unixsrv", 9], [5, "aim", 7]]
    # the dearest lines and pages, named, with their share of all transfer cycles (8000)
    assert row["hot_lines"] == [
        {"pa": "0x100040", "symbol": "cpus+0x40", "transfers": 30, "cycles": 4000,
         "share": 0.5},
        {"pa": "0x900000", "symbol": "frame", "transfers": 2, "cycles": 800, "share": 0.1}]
    assert row["hot_pages"] == [{"pa": "0x900000", "symbol": "frame", "lines": 64,
                                 "transfers": 64, "cycles": 6000, "share": 0.75}]
    assert row["line_spread"] == [{"transfers_from": 1, "lines": 64, "transfers": 64,
                                   "cycles": 2000, "share": 0.25}]


def test_the_rmap_part_has_its_own_benchmark_links_and_peer_command():
    bench = benchmarks.get("aim-rmap")
    modelled = [c for c in bench.configs if c.params["model"]]
    assert {(c.params["rmap"], c.params["cpus"]) for c in modelled} == {
        (m, n) for m in aim.MODES for n in aim.CPUS}
    assert all(c.params["part"] == "rmap" and c.options["linux_init"] ==
               aim.link(c.params["cpus"], aim.RMAP_JOBS, "rmap") for c in bench.configs)
    assert aim.link(16, 8, "rmap") == "/bench/aim-rmap-16-8"
    assert {c.params["part"] for c in benchmarks.get("aim").configs} == {"mix"}
    links = {"/" + e.path for e in aim.archive_entries()}
    for b in (bench, benchmarks.get("aim-rmap", quick=True)):
        assert {c.options["linux_init"] for c in b.configs} <= links
    assert b"/suite/bin/aim rmap 4 8" in aim.peer_init(4, 8, "rmap")
    assert b"/suite/bin/aim 4 8" in aim.peer_init(4, 8)


def test_without_a_window_or_counters_the_fields_stay_empty():
    config = aim.configs((1,), 4)[0]
    rec = record()
    del rec["before"], rec["after"]                                   # the Linux peer's
    (row,) = aim.rows([rec], config)
    assert row["rmap_ops_per_job"] is None and row["cancel_rate"] is None
    assert "modelled_throughput" not in row


def test_no_quick_form_elsewhere():
    with pytest.raises(Exception, match="no --quick form"):
        benchmarks.get("vm", quick=True)


def test_the_peer_boots_n_vcpus_where_icount_is_fair(monkeypatch):
    monkeypatch.setattr(aim.qemucmd, "fair_icount", lambda qemu: qemu == "qemu10")
    assert aim.peer_vcpus(4, icount=True, qemu="qemu10") == 4
    assert aim.peer_vcpus(4, icount=True, qemu="qemu72") == 1     # 7.2 starves the AP
    assert aim.peer_vcpus(4, icount=False, qemu="qemu72") == 4


def test_order_reaches_the_plugin_of_the_model_benchmarks(monkeypatch, tmp_path):
    """`ondol bench --order` (the coherence model's replay order, declared once in coher.c)
    becomes the plugin's coherence_order= and the rows' replay_order comes from the window."""
    from types import SimpleNamespace

    from ondol import cache, coherence
    assert cache.coherence_orders() == ("recorded", "time", "exclusive")
    assert benchmarks._run_order() == ()                       # outside a run: the default
    ctx = SimpleNamespace(mode="icount", request=SimpleNamespace(coherence_order="exclusive"))
    assert benchmarks._run_order() == ("coherence_order=exclusive",)
    del ctx
    monkeypatch.setattr(aim, "cache_args", lambda: ())
    monkeypatch.setattr(cache, "percpu_args", lambda top: ())
    for args in (aim.plugin_args(tmp_path / "w", ("coherence_order=exclusive",)),
                 coherence.plugin_args(tmp_path / "w", order=("coherence_order=exclusive",))):
        assert "coherence_order=exclusive" in args
    assert "coherence_order" not in " ".join(aim.plugin_args(tmp_path / "w"))
    fields = aim.model_fields({**window()["coherence"], "order": "exclusive"}, 8)
    assert fields["replay_order"] == "exclusive"
    assert fields["socket_fetch"] == "recorded"                # a window without the field
    fields = aim.model_fields({**window()["coherence"], "order": "exclusive",
                               "socket_fetch": "clock", "fetch_swaps": 7}, 8)
    assert fields["socket_fetch"] == "clock" and fields["fetch_swaps"] == 7


def test_the_model_benchmarks_choose_qemu_10():
    chosen = {b.name for b in benchmarks.BENCHMARKS if b.model_qemu}
    assert chosen == {"coherence", "aim", "aim-rmap"}
    assert benchmarks.get("aim", quick=True).model_qemu


def test_cpus_and_rmap_choose_a_subset_and_the_peer_follows_the_first_mode():
    bench = benchmarks.get("aim", cpus=(16, 1), modes=("log", "lock"))
    modelled = [c for c in bench.configs if c.params["model"]]
    assert [(c.params["rmap"], c.params["cpus"]) for c in modelled] == [
        ("log", 1), ("log", 16), ("lock", 1), ("lock", 16)]
    assert [c.params["cpus"] for c in modelled if c.params["peer"]] == [1, 16]
    probed = [c for c in bench.configs if not c.params["model"]]
    assert [(c.params["rmap"], c.params["cpus"], c.params["peer"]) for c in probed] == [
        ("log", 16, False), ("lock", 16, False)]
    assert benchmarks.get("aim-rmap", cpus=(2,)).configs[0].params["part"] == "rmap"
    for bad in ({"cpus": (3,)}, {"modes": ("lock", "lock")}, {"modes": ("fast",)}):
        with pytest.raises(OndolError):
            benchmarks.get("aim", **bad)
    with pytest.raises(OndolError):
        benchmarks.get("sdet", cpus=(1,))
