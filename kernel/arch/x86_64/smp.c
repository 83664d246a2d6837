/*
 * Starting the application processors (docs/smp.md). For every CPU the MADT lists besides
 * the bootstrap one (acpi.c), one at a time: INIT, 10 ms, a startup IPI to the trampoline
 * (apboot.S), and a second one if the CPU has not checked in after 1 ms; a CPU that is not
 * up 10 s later (Linux's bound) is reported and skipped. A real CPU checks in within
 * microseconds; the long bound is for vCPUs, which are host threads: on a loaded host
 * one may not run for a good part of a second (100 ms lost one now and then). A started CPU loads the kernel's page tables,
 * its own GDT, TSS and GS base (cpu_init), the IDT and its local APIC, checks in, and
 * goes to the scheduler (sched_ap_main): it answers IPIs until the bootstrap CPU lets it
 * join, then runs threads with its own idle thread and timer.
 * Timing is by the TSC, calibrated by then (apic.c), so it also holds under icount.
 */
#include "acpi.h"
#include "apic.h"
#include "cpu.h"
#include "ipi.h"
#include "kernel.h"
#include "memlayout.h"
#include "pmm.h"
#include "sched.h"
#include "smp.h"
#include "smp_layout.h"
#include "trap.h"
#include "x86.h"

extern char ap_trampoline[], ap_trampoline_end[], ap_boot_cr3[], ap_boot_efer[],
    ap_boot_stack[], ap_boot_entry[];
extern u64 kernel_pml4_pa;                  /* vm.c */

#define PTE_P 1ull
#define PTE_W 2ull
#define PTE_PS 0x80ull
#define EFER_LME (1u << 8)
#define EFER_NXE_BIT (1u << 11)
#define AP_STACK_FRAMES 4       /* 16 KiB: IPI handlers nest while a called function waits */
#define AP_CHECKIN_US 10000000  /* after the second startup IPI: Linux's 10 s */

bool smp_on = true;                          /* option smp */
unsigned cpus_running = 1;
static volatile int ap_checked_in;          /* the starting AP's cpus[] index, once up */
static int ap_starting;                     /* the index it is to take */

/* A busy wait without `pause`: under -icount QEMU's round robin ends a vCPU's turn at
 * each `pause`, and with the started CPUs halted (sched_ap_main) the 10 ms after an INIT
 * then took one turn of the whole loop per few instructions: seconds of host time per
 * CPU at -smp 8. */
static void delay_us(u64 us)
{
    u64 end = rdtsc() + tsc_hz() / 1000000 * us;
    while (rdtsc() < end)
        ;
}

/* Where a started AP arrives, in the kernel's half, on its own stack. */
__attribute__((noreturn)) void ap_entry(void);
void ap_entry(void)
{
    write_cr3(kernel_pml4_pa);              /* drops the trampoline's identity map */
    int id = ap_starting;
    struct cpu *c = &cpus[id];
    cpu_init(c, id);
    idt_load();
    lapic_init();
    c->apic_id = lapic_id();
    __atomic_store_n(&ap_checked_in, id, __ATOMIC_RELEASE);
    sched_ap_main();
}

/* The trampoline's page and its boot page tables: identity-mapped low 2 MiB, and the
 * kernel half shared with the kernel's own PML4. */
static void trampoline_install(void)
{
    memcpy(phys_to_virt(AP_TRAMPOLINE_PA), ap_trampoline, (size_t)(ap_trampoline_end - ap_trampoline));
    u64 *pml4 = phys_to_virt(AP_PML4_PA), *pdpt = phys_to_virt(AP_PDPT_PA),
        *pd = phys_to_virt(AP_PD_PA);
    memset(pml4, 0, PAGE_SIZE);
    memset(pdpt, 0, PAGE_SIZE);
    memset(pd, 0, PAGE_SIZE);
    pd[0] = 0 | PTE_P | PTE_W | PTE_PS;
    pdpt[0] = AP_PD_PA | PTE_P | PTE_W;
    pml4[0] = AP_PDPT_PA | PTE_P | PTE_W;
    memcpy(pml4 + 256, (u64 *)phys_to_virt(kernel_pml4_pa) + 256, 256 * sizeof(u64));
    u8 *page = phys_to_virt(AP_TRAMPOLINE_PA);
    u64 efer = EFER_LME | (cpu_features.nx ? EFER_NXE_BIT : 0), entry = (u64)ap_entry;
    memcpy(page + (ap_boot_cr3 - ap_trampoline), &(u64){AP_PML4_PA}, 8);
    memcpy(page + (ap_boot_efer - ap_trampoline), &efer, 8);
    memcpy(page + (ap_boot_entry - ap_trampoline), &entry, 8);
}

/* Starts the AP with local APIC id apic_id as cpus[index]: true once it checked in. */
static bool start_ap(u32 apic_id, int index)
{
    u64 stack = frame_alloc_contig(AP_STACK_FRAMES);
    if (!stack)
        return false;
    u64 top = (u64)phys_to_virt(stack) + AP_STACK_FRAMES * PAGE_SIZE;
    memcpy((u8 *)phys_to_virt(AP_TRAMPOLINE_PA) + (ap_boot_stack - ap_trampoline), &top, 8);
    ap_starting = index;
    ap_checked_in = -1;
    lapic_send_init(apic_id);
    delay_us(10000);
    for (int sipi = 0; sipi < 2 && ap_checked_in != index; sipi++) {
        lapic_send_startup(apic_id, AP_TRAMPOLINE_PA >> 12);
        u64 end = rdtsc() + tsc_hz() / 1000000 * (sipi ? AP_CHECKIN_US : 1000);
        while (ap_checked_in != index && rdtsc() < end)
            ;
    }
    /* A CPU that never checked in keeps its stack: were it to start after all, it must
     * not run on a frame given to someone else (16 KiB lost once, for a broken CPU). */
    return ap_checked_in == index;
}

void smp_start_aps(void)
{
    if (acpi.ncpus <= 1 || !smp_on)
        return;
    if (kernel_pml4_pa >= (4ull << 30)) {
        printk("smp: the kernel's page tables lie above 4 GiB: the other CPUs stay off\n");
        return;
    }
    trampoline_install();
    u32 self = lapic_id();
    for (unsigned i = 0; i < acpi.ncpus && cpus_running < MAX_CPUS; i++) {
        if (acpi.apic_ids[i] == self)
            continue;
        if (start_ap(acpi.apic_ids[i], (int)cpus_running))
            cpus_running++;
        else
            printk("smp: the CPU with APIC id %u did not start\n", acpi.apic_ids[i]);
    }
}
