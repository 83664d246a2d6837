/* Per-CPU state, reached through the GS base while in the kernel. */
#ifndef CPU_H
#define CPU_H
#include "cpu_offsets.h"
#include "spinlock_types.h"
#include "types.h"

#define MAX_CPUS 64

/* A set of CPUs, bit n = cpus[n]: thread affinities, sched_cpus, TLB-shootdown targets.
 * 64 bits hold MAX_CPUS (sched.c asserts it). */
typedef u64 cpumask_t;
static inline cpumask_t cpu_bit(unsigned n) { return 1ull << n; }
static inline int cpumask_first(cpumask_t m) { return __builtin_ctzll(m); }   /* m != 0 */
/* CPUs 0..n-1 (n <= 64: a shift by 64 is undefined). */
static inline cpumask_t cpumask_below(unsigned n) { return n >= 64 ? ~0ull : cpu_bit(n) - 1; }

/* GDT selectors; the order is fixed by syscall/sysret (see gdt_load in cpu.c). */
#define SEL_KCODE  0x08
#define SEL_KDATA  0x10
#define SEL_UDATA  0x23   /* 0x20 | RPL 3 */
#define SEL_UCODE  0x2b   /* 0x28 | RPL 3 */
#define SEL_TSS    0x30

struct tss {
    u32 reserved0;
    u64 rsp0, rsp1, rsp2;
    u64 reserved1;
    u64 ist[7];
    u64 reserved2;
    u16 reserved3;
    u16 iomap_base;
} __attribute__((packed));

struct thread;

/* How a CPU holds the big kernel lock (struct cpu's bkl; klock.h): held and taken with
 * neither the lock checker nor the markers on (0: the exit's one test, sched.h), not
 * held, or held with one of them on (the release tells them). */
enum { BKL_HELD = 0, BKL_NOT_HELD = 1, BKL_HELD_SLOW = 2 };

/* Why a thread moved to another CPU (struct cpu's moves[], sched.c migrate). */
enum move_cause { MOVE_WAKE, MOVE_STEAL, MOVE_BALANCE, MOVE_CAUSES };

/* One per CPU, each on cache lines of its own (aligned): another CPU writes a CPU's
 * entry only where it must (its run queue and rq_lock, need_resched), never because its
 * own entry shares a line with a neighbour's (under the coherence model 12 straddling
 * lines of cpus[] cost 35 % of aim's transfer cycles at 16 CPUs, docs/smp.md). */
struct cpu {
    /* The first three fields are used by entry.S at fixed offsets. */
    struct cpu *self;          /* gs:0  */
    u64 syscall_frame;         /* gs:8  the current thread's trapframe, at the top of its
                                  kernel stack: where the syscall entry stores registers */
    u64 user_rsp;              /* gs:16 scratch for syscall entry */
    struct thread *current;    /* gs:24 */
    int id;
    u32 apic_id;
    struct thread *idle;
    struct thread *after;      /* the thread left, with work once this CPU is off its
                                  stack (sched.c after_switch): freed if it exited, else
                                  placed where its affinity allows */
    union {                    /* the exit checks test these bytes at once (sched.h) */
        struct {
            bool need_resched;
            u8 leaving;        /* a direct IPC switch in C left `left`'s stack: the exit
                                  checks, on the partner's stack, clear its on_cpu */
            u8 bkl;            /* how this CPU holds the big kernel lock: BKL_HELD (0),
                                  BKL_NOT_HELD or BKL_HELD_SLOW (klock.h) */
            u8 exit_pad;       /* always 0 */
        };
        u16 exit_work;         /* need_resched and leaving: the exit checks' work */
        u32 leave_work;        /* and bkl: a system call's exit does more than let a
                                  plainly held BKL go (sched.h sched_leave_kernel) */
    };
    bool fpu_ts;               /* CR0.TS is set: x87/SSE use traps (#NM) */
    struct thread *fpu_owner;  /* whose x87/SSE state the registers hold, or NULL */
    u8 linux_entry;            /* which entry LSTAR is: an enum syscall_entry_kind */
    u64 fs_base;               /* FS base loaded for the running thread */
    u64 gdt[9];
    struct tss tss;
    u8 df_stack[4096] __attribute__((aligned(16)));
    u64 gs_base;               /* user GS base loaded (MSR_KERNEL_GS_BASE while in the kernel) */
    u8 user_ctx;               /* the running thread's USER_CTX_* (thread.h); the fields
                                  up to here have fixed offsets (fastpath_layout.h) */
    /* Switches since boot (issue 10, item 7), one incq per switch: each change of the
     * running thread counts once, as a switch that keeps the loaded page tables (same
     * task, or a kernel thread) or one that loads CR3 (sched.c switch_to, ipc.c
     * switch_to_partner, ipcfast.S SWITCH_TO_PARTNER); a CR3 load outside a switch
     * (aspace_destroy) counts apart. cpu_switch_counts sums them over CPUs: thread
     * switches = same + cross, address-space switches = cross + cr3_loads. */
    u64 switches_same;         /* fixed offsets too: ipcfast.S increments them */
    u64 switches_cross;
    u64 cr3_loads;
    /* This CPU's run queue (sched.c): bit p of rq_bitmap set when priority p has a ready
     * thread here, bit w of rq_words when rq_bitmap[w] != 0. Fixed offsets: the IPC
     * fastpath's priority rule reads them (fastpath_layout.h). */
    u64 rq_words;
    u64 rq_bitmap[4];
    /* The CR3 (without the no-flush bit) loaded here, written before each load (vm.h
     * aspace_load, the IPC fastpath: fixed offset): the TLB shootdown sends to the CPUs
     * that have an address space loaded (vm.c cpus_with_loaded). */
    u64 loaded_cr3;
    /* The forwarded calls this CPU routes to a helper (SYS_FWD_HELPER, ipc/fwd.c): a Linux
     * task's call whose number is in its fwd_routed and whose server is thread fwd_server
     * goes to thread fwd_helper (0: none). Fixed offsets: the fastpath reads them. */
    int fwd_server, fwd_helper;
    struct thread *rq_head[256], *rq_tail[256];
    /* TSC ticks this CPU spent halted in its idle thread (sched.c idle_loop): the time
     * nothing ran, which /proc/stat reports as idle; under icount the rest of the TSC
     * is the instructions run (`./ondol bench net`'s bulk transfers). */
    u64 idle_tsc;
    /* Timer ticks this CPU took, by what it was doing (TIME_TICK_USER, _SYSTEM, _IDLE of
     * <ondol/abi.h>; trap.c timer_tick): the tick-sampled CPU times of /proc/stat. */
    u64 ticks_in[3];
    /* The user address the kernel last returned to after working for a Linux program with
     * interrupts off (an IK system call, a page fault without the BKL), or 0: a tick taken
     * there was pending during that work and counts as system time (trap.c count_tick). */
    u64 kernel_work_rip;
    u64 irqs;                  /* interrupts taken (trap.c): pcnt's sample filter, SYS_TIME */
    /* Threads that moved to this CPU (sched.c migrate), by cause: woken elsewhere than
     * their CPU (wake-up placement, a change of affinity), stolen by this idle CPU, pulled
     * by this busy CPU's periodic balancing; and the TSC ticks those moves took (saving
     * the x87/SSE state, by an IPI when another CPU holds it). SYS_MEMINFO sums them. */
    u64 moves[MOVE_CAUSES];
    u64 move_tsc;
    u32 balance_wait;          /* ticks of this CPU until its next balancing (sched.c) */
    /* The clock's tick (sched.c ticks) when a wake-up last queued a thread here while this
     * CPU idled (sched.c queue_at): for a tick or two the other CPUs leave its queue to
     * it (steal_from_ok). */
    u64 woken_tick;
    /* The run queue's lock (class rq, sched.c): rq_words, rq_bitmap, rq_head and rq_tail,
     * and the state, CPU and affinity of every thread queued here; `current` is set under
     * it by schedule (the IPC switches, under their ipc locks, change it between two
     * threads that are neither idle nor queued). */
    struct spinlock rq_lock;
    /* The thread this CPU switched away from while still on its kernel stack (sched.c
     * switch_to, ipc.c switch_to_partner): its on_cpu is cleared once this CPU is off
     * that stack (finish_switch; the exit checks after a direct IPC switch: leaving). */
    struct thread *left;
    /* fpu_owner's lock (class fpu, thread.c): without the BKL, a free of the owner on
     * another CPU must not clear it while this CPU saves the owner's state. */
    struct spinlock fpu_lock;
} __attribute__((aligned(64)));

