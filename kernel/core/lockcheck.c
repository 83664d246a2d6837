/*
 * The lock checker (option lockcheck; docs/smp.md "Locking"). Off, it costs each lock one
 * test (spinlock.h, klock.h). On, it sees every acquisition and release of a spinlock and
 * every C acquisition of the big kernel lock (the IPC fastpath takes the BKL in assembly
 * without calling anything, so it can neither invert an order nor wait for a lock):
 *
 * - Order. Each CPU keeps the locks it holds (with the stack of each acquisition); the
 *   BKL counts as held when this CPU is its C owner. Taking a lock of class B while
 *   holding one of class A records the edge A -> B with both stacks, the first time it
 *   is seen. If B already reaches A through recorded edges, the two orders can deadlock:
 *   the report names the classes, this acquisition's stack, the held lock's, and the
 *   stacks recorded with the edges of the opposite order. Once per pair.
 * - Recursion and nesting: taking a lock this CPU holds is a certain deadlock; two locks
 *   of one class nested may deadlock against the opposite nesting. Both are reported.
 * - Bounded spin. A wait longer than lockcheck_spin_ms (TSC time) is reported once as a
 *   suspected deadlock: the class, the holder's CPU and the stack of its acquisition, and
 *   the waiter's stack. The wait then goes on: a hold that merely lasted long ends with
 *   the report as its trace, a real deadlock shows who holds what instead of hanging
 *   silently.
 * - Unclassed locks (class 0) are reported once; so is the first lock found not held
 *   where the code says it must be (spin_assert_held).
 *
 * The checker's own state is guarded by `graph`, a raw lock it never checks; a report
 * prints through printk, whose console lock is taken unchecked while this CPU reports.
 */
#include <ondol/abi.h>
#include "arch.h"
#include "kernel.h"
#include "klock.h"
#include "ksyms.h"
#include "lockcheck.h"
#include "ipc.h"
#include "options.h"
#include "spinlock.h"

bool lockcheck_on;                 /* in force: option lockcheck, per-CPU state ready */
bool lockcheck_opt;                /* option lockcheck */
u64 lockcheck_spin_ms = 5000;      /* option lockcheck_spin_ms */
struct lockcheck_stats lockcheck_stats;

#define DEPTH LOCKCHECK_DEPTH
#define HELD_MAX 16

static const char *const class_names[LOCK_CLASSES] = {
#define LOCK_CLASS(id, name, doc) [LOCK_##id] = #name,
#include "lockclass.def"
#undef LOCK_CLASS
};

struct held {
    const void *lock;
    u32 cls;
    u64 stack[DEPTH];
};

struct cpu_locks {
    int n;
    bool reporting;                /* printing a report: its own locks go unchecked */
    struct held h[HELD_MAX];
    u64 bkl_stack[DEPTH];          /* the last C acquisition of the BKL here */
} __attribute__((aligned(64)));

/* The first time `inner` was taken while `outer` was held: where each was taken. */
struct edge {
    bool seen, reported;
    int cpu;
    u64 outer[DEPTH], inner[DEPTH];
};

static struct cpu_locks cpu_locks[MAX_CPUS];
static struct edge edges[LOCK_CLASSES][LOCK_CLASSES];
static bool unclassed_reported, unheld_reported, bkl_unheld_reported;
static volatile u32 graph;

static void graph_lock(void)
{
    while (__atomic_exchange_n(&graph, 1, __ATOMIC_ACQUIRE))
        pause();
}
static void graph_unlock(void) { __atomic_store_n(&graph, 0, __ATOMIC_RELEASE); }

void lockcheck_start(void)
{
    lockcheck_on = lockcheck_opt;
    kernel_lock_flags_update();
}

static struct cpu_locks *mine(void) { return &cpu_locks[this_cpu()->id]; }

/* The stack of the lock function's caller (the frame of spin_lock_slow's caller on). */
static __attribute__((noinline)) void capture(u64 *stack)
{
    ksym_stack((u64)__builtin_frame_address(0), stack, DEPTH);
}

