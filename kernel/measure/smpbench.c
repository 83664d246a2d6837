/*
 * SMP tests and the coherence model's validation workloads (option smpbench, docs/smp.md).
 *
 * `ipi`: a call-function round trip to every other CPU, then an unknown IPI vector and the
 * spurious vector sent to each, then a second round trip: every CPU must still answer, and
 * each must take both odd vectors (counted, with a bounded wait).
 *
 * `lockcheck`: the lock checker's test (lockcheck.c; meant for lockcheck=on): CPU 0 takes
 * two test classes in one order, then in the other (an inversion to report); then CPU 1
 * holds a lock for three times lockcheck_spin_ms while CPU 0 waits for it (a suspected
 * deadlock to report, with CPU 1 as the holder); the wait then ends normally.
 *
 * `kfault`: a kernel bug's fault under a lock (trap.c kernel_bug): CPU 0, holding the BKL
 * (as the boot does), waits for a lock that CPU 1 takes and then faults in kernel mode on
 * purpose. The fault must panic at once; before, it waited for the BKL and both CPUs hung.
 *
 * `private`, `shared`, `pingpong`: the three workloads that validate the coherence model
 * (tools/cacheplugin, "The coherence model"), run in kernel mode on every started CPU at
 * once through the call-function IPI, `smpbench_n` iterations per CPU:
 *   private   each CPU increments its own counter, on a cache line of its own;
 *   shared    every CPU increments one counter with `lock xadd`;
 *   pingpong  a ticket lock handed from CPU to CPU in turn (CPU i takes tickets i, i + N,
 *             ...), each holder incrementing a counter on another line.
 * `private` and `shared` run in rounds of one increment separated by a barrier, so that
 * under -icount (vCPUs round robin on one host thread) the recorded order interleaves the
 * CPUs finely; the barriers are outside the modelled work (marker MARK_MODEL). No wait
 * spins without bound: a waiter spins briefly, then halts until the CPU that changes the
 * word wakes it with an IPI.
 */
#include "arch.h"
#include "kernel.h"
#include "lockcheck.h"
#include "marker.h"
#include "options.h"
#include "smpbench.h"
#include "spinlock.h"

int smpbench_mode;
u64 smpbench_iters = 1000;

#define SPIN_BRIEF 100
#define RUN_TIMEOUT_US (600ull * 1000000)    /* 10 min of TSC time: a hang is reported */
#define CALL_TIMEOUT_US 100000
#define COHER_WINDOW 77                      /* the plugin window around the workload */
#define PINGPONG_LOCK 1

/* A word CPUs wait on: its value, and the CPUs halted waiting for it. */
struct waitword {
    volatile u32 value;
    volatile cpumask_t sleepers;
} __attribute__((aligned(64)));

struct padded_counter {
    volatile u64 value;
} __attribute__((aligned(64)));

static struct padded_counter private_counter[MAX_CPUS];
static struct padded_counter shared_counter;
static struct waitword barrier_count, barrier_round;
static struct waitword now_serving;           /* the ping-pong lock */
static struct padded_counter pingpong_data;
static volatile u32 cpus_failed;

/* Waits until w->value == value: a brief spin, then halts (registered as a sleeper). */
static void wait_word(struct waitword *w, u32 value)
{
    for (int i = 0; i < SPIN_BRIEF; i++) {
        if (__atomic_load_n(&w->value, __ATOMIC_ACQUIRE) == value)
            return;
        pause();
    }
    cpumask_t bit = cpu_bit(this_cpu()->id);
    __atomic_or_fetch(&w->sleepers, bit, __ATOMIC_SEQ_CST);
    while (__atomic_load_n(&w->value, __ATOMIC_SEQ_CST) != value)
        wait_for_interrupt();
    __atomic_and_fetch(&w->sleepers, ~bit, __ATOMIC_SEQ_CST);
}

/* Wakes every CPU halted on w (after its value changed). */
static void wake_word(struct waitword *w)
{
    cpumask_t sleepers = __atomic_load_n(&w->sleepers, __ATOMIC_SEQ_CST);
    for (int cpu = 0; sleepers; cpu++, sleepers >>= 1)
        if (sleepers & 1)
            ipi_send(cpu, VEC_IPI_RESCHED);
}

