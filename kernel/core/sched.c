/*
 * The scheduler (docs/smp.md "Scheduling"): one run queue per CPU, 256 priorities (255
 * highest), round-robin within a priority, a time slice of `slice` ticks, preemption when
 * a slice ends or a higher-priority thread wakes. The kernel is non-preemptive: switches
 * happen only at explicit points (blocking, yield, and just before returning to user mode).
 *
 * Every thread has a CPU (t->cpu): the one it runs on, or whose queue holds it, or where it
 * wakes next; it changes only while the thread does not run (migrate). A woken thread goes
 * to its own CPU, unless that one has threads waiting already and another CPU it may use
 * idles; a CPU with nothing of its own to run takes (steals) a ready thread from another.
 * Every balance_ticks ticks a busy CPU hands one of its ready threads to an idle CPU, or
 * else pulls one from the busiest CPU when that one has at least two more threads (running
 * or ready) than it. Waking a thread on
 * another CPU sends that CPU the reschedule IPI when the thread should preempt what runs
 * there; so does a kill or stop of a thread running there. Everything here runs under the
 * big kernel lock (klock.h).
 */
#include "arch.h"
#include "kernel.h"
#include "klock.h"
#include "pcnt.h"
#include "fwd.h"
#include "options.h"
#include "sched.h"
#include "smpbench.h"
#include "task.h"
#include "thread.h"
#include "vm.h"
#include "waitq.h"

_Static_assert(PRIO_MAX + 1 == 256 && MAX_CPUS <= 32, "cpu.h: run queue and affinity sizes");

static struct thread *sleepers;      /* unsorted; scanned each tick of the bootstrap CPU */
static volatile u64 ticks;
u64 slice_ticks = 1;
u64 balance_ticks = 4;               /* option balance_ticks: 0 = no periodic balancing */
bool smp_sched = true;               /* option smp_sched: the other CPUs run threads */
u32 sched_cpus = 1;                  /* the CPUs that schedule threads: bit n = cpus[n] */

/* ---- run queues --------------------------------------------------------------------- */
/* Queue indices come from t->prio; only user and server threads (0..PRIO_MAX) are ever
 * queued. The idle threads (prio -1) never are: an index outside would write next to the
 * arrays and shift the bitmap by a negative amount. c is cpus[t->cpu]. */
static void rq_push(struct cpu *c, struct thread *t)
{
    int p = t->prio;
    ASSERT(p >= 0 && p <= PRIO_MAX);
    t->q_next = NULL;
    t->q_prev = c->rq_tail[p];
    if (c->rq_tail[p])
        c->rq_tail[p]->q_next = t;
    else
        c->rq_head[p] = t;
    c->rq_tail[p] = t;
    c->rq_bitmap[p / 64] |= 1ull << (p % 64);
    c->rq_words |= 1ull << (p / 64);
}

static void rq_remove(struct cpu *c, struct thread *t)
{
    int p = t->prio;
    ASSERT(p >= 0 && p <= PRIO_MAX && c->rq_head[p]);
    if (t->q_prev)
        t->q_prev->q_next = t->q_next;
    else
        c->rq_head[p] = t->q_next;
    if (t->q_next)
        t->q_next->q_prev = t->q_prev;
    else
        c->rq_tail[p] = t->q_prev;
    t->q_next = t->q_prev = NULL;
    if (!c->rq_head[p]) {
        c->rq_bitmap[p / 64] &= ~(1ull << (p % 64));
        if (!c->rq_bitmap[p / 64])
            c->rq_words &= ~(1ull << (p / 64));
    }
}

static int cpu_highest_prio(const struct cpu *c)
{
    if (!c->rq_words)
        return -1;
    int w = 63 - __builtin_clzll(c->rq_words);
    return w * 64 + 63 - __builtin_clzll(c->rq_bitmap[w]);
}

int rq_highest_prio(void) { return cpu_highest_prio(this_cpu()); }