static void report_begin(struct cpu_locks *c)
{
    c->reporting = true;
    lockcheck_stats.reports++;
}

static void report_end(struct cpu_locks *c) { c->reporting = false; }

static void print_stack(const char *what, const u64 *stack)
{
    printk("lockcheck: %s\n", what);
    ksym_print(stack, DEPTH);
}

/* ---- order ------------------------------------------------------------------------- */

/* Whether class `from` reaches `to` through recorded edges (graph held). path[] gets the
 * classes after `from`, *len their number. */
static bool reaches(u32 from, u32 to, u32 *path, int *len, u32 visited)
{
    if (from == to)
        return true;
    visited |= 1u << from;
    for (u32 next = 0; next < LOCK_CLASSES; next++) {
        if (!edges[from][next].seen || (visited & (1u << next)))
            continue;
        int at = *len;
        path[(*len)++] = next;
        if (reaches(next, to, path, len, visited))
            return true;
        *len = at;
    }
    return false;
}

_Static_assert(LOCK_CLASSES <= 32, "lockcheck: visited sets are 32-bit masks");

static void report_inversion(struct cpu_locks *c, u32 held_cls, const u64 *held_stack,
                             u32 cls, const u64 *stack, const u32 *path, int len)
{
    report_begin(c);
    lockcheck_stats.inversions++;
    printk("lockcheck: lock order inversion on CPU %d: taking %s while holding %s, "
           "but %s was taken before %s earlier\n", this_cpu()->id, class_names[cls],
           class_names[held_cls], class_names[cls], class_names[held_cls]);
    print_stack("this acquisition:", stack);
    print_stack("the held lock's acquisition:", held_stack);
    u32 from = cls;
    for (int i = 0; i < len; i++) {
        const struct edge *e = &edges[from][path[i]];
        printk("lockcheck: earlier on CPU %d, %s held, then %s taken:\n", e->cpu,
               class_names[from], class_names[path[i]]);
        print_stack("  the first:", e->outer);
        print_stack("  the second:", e->inner);
        from = path[i];
    }
    report_end(c);
}

/* cls is being taken while held_cls is held: record the edge, or report the inversion. */
static void order(struct cpu_locks *c, u32 held_cls, const u64 *held_stack, u32 cls,
                  const u64 *stack)
{
    struct edge *e = &edges[held_cls][cls];
    if (e->seen)
        return;
    graph_lock();
    u32 path[LOCK_CLASSES];
    int len = 0;
    bool inverted = held_cls != cls && reaches(cls, held_cls, path, &len, 0);
    bool report = !e->reported && (inverted || held_cls == cls);
    if (report) {
        e->reported = true;
        if (inverted)
            report_inversion(c, held_cls, held_stack, cls, stack, path, len);
    }
    if (!inverted && held_cls != cls) {
        memcpy(e->outer, held_stack, sizeof(e->outer));
        memcpy(e->inner, stack, sizeof(e->inner));
        e->cpu = this_cpu()->id;
        __atomic_store_n(&e->seen, true, __ATOMIC_RELEASE);
    }
    graph_unlock();
    if (report && held_cls == cls) {
        report_begin(c);
        printk("lockcheck: two %s locks nested on CPU %d: the opposite nesting elsewhere "
               "would deadlock\n", class_names[cls], this_cpu()->id);
        print_stack("this acquisition:", stack);
        print_stack("the held lock's acquisition:", held_stack);
        report_end(c);
    }
}

static void report_unclassed(struct cpu_locks *c, const void *lock, const u64 *stack)
{
    if (__atomic_exchange_n(&unclassed_reported, true, __ATOMIC_ACQ_REL))
        return;
    report_begin(c);
    printk("lockcheck: lock %p has no class (spinlock.h: SPINLOCK_INIT, spin_lock_init)\n", lock);
    print_stack("its acquisition:", stack);
    report_end(c);
}

static void report_recursion(struct cpu_locks *c, const struct held *h, const u64 *stack)
{
    report_begin(c);
    printk("lockcheck: CPU %d takes %s lock %p again: it holds it (deadlock)\n",
           this_cpu()->id, class_names[h->cls], h->lock);
    print_stack("this acquisition:", stack);
    print_stack("the first:", h->stack);
    report_end(c);
}