struct cpu_features {
    char vendor[13];
    char brand[49];
    bool nx, smep, smap, pge, pdpe1gb, apic, x2apic, pcid, invariant_tsc, pmu;
    u32 pmu_version, pmu_counters;
};

extern struct cpu cpus[MAX_CPUS];
extern bool pcid_active;       /* CR4.PCIDE is set: CR3 carries the asid (vm.c) */
extern struct cpu_features cpu_features;

/* One increment of one of this CPU's counters, a single instruction (no this_cpu load):
 * the IPC fastpaths count as cheaply. cross: the switch loaded CR3. */
static inline void cpu_count_switch(bool cross)
{
    if (cross)
        __asm__ volatile("incq %%gs:%c0" ::"i"(__builtin_offsetof(struct cpu, switches_cross)));
    else
        __asm__ volatile("incq %%gs:%c0" ::"i"(__builtin_offsetof(struct cpu, switches_same)));
}
static inline void cpu_count_cr3_load(void)       /* a CR3 load outside a thread switch */
{
    __asm__ volatile("incq %%gs:%c0" ::"i"(__builtin_offsetof(struct cpu, cr3_loads)));
}
/* The counters summed over every CPU (SYS_TIME's struct time_info). */
void cpu_switch_counts(u64 *thread_switches, u64 *as_switches);

static inline struct cpu *this_cpu(void)
{
    struct cpu *c;
    __asm__ volatile("movq %%gs:0, %0" : "=r"(c));
    return c;
}

void cpu_detect_features(void);
void cpu_init(struct cpu *c, int id);   /* GDT, TSS, GS base, syscall MSRs, CR4 bits */
static inline void cpu_set_kernel_stack(struct cpu *c, u64 top)
{
    c->tss.rsp0 = top;
    c->syscall_frame = top - TF_SIZE;
}
/* The syscall entry (LSTAR) a user thread's `syscall` reaches: ondol's own; the Linux
 * forwarding entry (a task served by a server task, unix=mk); or the entry straight into
 * the in-kernel server (unix=ik: no forwarding fastpath to try and decline). The values
 * 0 and 1 are also written by ipcfast.S (CPU_LINUX_ENTRY). */
enum syscall_entry_kind { ENTRY_ONDOL = 0, ENTRY_LINUX_FWD = 1, ENTRY_LINUX_IK = 2 };
/* The user context of a Linux thread beyond its registers: the syscall entry its
 * `syscall` reaches (an enum syscall_entry_kind) and its FS base; written to the MSRs
 * only when they differ from what the CPU holds. */
void cpu_load_user_context(struct cpu *c, u8 entry, u64 fs_base, u64 gs_base, u8 user_ctx);
#endif