/* The current thread goes back into this CPU's queue (it keeps running until a switch). */
void rq_add(struct thread *t)
{
    t->state = T_READY;
    rq_push(this_cpu(), t);
}

struct thread *current_thread(void) { return this_cpu()->current; }

/* t (not running) moves to cpus[cpu]: its x87/SSE state comes home first. False when the
 * CPU holding that state did not answer; t then stays. The destination counts the move
 * and its cost (the eviction, an IPI round trip when another CPU holds the state). */
static bool migrate(struct thread *t, int cpu, enum move_cause why)
{
    if (t->cpu == cpu)
        return true;
    u64 t0 = rdtsc();
    bool moved = thread_fpu_evict(t);
    if (moved)
        t->cpu = (u8)cpu;
    cpus[cpu].moves[why] += moved;
    cpus[cpu].move_tsc += rdtsc() - t0;
    return moved;
}

static bool cpu_idles(const struct cpu *c) { return c->current == c->idle && !c->rq_words; }

/* Whether a woken thread stays on its own CPU c: it may run there and nothing waits
 * there already (or c idles). The common case, tested inline. */
static inline bool stays_home(const struct cpu *c, const struct thread *t)
{
    return (t->affinity >> c->id & 1) && (!c->rq_words || c->current == c->idle);
}

/* Where a woken thread goes when it does not stay home: an idle CPU it may use; else its
 * own CPU if allowed; else the first allowed. (SYS_THREAD_AFFINITY keeps affinity &
 * sched_cpus non-empty.) */
static int place_elsewhere(const struct thread *t)
{
    u32 allowed = t->affinity & sched_cpus;
    bool home_ok = allowed & (1u << t->cpu);
    for (u32 m = allowed; m; m &= m - 1) {
        int cpu = __builtin_ctz(m);
        if (cpu_idles(&cpus[cpu]))
            return cpu;
    }
    return home_ok ? t->cpu : __builtin_ctz(allowed);
}

/* t, just queued on c, should run before what runs there now: ask for a reschedule there. */
static void kick(struct cpu *c, const struct thread *t)
{
    struct thread *cur = c->current;
    if (cur && (cur == c->idle || t->prio > cur->prio)) {
        c->need_resched = true;
        if (c != this_cpu())
            ipi_send(c->id, VEC_IPI_RESCHED);
    }
}

void make_ready(struct thread *t)
{
    struct cpu *c = &cpus[t->cpu];
    if (!stays_home(c, t)) {
        migrate(t, place_elsewhere(t), MOVE_WAKE);  /* if the CPU holding its x87 state is */
        c = &cpus[t->cpu];                          /* wedged, it stays */
    }
    t->state = T_READY;
    rq_push(c, t);
    kick(c, t);
}

/* A new priority for a user thread (never idle: it is READY without being queued). */
void sched_set_priority(struct thread *t, int prio)
{
    ASSERT(t->prio >= 0 && prio >= 0 && prio <= PRIO_MAX);
    if (t->state == T_READY) {
        struct cpu *c = &cpus[t->cpu];
        rq_remove(c, t);
        t->prio = prio;
        rq_push(c, t);
        kick(c, t);
    } else {
        t->prio = prio;
    }
    int top = rq_highest_prio();
    if (top > current_thread()->prio)
        this_cpu()->need_resched = true;
}

/* SYS_THREAD_AFFINITY: t may run only on the CPUs in mask (bit n = cpus[n]). E_INVAL
 * unless mask names a CPU that schedules threads. A queued thread moves at once; a
 * running one at its next switch (the reschedule IPI brings that soon). */
int sched_set_affinity(struct thread *t, u32 mask)
{
    if (!(mask & sched_cpus))
        return E_INVAL;
    t->affinity = mask;
    if (mask & (1u << t->cpu))
        return 0;
    if (t->state == T_READY && t->prio >= 0) {
        rq_remove(&cpus[t->cpu], t);
        make_ready(t);
    } else if (t->state == T_RUNNING && thread_on_cpu(t)) {
        struct cpu *c = &cpus[t->cpu];
        c->need_resched = true;
        if (c != this_cpu())
            ipi_send(c->id, VEC_IPI_RESCHED);
    }
    return 0;
}

