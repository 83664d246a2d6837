/*
 * schedtest MODE: scheduler checks.
 *
 * preempt  A second thread at the same priority spins incrementing a counter; the
 *          main thread spins too, never yielding or blocking, and watches the counter.
 *          On one CPU the counter can only advance while main is spinning if the timer
 *          preempts main, and main can only see it if the spinner is preempted in turn.
 *          Prints "preempt ok spinner=<n> main=<m>" once it has seen the counter
 *          advance PREEMPT_SWITCHES times; fails after MAX_SPIN iterations (or
 *          PREEMPT_TIMEOUT_S seconds) without that. Exiting kills the spinner.
 *
 * prio     Main raises itself to priority 200, creates threads L (60), M (100) and
 *          H (140) in that order (none can run yet: main outranks them), then blocks
 *          joining them. Each thread appends its letter to a shared array, so strict
 *          priority scheduling gives "H M L". Prints "prio order: ..." and "prio ok".
 */
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <ondol/sys.h>
#include <ondol/thread.h>

#define PREEMPT_SWITCHES 5
#define MAX_SPIN (1ull << 34)
#define PREEMPT_TIMEOUT_S 60

static volatile uint64_t spin_count;

static int spinner(void *arg)
{
    (void)arg;
    for (;;)
        spin_count++;
    return 0;
}

static uint64_t now_ticks(uint64_t *hz)
{
    struct time_info ti;
    if (sys_time(&ti) < 0)
        return 0;
    if (hz)
        *hz = ti.hz ? ti.hz : 100;
    return ti.ticks;
}

static int preempt(void)
{
    struct thread t;
    int r = thread_start(&t, spinner, NULL, PRIO_INHERIT, 16 * 1024);
    if (r < 0) {
        printf("preempt FAIL: thread_start: %d\n", r);
        return 1;
    }
    uint64_t hz = 100, start = now_ticks(&hz);
    uint64_t seen = spin_count, switches = 0, i;
    for (i = 0; i < MAX_SPIN; i++) {
        uint64_t c = spin_count;
        if (c != seen) {
            seen = c;
            if (++switches >= PREEMPT_SWITCHES)
                break;
        }
        /* Rare bail-out check (a system call, so only every 2^24 iterations). */
        if ((i & ((1u << 24) - 1)) == 0 && i != 0 && now_ticks(NULL) - start > PREEMPT_TIMEOUT_S * hz)
            break;
    }
    if (switches < PREEMPT_SWITCHES) {
        printf("preempt FAIL: spinner=%llu main=%llu switches=%llu\n",
               (unsigned long long)spin_count, (unsigned long long)i,
               (unsigned long long)switches);
        return 1;
    }
    printf("preempt ok spinner=%llu main=%llu\n", (unsigned long long)spin_count,
           (unsigned long long)i);
    return 0;
}

static char order[3];
static volatile int norder;

static int record(void *arg)
{
    int slot = __atomic_fetch_add(&norder, 1, __ATOMIC_SEQ_CST);
    if (slot < 3)
        order[slot] = *(const char *)arg;
    return 0;
}

static int prio(void)
{
    static const char names[3] = { 'L', 'M', 'H' };
    static const int prios[3] = { 60, 100, 140 };
    struct thread t[3];
    long r = sys_set_priority(0, 200);
    if (r < 0) {
        printf("prio FAIL: set_priority: %ld\n", r);
        return 1;
    }
    for (int i = 0; i < 3; i++) {
        int tid = thread_start(&t[i], record, (void *)&names[i], prios[i], 16 * 1024);
        if (tid < 0) {
            printf("prio FAIL: thread_start: %d\n", tid);
            return 1;
        }
    }
    int before = norder;    /* nobody may have run yet */
    for (int i = 0; i < 3; i++) {
        int st;
        int jr = thread_join(&t[i], &st);
        if (jr < 0) {
            printf("prio FAIL: join: %d\n", jr);
            return 1;
        }
    }
    printf("prio order: %c %c %c\n", order[0], order[1], order[2]);
    if (before != 0 || norder != 3 || memcmp(order, "HML", 3) != 0) {
        printf("prio FAIL (ran before main blocked: %d)\n", before);
        return 1;
    }
    printf("prio ok\n");
    return 0;
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        printf("usage: schedtest preempt|prio\n");
        return 2;
    }
    if (strcmp(argv[1], "preempt") == 0)
        return preempt();
    if (strcmp(argv[1], "prio") == 0)
        return prio();
    printf("schedtest: unknown mode %s\n", argv[1]);
    return 2;
}
