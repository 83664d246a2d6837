/*
 * Interprocessor interrupts (docs/smp.md, "IPIs").
 *
 * Every IPI vector is handled in ipi_interrupt(), called by trap() before the kernel lock:
 * the sender may hold that lock while it waits for the answer. The handler acknowledges
 * the local APIC first (EOI), so a function run by the call IPI can itself wait for other
 * IPIs of the same priority class.
 *
 * Nothing here waits without bound or spins for long: under QEMU's -icount all vCPUs run
 * round robin on one host thread and a spinning vCPU starves the one it waits for, so a
 * waiter spins briefly and then halts until an interrupt (the answering CPU sends a wake
 * IPI; the bootstrap CPU's timer also wakes it to check its deadline).
 */
#include <ondol/abi.h>
#include "apic.h"
#include "cpu.h"
#include "ipi.h"
#include "kernel.h"
#include "smp.h"
#include "spinlock.h"
#include "trap.h"
#include "x86.h"

#define SPIN_BRIEF 100               /* pause iterations before halting */
#define STOP_TIMEOUT_US 1000000      /* power off and panic: 100 ms missed a vCPU of a
                                        loaded host once the TSC was calibrated right */
#define LOCKED_TIMEOUT_US 5000000    /* waits of a kernel-lock holder: a CPU that does not
                                        answer in 5 s is wedged (100 ms was too short for a
                                        vCPU thread of a loaded host, without icount) */

/* One per CPU, on its own cache line: the function the call IPI runs there. */
struct call_box {
    ipi_fn fn;
    void *arg;
    int caller;
    volatile u32 posted, done;      /* sequence numbers: posted by the caller, done by the CPU */
} __attribute__((aligned(64)));

/* One per (receiving CPU, initiating CPU) pair: the TLB shootdown posted to it
 * (tlb_shootdown). Several CPUs may initiate at once (a page fault changes PTEs under
 * its address space's lock only), each through its own box, so no initiator waits for
 * another's. The pages are the initiator's list: it waits until the box is done. */
struct tlb_box {
    u64 cr3;
    const u64 *va;
    u32 kind, n;
    volatile u32 posted, done;
} __attribute__((aligned(64)));

static struct call_box call_boxes[MAX_CPUS];
static struct tlb_box tlb_boxes[MAX_CPUS][MAX_CPUS];   /* [receiver][initiator] */
static struct spinlock call_lock = SPINLOCK_INIT(IPI_CALL);   /* one caller at a time */
static volatile u32 stopping, stopped;
static int stop_initiator;
struct ipi_stats ipi_stats[MAX_CPUS];

static void run_call_box(int self);
__attribute__((noreturn)) static void stop_here(void);
extern u64 kernel_pml4_pa;                  /* vm.c */

static bool started_cpu(int cpu) { return cpu >= 0 && (unsigned)cpu < cpus_running; }

void ipi_send(int cpu, u8 vector)
{
    if (started_cpu(cpu))
        lapic_send_ipi(cpus[cpu].apic_id, vector);
}

void ipi_send_others(u8 vector)
{
    int self = this_cpu()->id;
    for (int cpu = 0; (unsigned)cpu < cpus_running; cpu++)
        if (cpu != self)
            ipi_send(cpu, vector);
}

static u64 deadline_after_us(u64 us) { return rdtsc() + tsc_hz() / 1000000 * us; }

bool ipi_wait_word(volatile u32 *word, u32 value, u64 deadline)
{
    for (int i = 0; i < SPIN_BRIEF; i++) {
        if (__atomic_load_n(word, __ATOMIC_ACQUIRE) == value)
            return true;
        pause();
    }
    while (__atomic_load_n(word, __ATOMIC_ACQUIRE) != value) {
        if (rdtsc() >= deadline)
            return false;
        wait_for_interrupt();
    }
    return true;
}

static void post_call(int cpu, ipi_fn fn, void *arg)
{
    struct call_box *b = &call_boxes[cpu];
    b->fn = fn;
    b->arg = arg;
    b->caller = this_cpu()->id;
    __atomic_store_n(&b->posted, b->posted + 1, __ATOMIC_RELEASE);
    ipi_send(cpu, VEC_IPI_CALL);
}

static bool call_answered(int cpu, u64 deadline)
{
    struct call_box *b = &call_boxes[cpu];
    return ipi_wait_word(&b->done, b->posted, deadline);
}

int ipi_call(int cpu, ipi_fn fn, void *arg, u64 timeout_us)
{
    if (!started_cpu(cpu) || cpu == this_cpu()->id)
        return E_INVAL;
    spin_lock(&call_lock);
    post_call(cpu, fn, arg);
    bool answered = call_answered(cpu, deadline_after_us(timeout_us));
    spin_unlock(&call_lock);
    return answered ? 0 : E_TIMEOUT;
}