/* The highest-priority ready thread of o that may run on c and is above priority `above`
 * (the first of its priority: the one that waited longest, whose caches are the coldest),
 * or NULL. */
static struct thread *movable(const struct cpu *o, const struct cpu *c, int above)
{
    for (int p = cpu_highest_prio(o); p > above; p--)
        for (struct thread *t = o->rq_head[p]; t; t = t->q_next)
            if (t->affinity & (1u << c->id))
                return t;
    return NULL;
}

/* t, ready on another CPU, is taken from that queue and moved to c (not queued there);
 * false if its x87/SSE state could not be fetched (it stays queued where it was). */
static bool take(struct thread *t, struct cpu *c, enum move_cause why)
{
    rq_remove(&cpus[t->cpu], t);
    if (migrate(t, c->id, why))
        return true;
    rq_push(&cpus[t->cpu], t);
    return false;
}

/* The highest-priority ready thread of another CPU that may run on c, taken from its
 * queue and moved to c; NULL if none (an idle CPU steals). */
static struct thread *steal(struct cpu *c)
{
    struct thread *best = NULL;
    for (u32 m = sched_cpus & ~(1u << c->id); m; m &= m - 1) {
        struct thread *t = movable(&cpus[__builtin_ctz(m)], c, best ? best->prio : -1);
        if (t)
            best = t;
    }
    return best && take(best, c, MOVE_STEAL) ? best : NULL;
}

/* Threads on c: the one running (not the idle thread) and the ready ones. */
static unsigned cpu_load(const struct cpu *c)
{
    unsigned n = c->current && c->current != c->idle;
    for (u64 w = c->rq_words; w; w &= w - 1) {
        int i = __builtin_ctzll(w);
        for (u64 b = c->rq_bitmap[i]; b; b &= b - 1)
            for (const struct thread *t = c->rq_head[i * 64 + __builtin_ctzll(b)]; t; t = t->q_next)
                n++;
    }
    return n;
}

/* t, taken from its CPU's queue and moved to c, is queued there (and c told if it
 * should preempt what c runs). */
static void move_to(struct thread *t, struct cpu *c)
{
    if (!take(t, c, MOVE_BALANCE))
        return;
    t->state = T_READY;
    rq_push(c, t);
    kick(c, t);
}

/* An idle CPU that may run one of c's ready threads gets it (and the reschedule IPI);
 * false if there is none. An idle CPU looks for work itself at each of its ticks, but
 * under QEMU's -icount a halted vCPU was seen to take next to no ticks while another vCPU
 * was busy (docs/smp.md), so the busy CPU hands the work over. */
static bool push_to_idle(struct cpu *c)
{
    for (u32 m = sched_cpus & ~(1u << c->id); m; m &= m - 1) {
        struct cpu *o = &cpus[__builtin_ctz(m)];
        struct thread *t = cpu_idles(o) ? movable(c, o, -1) : NULL;
        if (t) {
            move_to(t, o);
            return true;
        }
    }
    return false;
}

/* Periodic balancing, on a busy CPU c every balance_ticks of its ticks: a ready thread of
 * c goes to an idle CPU that may run it; else the CPU with the most threads gives c one
 * that may run on c when it has two or more threads more than c (moving one for a
 * difference of one would only swap the imbalance, each move costing caches and perhaps
 * an x87/SSE eviction). */
