/*
 * The scheduler (docs/smp.md "Scheduling"): one run queue per CPU, 256 priorities (255
 * highest), round-robin within a priority, a time slice of `slice` ticks, preemption when
 * a slice ends or a higher-priority thread wakes. The kernel is non-preemptive: switches
 * happen only at explicit points (blocking, yield, and just before returning to user mode).
 *
 * Every thread has a CPU (t->cpu): the one it runs on, or whose queue holds it, or where it
 * wakes next; it changes only while the thread does not run (migrate). A new thread made
 * in another task (make_ready_new: a new Linux process) starts on an idle CPU. A woken
 * thread goes to its own CPU when that idles, or is its waker's with nothing waiting;
 * else to the idle CPU nearest (place_woken); a CPU with nothing of its own to run takes
 * (steals) a ready thread from another, but leaves a thread a wake-up queued on an idle
 * CPU there for a tick or two (steal_from_ok), not one queued behind it (stealable_from).
 * Every balance_ticks ticks a busy CPU hands one of its ready threads to an idle CPU, or
 * else pulls one from the busiest CPU when that one has at least two more threads
 * (running or ready) than it. Waking a thread on
 * another CPU sends that CPU the reschedule IPI when the thread should preempt what runs
 * there; so does a kill or stop of a thread running there.
 *
 * Locking (docs/smp.md "The scheduler's own locks", "Wake-ups and switches without the
 * BKL"). Each run queue has its lock (struct cpu's rq_lock, class rq: after bkl and sleep,
 * before ipi_call), and it is the lock of every thread whose CPU it is: a thread's state,
 * CPU and affinity change only under cpus[t->cpu].rq_lock (rq_lock_of), whether it is
 * queued, blocked or running there. The one exception is the thread's own step from
 * running to blocked, sleeping or zombie, which it writes itself before it becomes
 * findable by a waker (put on a wait queue or the sleep list under that list's lock), so
 * the waker's test of the state under the queue's lock sees it; make_ready queues only a
 * blocked or sleeping thread, so two wakers on two CPUs queue it once. Two queues are
 * taken lower CPU id first (rq_lock_two, rq_lock_also). The sleep list has its own lock
 * (class sleep). None of this code needs the big kernel lock: the lock checker asserts
 * the locks each step needs (spin_assert_held). What still needs a lock from outside is
 * a thread's link into a wait queue and its IPC state: the BKL, or the queue's own lock
 * (for IPC a thread's ipc lock, ipc.c; thread_wake asserts one or the other), and the
 * IPC direct switch, which claims a blocked partner without its queue's lock (the BKL).
 *
 * A thread can be woken (or queued, yielding) before the CPU it ran on has left its kernel
 * stack: t->on_cpu is set when a thread becomes a CPU's current one and cleared (release)
 * once that CPU is off its stack (finish_switch after swtch; the exit checks after a
 * direct IPC switch, which leaves through the partner's frame). The rule, Linux's: no CPU
 * switches to a thread still on another CPU, and a switch never waits. A thread on a CPU
 * stays in that CPU's queue (t->cpu changes only while t is off every CPU: migrate); a
 * waker that would place it elsewhere first waits, holding no run-queue lock, for that
 * CPU to finish its switch (queue_at), and a thief or the balancer skips it (may_take).
 * A wait for on_cpu is thus always a wait for a CPU in the middle of a switch, which
 * waits for nothing but run-queue locks and IPI answers: no cycle (docs/smp.md "No
 * switch to a thread still on another CPU").
 */
#include "arch.h"
#include "kernel.h"
#include "klock.h"
#include "lockcheck.h"
#include "pcnt.h"
#include "fwd.h"
#include "ipc.h"
#include "options.h"
#include "sched.h"
#include "smpbench.h"
#include "task.h"
#include "thread.h"
#include "vm.h"
#include "waitq.h"

_Static_assert(PRIO_MAX + 1 == 256 && MAX_CPUS <= 64, "cpu.h: run queue and cpumask_t sizes");

static struct spinlock sleep_lock = SPINLOCK_INIT(SLEEP);
static struct thread *sleepers;      /* unsorted, under sleep_lock; scanned when one is due */
static u64 next_wake = UINT64_MAX;   /* no sleeper due before this tick (written under
                                        sleep_lock, read by the bootstrap CPU's tick without) */
static volatile u64 ticks;
u64 slice_ticks = 1;
u64 balance_ticks = 4;               /* option balance_ticks: 0 = no periodic balancing */
bool smp_sched = true;               /* option smp_sched: the other CPUs run threads */
cpumask_t sched_cpus = 1;            /* the CPUs that schedule threads: bit n = cpus[n] */

/* ---- run queues --------------------------------------------------------------------- */
/* Queue indices come from t->prio; only user and server threads (0..PRIO_MAX) are ever
 * queued. The idle threads (prio -1) never are: an index outside would write next to the
 * arrays and shift the bitmap by a negative amount. c is cpus[t->cpu], its lock held
 * (asserted by their callers: a call to the checker here would give these leaf functions
 * a frame, which the DTS-off round trip pays four times). */
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

/* Without c's lock: a hint that may be stale by the time it is used (the IPC priority
 * rule reads this CPU's, as the fastpath does; a steal chooses its victim by it). */
static int cpu_peek_prio(const struct cpu *c)
{
    u64 words = __atomic_load_n(&c->rq_words, __ATOMIC_RELAXED);
    if (!words)
        return -1;
    int w = 63 - __builtin_clzll(words);
    u64 bits = __atomic_load_n(&c->rq_bitmap[w], __ATOMIC_RELAXED);
    return bits ? w * 64 + 63 - __builtin_clzll(bits) : -1;
}

int rq_highest_prio(void) { return cpu_peek_prio(this_cpu()); }

static inline void rq_lock(struct cpu *c) { spin_lock(&c->rq_lock); }
static inline void rq_unlock(struct cpu *c) { spin_unlock(&c->rq_lock); }

/* Two queues' locks (a != b), lower CPU id first. */
static void rq_lock_two(struct cpu *a, struct cpu *b)
{
    struct cpu *lo = a->id < b->id ? a : b;
    spin_lock(&lo->rq_lock);
    spin_lock_nested(&(lo == a ? b : a)->rq_lock);
}

static void rq_unlock_two(struct cpu *a, struct cpu *b)
{
    rq_unlock(a);
    rq_unlock(b);
}

/* c's lock held: o's too (o != c), in the order. False when c's had to be let go for it
 * (o has the lower id): c's queue may have changed meanwhile. */
static bool rq_lock_also(struct cpu *c, struct cpu *o)
{
    if (c->id < o->id) {
        spin_lock_nested(&o->rq_lock);
        return true;
    }
    rq_unlock(c);
    rq_lock_two(c, o);
    return false;
}

