"""SMP: IPIs between the CPUs (kernel/arch/x86_64/ipi.c), stopping the other CPUs at power
off and panic, and the coherence-model workloads (kernel/measure/smpbench.c), run with
option smpbench (docs/smp.md)."""
import pytest

from qemu_harness import run_to_halt


def smpbench(mode, cpus, **opts):
    options = {"smpbench": mode, **{k: str(v) for k, v in opts.items()}}
    status, out, records = run_to_halt(options, timeout=90, extra=("-smp", str(cpus)))
    (rec,) = [r for r in records if r.get("type") in ("smpbench", "result")]
    return status, out, rec


def test_ipi_round_trip_to_each_cpu_survives_unknown_and_spurious_vectors():
    status, out, rec = smpbench("ipi", 4)
    assert status == 0
    for cpu in (1, 2, 3):
        assert f"ipi round trip: CPU {cpu} answered" in out
        assert f"ipi after odd vectors: CPU {cpu} answered" in out
        assert f"ipi: unexpected vector 0xfe on CPU {cpu} (ignored)" in out
    assert rec["round_trip"] and rec["after_odd_vectors"], out
    # one unassigned and one spurious-vector IPI to each of the three others
    assert rec["unknown"] == 3 and rec["spurious"] == 3
    assert "smp: 3 of 3 other CPUs stopped" in out


def test_power_off_stops_the_other_cpus():
    status, out, _ = run_to_halt({"run": "hello,x"}, timeout=60, extra=("-smp", "4"))
    assert status == 0 and "argv[1]=x" in out
    assert "smp: 3 of 3 other CPUs stopped" in out


def test_one_cpu_has_nothing_to_stop():
    status, out, _ = run_to_halt({"run": "hello,x"}, timeout=60, extra=("-smp", "1"))
    assert status == 0 and "other CPUs stopped" not in out


def test_panic_stops_the_other_cpus():
    status, out, _ = run_to_halt({"selftest": "panic"}, timeout=60, extra=("-smp", "4"))
    assert "PANIC: page fault in kernel mode" in out
    assert "smp: 3 of 3 other CPUs stopped" in out and status == 0


@pytest.mark.parametrize("mode", ["private", "shared", "pingpong"])
@pytest.mark.parametrize("cpus", [1, 4])
def test_coherence_workloads_run_on_every_cpu_and_count_right(mode, cpus):
    """Real concurrency (no icount): every counter ends where the iterations say."""
    status, out, rec = smpbench(mode, cpus, smpbench_n=300)
    assert status == 0
    assert rec["cpus"] == cpus and rec["iters"] == 300 and rec["jobs"] == 300 * cpus
    assert rec["ok"], out
    assert f"smpbench: {mode} on {cpus} CPUs, 300 iterations each: correct" in out