static void balance(struct cpu *c)
{
    if (!balance_ticks || sched_cpus == 1u << c->id || ++c->balance_wait < balance_ticks)
        return;
    c->balance_wait = 0;
    if (c->rq_words && push_to_idle(c))
        return;
    unsigned most = cpu_load(c) + 1;
    struct cpu *busiest = NULL;
    for (u32 m = sched_cpus & ~(1u << c->id); m; m &= m - 1) {
        struct cpu *o = &cpus[__builtin_ctz(m)];
        unsigned n = cpu_load(o);
        if (n > most && movable(o, c, -1)) {
            most = n;
            busiest = o;
        }
    }
    if (busiest)
        move_to(movable(busiest, c, -1), c);
}

/* The next thread for c: its own queue first, else a stolen one, else NULL. */
static struct thread *pick_next(struct cpu *c)
{
    int p = cpu_highest_prio(c);
    if (p < 0)
        return smp_sched ? steal(c) : NULL;
    struct thread *t = c->rq_head[p];
    rq_remove(c, t);
    return t;
}

/* ---- switching ---------------------------------------------------------------------- */
extern void swtch(u64 *save_rsp, u64 new_rsp);

static void finish_switch(struct cpu *c)
{
    pcnt_probe_stop(PROBE_CTXSW);
    if (c->dead) {
        struct thread *d = c->dead;
        c->dead = NULL;
        thread_free(d);
    }
}

extern void thread_start(void);

/* A switch frame just below a thread's trapframe: swtch() "returns" into thread_start,
 * which leaves the kernel through the frame. Built only when the thread is switched to,
 * because while it ran, its stack below tf held live kernel frames. */
static u64 continuation_from_tf(struct thread *t)
{
    u64 *sp = (u64 *)t->tf;
    *--sp = (u64)thread_start;
    for (int i = 0; i < 6; i++)
        *--sp = 0;
    return (u64)sp;
}

static void switch_to(struct thread *prev, struct thread *next)
{
    struct cpu *c = this_cpu();
    u64 discard;
    c->current = next;
    cpu_set_kernel_stack(c, next->kstack + KSTACK_SIZE);
    if (next->resume_via_tf) {
        next->resume_via_tf = false;
        next->ksp = continuation_from_tf(next);
    }
    if (next->task) {
        cpu_count_switch(aspace_switch(next->task->as));
    } else {
        cpu_count_switch(false);
        c->loaded_cr3 = read_cr3();    /* kept, lazily, by the idle thread (TLB shootdown) */
    }
    thread_user_context(c, next);
    thread_fpu_switch(c, next);
    if (pcnt_probes_on) {
        pcnt_abort(PROBE_SYSCALL);
        pcnt_abort(PROBE_IPC_SLOW);
        pcnt_abort(PROBE_VM_MAP);
        pcnt_abort(PROBE_VM_UNMAP);
        pcnt_start(PROBE_CTXSW, (u64)next->tid);
    }
    /* A thread blocked without a continuation is never resumed on this stack. */
    swtch(prev->resume_via_tf ? &discard : &prev->ksp, next->ksp);
    /* back on prev's stack, perhaps on another CPU (it may have migrated) */
    c = this_cpu();
    finish_switch(c);
}

void schedule(void)
{
    struct cpu *c = this_cpu();
    struct thread *prev = c->current;
    c->need_resched = false;
    if (prev->state == T_RUNNING && prev != c->idle) {  /* idle is never queued: it runs */
        if (prev->affinity & (1u << c->id)) {            /* when nothing else can */
            prev->state = T_READY;
            rq_push(c, prev);
        } else {
            make_ready(prev);                            /* its affinity changed */
        }
    }
    struct thread *next = pick_next(c);
    if (!next)
        next = c->idle;
    next->state = T_RUNNING;
    if (next->slice_left == 0)
        next->slice_left = (u32)slice_ticks;
    if (next == prev)
        return;
    switch_to(prev, next);
}

/* Called by thread_start (entry.S) when a thread without a kernel continuation runs. */
void thread_first_run(void)
{
    struct cpu *c = this_cpu();
    finish_switch(c);
}

/* Last kernel step of every system call (entry.S exit_to_user), on the returning thread's
 * own stack, just before its registers are restored. */