/* Waits for *word == value with pause only: the waiter may hold the kernel lock or an
 * address space's, so no interrupt handler may run here; pause lets QEMU's round-robin
 * loop run the others. It answers the requests posted to this CPU meanwhile (ipi_poll):
 * the CPU it waits for may itself be waiting for this one's answer to a shootdown (two
 * initiators, or a call and a shootdown, crossing). */
static bool spin_wait_word(volatile u32 *word, u32 value, u64 deadline)
{
    while (__atomic_load_n(word, __ATOMIC_ACQUIRE) != value) {
        if (rdtsc() >= deadline)
            return false;
        pause();
        ipi_poll();
    }
    return true;
}

int ipi_call_locked(int cpu, ipi_fn fn, void *arg)
{
    if (!started_cpu(cpu) || cpu == this_cpu()->id)
        return E_INVAL;
    spin_lock(&call_lock);
    post_call(cpu, fn, arg);
    struct call_box *b = &call_boxes[cpu];
    bool answered = spin_wait_word(&b->done, b->posted, deadline_after_us(LOCKED_TIMEOUT_US));
    spin_unlock(&call_lock);
    return answered ? 0 : E_TIMEOUT;
}

int ipi_call_locked_many(cpumask_t cpumask, ipi_fn fn, void *arg)
{
    int self = this_cpu()->id;
    cpumask &= ~cpu_bit(self);
    spin_lock(&call_lock);
    for (cpumask_t m = cpumask; m; m &= m - 1)
        if (started_cpu(cpumask_first(m)))
            post_call(cpumask_first(m), fn, arg);
    u64 deadline = deadline_after_us(LOCKED_TIMEOUT_US);
    bool answered = true;
    for (cpumask_t m = cpumask; m; m &= m - 1) {
        struct call_box *b = &call_boxes[cpumask_first(m)];
        if (started_cpu(cpumask_first(m)))
            answered &= spin_wait_word(&b->done, b->posted, deadline);
    }
    spin_unlock(&call_lock);
    return answered ? 0 : E_TIMEOUT;
}

/* ---- TLB shootdown (docs/smp.md "TLB shootdown") ----------------------------------- */
/* The translations a box asks to drop, when this CPU has that address space loaded
 * (else it holds none of them that could be used: the initiator marked them stale). */
static void tlb_drop(struct cpu *c, const struct tlb_box *b)
{
    if (read_cr3() != b->cr3)
        return;
    if (b->kind == TLB_PAGES) {
        for (u32 i = 0; i < b->n; i++)
            invlpg(b->va[i]);
    } else if (b->kind == TLB_ALL) {
        write_cr3(b->cr3);                      /* no no-flush bit: drops that PCID's entries */
    } else {                                    /* TLB_LEAVE: the tables are going */
        c->loaded_cr3 = kernel_pml4_pa;
        write_cr3(kernel_pml4_pa);
    }
}

/* On the receiving CPU: every initiator's box with a request not yet done. */
static void run_tlb_boxes(int self)
{
    for (unsigned from = 0; from < cpus_running; from++) {
        struct tlb_box *b = &tlb_boxes[self][from];
        u32 seq = __atomic_load_n(&b->posted, __ATOMIC_ACQUIRE);
        if (seq == b->done)
            continue;
        tlb_drop(&cpus[self], b);
        __atomic_store_n(&b->done, seq, __ATOMIC_RELEASE);
    }
}

/* Why a deadline, and then the caller's panic, rather than halting or waiting for good.
 * The initiator cannot halt: it holds an address space's lock or the BKL, with interrupts
 * off (a device interrupt takes the BKL, the tick the scheduler's locks and may switch
 * threads). It cannot go on without the answer: the target may still reach the frame
 * through its TLB once the frame is reused. Every wait with interrupts off answers by
 * polling (ipi_poll: the BKL's, the spinlocks', the on-CPU wait, the fault gate's, a
 * file's mapping drain), and the IPI reaches any CPU with them on, so on hardware an
 * answer takes microseconds: 5 s without one is a CPU wedged with interrupts off outside
 * those waits (a bug) or a vCPU its host does not run. QEMU 7.2 under icount is the
 * latter: a vCPU placed after a busy user loop in the round robin gets no instructions,
 * whatever this one does (docs/smp.md "TLB shootdown"). */
static void report_unanswered(int cpu, int self, const struct tlb_box *b)
{
    printk("ipi: CPU %d did not answer CPU %d's TLB shootdown in %u s (posted %u, done %u)\n",
           cpu, self, LOCKED_TIMEOUT_US / 1000000, b->posted, b->done);
}

