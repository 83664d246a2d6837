/*
 * The IDT and the common trap handler. Exceptions in user mode kill the thread with a
 * one-line report; exceptions in kernel mode panic, except page faults inside the
 * fault-safe user-copy routine, which make that copy return an error.
 */
#include <ondol/abi.h>
#include "apic.h"
#include "cpu_offsets.h"
#include "console.h"
#include "cpu.h"
#include "dev.h"
#include "fault.h"
#include "fwd.h"
#include "ipi.h"
#include "kernel.h"
#include "pcnt.h"
#include "klock.h"
#include "pager.h"
#include "pmm.h"
#include "sched.h"
#include "task.h"
#include "trap.h"
#include "x86.h"

struct idt_entry {
    u16 off_lo, sel;
    u8 ist, type;
    u16 off_mid;
    u32 off_hi, zero;
} __attribute__((packed));

static struct idt_entry idt[256];
/* entry.S builds and reads frames through these offsets */
_Static_assert(offsetof(struct trapframe, r8) == TF_R8 && offsetof(struct trapframe, rbp) == TF_RBP &&
               offsetof(struct trapframe, rbx) == TF_RBX && offsetof(struct trapframe, rax) == TF_RAX &&
               offsetof(struct trapframe, vector) == TF_VECTOR &&
               offsetof(struct trapframe, rip) == TF_RIP &&
               offsetof(struct trapframe, rflags) == TF_RFLAGS &&
               offsetof(struct trapframe, rsp) == TF_RSP && sizeof(struct trapframe) == TF_SIZE,
               "entry.S trapframe offsets");
_Static_assert(SYS_IPC_CALL == ASM_SYS_IPC_CALL && SYS_IPC_REPLY_RECV == SYS_IPC_CALL + 1,
               "entry.S fastpath call numbers");

extern const u64 trap_vectors[256];
extern char usercopy_begin[], usercopy_end[], usercopy_fault[];
extern bool smap_enabled;

static const char *const exception_names[32] = {
    "divide error", "debug", "NMI", "breakpoint", "overflow", "bound range", "invalid opcode",
    "device not available", "double fault", "coprocessor overrun", "invalid TSS",
    "segment not present", "stack fault", "general protection fault", "page fault", "reserved",
    "x87 FP error", "alignment check", "machine check", "SIMD FP error", "virtualization",
    "control protection", "reserved", "reserved", "reserved", "reserved", "reserved",
    "reserved", "hypervisor injection", "VMM communication", "security", "reserved",
};

const char *trap_name(u64 v) { return v < 32 ? exception_names[v] : "interrupt"; }

void idt_init(void)
{
    for (int v = 0; v < 256; v++) {
        u64 a = trap_vectors[v];
        idt[v] = (struct idt_entry){
            .off_lo = a & 0xffff, .sel = SEL_KCODE, .ist = v == 8 ? 1 : 0, .type = 0x8e,
            .off_mid = (a >> 16) & 0xffff, .off_hi = (u32)(a >> 32),
        };
    }
    idt_load();
}

void idt_load(void)
{
    struct {
        u16 limit;
        u64 base;
    } __attribute__((packed)) ptr = {sizeof(idt) - 1, (u64)idt};
    __asm__ volatile("lidt %0" ::"m"(ptr));
}

static void describe_page_fault(char *buf, size_t n, u64 err)
{
    ksnprintf(buf, n, " (%s, %s%s)", err & 2 ? "write" : (err & 16 ? "exec" : "read"),
              err & 1 ? "protection" : "not present", err & 8 ? ", reserved bit" : "");
}

/* One line for the user and the tests: task, thread, cause, rip, fault address. A page
 * fault that found no free frame says "out of memory"; one whose pager refused the page
 * (or exited) says "no page from its pager". */
static void kill_faulting_thread(struct trapframe *tf, int err)
{
    struct thread *t = current_thread();
    struct task *task = t->task;
    char detail[64] = "";
    u64 addr = tf->vector == 14 ? read_cr2() : 0;
    if (tf->vector == 14)
        describe_page_fault(detail, sizeof(detail), tf->error);
    if (err == E_NOMEM)
        ksnprintf(detail, sizeof(detail), " (out of memory)");
    if (err == VM_NEEDS_PAGER)
        ksnprintf(detail, sizeof(detail), " (no page from its pager)");
    printk("ondol: killed task %d (%s) thread %d: %s%s rip=%#lx addr=%#lx\n", task->id, task->name,
           t->tid, trap_name(tf->vector), detail, (unsigned long)tf->rip, (unsigned long)addr);
    thread_exit(KILLED_STATUS_BASE + (int)tf->vector);
}

static unsigned fault_access(const struct trapframe *tf)
{
    return (tf->error & 2 ? VM_ACCESS_WRITE : 0) | (tf->error & 16 ? VM_ACCESS_EXEC : 0);
}

