/*
 * mallocbench contend THREADS N: P2's lock latency. THREADS threads each make N malloc
 * calls (16-271 B, into 16 slots, freeing the slot's old block first); every malloc and
 * free call is timed. With one CPU, two threads meet in the allocator's lock only when the
 * timer preempts a holder: then sleep-retry spins and sleeps 10 ms (P2's outliers),
 * blocking sleeps on the futex until the holder releases it. One result row: the
 * distribution, the calls of 1 ms and 10 ms or more, a histogram by decades of ticks.
 */
#include <stdio.h>
#include <stdlib.h>

#include <ondol/result.h>
#include <ondol/sys.h>
#include <ondol/thread.h>
#include <ondol/timing.h>

#include "mallocbench.h"

#define CONTEND_MAX_THREADS 8
#define CONTEND_SLOTS 16
#define HIST_BUCKETS 7                /* decades of ticks: < 10^2, [10^2, 10^3), ..., >= 10^7 */

struct contender {
    struct thread t;
    int n;
    uint64_t seed;
    uint32_t *lat;                    /* 2n samples, saturated at 2^32 - 1 */
};

static uint32_t saturate(uint64_t v) { return v > UINT32_MAX ? UINT32_MAX : (uint32_t)v; }

static int contend_thread(void *arg)
{
    struct contender *c = arg;
    void *slot[CONTEND_SLOTS] = {0};
    for (int i = 0; i < c->n; i++) {
        uint64_t r = bench_random(&c->seed);
        int k = (int)(r % CONTEND_SLOTS);
        uint64_t t0 = rdtsc();
        free(slot[k]);
        uint64_t t1 = rdtsc();
        slot[k] = malloc(16 + (size_t)(r >> 56));
        uint64_t t2 = rdtsc();
        c->lat[2 * i] = saturate(t1 - t0);
        c->lat[2 * i + 1] = saturate(t2 - t1);
    }
    for (int k = 0; k < CONTEND_SLOTS; k++)
        free(slot[k]);
    return 0;
}

static int cmp_u32(const void *a, const void *b)
{
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    return (x > y) - (x < y);
}

static int bucket_of(uint32_t v)
{
    int k = 0;
    for (uint32_t bound = 100; k < HIST_BUCKETS - 1 && v >= bound; bound *= 10)
        k++;
    return k;
}

/* One row: the distribution of all calls' latencies, a histogram by decades and the counts of
 * calls that took 1 ms or more (a preempted holder) and 10 ms or more (sleep-retry's
 * sleeps). */
static void report_contention(uint32_t *all, int total, int threads)
{
    static int hist[HIST_BUCKETS];
    uint64_t sum = 0;
    struct time_info ti;
    sys_time(&ti);
    uint64_t ms = ti.tsc_hz / 1000;
    int over_ms = 0, over_10ms = 0;
    for (int i = 0; i < total; i++) {
        hist[bucket_of(all[i])]++;
        sum += all[i];
        over_ms += ms != 0 && all[i] >= ms;
        over_10ms += ms != 0 && all[i] >= 10 * ms;
    }
    qsort(all, (size_t)total, sizeof *all, cmp_u32);
    char text[HIST_BUCKETS * 12], *p = text;
    for (int k = 0; k < HIST_BUCKETS; k++)
        p += snprintf(p, (size_t)(text + sizeof text - p), "%s%d", k ? "," : "", hist[k]);
    result_printf("{\"type\":\"result\",\"bench\":\"alloc\",\"test\":\"contended\","
                  "\"lock_in_force\":\"%s\",\"threads\":%d,\"unit\":\"tsc\",\"median\":%u,"
                  "\"min\":%u,\"max\":%u,\"n\":%d,\"mean\":%llu,\"p99\":%u,\"p999\":%u,"
                  "\"over_1ms\":%d,\"over_10ms\":%d,\"tsc_hz\":%llu,\"hist\":[%s]}",
                  lock_kind, threads, all[total / 2], all[0], all[total - 1], total,
                  (unsigned long long)(sum / (uint64_t)total), all[(long)total * 99 / 100],
                  all[(long)total * 999 / 1000], over_ms, over_10ms, (unsigned long long)ti.tsc_hz, text);
}

int run_contend(int threads, int n)
{
    static struct contender c[CONTEND_MAX_THREADS];
    if (threads < 1 || threads > CONTEND_MAX_THREADS || n < 1) {
        printf("mallocbench contend: 1..%d threads, n >= 1\n", CONTEND_MAX_THREADS);
        return 2;
    }
    int total = 2 * n * threads;
    uint32_t *all = malloc(sizeof(uint32_t) * (size_t)total);
    if (all == NULL)
        bench_fail("contend: no memory for the latencies");
    for (int i = 0; i < threads; i++) {
        c[i] = (struct contender){.n = n, .seed = 0x9e3779b97f4a7c15ull * (uint64_t)(i + 1),
                                  .lat = all + 2 * n * i};
        int err = thread_start(&c[i].t, contend_thread, &c[i], PRIO_INHERIT, THREAD_STACK_DEFAULT);
        if (err < 0) {
            printf("mallocbench contend: thread_start: %d\n", err);
            bench_fail("contend: cannot start a thread");
        }
    }
    for (int i = 0; i < threads; i++)
        thread_join(&c[i].t, NULL);
    report_contention(all, total, threads);
    free(all);
    return 0;
}