/* The queue of t, locked: t's own lock (its state, CPU, affinity). Its CPU may change
 * until that lock is held (balancing or a steal moves a queued thread, a waker places a
 * woken one): take it, and again if t moved meanwhile. Always inline, as place_elsewhere:
 * gcc's code for the wake-up paths is then the same as before make_ready_new was added
 * (P1's IPC rows stay identical, icount). */
static inline __attribute__((always_inline)) struct cpu *rq_lock_of(struct thread *t)
{
    for (;;) {
        struct cpu *c = &cpus[__atomic_load_n(&t->cpu, __ATOMIC_RELAXED)];
        rq_lock(c);
        if (t->cpu == c->id)
            return c;
        rq_unlock(c);
    }
}

/* The current thread goes back into this CPU's queue (it keeps running until a switch). */
void rq_add(struct thread *t)
{
    struct cpu *c = this_cpu();
    rq_lock(c);
    t->state = T_READY;
    rq_push(c, t);
    rq_unlock(c);
}

struct thread *current_thread(void) { return this_cpu()->current; }

/* t, off every CPU, moves to cpus[cpu]: its x87/SSE state comes home first. False when
 * the CPU holding that state did not answer, or when t is still on its CPU (on_cpu: the
 * one it runs on or is leaving; the callers make sure it is not, this is the rule's last
 * guard, docs/smp.md "No switch to a thread still on another CPU"); t then stays. The
 * destination counts the move and its cost (the eviction, an IPI round trip when another
 * CPU holds the state). Both queues' locks held: t's (cpus[t->cpu]) and the destination's
 * (the counts are the destination's). */
static bool migrate(struct thread *t, int cpu, enum move_cause why)
{
    if (t->cpu == cpu)
        return true;
    if (__atomic_load_n(&t->on_cpu, __ATOMIC_ACQUIRE))
        return false;
    u64 t0 = rdtsc();
    bool moved = thread_fpu_evict(t);
    if (moved)
        t->cpu = (u8)cpu;
    cpus[cpu].moves[why] += moved;
    cpus[cpu].move_tsc += rdtsc() - t0;
    return moved;
}

/* Exact under c's lock, a hint without it. */
static bool cpu_idles(const struct cpu *c)
{
    return c->current == c->idle && !__atomic_load_n(&c->rq_words, __ATOMIC_RELAXED);
}

/* Whether a thread woken by the current thread of its own CPU c, which then blocks (IPC
 * without a direct switch: make_ready_and_schedule), stays there: it may run there and
 * nothing waits there already (or c idles): place_woken's choice in that case, tested
 * inline. */
static inline bool stays_home(const struct cpu *c, const struct thread *t)
{
    return (t->affinity >> c->id & 1) && (!c->rq_words || c->current == c->idle);
}

/* The idle CPU among `allowed` nearest CPU `near` by number (CPUs are numbered as the
 * firmware lists them, a package's cores together: the nearest shares the most cache
 * with near), the lower on a tie; -1 if none idles. Without the queues' locks: a hint. */
static inline __attribute__((always_inline)) int idle_nearest(cpumask_t allowed, int near)
{
    int best = -1, best_d = MAX_CPUS;
    for (cpumask_t m = allowed; m; m &= m - 1) {
        int cpu = cpumask_first(m), d = cpu > near ? cpu - near : near - cpu;
        if (d < best_d && cpu_idles(&cpus[cpu])) {
            best = cpu;
            best_d = d;
        }
    }
    return best;
}

/* Where a new thread made by another task goes (make_ready_new): an idle CPU it may use;
 * else its own CPU if allowed; else the first allowed. (SYS_THREAD_AFFINITY keeps affinity
 * & sched_cpus non-empty.) Read without the queues' locks: a placement, not a promise (a
 * CPU that stops idling meanwhile runs the thread after what it runs, or balancing moves
 * it). Always inline (rq_lock_of). */
static inline __attribute__((always_inline)) int place_elsewhere(const struct thread *t)
{
    cpumask_t allowed = t->affinity & sched_cpus;
    bool home_ok = allowed & cpu_bit(t->cpu);
    for (cpumask_t m = allowed; m; m &= m - 1) {
        int cpu = cpumask_first(m);
        if (cpu_idles(&cpus[cpu]))
            return cpu;
    }
    return home_ok ? t->cpu : cpumask_first(allowed);
}

/* Where a woken thread goes (Linux's select_task_rq for a wake-up), c being its own CPU
 * (the one it last ran on, its caches there):
 * - c, if it may run there and c idles (nothing runs or waits there);
 * - c, if c is the waker's CPU and nothing waits there: woken by what runs there, as P1's
 *   IPC pairs on one CPU (they keep switching directly on one CPU);
 * - else the idle CPU it may use nearest c;
 * - else c if it may run there (it waits its turn), else the first CPU it may use.
 * Before, a thread stayed on a busy c whenever nothing waited there, queued behind what
 * ran, and an idle CPU stole it later (docs/smp.md "Wake-up placement"). Tried and left
 * out: bringing the thread to the CPU of a waker that blocks right after (Linux's sync
 * wake-up; IPC's calls): it made the UNIX server follow its callers, and the AIM mix at 2
 * CPUs ran 78 % of its instructions on one. Read without the other queues' locks: a
 * placement, not a promise. Always inline (rq_lock_of). */
static inline __attribute__((always_inline)) int place_woken(const struct cpu *c,
                                                             const struct thread *t)
{
    cpumask_t allowed = t->affinity & sched_cpus;
    bool home_ok = allowed >> c->id & 1;
    if (home_ok && (cpu_idles(c) || (c == this_cpu() && !c->rq_words)))
        return c->id;
    int idle = idle_nearest(allowed, c->id);
    if (idle >= 0)
        return idle;
    return home_ok ? c->id : cpumask_first(allowed);
}

/* t, just queued on c (c's lock held), should run before what runs there now: ask for a
 * reschedule there. c->current is exact here when schedule set it (under c's lock); the
 * IPC direct switches change it without that lock (under the two threads' ipc locks),
 * between two threads neither of which is the idle thread, so a waker may compare t with
 * the one just switched from: at worst t waits for that CPU's next tick or switch.
 * True when c is another CPU, which the caller then sends the reschedule IPI once it has
 * let go of c's lock (kick_ipi). Sent under the lock, the IPI kept that lock held across
 * three local-APIC accesses, each slow when the APIC is emulated (QEMU takes its global
 * lock for each): c's own schedule spun on its queue's lock meanwhile, and on 4 vCPUs of
 * a 2-core host a pipeline of small writes ran 5 times slower than on one (docs/smp.md
 * "The IPI after the queue's lock"). The IPI may come later than the push; it still
 * comes, and a CPU that found the thread on its own meanwhile takes an IPI for nothing. */