static void set_word(struct waitword *w, u32 value)
{
    __atomic_store_n(&w->value, value, __ATOMIC_SEQ_CST);
    wake_word(w);
}

/* A sense-counting barrier over every started CPU, outside the modelled work. */
static void barrier(u32 round)
{
    marker_model(false);
    if (__atomic_add_fetch(&barrier_count.value, 1, __ATOMIC_ACQ_REL) == cpus_running * (round + 1))
        set_word(&barrier_round, round + 1);
    else
        wait_word(&barrier_round, round + 1);
    marker_model(true);
}

static void work_private(void *arg)
{
    (void)arg;
    volatile u64 *mine = &private_counter[this_cpu()->id].value;
    marker_model(true);
    for (u32 i = 0; i < smpbench_iters; i++) {
        *mine = *mine + 1;
        barrier(i);
    }
    marker_model(false);
}

static void work_shared(void *arg)
{
    (void)arg;
    marker_model(true);
    for (u32 i = 0; i < smpbench_iters; i++) {
        __atomic_fetch_add(&shared_counter.value, 1, __ATOMIC_SEQ_CST);   /* lock xadd */
        barrier(i);
    }
    marker_model(false);
}

/* The ticket lock with tickets fixed in advance: a strict hand-off from CPU to CPU. */
static void pingpong_acquire(u32 ticket)
{
    if (__atomic_load_n(&now_serving.value, __ATOMIC_ACQUIRE) != ticket) {
        marker_lock(LOCK_EV_WAIT, PINGPONG_LOCK);
        wait_word(&now_serving, ticket);
    }
    marker_lock(LOCK_EV_ACQUIRE, PINGPONG_LOCK);
    (void)__atomic_load_n(&now_serving.value, __ATOMIC_ACQUIRE);   /* the hand-off's line */
}

static void pingpong_release(u32 ticket)
{
    marker_lock(LOCK_EV_RELEASE, PINGPONG_LOCK);
    set_word(&now_serving, ticket + 1);
}

static void work_pingpong(void *arg)
{
    (void)arg;
    u32 self = (u32)this_cpu()->id;
    marker_model(true);
    for (u32 k = 0; k < smpbench_iters; k++) {
        u32 ticket = k * cpus_running + self;
        pingpong_acquire(ticket);
        pingpong_data.value = pingpong_data.value + 1;
        pingpong_release(ticket);
    }
    marker_model(false);
}

/* The value every counter must hold after the run. */
static bool workload_correct(int mode)
{
    u64 all = smpbench_iters * cpus_running;
    if (mode == SMPBENCH_SHARED)
        return shared_counter.value == all;
    if (mode == SMPBENCH_PINGPONG)
        return pingpong_data.value == all && now_serving.value == all;
    for (unsigned cpu = 0; cpu < cpus_running; cpu++)
        if (private_counter[cpu].value != smpbench_iters)
            return false;
    return true;
}

static const char *const mode_names[] = {"none", "ipi", "private", "shared", "pingpong",
                                         "lockcheck"};

static void run_workload(int mode)
{
    static const ipi_fn work[] = {[SMPBENCH_PRIVATE] = work_private,
                                  [SMPBENCH_SHARED] = work_shared,
                                  [SMPBENCH_PINGPONG] = work_pingpong};
    marker(MARK_WINDOW_BEGIN, COHER_WINDOW);
    u64 t0 = rdtsc();
    int err = ipi_call_all(work[mode], NULL, RUN_TIMEOUT_US);
    u64 tsc = rdtsc() - t0;
    marker(MARK_WINDOW_END, COHER_WINDOW);
    bool ok = err == 0 && workload_correct(mode);
    u64 jobs = smpbench_iters * cpus_running;
    printk("smpbench: %s on %u CPUs, %lu iterations each: %s, %lu TSC ticks\n", mode_names[mode],
           cpus_running, (unsigned long)smpbench_iters, ok ? "correct" : "WRONG", (unsigned long)tsc);
    /* a result row of `./ondol bench coherence` (tools/ondol/coherence.py), and its end */
    char buf[320];
    int n = ksnprintf(buf, sizeof(buf),
                      "{\"type\":\"result\",\"bench\":\"coherence\",\"test\":\"%s\",\"cpus\":%u,"
                      "\"iters\":%lu,\"jobs\":%lu,\"ok\":%s,\"tsc\":%lu,\"window\":%u}\n"
                      "{\"type\":\"end\",\"bench\":\"coherence\",\"status\":%d}\n",
                      mode_names[mode], cpus_running, (unsigned long)smpbench_iters,
                      (unsigned long)jobs, ok ? "true" : "false", (unsigned long)tsc,
                      COHER_WINDOW, ok ? 0 : 1);
    serial_write(COM2, buf, MIN((size_t)n, sizeof(buf) - 1));
}