int tlb_shootdown(cpumask_t cpumask, u64 cr3, const u64 *va, u32 n, unsigned kind)
{
    int self = this_cpu()->id;
    cpumask &= ~cpu_bit(self);
    for (cpumask_t m = cpumask; m; m &= m - 1) {
        int cpu = cpumask_first(m);
        struct tlb_box *b = &tlb_boxes[cpu][self];
        b->cr3 = cr3;
        b->va = va;
        b->kind = kind;
        b->n = n;
        __atomic_store_n(&b->posted, b->posted + 1, __ATOMIC_RELEASE);
        ipi_send(cpu, VEC_IPI_TLB);
    }
    u64 deadline = deadline_after_us(LOCKED_TIMEOUT_US);
    int missing = 0;
    for (cpumask_t m = cpumask; m; m &= m - 1) {
        int cpu = cpumask_first(m);
        struct tlb_box *b = &tlb_boxes[cpu][self];
        if (!spin_wait_word(&b->done, b->posted, deadline)) {
            report_unanswered(cpu, self, b);
            missing++;
        }
    }
    return missing ? E_TIMEOUT : 0;
}

void ipi_poll(void)
{
    int self = this_cpu()->id;
    if (stopping && self != stop_initiator)
        stop_here();
    run_call_box(self);
    run_tlb_boxes(self);
}

int ipi_call_all(ipi_fn fn, void *arg, u64 timeout_us)
{
    int self = this_cpu()->id;
    spin_lock(&call_lock);
    for (int cpu = 0; (unsigned)cpu < cpus_running; cpu++)
        if (cpu != self)
            post_call(cpu, fn, arg);
    fn(arg);
    u64 deadline = deadline_after_us(timeout_us);
    bool answered = true;
    for (int cpu = 0; (unsigned)cpu < cpus_running; cpu++)
        if (cpu != self)
            answered &= call_answered(cpu, deadline);
    spin_unlock(&call_lock);
    return answered ? 0 : E_TIMEOUT;
}

/* The call IPI: run the posted function (if a new one is posted), then wake the caller. */
static void run_call_box(int self)
{
    struct call_box *b = &call_boxes[self];
    u32 seq = __atomic_load_n(&b->posted, __ATOMIC_ACQUIRE);
    if (seq == b->done)
        return;
    b->fn(b->arg);
    __atomic_store_n(&b->done, seq, __ATOMIC_RELEASE);
    ipi_send(b->caller, VEC_IPI_RESCHED);
}

__attribute__((noreturn)) static void stop_here(void)
{
    __atomic_add_fetch(&stopped, 1, __ATOMIC_ACQ_REL);
    ipi_send(stop_initiator, VEC_IPI_RESCHED);
    for (;;)
        __asm__ volatile("cli; hlt");
}

unsigned ipi_stop_others(void)
{
    if (cpus_running <= 1 || __atomic_exchange_n(&stopping, 1, __ATOMIC_ACQ_REL))
        return 0;
    stop_initiator = this_cpu()->id;
    ipi_send_others(VEC_IPI_STOP);
    u64 deadline = deadline_after_us(STOP_TIMEOUT_US);
    while (__atomic_load_n(&stopped, __ATOMIC_ACQUIRE) < cpus_running - 1 && rdtsc() < deadline)
        wait_for_interrupt();
    return stopped;
}

bool ipi_stopping(void) { return stopping; }

/* The spurious vector: a real spurious interrupt needs no EOI; an IPI sent with vector
 * 0xff was delivered like any other and does (else its in-service bit blocks class 15). */
static void spurious(int self)
{
    ipi_stats[self].spurious++;
    if (lapic_in_service(VEC_SPURIOUS))
        lapic_eoi();
}

bool ipi_interrupt(u64 vector)
{
    int self = this_cpu()->id;
    if (vector == VEC_SPURIOUS) {
        spurious(self);
        return true;
    }
    if (vector < VEC_IPI_FIRST || vector > VEC_IPI_LAST)
        return false;
    lapic_eoi();
    if (vector == VEC_IPI_STOP)
        stop_here();
    else if (vector == VEC_IPI_CALL)
        run_call_box(self);
    else if (vector == VEC_IPI_TLB)
        run_tlb_boxes(self);
    else if (vector != VEC_IPI_RESCHED) {   /* counted once said: a reader of the count
                                               (smpbench ipi) may power off right after */
        printk("ipi: unexpected vector %#lx on CPU %d (ignored)\n", (unsigned long)vector, self);
        ipi_stats[self].unknown++;
    }
    return true;
}