static bool kick(struct cpu *c, const struct thread *t)
{
    spin_assert_held(&c->rq_lock);
    struct thread *cur = c->current;
    if (cur && (cur == c->idle || t->prio > cur->prio)) {
        c->need_resched = true;
        return c != this_cpu();
    }
    return false;
}

/* The reschedule IPI kick asked for, sent with no queue lock held. */
static inline void kick_ipi(bool owed, int cpu)
{
    if (owed)
        ipi_send(cpu, VEC_IPI_RESCHED);
}

/* Whether t waits to be made ready: blocked or sleeping (a new thread starts blocked). */
static inline bool waits(const struct thread *t)
{
    return t->state == T_BLOCKED || t->state == T_SLEEPING;
}

/* Whether t, ready, is in c's queue (c's lock held): a ready thread is in no queue only
 * while make_ready_locked places it, and the others leave it alone then. */
static inline bool queued_on(const struct cpu *c, const struct thread *t)
{
    return t->q_prev || c->rq_head[t->prio] == t;
}

/* Claimed t (ready, in no queue) is still on its CPU c, another CPU, which is between its
 * switch away from t and the end of that switch (t published its wait and was woken
 * meanwhile): c's lock (held) is let go until c is off t's stack, then taken again, so
 * that t can be moved. Bounded: c's way to the end of its switch waits for nothing but
 * run-queue locks, which nobody holds across a wait, and IPI answers, which this wait
 * gives (docs/smp.md "No switch to a thread still on another CPU"). t's CPU does not
 * change meanwhile: a claimed thread is moved only by its claimer. */
static __attribute__((noinline, cold)) void wait_left(struct cpu *c, struct thread *t)
{
    rq_unlock(c);
    sched_wait_off_cpu(t);
    rq_lock(c);
}

/* t, claimed ready, is queued on cpu (c, t's CPU, locked; let go on return): moved there
 * first when it is another and the move can be made (migrate: not if the CPU holding its
 * x87 state is wedged, nor while t is still on this CPU, the current thread or the one
 * being left, which this CPU never waits for: it then stays here), then a reschedule is
 * asked for where it waits. A thread still on another CPU is waited for first
 * (wait_left): a switch never waits for one, so the waker does, as Linux's. `woken`: a
 * wake-up's placement (make_ready_locked), not a new thread's; when it lands on an idle
 * CPU, that CPU's queue is left to it for a while (steal_from_ok). Inline in both callers,
 * so the wake-up paths' code is what it was before make_ready_new shared it. */
static inline __attribute__((always_inline)) void queue_at(struct cpu *c, struct thread *t,
                                                           int cpu, bool woken)
{
    if (cpu != c->id) {
        if (__atomic_load_n(&t->on_cpu, __ATOMIC_ACQUIRE) && c != this_cpu())
            wait_left(c, t);
        struct cpu *o = &cpus[cpu];
        rq_lock_also(c, o);
        if (migrate(t, cpu, MOVE_WAKE)) {
            rq_unlock(c);
            c = o;
        } else {
            rq_unlock(o);
        }
    }
    rq_push(c, t);
    if (woken && c->current == c->idle)
        c->woken_tick = ticks;             /* its queue is left alone a while: steal_from_ok */
    bool ipi = kick(c, t);
    rq_unlock(c);
    kick_ipi(ipi, c->id);
}

/* t, not queued (blocked, new, the running thread in schedule whose affinity left its
 * CPU, or a ready one taken off its queue for the same reason), is queued where it should
 * run; c is t's CPU, its lock held on entry, let go on return. t is ready from the start
 * (claimed): while c's lock is let go for the order of a placement elsewhere, another
 * waker finds it no longer waiting, a thief finds it in no queue, and the priority and
 * affinity calls leave a ready thread outside a queue alone (queued_on). A CPU holding its
 * x87 state that does not answer keeps it home. */
static void make_ready_locked(struct cpu *c, struct thread *t)
{
    spin_assert_held(&c->rq_lock);
    t->state = T_READY;
    queue_at(c, t, place_woken(c, t), true);
}

/* From any CPU, with or without the BKL: a thread already made ready (by another waker)
 * is left alone. */
void make_ready(struct thread *t)
{
    struct cpu *c = rq_lock_of(t);
    if (waits(t))
        make_ready_locked(c, t);
    else
        rq_unlock(c);
}

/* A new thread made by another task (sched.h): before its first run it has no cache to
 * lose, so it goes to an idle CPU it may use, as Linux places a new process at fork; with
 * none idle, to its own CPU (or the first it may use), where a wake-up would put it. It is
 * new: blocked, never run, its x87 state in its TCB, so the move costs no IPI (counted as
 * a wake-up's move). Claimed (ready) before c's lock may be let go for the order, as in
 * make_ready_locked; the queueing is theirs in common (queue_at). */
void make_ready_new(struct thread *t)
{
    struct cpu *c = rq_lock_of(t);
    if (!waits(t)) {
        rq_unlock(c);
        return;
    }
    t->state = T_READY;
    queue_at(c, t, place_elsewhere(t), false);
}

/* t, blocked and claimed by the caller (its ipc lock held: no waker can make it ready
 * meanwhile), comes to this CPU: when its own CPU idles (it would be woken there by an
 * IPI), it may run here, it is off its CPU and its x87/SSE state is not in that CPU's
 * registers (an idle CPU gives it back before halting: thread_fpu_idle). True when moved;
 * the caller then switches to it directly (IPC's wake_partner, for forwarded calls). */
bool sched_pull_blocked(struct thread *t)
{
    struct cpu *here = this_cpu(), *home = &cpus[t->cpu];
    if (home == here || !(t->affinity & cpu_bit(here->id)) || !cpu_idles(home))
        return false;
    rq_lock_two(here, home);
    bool moved = cpu_idles(home) && home->fpu_owner != t && migrate(t, here->id, MOVE_WAKE);
    rq_unlock_two(here, home);
    return moved;
}

/* A new priority for a user thread (never idle: it is READY without being queued). */
void sched_set_priority(struct thread *t, int prio)
{
    ASSERT(t->prio >= 0 && prio >= 0 && prio <= PRIO_MAX);
    struct cpu *c = rq_lock_of(t);
    bool ipi = false;
    if (t->state == T_READY && queued_on(c, t)) {
        rq_remove(c, t);
        t->prio = prio;
        rq_push(c, t);
        ipi = kick(c, t);
    } else {
        t->prio = prio;
    }
    rq_unlock(c);
    kick_ipi(ipi, c->id);
    int top = rq_highest_prio();
    if (top > current_thread()->prio)
        this_cpu()->need_resched = true;
}

/* SYS_THREAD_AFFINITY: t may run only on the CPUs in mask (bit n = cpus[n]). E_INVAL
 * unless mask names a CPU that schedules threads. A queued thread moves at once (once its
 * CPU is off its stack, if it is still on it: queue_at); a running one after its next
 * switch (the reschedule IPI brings that soon; after_switch places it). */