void kernel_exit_to_user(struct trapframe *tf)
{
    (void)tf;
    sched_leave_kernel();
}

/* Whether some other CPU has a ready thread c may take (the idle loop's test). */
static bool stealable(const struct cpu *c)
{
    if (!smp_sched)
        return false;
    for (u32 m = sched_cpus & ~(1u << c->id); m; m &= m - 1) {
        const struct cpu *o = &cpus[__builtin_ctz(m)];
        for (int p = cpu_highest_prio(o); p >= 0; p--)
            for (struct thread *t = o->rq_head[p]; t; t = t->q_next)
                if (t->affinity & (1u << c->id))
                    return true;
    }
    return false;
}

/* Every CPU's idle thread: runs what its queue holds or what it can steal, else halts with
 * the kernel lock released until an interrupt (its timer, or a reschedule IPI). */
static void idle_loop(void)
{
    struct cpu *c = this_cpu();
    finish_switch(c);
    for (;;) {
        if (c->rq_words || stealable(c)) {
            schedule();
            continue;
        }
        c->need_resched = false;
        kernel_unlock();
        u64 halted = rdtsc();
        wait_for_interrupt();
        c->idle_tsc += rdtsc() - halted;
        kernel_lock();
    }
}

/* This CPU's idle thread; on the bootstrap CPU also the go-ahead for the others. */
void sched_init(void)
{
    struct cpu *c = this_cpu();
    c->idle = thread_create_kernel(idle_loop, -1);
    ASSERT(c->idle);
    c->idle->cpu = (u8)c->id;
    c->idle->affinity = 1u << c->id;
}

static volatile bool aps_may_join;

/* Before the started CPUs are let in (the banner): those that will run threads; after,
 * those that do (all of them, unless one failed to join in time: sched_release_aps). */
unsigned cpus_scheduling(void)
{
    if (!smp_sched)
        return 1;
    if (!aps_may_join)
        return cpus_running;
    unsigned n = 0;
    for (u32 m = sched_cpus; m; m &= m - 1)   /* no popcnt in the kernel's target */
        n++;
    return n;
}

#define AP_JOIN_TIMEOUT_US 2000000

/* The bootstrap CPU, its first threads made: the started CPUs join (sched_ap_main), and it
 * waits, the kernel lock released, until they have, as Linux brings its CPUs online before
 * init runs. Else the first programs ran while a counted CPU did not yet schedule, and an
 * affinity to it was EINVAL (smptest shootdown's reader hung its test under host load).
 * The wait is a spin, bounded, that answers the other CPUs' calls, shootdowns and stop
 * (interrupts are off here; the CPUs that joined already run the first programs, and one
 * of them may power off: 3 of 10 loaded boots missed this CPU's stop before); see
 * sched_ap_main for why not pause or hlt. */
void sched_release_aps(void)
{
    if (!smp_sched || cpus_running <= 1)
        return;
    u32 all = (u32)((1ull << cpus_running) - 1);
    __atomic_store_n(&aps_may_join, true, __ATOMIC_RELEASE);
    ipi_send_others(VEC_IPI_RESCHED);
    u64 deadline = rdtsc() + tsc_hz() / 1000000 * AP_JOIN_TIMEOUT_US;
    kernel_unlock();
    while (__atomic_load_n(&sched_cpus, __ATOMIC_ACQUIRE) != all && rdtsc() < deadline)
        ipi_poll();                    /* the joined CPUs run programs meanwhile: answer */
    kernel_lock();
    if (sched_cpus != all)
        printk("smp: CPUs %#x did not join the scheduler within 2 s: they run no threads\n",
               all & ~sched_cpus);
}