/* A page fault goes to the portable handler first (demand paging, fault.c): 0 when it
 * mapped the page and the access can be retried. */
static int resolve_page_fault(struct trapframe *tf)
{
    if (tf->error & 8)
        return E_FAULT;     /* reserved bit set: never retried */
    struct task *task = current_thread()->task;
    return vm_fault(task ? task->as : NULL, read_cr2(), fault_access(tf));
}

/* A user-mode page fault: an unprivileged task's may not take the frames the kernel
 * and the servers keep (FRAMES_RESERVED, pmm.h). */
static int resolve_user_page_fault(struct trapframe *tf)
{
    struct task *task = current_thread()->task;
    frame_reserve_guard(task && !task->privileged);
    int err = resolve_page_fault(tf);
    frame_reserve_guard(false);
    return err;
}

/* A kernel-mode exception other than a user copy's page fault (resolved, or the copy sent
 * to usercopy_fault) is a kernel bug. trap() panics at once, before the BKL: the faulting
 * code may hold a lock that the BKL's holder waits for (the IPC fastpath's ipc locks,
 * which the lock checker does not see), and a wait for the BKL there hung both CPUs
 * instead of reporting the fault (docs/smp.md, Next item 8). An NMI is printed, as before. */
static bool kernel_bug(const struct trapframe *tf)
{
    if (tf->vector >= 32 || tf->vector == 2 || tf_from_user(tf))
        return false;
    return !(tf->vector == 14 && tf->rip >= (u64)usercopy_begin && tf->rip < (u64)usercopy_end);
}

static void exception(struct trapframe *tf)
{
    int err = 0;
    if (!tf_from_user(tf)) {                    /* a user copy's page fault (kernel_bug) */
        pcnt_probe_start(PROBE_PAGEFAULT, read_cr2());
        if (resolve_page_fault(tf) != 0)
            tf->rip = (u64)usercopy_fault;
        pcnt_probe_stop(PROBE_PAGEFAULT);
        return;
    }
    if (tf->vector == 14 && (err = resolve_user_page_fault(tf)) == 0)
        return;
    if (err == VM_NEEDS_PAGER && pager_fault(tf, read_cr2(), fault_access(tf)))
        return;                 /* the pager's call: returns true only when being killed */
    /* a Linux task's server gets the fault (MK: never returns; IK: true when handled);
     * one that found no free frame as FWD_FAULT_NOMEM, so that the server ends the
     * process as Linux's OOM killer would, and learns of its end; one past the end of a
     * mapped file as FWD_FAULT_BUS (SIGBUS) */
    u64 vector = err == E_NOMEM ? FWD_FAULT_NOMEM : err == VM_PAST_EOF ? FWD_FAULT_BUS : tf->vector;
    if (fwd_fault(tf, vector, tf->vector == 14 ? read_cr2() : 0))
        return;
    kill_faulting_thread(tf, err);
}

/* A reschedule IPI interrupted a user thread: another CPU made a thread ready here that
 * should run first (sched.c kick), or changed this thread's affinity or killed it. Also
 * the exit checks of a fault resolved without the lock, or of a tick, when they have
 * work. As a system call's exit that ran without the BKL (sched_leave_slow): a
 * reschedule switches without it (schedule never holds it across a switch), a kill
 * takes it (sched_exit_checks_loop), and it is let go if taken. */
static void resched_from_user(void) { sched_leave_slow(this_cpu()); }

/* The exit checks of a user trap handled without the BKL: a reschedule switches without
 * it, a kill takes it (resched_from_user). */
static void leave_user_trap_unlocked(struct trapframe *tf)
{
    struct cpu *c = this_cpu();
    c->kernel_work_rip = tf->rip;
    if (c->current->killed | c->need_resched)
        resched_from_user();
}

/* A user-mode page fault without the kernel lock (docs/smp.md "Page faults without the
 * BKL"): resolved under its address space's lock only; true when the access can be
 * retried. The exit checks take the lock only when they have work (a kill or a
 * reschedule set by another CPU later comes with the reschedule IPI). Anything else (no
 * region allows the access, no frame, an object the lock still guards, the gate closed)
 * goes the locked way, which resolves it again, then calls the pager, forwards the fault
 * to the thread's server or kills the thread. */
static bool user_fault_unlocked(struct trapframe *tf)
{
    struct thread *t = current_thread();
    if (tf->vector != 14 || !tf_from_user(tf) || (tf->error & 8) || !t->task || !t->task->as)
        return false;
    frame_reserve_guard(!t->task->privileged);
    int err = vm_fault_unlocked(t->task->as, read_cr2(), fault_access(tf));
    frame_reserve_guard(false);
    if (__builtin_expect(vm_frames_deferred(), 0))
        vm_free_deferred_unlocked();       /* a COW break raced the other sharer's unmap (vm.h) */
    if (err)
        return false;
    leave_user_trap_unlocked(tf);
    return true;
}