/* ---- ipi ---------------------------------------------------------------------------- */

static volatile int ran_on[MAX_CPUS];

static void note_cpu(void *arg)
{
    int *slot = arg;
    *slot = this_cpu()->id;
}

/* A call to every other CPU; true if each ran it on itself. */
static bool round_trips(const char *when)
{
    bool all = true;
    for (int cpu = 0; (unsigned)cpu < cpus_running; cpu++) {
        if (cpu == this_cpu()->id)
            continue;
        ran_on[cpu] = -1;
        u64 t0 = rdtsc();
        int err = ipi_call(cpu, note_cpu, (void *)&ran_on[cpu], CALL_TIMEOUT_US);
        bool ok = err == 0 && ran_on[cpu] == cpu;
        printk("smpbench: ipi %s: CPU %d %s (%lu TSC ticks)\n", when, cpu, ok ? "answered" : "did NOT answer",
               (unsigned long)(rdtsc() - t0));
        all &= ok;
    }
    return all;
}

/* Sends each other CPU an IPI with an unassigned vector and one with the spurious vector. */
static void odd_vectors(void)
{
    for (int cpu = 0; (unsigned)cpu < cpus_running; cpu++) {
        if (cpu == this_cpu()->id)
            continue;
        ipi_send(cpu, VEC_IPI_LAST);
        ipi_send(cpu, VEC_SPURIOUS);
    }
}

/* The odd vectors counted on all CPUs so far. */
static void odd_counts(u32 *unknown, u32 *spurious)
{
    *unknown = *spurious = 0;
    for (unsigned cpu = 0; cpu < cpus_running; cpu++) {
        *unknown += __atomic_load_n(&ipi_stats[cpu].unknown, __ATOMIC_RELAXED);
        *spurious += __atomic_load_n(&ipi_stats[cpu].spurious, __ATOMIC_RELAXED);
    }
}

static void run_ipi_test(void)
{
    bool first = round_trips("round trip");
    odd_vectors();
    bool second = round_trips("after odd vectors");
    /* An answer does not mean the odd vectors were taken: a CPU waiting with interrupts
     * off (for the kernel lock, say) answers calls by polling its call box (ipi_poll)
     * while they still wait in its APIC. So their counts get a bounded wait. */
    u32 unknown, spurious, others = cpus_running - 1;
    u64 deadline = rdtsc() + tsc_hz() / 1000000 * CALL_TIMEOUT_US;
    odd_counts(&unknown, &spurious);
    while ((unknown < others || spurious < others) && rdtsc() < deadline) {
        pause();
        odd_counts(&unknown, &spurious);
    }
    char buf[200];
    int n = ksnprintf(buf, sizeof(buf),
                      "{\"type\":\"smpbench\",\"mode\":\"ipi\",\"cpus\":%u,\"round_trip\":%s,"
                      "\"after_odd_vectors\":%s,\"unknown\":%u,\"spurious\":%u}\n",
                      cpus_running, first ? "true" : "false", second ? "true" : "false", unknown,
                      spurious);
    serial_write(COM2, buf, MIN((size_t)n, sizeof(buf) - 1));
}

/* ---- lockcheck ---------------------------------------------------------------------- */

static struct spinlock test_a = SPINLOCK_INIT(TEST_A), test_b = SPINLOCK_INIT(TEST_B);
static struct spinlock test_hold = SPINLOCK_INIT(TEST_HOLD);
static volatile u32 hold_taken;