/* Before lock (of class cls) is taken by this CPU: every lock it holds must come first.
 * nested: a second lock of a held class, in the caller's fixed order (spin_lock_nested). */
static void check_order(struct cpu_locks *c, const void *lock, u32 cls, const u64 *stack,
                        bool nested)
{
    if (cls == LOCK_NONE)
        report_unclassed(c, lock, stack);
    if (cls != LOCK_BKL && kernel_lock_held())
        order(c, LOCK_BKL, c->bkl_stack, cls, stack);
    for (int i = 0; i < c->n; i++) {
        if (c->h[i].lock == lock)
            report_recursion(c, &c->h[i], stack);
        if (!nested || c->h[i].cls != cls)
            order(c, c->h[i].cls, c->h[i].stack, cls, stack);
    }
}

/* ---- waiting ----------------------------------------------------------------------- */

/* The CPU holding lock, and its acquisition stack; -1 when no CPU records it. */
static int holder_of(const void *lock, const u64 **stack)
{
    if (lock == (const void *)&kernel_bkl_byte) {
        int owner = kernel_lock_holder();
        *stack = owner >= 0 ? cpu_locks[owner].bkl_stack : NULL;
        return owner;
    }
    for (unsigned cpu = 0; cpu < MAX_CPUS; cpu++) {
        const struct cpu_locks *o = &cpu_locks[cpu];
        for (int i = 0; i < o->n && i < HELD_MAX; i++)
            if (o->h[i].lock == lock) {
                *stack = o->h[i].stack;
                return (int)cpu;
            }
    }
    return -1;
}

static void report_long_wait(const void *lock, u32 cls, const u64 *stack)
{
    struct cpu_locks *c = mine();
    const u64 *holder_stack = NULL;
    int holder = holder_of(lock, &holder_stack);
    report_begin(c);
    lockcheck_stats.long_waits++;
    printk("lockcheck: suspected deadlock: CPU %d has waited %lu ms for %s lock %p, held by ",
           this_cpu()->id, (unsigned long)lockcheck_spin_ms, class_names[cls], lock);
    if (holder >= 0)
        printk("CPU %d\n", holder);
    else
        printk("no CPU the checker knows (the IPC fastpath, or released meanwhile)\n");
    if (holder_stack)
        print_stack("the holder's acquisition:", holder_stack);
    print_stack("the waiter:", stack);
    report_end(c);
}

void lockcheck_waiting(const void *lock, u32 cls, struct lockcheck_wait *w)
{
    u64 now = rdtsc();
    if (!w->since) {
        w->since = now;
        return;
    }
    if (w->reported || now - w->since < tsc_hz() / 1000 * lockcheck_spin_ms)
        return;
    w->reported = true;
    u64 stack[DEPTH];
    capture(stack);
    report_long_wait(lock, cls, stack);
}

/* ---- the lock operations ----------------------------------------------------------- */

static void push(struct cpu_locks *c, const void *lock, u32 cls, const u64 *stack)
{
    if (c->n == HELD_MAX)
        panic("lockcheck: CPU %d holds more than %d locks", this_cpu()->id, HELD_MAX);
    struct held *h = &c->h[c->n];
    h->lock = lock;
    h->cls = cls;
    memcpy(h->stack, stack, sizeof(h->stack));
    __atomic_store_n(&c->n, c->n + 1, __ATOMIC_RELEASE);
}

/* The wait answers IPI requests, as the BKL's does: the holder may be waiting for this
 * CPU's answer to a TLB shootdown (it changes page tables under an address space's lock). */