/* #NM from user mode, the lazy x87/SSE switch (thread.h), without the BKL: the registers
 * are this CPU's, their owner kept by its fpu_lock (thread.c thread_fpu_claim). */
static bool user_fpu_unlocked(struct trapframe *tf)
{
    if (tf->vector != 7 || !tf_from_user(tf))
        return false;
    thread_fpu_claim(this_cpu(), current_thread());
    leave_user_trap_unlocked(tf);
    return true;
}

/* Which of this CPU's CPU times the tick falls into (SYS_TIME's cpu_ticks, /proc/stat),
 * sampled as Linux's tick accounting is (per CPU, so a plain increment): user time is a
 * Linux program's own code; system time the operating system's work for it, which in
 * ondol is mostly servers in user mode (the UNIX server in MK form, the network server,
 * drivers) and the kernel's. The kernel runs with interrupts off, so a tick that comes
 * while it works for a Linux program (an IK system call, a page fault, the switch back
 * to it, with a wait for the BKL on the way: sched.c switch_to) is taken at the user
 * address it returns to: that address (kernel_work_rip) makes it system time. (A
 * tick that comes just as the program reaches that address on its own is counted as
 * system too: one instruction's window.) Idle is the idle thread. */
_Static_assert(sizeof(((struct cpu *)0)->ticks_in) == TIME_TICK_KINDS * sizeof(u64),
               "struct cpu's ticks_in has one counter per TIME_TICK_* kind");
static void count_tick(struct cpu *c, const struct trapframe *tf)
{
    bool program = tf_from_user(tf) && c->current->linux && tf->rip != c->kernel_work_rip;
    unsigned kind = program                  ? TIME_TICK_USER
                    : c->current == c->idle ? TIME_TICK_IDLE
                                            : TIME_TICK_SYSTEM;
    c->ticks_in[kind]++;
    c->kernel_work_rip = 0;
}

/* The timer, without the kernel lock (docs/smp.md "The scheduler's own locks"): the
 * slice, the clock and balancing take the run-queue locks (and the clock the BKL when a
 * sleeper is due); from user mode the exit checks take the BKL only when they have work
 * (a slice ended, a kill, a thread to run first). */
static void timer_tick(const struct trapframe *tf)
{
    lapic_eoi();
    struct cpu *c = this_cpu();
    count_tick(c, tf);
    sched_tick();
    if (tf_from_user(tf) && (c->current->killed | c->need_resched))
        resched_from_user();
}

void trap(struct trapframe *tf)
{
    if (smap_enabled)
        __asm__ volatile("clac");
    if (tf->vector >= 32 && tf->vector < 256)
        this_cpu()->irqs++;          /* P3's filter drops samples spanning one */
    if (ipi_interrupt(tf->vector)) {          /* no kernel lock: the sender may hold it */
        if (tf->vector == VEC_IPI_RESCHED && tf_from_user(tf) && !ipi_stopping())
            resched_from_user();
        return;
    }
    if (ipi_stopping() && tf->vector >= 32) { /* powering off: interrupts only acknowledged */
        lapic_eoi();
        return;
    }
    if (user_fault_unlocked(tf) || user_fpu_unlocked(tf))
        return;
    if (tf->vector == VEC_TIMER) {
        timer_tick(tf);
        return;
    }
    if (kernel_bug(tf))
        panic_trap(tf, trap_name(tf->vector));
    bool took_lock = kernel_lock_unless_held();
    switch (tf->vector) {
    case VEC_COM1:
        console_irq();
        lapic_eoi();
        break;
    case 2:
        printk("ondol: NMI received (ignored)\n");
        break;
    default:
        if (tf->vector < 32)
            exception(tf);
        else if (tf->vector >= 0x20 && tf->vector < 0x30)
            break;    /* spurious IRQ from the masked legacy PIC */
        else if (tf->vector >= VEC_DEV_BASE && tf->vector < VEC_DEV_BASE + DEV_IRQ_PINS) {
            dev_irq((unsigned)(tf->vector - VEC_DEV_BASE));   /* masks the pin first */
            lapic_eoi();
        }
        else if (tf->vector >= VEC_MSI_BASE && tf->vector < VEC_MSI_BASE + DEV_MSI_VECTORS) {
            dev_msi((unsigned)(tf->vector - VEC_MSI_BASE));
            lapic_eoi();
        }
        else
            printk("ondol: unexpected interrupt %lu\n", (unsigned long)tf->vector);
        break;
    }
    if (tf_from_user(tf)) {
        sched_kernel_exit_checks();
        this_cpu()->kernel_work_rip = tf->rip;
    }
    kernel_unlock_if(took_lock);
}