static __attribute__((noinline)) void lockcheck_nest(struct spinlock *outer, struct spinlock *inner)
{
    spin_lock(outer);
    spin_lock(inner);
    spin_unlock(inner);
    spin_unlock(outer);
}

/* Not tail calls (the empty asm after them), so that the reports' stacks name them. */
static __attribute__((noinline)) void lockcheck_take_a_then_b(void)
{
    lockcheck_nest(&test_a, &test_b);
    __asm__ volatile("");
}

static __attribute__((noinline)) void lockcheck_take_b_then_a(void)
{
    lockcheck_nest(&test_b, &test_a);
    __asm__ volatile("");
}

/* CPU 1 holds test_hold for 3 x lockcheck_spin_ms; CPU 0 waits for it meanwhile. */
static __attribute__((noinline)) void lockcheck_hold_too_long(void)
{
    spin_lock(&test_hold);
    __atomic_store_n(&hold_taken, 1, __ATOMIC_RELEASE);
    u64 end = rdtsc() + tsc_hz() / 1000 * lockcheck_spin_ms * 3;
    while (rdtsc() < end)
        pause();
    spin_unlock(&test_hold);
}

static __attribute__((noinline)) void lockcheck_wait_for_holder(void)
{
    while (!__atomic_load_n(&hold_taken, __ATOMIC_ACQUIRE))
        pause();
    spin_lock(&test_hold);
    spin_unlock(&test_hold);
}

static void hold_or_wait(void *arg)
{
    (void)arg;
    if (this_cpu()->id == 1)
        lockcheck_hold_too_long();
    else if (this_cpu()->id == 0)
        lockcheck_wait_for_holder();
}

static void run_lockcheck_test(void)
{
    lockcheck_take_a_then_b();
    lockcheck_take_b_then_a();
    int err = cpus_running > 1 ? ipi_call_all(hold_or_wait, NULL, RUN_TIMEOUT_US) : 0;
    printk("smpbench: lockcheck on %u CPUs: %lu inversions, %lu long waits reported%s\n",
           cpus_running, (unsigned long)lockcheck_stats.inversions,
           (unsigned long)lockcheck_stats.long_waits, err ? " (the hold did not end)" : "");
    char buf[200];
    int n = ksnprintf(buf, sizeof(buf),
                      "{\"type\":\"smpbench\",\"mode\":\"lockcheck\",\"cpus\":%u,"
                      "\"inversions\":%lu,\"long_waits\":%lu,\"reports\":%lu,\"ended\":%s}\n",
                      cpus_running, (unsigned long)lockcheck_stats.inversions,
                      (unsigned long)lockcheck_stats.long_waits,
                      (unsigned long)lockcheck_stats.reports, err ? "false" : "true");
    serial_write(COM2, buf, MIN((size_t)n, sizeof(buf) - 1));
}

/* ---- kfault ------------------------------------------------------------------------- */

static __attribute__((noinline)) void kfault_under_lock(void)
{
    spin_lock(&test_hold);
    __atomic_store_n(&hold_taken, 1, __ATOMIC_RELEASE);
    printk("smpbench: kfault: CPU 1 faults in kernel mode holding a lock CPU 0 waits for\n");
    *(volatile u64 *)0xffff900000000000ull = 1;
    spin_unlock(&test_hold);
}

static void fault_or_wait(void *arg)
{
    (void)arg;
    if (this_cpu()->id == 1)
        kfault_under_lock();
    else if (this_cpu()->id == 0)
        lockcheck_wait_for_holder();
}

static void run_kfault_test(void)
{
    if (cpus_running < 2 || ipi_call_all(fault_or_wait, NULL, RUN_TIMEOUT_US) == 0)
        printk("smpbench: kfault: no fault (needs 2 CPUs)\n");
}

void smpbench_run(int mode)
{
    if (mode == SMPBENCH_IPI)
        run_ipi_test();
    else if (mode == SMPBENCH_LOCKCHECK)
        run_lockcheck_test();
    else if (mode == SMPBENCH_KFAULT)
        run_kfault_test();
    else
        run_workload(mode);
    power_off_or_halt();
}