static void lock_slow(struct spinlock *l, u32 busy, bool nested)
{
    struct cpu_locks *c = lockcheck_on ? mine() : NULL;
    if (c && c->reporting)
        c = NULL;                             /* the report's own printk */
    u64 stack[DEPTH];
    if (c) {
        capture(stack);
        check_order(c, l, l->cls, stack, nested);
    }
    struct lockcheck_wait w = {0, false};
    while (busy) {
        while (l->locked) {
            pause();
            ipi_poll();
            if (c)
                lockcheck_waiting(l, l->cls, &w);
        }
        busy = __atomic_exchange_n(&l->locked, 1, __ATOMIC_ACQUIRE);
    }
    if (c)
        push(c, l, l->cls, stack);
}

void spin_lock_slow(struct spinlock *l, u32 busy) { lock_slow(l, busy, false); }

void spin_lock_nested(struct spinlock *l)
{
    u32 busy = __atomic_exchange_n(&l->locked, 1, __ATOMIC_ACQUIRE);
    if (busy | lockcheck_on)
        lock_slow(l, busy, true);
}

bool spin_trylock(struct spinlock *l)
{
    if (__atomic_exchange_n(&l->locked, 1, __ATOMIC_ACQUIRE))
        return false;
    if (lockcheck_on)
        lock_slow(l, 0, true);
    return true;
}

void spin_lock_two_slow(struct spinlock *a, struct spinlock *b, u32 busy_a, u32 busy_b)
{
    if (!busy_a)
        __atomic_store_n(&a->locked, 0, __ATOMIC_RELEASE);
    if (!busy_b)
        __atomic_store_n(&b->locked, 0, __ATOMIC_RELEASE);
    struct spinlock *first = a < b ? a : b, *second = a < b ? b : a;
    spin_lock(first);
    spin_lock_nested(second);
}

void lockcheck_assert_held(const struct spinlock *l)
{
    struct cpu_locks *c = mine();
    for (int i = 0; i < c->n; i++)
        if (c->h[i].lock == l)
            return;
    if (c->reporting || __atomic_exchange_n(&unheld_reported, true, __ATOMIC_ACQ_REL))
        return;
    u64 stack[DEPTH];
    capture(stack);
    report_begin(c);
    printk("lockcheck: CPU %d should hold %s lock %p here and does not\n", this_cpu()->id,
           class_names[l->cls], (const void *)l);
    print_stack("here:", stack);
    report_end(c);
}

void lockcheck_assert_bkl(void)
{
    struct cpu_locks *c = mine();
    if (kernel_lock_held() || c->reporting ||
        __atomic_exchange_n(&bkl_unheld_reported, true, __ATOMIC_ACQ_REL))
        return;
    u64 stack[DEPTH];
    capture(stack);
    report_begin(c);
    printk("lockcheck: CPU %d should hold the big kernel lock here and does not\n",
           this_cpu()->id);
    print_stack("here:", stack);
    report_end(c);
}

static bool switch_held_reported;

void lockcheck_assert_switch(void)
{
    struct cpu_locks *c = mine();
    if ((c->n == 0 && !kernel_lock_held()) || c->reporting ||
        __atomic_exchange_n(&switch_held_reported, true, __ATOMIC_ACQ_REL))
        return;
    u64 stack[DEPTH];
    capture(stack);
    report_begin(c);
    printk("lockcheck: CPU %d switches threads holding %s\n", this_cpu()->id,
           c->n ? class_names[c->h[0].cls] : "the big kernel lock");
    print_stack("here:", stack);
    report_end(c);
}

/* A lock released: off this CPU's list, wherever it is (releases need not nest). A lock
 * not on it was taken before the checker started, or during a report. */
void lockcheck_release(const void *lock)
{
    struct cpu_locks *c = mine();
    for (int i = c->n - 1; i >= 0; i--) {
        if (c->h[i].lock != lock)
            continue;
        for (int j = i; j + 1 < c->n; j++)
            c->h[j] = c->h[j + 1];
        __atomic_store_n(&c->n, c->n - 1, __ATOMIC_RELEASE);
        return;
    }
}

void lockcheck_bkl_before(u64 *stack)
{
    struct cpu_locks *c = mine();
    capture(stack);
    if (!c->reporting)
        check_order(c, (const void *)&kernel_bkl_byte, LOCK_BKL, stack, false);
}