/* A started CPU (smp.c): it waits with its timer masked, answering IPIs, until the
 * bootstrap CPU lets it join, then makes its idle thread, starts its timer and schedules.
 * With smp_sched=off (or an smpbench workload) it waits for good, halted. The wait is a plain spin, neither `pause` nor
 * `hlt`: under -icount QEMU 7.2's round-robin loop did not run a vCPU that paused or
 * halted (timer masked) again while the bootstrap CPU kept busy, so it never saw the
 * go-ahead (docs/smp.md). So is the wait for a free kernel lock before taking it: in
 * a boot straight into a busy program (`./ondol bench aim`) the bootstrap CPU never
 * idled, and a CPU pausing in kernel_lock never joined. Interrupts stay on for the call
 * and stop IPIs. */
void sched_ap_main(void)
{
    lapic_timer_mask();
    if (!smp_sched || smpbench_mode != SMPBENCH_NONE)   /* never to join: halt, as the */
        for (;;)                                        /* coherence model expects */
            wait_for_interrupt();
    sti();
    while (!__atomic_load_n(&aps_may_join, __ATOMIC_ACQUIRE))
        ;
    while (__atomic_load_n(&kernel_bkl_byte, __ATOMIC_RELAXED))  /* the same for the lock: */
        ;                                  /* kernel_lock's wait pauses (timer still masked) */
    cli();
    kernel_lock();
    sched_init();
    __atomic_or_fetch(&sched_cpus, 1u << this_cpu()->id, __ATOMIC_RELEASE);
    lapic_timer_start_ap();
    sched_start();
}

void sched_start(void)
{
    struct cpu *c = this_cpu();
    u64 boot_sp;                       /* the boot stack is abandoned here */
    c->current = c->idle;
    c->idle->state = T_RUNNING;
    cpu_set_kernel_stack(c, c->idle->kstack + KSTACK_SIZE);
    swtch(&boot_sp, c->idle->ksp);
    panic("sched_start returned");
}

/* THREAD_CTL_STOP reached t at its return to user mode: it waits there, its registers
 * complete in its frame (the controller may read and write them), until THREAD_CTL_RESUME
 * or a kill wakes it; then the exit checks run again. */
static void stop_here(struct thread *t)
{
    t->killed = false;
    t->interrupt = KILL_EXIT;
    t->stopped = true;
    t->state = T_BLOCKED;
    schedule();
    t->stopped = false;
}

/* A killed thread exits, unless `killed` carries an interrupt of a Linux thread (fwd.c),
 * which makes its forwarded "interrupted" call instead (in IK form it returns here once
 * answered, and the thread goes on to user mode unless the answer killed it), or a stop.
 * Out of line: the exit check is one test on every return to user mode. */
static __attribute__((noinline, cold)) void leave_killed(struct thread *t)
{
    if (t->interrupt == KILL_STOP) {
        stop_here(t);
        return;
    }
    if (t->interrupt) {
        fwd_interrupt(t);
        if (!t->killed)
            return;
    }
    thread_exit(t->task ? t->task->exit_status : 0);
}

/* t has something to do at its next exit check (a kill, stop or interrupt): if it runs on
 * another CPU, that CPU gets the reschedule IPI, whose handler runs the exit checks when
 * it interrupts user mode, so that a thread spinning there stops now rather than at its
 * next tick or system call. (A CPU that is entering the kernel for t meanwhile takes the
 * IPI after the lock and finds nothing left to do.) */
void thread_poke(const struct thread *t)
{
    if (t->state == T_RUNNING && thread_on_cpu(t) && t->cpu != this_cpu()->id)
        ipi_send(t->cpu, VEC_IPI_RESCHED);
}

void thread_kill(struct thread *t)
{
    t->killed = true;
    t->interrupt = KILL_EXIT;             /* a kill wins over an interrupt or a stop */
    thread_wake(t, WAIT_KILLED);
    thread_poke(t);
}

int thread_stop(struct thread *t)
{
    if (t->stopped)
        return 1;
    if (t->killed && t->interrupt != KILL_STOP)
        return E_INVAL;               /* being killed or interrupted */
    t->killed = true;
    t->interrupt = KILL_STOP;
    thread_poke(t);
    return 0;
}