int sched_set_affinity(struct thread *t, cpumask_t mask)
{
    if (!(mask & sched_cpus))
        return E_INVAL;
    struct cpu *c = rq_lock_of(t);
    t->affinity = mask;
    if (mask & cpu_bit(t->cpu)) {
        rq_unlock(c);
    } else if (t->state == T_READY && t->prio >= 0 && queued_on(c, t)) {
        rq_remove(c, t);
        make_ready_locked(c, t);
    } else {
        if (t->state == T_RUNNING && thread_on_cpu(t)) {
            c->need_resched = true;
            if (c != this_cpu())
                ipi_send(c->id, VEC_IPI_RESCHED);
        }
        rq_unlock(c);
    }
    return 0;
}

/* Whether t, ready in o's queue (o's lock held), may be taken to c: c is in its affinity
 * and t is off every CPU. A queued thread still on o (its on_cpu set: o's current thread
 * queued before a direct IPC switch or a yield, until o is off its stack) is left to o,
 * which never waits for it; no CPU may set the flag of a thread in a queue whose lock it
 * does not hold, so the test stays true until the move (Linux's can_migrate_task). */
static bool may_take(const struct thread *t, const struct cpu *c)
{
    return (t->affinity & cpu_bit(c->id)) && !__atomic_load_n(&t->on_cpu, __ATOMIC_ACQUIRE);
}

/* The highest-priority ready thread of o that may be taken to c (may_take) and is above
 * priority `above` (the first of its priority: the one that waited longest, whose caches
 * are the coldest), or NULL. o's lock held. */
static struct thread *movable(const struct cpu *o, const struct cpu *c, int above)
{
    for (int p = cpu_highest_prio(o); p > above; p--)
        for (struct thread *t = o->rq_head[p]; t; t = t->q_next)
            if (may_take(t, c))
                return t;
    return NULL;
}

/* t, ready on another CPU, is taken from that queue and moved to c (not queued there);
 * false if its x87/SSE state could not be fetched (it stays queued where it was). Both
 * queues' locks held. */
static bool take(struct thread *t, struct cpu *c, enum move_cause why)
{
    spin_assert_held(&cpus[t->cpu].rq_lock);
    spin_assert_held(&c->rq_lock);
    rq_remove(&cpus[t->cpu], t);
    if (migrate(t, c->id, why))
        return true;
    rq_push(&cpus[t->cpu], t);
    return false;
}

/* Whether a CPU with nothing to run may take threads from o's queue (without o's lock: a
 * hint, as the choice of victim). Not while o idles itself and a wake-up queued a thread
 * there in the last tick or two (queue_at): it runs there as soon as o answers the
 * reschedule IPI, on the CPU chosen for its caches, and taking it only moves it away and
 * leaves o idle (aim-rmap: a worker answered by the server on its own idle CPU was taken
 * by the CPU of a worker that had just blocked, whose own worker then found its CPU
 * busy: 0.75 steals a job, docs/smp.md). A new process's first thread (make_ready_new)
 * is fair game at once: it has no cache anywhere, and its parent's CPU holds its
 * copy-on-write pages. After
 * STEAL_WAIT_TICKS ticks of the clock (so at least one whole timer period) every thread
 * is, in case o does not run (a vCPU that QEMU 7.2's round robin starves: "Found, a QEMU
 * 7.2 limit"). */
#define STEAL_WAIT_TICKS 2
static bool steal_from_ok(const struct cpu *o)
{
    return __atomic_load_n(&o->current, __ATOMIC_RELAXED) != o->idle ||
           ticks - __atomic_load_n(&o->woken_tick, __ATOMIC_RELAXED) >= STEAL_WAIT_TICKS;
}

/* What a CPU with nothing to run may take from o's queue: its longest-waiting thread of
 * the highest priority that may run on c when steal_from_ok; else (o idles, left alone
 * for the thread a wake-up queued there) only a thread queued behind another of o's top
 * priority, the last (newest): o runs one thread at a time, so the second waits there
 * anyway (aim-rmap at the window's start: the server, busy on its own CPU, answers the
 * `go` reads of 16 workers; two whose warm-up left them on one CPU find no CPU idle, the
 * second is queued behind the first, and the server's CPU, idle once it blocks, was kept
 * from taking it: docs/smp.md). NULL if none; o's lock held. */
static struct thread *stealable_from(const struct cpu *o, const struct cpu *c)
{
    if (steal_from_ok(o))
        return movable(o, c, -1);
    int p = cpu_highest_prio(o);
    if (p < 0 || o->rq_head[p] == o->rq_tail[p])
        return NULL;
    for (struct thread *t = o->rq_tail[p]; t != o->rq_head[p]; t = t->q_prev)
        if (may_take(t, c))
            return t;
    return NULL;
}

/* Without o's lock, a hint: the priority of what stealable_from may find in o's queue
 * (-1: nothing). Two threads of a priority: its list's head is not its tail (no thread
 * is read, only o's own words). */
static int steal_peek(const struct cpu *o)
{
    int p = cpu_peek_prio(o);
    if (p < 0 || steal_from_ok(o))
        return p;
    return __atomic_load_n(&o->rq_head[p], __ATOMIC_RELAXED) !=
           __atomic_load_n(&o->rq_tail[p], __ATOMIC_RELAXED) ? p : -1;
}

/* c's queue is empty (its lock held): the highest-priority ready thread of another CPU
 * that may run on c, taken from its queue and moved to c; else NULL. The victims are
 * tried highest (peeked) priority first, each with its lock and c's; when c's lock had to
 * be let go for one and c's queue has a thread now, that one (taken off c's queue). */
static struct thread *steal(struct cpu *c)
{
    for (cpumask_t left = sched_cpus & ~cpu_bit(c->id); left;) {
        struct cpu *o = NULL;
        int best = -1;
        for (cpumask_t m = left; m; m &= m - 1) {
            const struct cpu *v = &cpus[cpumask_first(m)];
            int p = steal_peek(v);
            if (p > best) {
                best = p;
                o = &cpus[cpumask_first(m)];
            }
        }
        if (!o)
            return NULL;
        left &= ~cpu_bit(o->id);
        bool kept = rq_lock_also(c, o);
        struct thread *t;
        int own = kept ? -1 : cpu_highest_prio(c);
        if (own >= 0) {
            t = c->rq_head[own];
            rq_remove(c, t);
        } else {
            t = stealable_from(o, c);
            if (t && !take(t, c, MOVE_STEAL))
                t = NULL;
        }
        rq_unlock(o);
        if (t)
            return t;
    }
    return NULL;
}

/* Threads on c: the one running (not the idle thread) and the ready ones. c's lock held. */
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

/* cpu_load under c's lock (balancing, which holds none). */
static unsigned cpu_load_locked(struct cpu *c)
{
    rq_lock(c);
    unsigned n = cpu_load(c);
    rq_unlock(c);
    return n;
}

