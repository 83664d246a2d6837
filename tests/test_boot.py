"""Boot, options, power-off, the kernel panic path, and the GRUB ISO."""
import re

import pytest

from qemu_harness import boot, run_to_halt


def test_boot_reaches_shell_and_halt_exits_cleanly():
    with boot() as s:
        banner = s.output
        assert re.search(r"ondol \S+ \(\S+\) x86_64", banner)
        assert re.search(r"memory: \d+ MiB usable", banner)
        assert "features:" in banner and "nx" in banner
        assert s.halt() == 0
        assert "powering off" in s.output


def test_options_are_parsed_and_shown():
    with boot({"hz": "250", "slice": "3", "colour": "blue"}) as s:
        assert "timer 250 Hz, slice 3 ticks" in s.output
        assert re.search(r"options: hz=250 slice=3 colour=blue", s.output)
        s.halt()
        hello = [r for r in s.results() if r.get("type") == "hello"]
    assert hello and hello[0]["options"] == {"hz": "250", "slice": "3", "colour": "blue"}


def test_bad_option_value_falls_back_with_a_message():
    with boot({"hz": "fast"}) as s:
        assert "option hz=fast is not a number; using 100" in s.output
        assert "timer 100 Hz" in s.output
        s.halt()


def test_run_option_executes_commands_then_powers_off():
    status, out, _ = run_to_halt({"run": "hello,one,two;hello,three"}, timeout=60)
    assert status == 0
    assert "argv[1]=one" in out and "argv[2]=two" in out and "argv[1]=three" in out


def test_kernel_fault_panics_with_registers_and_symbolised_backtrace():
    status, out, _ = run_to_halt({"selftest": "panic"}, timeout=60)
    assert "PANIC: page fault in kernel mode" in out
    assert re.search(r"rip 0xffffffff8[0-9a-f]+", out)
    assert re.search(r"#0 0xffffffff8[0-9a-f]+ selftest\+0x", out)
    assert re.search(r"#\d 0xffffffff8[0-9a-f]+ kmain\+0x", out)
    assert status == 0   # the panic path powers QEMU off so a test sees the end


@pytest.mark.parametrize("cpus,smp,started", [(1, "on", 1), (4, "on", 4), (4, "off", 1),
                                               (66, "on", 64)])
def test_acpi_cpus_are_found_and_started(cpus, smp, started):
    """The MADT (kernel/arch/x86_64/acpi.c) finds every CPU QEMU was given (at most
    ACPI_MAX_CPUS = 64 kept, all counted as listed) and the I/O APIC, whose routing from it
    still delivers the console's interrupts (the shell answers); smp.c starts the others
    (at most MAX_CPUS = 64), which all run threads; smp=off starts none."""
    found = min(cpus, 64)
    with boot({"smp": smp}, extra=("-smp", str(cpus))) as s:
        assert re.search(rf"acpi: revision \d+, {found} CPUs \({cpus} listed\), "
                         rf"I/O APIC at 0xfec00000 \(GSI 0\.\.\), {started} started",
                         s.output), s.output[:2000]
        assert "did not start" not in s.output
        assert "hi" in s.cmd("hello hi")
        assert s.halt() == 0
        (hello,) = [r for r in s.results() if r.get("type") == "hello"]
    assert hello["cpu"]["count"] == found
    assert hello["cpu"]["started"] == started and hello["cpu"]["running"] == started
    assert ("all run threads" in s.output) == (started > 1)


def test_grub_iso_boots_to_shell():
    with boot(iso=True, timeout=60) as s:
        assert "booted by GRUB" in s.output
        assert s.halt() == 0