/* ---- the BKL census ------------------------------------------------------------------
 * Sites in an open-addressed table whose slots are claimed by compare-and-swap, counts
 * added atomically: acquisitions on any CPU, no lock (the census runs inside the BKL's
 * own acquisition). A site that finds the table full is counted as lost. */
#define CENSUS_SITES 128
static struct {
    u64 site, count;
} census_sites[CENSUS_SITES];
static u64 census_calls[NSYSCALLS], census_total, census_lost;

static void census_add(u64 *count) { __atomic_add_fetch(count, 1, __ATOMIC_RELAXED); }

void lockcheck_bkl_census(u64 site, long call)
{
    census_add(&census_total);
    if (call >= 0 && call < NSYSCALLS) {
        census_add(&census_calls[call]);
        return;
    }
    u32 h = (u32)((site * 0x9e3779b97f4a7c15ull) >> 57);
    for (u32 i = 0; i < CENSUS_SITES; i++) {
        u64 *slot = &census_sites[(h + i) % CENSUS_SITES].site, seen = 0;
        if (__atomic_compare_exchange_n(slot, &seen, site, false, __ATOMIC_RELAXED,
                                        __ATOMIC_RELAXED) || seen == site) {
            census_add(&census_sites[(h + i) % CENSUS_SITES].count);
            return;
        }
    }
    census_add(&census_lost);
}

/* The index of the largest count in counts[0, n) (stride: words between counts) that is
 * below `below` (the previous one printed), or -1 when none is left. Ties go in order of
 * index, each once: `after` is the index printed last with a count equal to `below`. */
static long census_next(const u64 *counts, u32 n, u32 stride, u64 below, long after)
{
    long best = -1;
    for (u32 i = 0; i < n; i++) {
        u64 c = counts[i * stride];
        bool fits = c < below || (c == below && (long)i > after);
        if (c && fits && (best < 0 || c > counts[best * stride]))
            best = i;
    }
    return best;
}

/* The CENSUS_TOP largest of counts, as " label count" pairs. */
#define CENSUS_TOP 32
static void census_print(const u64 *counts, u32 n, u32 stride, bool calls)
{
    u64 below = UINT64_MAX;
    long at = -1;
    for (int k = 0; k < CENSUS_TOP && (at = census_next(counts, n, stride, below, at)) >= 0; k++) {
        below = counts[at * stride];
        if (calls) {
            printk(" %ld:%lu", at, (unsigned long)below);
            continue;
        }
        u64 off, site = census_sites[at].site;
        const char *name = ksym_name(site, &off);
        printk(" %s+%#lx:%lu", name ? name : "?", (unsigned long)off, (unsigned long)below);
    }
    printk("\n");
}

static void census_summary(void)
{
    printk("lockcheck: BKL census: %lu acquisitions, %lu sites lost; by call:",
           (unsigned long)census_total, (unsigned long)census_lost);
    census_print(census_calls, NSYSCALLS, 1, true);
    printk("lockcheck: BKL census by site:");
    census_print(&census_sites[0].count, CENSUS_SITES, 2, false);
}

void lockcheck_summary(void)
{
    if (!lockcheck_on)
        return;
    printk("lockcheck: %lu reports; orders seen:", (unsigned long)lockcheck_stats.reports);
    for (u32 a = 0; a < LOCK_CLASSES; a++)
        for (u32 b = 0; b < LOCK_CLASSES; b++)
            if (edges[a][b].seen)
                printk(" %s>%s", class_names[a], class_names[b]);
    printk("\n");
    printk("lockcheck: %lu IPC sends and receives without the BKL\n",
           (unsigned long)ipc_unlocked_ops);
    printk("lockcheck: %lu IPC calls and reply_recvs without the BKL\n",
           (unsigned long)ipc_unlocked_rpcs);
    printk("lockcheck: %lu forwarded Linux calls answered without the BKL\n",
           (unsigned long)ipc_unlocked_answers);
    census_summary();
}

void lockcheck_bkl_taken(const u64 *stack) { memcpy(mine()->bkl_stack, stack, sizeof(mine()->bkl_stack)); }