void thread_resume(struct thread *t)
{
    if (t->stopped)
        thread_wake(t, 0);
    else if (t->killed && t->interrupt == KILL_STOP) {   /* the stop had not happened yet */
        t->killed = false;
        t->interrupt = KILL_EXIT;
    }
}

/* The exit checks once there is something to do: a kill (or stop, or interrupt) of the
 * running thread, or a reschedule; each may leave the other to do. */
/* Out of line even here, so that the exit of every system call (kernel_exit_to_user)
 * keeps its two-byte test without the loop's frame. c: this CPU at the call; the loop
 * reads it again each time, as schedule() may migrate the thread. */
__attribute__((noinline)) void sched_exit_checks_loop(struct cpu *c)
{
    for (;;) {
        struct thread *t = c->current;
        if (t->killed)
            leave_killed(t);
        else if (c->need_resched)
            schedule();
        else
            return;
        c = this_cpu();                       /* again: schedule() may migrate us */
    }
}

/* ---- sleeping and timeouts ----------------------------------------------------- */
u64 ticks_now(void) { return ticks; }

static void sleep_add(struct thread *t, u64 wake_tick)
{
    t->wake_tick = wake_tick;
    t->sleeping = true;
    t->sleep_prev = NULL;
    t->sleep_next = sleepers;
    if (sleepers)
        sleepers->sleep_prev = t;
    sleepers = t;
}

static void sleep_remove(struct thread *t)
{
    if (!t->sleeping)
        return;
    if (t->sleep_prev)
        t->sleep_prev->sleep_next = t->sleep_next;
    else
        sleepers = t->sleep_next;
    if (t->sleep_next)
        t->sleep_next->sleep_prev = t->sleep_prev;
    t->sleeping = false;
    t->sleep_next = t->sleep_prev = NULL;
}

void thread_unblock(struct thread *t)
{
    if (t->waiting_on)
        waitq_remove(t->waiting_on, t);
    sleep_remove(t);
}

void sleep_until(struct thread *t, u64 timeout)
{
    if (timeout != WAIT_FOREVER)
        sleep_add(t, ticks + MIN(timeout, UINT64_MAX - ticks));   /* saturate, never wrap */
}

/* Wake a blocked or sleeping thread with `result` as the value its wait returns. A thread
 * blocked without a kernel continuation (IPC) gets the result straight in its rax. */
void thread_wake(struct thread *t, int result)
{
    if (t->state != T_BLOCKED && t->state != T_SLEEPING)
        return;
    thread_unblock(t);
    t->wait_result = result;
    if (t->resume_via_tf) {
        t->tf->rax = (u64)(i64)result;
        t->ipc_state = 0;
    }
    make_ready(t);
}

int thread_sleep(u64 n)
{
    struct thread *t = current_thread();
    if (n == 0) {
        schedule();
        return 0;
    }
    if (thread_dying(t))
        return WAIT_KILLED;
    sleep_until(t, n);
    t->state = T_SLEEPING;
    schedule();
    return thread_dying(t) ? WAIT_KILLED : 0;
}

/* Timer interrupt, kernel lock held. Every CPU counts its running thread's slice; the
 * bootstrap CPU's timer is the clock (ticks) and wakes the sleepers. */
void sched_tick(void)
{
    struct cpu *c = this_cpu();
    struct thread *cur = c->current;
    if (cur != c->idle) {
        cur->ticks++;
        if (cur->slice_left > 0 && --cur->slice_left == 0)
            c->need_resched = true;
        balance(c);
    }
    if (c->id != 0)
        return;
    ticks++;
    for (struct thread *t = sleepers, *next; t; t = next) {
        next = t->sleep_next;
        if (t->wake_tick <= ticks)
            thread_wake(t, t->state == T_BLOCKED ? E_TIMEOUT : 0);
    }
}