/* t, taken from its CPU's queue and moved to c, is queued there. Both queues' locks
 * held; true when c is owed the reschedule IPI (kick), which the caller sends after. */
static bool move_to(struct thread *t, struct cpu *c)
{
    if (!take(t, c, MOVE_BALANCE))
        return false;
    t->state = T_READY;
    rq_push(c, t);
    return kick(c, t);
}

/* An idle CPU that may run one of c's ready threads gets it (and the reschedule IPI);
 * false if there is none. An idle CPU looks for work itself at each of its ticks, but
 * under QEMU's -icount a halted vCPU was seen to take next to no ticks while another vCPU
 * was busy (docs/smp.md), so the busy CPU hands the work over. No lock held on entry; the
 * idle CPUs are found without locks, then checked again under both. */
static bool push_to_idle(struct cpu *c)
{
    for (cpumask_t m = sched_cpus & ~cpu_bit(c->id); m; m &= m - 1) {
        struct cpu *o = &cpus[cpumask_first(m)];
        if (!cpu_idles(o))
            continue;
        rq_lock_two(c, o);
        struct thread *t = cpu_idles(o) ? movable(c, o, -1) : NULL;
        bool ipi = t && move_to(t, o);
        rq_unlock_two(c, o);
        kick_ipi(ipi, o->id);
        if (t)
            return true;
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
    if (!balance_ticks || sched_cpus == cpu_bit(c->id) || ++c->balance_wait < balance_ticks)
        return;
    c->balance_wait = 0;
    if (__atomic_load_n(&c->rq_words, __ATOMIC_RELAXED) && push_to_idle(c))
        return;
    unsigned most = cpu_load_locked(c) + 1;
    struct cpu *busiest = NULL;
    for (cpumask_t m = sched_cpus & ~cpu_bit(c->id); m; m &= m - 1) {
        struct cpu *o = &cpus[cpumask_first(m)];
        rq_lock(o);
        unsigned n = cpu_load(o);
        if (n > most && movable(o, c, -1)) {
            most = n;
            busiest = o;
        }
        rq_unlock(o);
    }
    if (!busiest)
        return;
    rq_lock_two(c, busiest);              /* again under both: it may have changed */
    struct thread *t = movable(busiest, c, -1);
    bool ipi = t && move_to(t, c);
    rq_unlock_two(c, busiest);
    kick_ipi(ipi, c->id);
}

/* The next thread for c (its lock held, perhaps let go and taken again meanwhile): its
 * own queue first, else a stolen one, else NULL. */
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
extern void swtch_to_tf(u64 *save_rsp, struct trapframe *tf);

/* The wait itself: the other CPU is between choosing another thread and leaving t's
 * stack, a few hundred instructions with no lock to wait for, so a spin that answers IPI
 * requests (that CPU may be waiting for this one's answer) and, under the lock checker,
 * reports a wait beyond lockcheck_spin_ms as a suspected deadlock (class on_cpu). */
static __attribute__((noinline, cold)) void wait_off_cpu_slow(const struct thread *t)
{
    struct lockcheck_wait w = {0, false};
    while (__atomic_load_n(&t->on_cpu, __ATOMIC_ACQUIRE)) {
        pause();
        ipi_poll();
        if (lockcheck_on)
            lockcheck_waiting(&t->on_cpu, LOCK_ON_CPU, &w);
    }
}

void sched_wait_off_cpu(const struct thread *t)
{
    if (__atomic_load_n(&t->on_cpu, __ATOMIC_ACQUIRE))
        wait_off_cpu_slow(t);
}

/* finish_switch's rare parts, out of line so that it is a leaf without a frame on every
 * switch: the context-switch probe's end, and the work on the thread left (c->after). */
static PCNT_COLD void ctxsw_probe_stop(void) { pcnt_probe_stop(PROBE_CTXSW); }

/* The thread left, now off this CPU: freed if it exited (under the BKL, the thread table,
 * taken here: no CPU holds it across a switch); else it is the running thread that
 * schedule_locked found no longer allowed here (its affinity changed), ready and in no
 * queue, placed now on a CPU it may use, as a woken thread is (it could not be moved
 * while on this CPU: no CPU switches to a thread still on another). Nothing is held at
 * this point, and the thread left is off this CPU already, so a holder waiting for that
 * (a joiner, a waker) cannot wait for us. */
static __attribute__((noinline, cold)) void after_switch(struct cpu *c)
{
    struct thread *d = c->after;
    c->after = NULL;
    if (d->state == T_ZOMBIE) {
        kernel_lock();
        thread_free(d);
        kernel_unlock();
    } else {
        make_ready_locked(rq_lock_of(d), d);
    }
}

/* On the new thread's stack: the thread switched from is off this CPU now (its on_cpu
 * cleared, release: its saved stack pointer and frame are complete); then the work on it
 * (after_switch), if any. */
static void finish_switch(struct cpu *c)
{
    if (pcnt_probed())
        ctxsw_probe_stop();
    if (c->left) {
        __atomic_store_n(&c->left->on_cpu, 0, __ATOMIC_RELEASE);
        c->left = NULL;
    }
    if (c->after)
        after_switch(c);
}

/* The lock checker's test of the rule that a switch never waits: next is off every CPU
 * (docs/smp.md "No switch to a thread still on another CPU"). */
static __attribute__((noinline, cold)) void switch_check(const struct thread *next)
{
    if (__atomic_load_n(&next->on_cpu, __ATOMIC_ACQUIRE))
        panic("sched: switch to thread %d, still on CPU %d", next->tid, next->cpu);
}

/* c->current is next already (schedule). next is off every CPU: a thread still on one
 * is never queued elsewhere nor taken (queue_at, may_take), and this CPU's own threads
 * in its queue were left before it could schedule again. */
static void switch_to(struct thread *prev, struct thread *next)
{
    struct cpu *c = this_cpu();
    u64 discard;
    if (lockcheck_on)
        switch_check(next);
    next->on_cpu = 1;
    c->left = prev;                    /* cleared by finish_switch, on next's stack */
    cpu_set_kernel_stack(c, next->kstack + KSTACK_SIZE);
    if (next->task) {
        cpu_count_switch(aspace_switch(next->task->as));
        if (next->linux)       /* a tick held back meanwhile (interrupts off: a wait for */
            c->kernel_work_rip = next->tf->rip;   /* the BKL, say) is system time */
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
    /* A thread blocked without a continuation is never resumed on this stack; one that
     * resumes without one leaves the kernel through its trapframe (entry.S swtch_to_tf:
     * no switch frame is built below it, as its stack there held live frames while it
     * ran). */
    if (next->resume_via_tf) {
        next->resume_via_tf = false;
        swtch_to_tf(prev->resume_via_tf ? NULL : &prev->ksp, next->tf);
    } else {
        swtch(prev->resume_via_tf ? &discard : &prev->ksp, next->ksp);
    }
    /* back on prev's stack, perhaps on another CPU (it may have migrated) */
    c = this_cpu();
    finish_switch(c);
}

/* The current thread t, blocked without a continuation (IPC), was made ready by a waker
 * before this CPU left it, and picked again here: it resumes through its frame as if
 * switched to, from the top of the stack it is on. (Under the BKL handed across the
 * switch no waker could come in between; now the BKL goes before it.) */
static __attribute__((noreturn, noinline, cold)) void resume_own_frame(struct thread *t)
{
    t->resume_via_tf = false;
    swtch_to_tf(NULL, t->tf);
    __builtin_unreachable();
}

/* schedule() with this CPU's queue lock held (c = this CPU); it is let go before the
 * switch. The next thread becomes c->current under the lock, so that a CPU queueing a
 * thread here sees either the old choice (and this CPU's pick sees its thread) or the
 * new one (and its kick is right). The BKL, if this CPU holds it, is let go before a
 * switch too (Linux 2.6's release_kernel_lock): true then, and the caller, resumed, takes
 * it again; a thread resumed through its frame never does (it leaves the kernel). */
static bool schedule_locked(struct cpu *c)
{
    struct thread *prev = c->current;
    c->need_resched = false;
    /* prev goes back into the queue if it still runs here: not blocked, and not woken
     * meanwhile (queued by its waker). The idle thread is never queued: it runs when
     * nothing else can. One whose affinity no longer allows this CPU is placed once this
     * CPU is off its stack (after_switch): ready meanwhile, in no queue, as one being
     * placed. */
    if (prev->state == T_RUNNING && prev != c->idle) {
        prev->state = T_READY;
        if (prev->affinity & cpu_bit(c->id))
            rq_push(c, prev);
        else
            c->after = prev;
    }
    struct thread *next = pick_next(c);
    if (!next)
        next = c->idle;
    next->state = T_RUNNING;
    if (next->slice_left == 0)
        next->slice_left = (u32)slice_ticks;
    c->current = next;
    rq_unlock(c);
    bool held = kernel_lock_held();
    if (next == prev && !prev->resume_via_tf)
        return false;                          /* it keeps running, and the BKL */
    if (held)
        kernel_unlock();
    if (lockcheck_on)
        lockcheck_assert_switch();
    if (next == prev)
        resume_own_frame(prev);
    switch_to(prev, next);
    return held;
}

/* Callable with the BKL or without; it returns with the BKL as it was on entry (taken
 * again after the switch, with nothing held, as Linux 2.6's reacquire_kernel_lock). */
void schedule(void)
{
    struct cpu *c = this_cpu();
    rq_lock(c);
    if (schedule_locked(c))
        kernel_lock();
}

/* The current thread, blocked, switches away after making t ready: when t stays on this
 * CPU, one acquisition of the queue's lock covers both (IPC without direct switching: the
 * wake-up of the partner and the caller's switch). The ipc locks of t and the current
 * thread are held on entry and let go once t is ready, before the switch (found here, not
 * passed: two arguments kept live across the queueing cost more than the loads). The
 * partner of an IPC is blocked, never sleeping (make_ready takes any other case). */
void make_ready_and_schedule(struct thread *t)
{
    struct cpu *c = this_cpu();
    rq_lock(c);
    if (t->cpu == c->id && t->state == T_BLOCKED && stays_home(c, t)) {
        t->state = T_READY;
        rq_push(c, t);
        spin_unlock_two(&t->ipc_lock, &c->current->ipc_lock);
        schedule_locked(c);
        return;
    }
    rq_unlock(c);
    make_ready(t);
    spin_unlock_two(&t->ipc_lock, &this_cpu()->current->ipc_lock);
    schedule();
}

/* A kernel thread's first step (thread.h): it runs holding the BKL, as it did when the
 * switching CPU handed the lock over. */
void thread_first_run(void)
{
    finish_switch(this_cpu());
    kernel_lock();
}

/* thread_start (entry.S): a thread switched to without a kernel continuation (new, or
 * blocked in IPC) leaves through its frame, without the BKL (the switch let it go): the
 * switch finished, then the system call's exit (entry.S exit_checked follows). */
void thread_leave_via_tf(void)
{
    struct cpu *c = this_cpu();
    finish_switch(c);
    pcnt_probe_stop(PROBE_SYSCALL);
    if (c->current->killed | c->exit_work)
        sched_leave_slow(c);
}

/* Last kernel step of every system call (entry.S exit_to_user), on the returning thread's
 * own stack, just before its registers are restored. */
void kernel_exit_to_user(struct trapframe *tf)
{
    (void)tf;
    sched_leave_kernel();
}

/* Whether some other CPU has a ready thread c may take (the idle loop's test, without
 * the BKL: each queue looked at under its own lock). */
static bool stealable(const struct cpu *c)
{
    if (!smp_sched)
        return false;
    for (cpumask_t m = sched_cpus & ~cpu_bit(c->id); m; m &= m - 1) {
        struct cpu *o = &cpus[cpumask_first(m)];
        if (steal_peek(o) < 0)
            continue;
        rq_lock(o);
        bool found = stealable_from(o, c) != NULL;
        rq_unlock(o);
        if (found)
            return true;
    }
    return false;
}

/* Every CPU's idle thread: looks for work (its own queue, or a thread it may steal) and
 * schedules, else halts until an interrupt (its timer, or the reschedule IPI a CPU that
 * queues a thread here sends: interrupts stay off from the look to the halt, so that IPI
 * is pending and ends the halt at once). It never takes the kernel lock. */
static void idle_loop(void)
{
    struct cpu *c = this_cpu();
    finish_switch(c);
    for (;;) {
        c->need_resched = false;
        while (!__atomic_load_n(&c->rq_words, __ATOMIC_RELAXED) && !stealable(c)) {
            thread_fpu_idle(c);
            u64 halted = rdtsc();
            wait_for_interrupt();
            c->idle_tsc += rdtsc() - halted;
            c->need_resched = false;
        }
        schedule();
    }
}

/* This CPU's idle thread; on the bootstrap CPU also the go-ahead for the others. */
void sched_init(void)
{
    struct cpu *c = this_cpu();
    spin_lock_init(&c->rq_lock, LOCK_RQ);
    c->idle = thread_create_kernel(idle_loop, -1);
    ASSERT(c->idle);
    c->idle->cpu = (u8)c->id;
    c->idle->affinity = cpu_bit(c->id);
}

static volatile bool aps_may_join;

/* How far each started CPU got on its way into the scheduler (sched_ap_main), so that the
 * bootstrap CPU waits for it as long as it advances and can say where a late one stopped. */
enum ap_stage { AP_CHECKED_IN, AP_SAW_GO, AP_LOCKING, AP_MAKING_IDLE, AP_JOINED, AP_STAGES };
static const char *const ap_stage_names[AP_STAGES] = {
    "checked in, waiting for the go-ahead", "waiting for the kernel lock",
    "taking the kernel lock", "making its idle thread", "joined",
};
static volatile u8 ap_stage[MAX_CPUS];

static void ap_reached(enum ap_stage stage)
{
    __atomic_store_n(&ap_stage[this_cpu()->id], (u8)stage, __ATOMIC_RELEASE);
}

/* Before the started CPUs are let in (the banner): those that will run threads; after,
 * those that do (all of them, unless one stalled on its way: sched_release_aps). */
unsigned cpus_scheduling(void)
{
    if (!smp_sched)
        return 1;
    if (!aps_may_join)
        return cpus_running;
    unsigned n = 0;
    for (cpumask_t m = sched_cpus; m; m &= m - 1)   /* no popcnt in the kernel's target */
        n++;
    return n;
}

/* A started CPU that advanced no stage for this long is given up on. No bound while they
 * advance: under host load, the lock checker or icount the joins only take longer. */
#define AP_STALL_US 20000000

/* The sum of the started CPUs' stages: it grows whenever one of them advances. */
static unsigned ap_progress(void)
{
    unsigned sum = 0;
    for (unsigned i = 1; i < cpus_running; i++)
        sum += __atomic_load_n(&ap_stage[i], __ATOMIC_ACQUIRE);
    return sum;
}

/* The bootstrap CPU, its idle thread made and no other thread yet: the started CPUs join
 * (sched_ap_main), and it waits, the kernel lock released, until every one schedules, as
 * Linux brings its CPUs online before init runs; only then are the first programs made
 * (kmain). Made before, they ran on the CPUs that had joined while the others still
 * waited for the kernel lock those programs kept taking: the first program saw 2 of 4
 * CPUs (icount, or lockcheck=on), and an affinity to a missing CPU was EINVAL. The
 * wait lasts while some CPU advances a stage (ap_progress), up to AP_STALL_US without one;
 * a CPU still out then is named with its stage. It halts between looks, as its idle
 * thread would (its timer and the others' IPIs wake it; their calls, shootdowns and a
 * stop are answered by the handlers): under -icount QEMU 7.2's round robin did not run
 * a halted CPU woken by the go-ahead's IPI while this one spun. */
void sched_release_aps(void)
{
    if (!smp_sched || cpus_running <= 1)
        return;
    struct cpu *c = this_cpu();
    cpumask_t all = cpumask_below(cpus_running);
    u64 stall = tsc_hz() / 1000000 * AP_STALL_US;
    __atomic_store_n(&aps_may_join, true, __ATOMIC_RELEASE);
    ipi_send_others(VEC_IPI_RESCHED);
    kernel_unlock();
    c->current = c->idle;                  /* what its ticks see meanwhile (sched_tick) */
    unsigned seen = ap_progress();
    u64 deadline = rdtsc() + stall;
    while (__atomic_load_n(&sched_cpus, __ATOMIC_ACQUIRE) != all && rdtsc() < deadline) {
        wait_for_interrupt();
        unsigned now = ap_progress();
        if (now != seen) {
            seen = now;
            deadline = rdtsc() + stall;
        }
    }
    c->current = NULL;
    kernel_lock();
    for (cpumask_t late = all & ~sched_cpus; late; late &= late - 1) {
        int id = cpumask_first(late);
        printk("smp: CPU %d did not join the scheduler, %u s without progress at stage \"%s\": "
               "the first programs start without it\n", id, AP_STALL_US / 1000000,
               ap_stage_names[ap_stage[id]]);
    }
}

/* A started CPU (smp.c): it waits with its timer masked, answering IPIs, until the
 * bootstrap CPU lets it join, then makes its idle thread, starts its timer and schedules,
 * noting each stage for the bootstrap CPU's wait (sched_release_aps).
 * With smp_sched=off (or an smpbench workload) it waits for good, halted. The wait for
 * the go-ahead halts too: the go-ahead is a flag and then a reschedule IPI, and the flag
 * is tested with interrupts off, so the IPI cannot come between the test and the `hlt`
 * (`sti; hlt`: the IPI is taken only once halted). A halted vCPU costs nothing under
 * -icount, where a spinning one made every CPU's boot as long as the bootstrap CPU's
 * work until the go-ahead (its instructions are the virtual clock's: `-smp 4` reached
 * the first program after 236 M instructions against 62 M with one CPU). The wait for a
 * free kernel lock before taking it is a plain spin, not `pause`: under -icount QEMU
 * 7.2's round-robin loop did not run a vCPU that paused (or halted without an interrupt
 * due) again while another kept busy, so in a boot straight into a busy program
 * (`./ondol bench aim`) a CPU pausing in kernel_lock never joined (docs/smp.md). */
void sched_ap_main(void)
{
    lapic_timer_mask();
    if (!smp_sched || smpbench_mode != SMPBENCH_NONE)   /* never to join: halt, as the */
        for (;;)                                        /* coherence model expects */
            wait_for_interrupt();
    cli();                                 /* (a started CPU begins with them off) */
    while (!__atomic_load_n(&aps_may_join, __ATOMIC_ACQUIRE))
        wait_for_interrupt();
    sti();
    ap_reached(AP_SAW_GO);
    while (__atomic_load_n(&kernel_bkl_byte, __ATOMIC_RELAXED))  /* the same for the lock: */
        ;                                  /* kernel_lock's wait pauses (timer still masked) */
    ap_reached(AP_LOCKING);
    cli();
    kernel_lock();
    ap_reached(AP_MAKING_IDLE);
    sched_init();
    ap_reached(AP_JOINED);
    __atomic_or_fetch(&sched_cpus, cpu_bit(this_cpu()->id), __ATOMIC_RELEASE);
    lapic_timer_start_ap();
    sched_start();
}

void sched_start(void)
{
    struct cpu *c = this_cpu();
    u64 boot_sp;                       /* the boot stack is abandoned here */
    kernel_unlock();                   /* taken for the boot (kmain, sched_ap_main) */
    c->current = c->idle;
    c->idle->state = T_RUNNING;
    c->idle->on_cpu = 1;
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
    t->state = T_BLOCKED;              /* before thread_resume can find it stopped */
    t->stopped = true;
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
    if (t->kill_task) {                   /* an IPC operation's kill of the whole task */
        int status = t->kill_task;
        t->kill_task = 0;
        task_kill_except(t->task, status, t);
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

/* The wake-up is IPC's (ipc_wake_killed): under t's ipc locks, which every waker of a
 * thread blocked in IPC holds (docs/smp.md). So no caller may hold an ipc lock: an IPC
 * operation that kills a task leaves it to the victim (kill_task, leave_killed). */
void thread_kill(struct thread *t)
{
    t->killed = true;
    t->interrupt = KILL_EXIT;             /* a kill wins over an interrupt or a stop */
    ipc_wake_killed(t);
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

/* The exit checks once there is something to do: a direct IPC switch's caller to mark
 * off this CPU (first: a switch below would overwrite c->left), a kill (or stop, or
 * interrupt) of the running thread, or a reschedule; each may leave the other to do. */
/* Out of line even here, so that the exit of every system call (kernel_exit_to_user)
 * keeps its one test without the loop's frame. c: this CPU at the call; the loop
 * reads it again each time, as schedule() may migrate the thread. */
__attribute__((noinline)) void sched_exit_checks_loop(struct cpu *c)
{
    if (c->leaving) {                     /* on the partner's stack: the caller's is free */
        c->leaving = 0;
        __atomic_store_n(&c->left->on_cpu, 0, __ATOMIC_RELEASE);
        c->left = NULL;
    }
    for (;;) {
        struct thread *t = c->current;
        if (t->killed) {
            if (!kernel_lock_held())      /* a system call that ran without it */
                kernel_lock();
            leave_killed(t);
        } else if (c->need_resched)
            schedule();
        else
            return;
        c = this_cpu();                       /* again: schedule() may migrate us */
    }
}

void sched_leave_slow(struct cpu *c)
{
    if (c->current->killed | c->exit_work)
        sched_exit_checks_loop(c);
    if (kernel_lock_held())
        kernel_unlock();
}

/* ---- sleeping and timeouts ----------------------------------------------------- */
u64 ticks_now(void) { return ticks; }

static void sleep_add(struct thread *t, u64 wake_tick)
{
    spin_lock(&sleep_lock);
    if (wake_tick < next_wake)
        __atomic_store_n(&next_wake, wake_tick, __ATOMIC_RELAXED);
    t->wake_tick = wake_tick;
    t->sleeping = SLEEP_LISTED;
    t->sleep_prev = NULL;
    t->sleep_next = sleepers;
    if (sleepers)
        sleepers->sleep_prev = t;
    sleepers = t;
    spin_unlock(&sleep_lock);
}

/* t (SLEEP_LISTED) off the sleep list, sleep_lock held; its caller says what t's entry
 * becomes. */
static void sleep_unlink(struct thread *t)
{
    if (t->sleep_prev)
        t->sleep_prev->sleep_next = t->sleep_next;
    else
        sleepers = t->sleep_next;
    if (t->sleep_next)
        t->sleep_next->sleep_prev = t->sleep_prev;
    t->sleep_next = t->sleep_prev = NULL;
}

/* What taking t off its wait queue, or waking it, needs held: the lock of the queue t is
 * on, or of its wait in IPC (an ipc lock: ipc_wait_lock), or the BKL, which covers every
 * other object's queue (docs/smp.md). Checked with the checker on. */
static __attribute__((noinline, cold)) void wait_lock_check(struct thread *t)
{
    if (kernel_lock_held())
        return;
    struct spinlock *l = ipc_wait_lock(t);
    if (l)
        lockcheck_assert_held(l);
    else
        lockcheck_assert_bkl();
}

/* thread_unblock's work (sched.h): t off its wait queue and the sleep list. The wait
 * queue belongs to an object whose lock covers it (wait_lock_check). t's entry is tested
 * again under the sleep list's lock: the clock may have taken it meanwhile (SLEEP_DUE).
 * Either way its timed wait ends here, whoever ends it (the clock too: thread_wake), so
 * its generation changes: a clock holding the entry then leaves it (wake_sleepers). */
void thread_unblock_slow(struct thread *t)
{
    if (t->waiting_on) {
        if (lockcheck_on)
            wait_lock_check(t);
        waitq_remove(t->waiting_on, t);
    }
    if (!__atomic_load_n(&t->sleeping, __ATOMIC_RELAXED))
        return;
    spin_lock(&sleep_lock);
    if (t->sleeping == SLEEP_LISTED)
        sleep_unlink(t);
    if (t->sleeping) {
        t->sleeping = SLEEP_NONE;
        t->wait_gen++;
    }
    spin_unlock(&sleep_lock);
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
    if (lockcheck_on)
        wait_lock_check(t);            /* t's wait queue, its IPC state and result */
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
    t->state = T_SLEEPING;             /* before the clock can find it */
    sleep_until(t, n);
    schedule();
    return thread_dying(t) ? WAIT_KILLED : 0;
}

/* A sleeper due by now, taken off the list (SLEEP_DUE: the fastpath leaves it alone, the
 * general path still ends its wait through thread_unblock): its id, and in *gen its timed
 * wait's generation; 0 when none is left, next_wake then the earliest tick left. An id,
 * not the thread: once the list's lock is let go the wait may end and the thread exit
 * and be freed before the clock gets the BKL. */
static int take_due(u32 *gen)
{
    spin_lock(&sleep_lock);
    u64 earliest = UINT64_MAX;
    struct thread *t;
    for (t = sleepers; t && t->wake_tick > ticks; t = t->sleep_next)
        earliest = MIN(earliest, t->wake_tick);
    int tid = 0;
    if (t) {
        sleep_unlink(t);
        t->sleeping = SLEEP_DUE;
        tid = t->tid;
        *gen = t->wait_gen;
    } else {
        __atomic_store_n(&next_wake, earliest, __ATOMIC_RELAXED);
    }
    spin_unlock(&sleep_lock);
    return tid;
}

/* The sleepers due by now woken, each taken off the list under the list's lock alone and
 * woken under the BKL (a timeout ends a wait on an object's queue, which the BKL covers)
 * and, for a wait in IPC, under its ipc locks (ipc_end_timed_wait: docs/smp.md, "Design:
 * IPC's per-endpoint state", step 2). Between the two another CPU may end the wait (a
 * partner's delivery, a kill), the thread run and wait again, even exit: the clock acts
 * only on the same thread (its id) in the same timed wait (wait_gen), never on a later
 * wait of it. */
static void wake_sleepers(void)
{
    u32 gen = 0;
    for (int tid; (tid = take_due(&gen));) {
        bool took = kernel_lock_unless_held();
        struct thread *t = thread_lookup(tid);
        if (t)
            ipc_end_timed_wait(t, gen);
        kernel_unlock_if(took);
    }
}

/* Timer interrupt, without the kernel lock (trap.c). Every CPU counts its running
 * thread's slice (its own thread: nothing else writes these) and balances; the bootstrap
 * CPU's timer is the clock (ticks) and takes the BKL only when a sleeper is due. A sleeper
 * added meanwhile is due one tick later at the soonest (sleep_until adds at least one), so
 * a stale next_wake delays no wake-up. */
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
    if (__atomic_load_n(&next_wake, __ATOMIC_RELAXED) <= ticks)
        wake_sleepers();
}
