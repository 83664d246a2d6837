/* Power off. QEMU (pc and q35, SeaBIOS) has the ACPI PM1a control register at 0x604;
 * older QEMU/Bochs used 0xb004. On hardware without either we halt with a message. */
#include "ipi.h"
#include "kernel.h"
#include "lockcheck.h"
#include "smp.h"
#include "power.h"
#include "x86.h"

/* The other CPUs stop first (ipi.c), so nothing keeps running after the message. */
void power_off_or_halt(void)
{
    cli();
    unsigned others = cpus_running - 1, stopped = ipi_stop_others();
    if (others)
        printk("smp: %u of %u other CPUs stopped\n", stopped, others);
    lockcheck_summary();
    outw(0x604, 0x2000);       /* SLP_EN with SLP_TYP 0: QEMU's soft power off */
    outw(0xb004, 0x2000);
    for (int i = 0; i < 10000000; i++)   /* QEMU stops the CPU a little after the write */
        pause();
    printk("ondol: power off is not supported here; it is now safe to turn the machine off\n");
    for (;;)
        hlt();
}

void power_off_failed(unsigned char code)
{
    outb(0xf4, code);          /* isa-debug-exit: QEMU stops at once */
    power_off_or_halt();
}
