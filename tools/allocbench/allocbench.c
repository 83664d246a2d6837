/*
 * Allocator workloads for the head-to-head on Linux (`./ondol bench alloc --host`,
 * tools/ondol/hostbench.py, docs/alloc.md), written for ondol in the spirit of
 * mimalloc-bench. The allocator is whatever malloc the process has (LD_PRELOAD chooses).
 *
 *   allocbench WORKLOAD THREADS OPS [latency]
 *
 * WORKLOAD: churn (one thread replacing random slots, 16..512 B), larson (threads replace
 * slots, and every round new threads take over the slots and free the old threads'
 * blocks), xthread (producers allocate, consumers free), scratch (false sharing: each
 * thread frees an object the main thread allocated next to the others' and then writes its
 * own small objects hard), realloc (buffers grown by small steps to 64 KiB), sizes (sizes
 * log-uniform 16 B..256 KiB). OPS is the number of allocations per thread.
 * Prints one JSON line: wall seconds of the workload (setup excluded) and, with `latency`,
 * the longest and the 99.99th-percentile malloc call in ns (each call timed; slower).
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "peak_rss.h"

#define LAT_BUCKETS 64

struct worker {
    pthread_t th;
    int id;
    long ops;
    uint64_t rng;
    void **slots;
    size_t nslots;
    uint64_t lat_max;
    uint64_t lat_hist[LAT_BUCKETS];   /* by floor(log2(ns)) */
};

static int timing;
static const char *workload;

static uint64_t now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static uint64_t next(uint64_t *s)
{
    *s ^= *s << 13;
    *s ^= *s >> 7;
    *s ^= *s << 17;
    return *s;
}

/* Writes one byte per page, as a program using the block would touch it. */
static void touch(char *p, size_t n)
{
    for (size_t i = 0; i < n; i += 4096)
        p[i] = 1;
}

/* malloc, timed when latency is asked for; the block's pages are touched. */
static void *alloc(struct worker *w, size_t n)
{
    if (!timing) {
        char *p = malloc(n);
        touch(p, n);
        return p;
    }
    uint64_t t0 = now_ns();
    char *p = malloc(n);
    uint64_t dt = now_ns() - t0;
    if (dt > w->lat_max)
        w->lat_max = dt;
    w->lat_hist[dt == 0 ? 0 : 63 - __builtin_clzll(dt)]++;
    touch(p, n);
    return p;
}

static size_t small_size(struct worker *w, size_t lo, size_t hi)
{
    return lo + next(&w->rng) % (hi - lo + 1);
}

static size_t log_size(struct worker *w)
{
    unsigned shift = 4 + (unsigned)(next(&w->rng) % 14);   /* 16 B .. 256 KiB */
    size_t base = (size_t)1 << shift;
    return base + next(&w->rng) % base;
}

static void replace_slots(struct worker *w, long ops, size_t lo, size_t hi)
{
    for (long i = 0; i < ops; i++) {
        size_t k = next(&w->rng) % w->nslots;
        free(w->slots[k]);
        w->slots[k] = alloc(w, small_size(w, lo, hi));
    }
}

static void *run_churn(void *arg)
{
    replace_slots(arg, ((struct worker *)arg)->ops, 16, 512);
    return NULL;
}

static void *run_sizes(void *arg)
{
    struct worker *w = arg;
    for (long i = 0; i < w->ops; i++) {
        size_t k = next(&w->rng) % w->nslots;
        free(w->slots[k]);
        w->slots[k] = alloc(w, log_size(w));
    }
    return NULL;
}

#define LARSON_ROUNDS 10
static void *run_larson_round(void *arg)
{
    struct worker *w = arg;
    replace_slots(w, w->ops / LARSON_ROUNDS, 16, 1024);
    return NULL;
}

/* xthread: a single-producer single-consumer ring per pair. */
#define RING 4096
struct ring {
    void *slot[RING];
    volatile unsigned long head, tail;
};
static struct ring *rings;

static void *run_producer(void *arg)
{
    struct worker *w = arg;
    struct ring *r = &rings[w->id / 2];
    for (long i = 0; i < w->ops; i++) {
        void *p = alloc(w, small_size(w, 16, 256));
        while (r->head - __atomic_load_n(&r->tail, __ATOMIC_ACQUIRE) >= RING)
            sched_yield();
        r->slot[r->head % RING] = p;
        __atomic_store_n(&r->head, r->head + 1, __ATOMIC_RELEASE);
    }
    return NULL;
}

static void *run_consumer(void *arg)
{
    struct worker *w = arg;
    struct ring *r = &rings[w->id / 2];
    for (long i = 0; i < w->ops; i++) {
        while (__atomic_load_n(&r->head, __ATOMIC_ACQUIRE) == r->tail)
            sched_yield();
        free(r->slot[r->tail % RING]);
        __atomic_store_n(&r->tail, r->tail + 1, __ATOMIC_RELEASE);
    }
    return NULL;
}

/* scratch: the main thread's objects (w->slots[0], adjacent to the other threads') are
 * freed by their thread, which then allocates and writes its own objects many times. */
static void *run_scratch(void *arg)
{
    struct worker *w = arg;
    free(w->slots[0]);
    w->slots[0] = NULL;
    for (long i = 0; i < w->ops; i++) {
        volatile char *p = alloc(w, 8);
        for (int k = 0; k < 100; k++)
            p[k & 7]++;
        free((void *)p);
    }
    return NULL;
}

static void *run_realloc(void *arg)
{
    struct worker *w = arg;
    long done = 0;
    while (done < w->ops) {
        size_t n = 0;
        char *p = NULL;
        while (n < 65536 && done < w->ops) {
            n += small_size(w, 1, 64);
            p = realloc(p, n);
            p[n - 1] = 1;
            done++;
        }
        free(p);
    }
    return NULL;
}

static void run_threads(struct worker *ws, int n, void *(*fn)(void *))
{
    for (int i = 0; i < n; i++)
        pthread_create(&ws[i].th, NULL, fn, &ws[i]);
    for (int i = 0; i < n; i++)
        pthread_join(ws[i].th, NULL);
}

static void *(*const runners[])(void *) = {run_churn, run_sizes, run_scratch, run_realloc};
static const char *const runner_names[] = {"churn", "sizes", "scratch", "realloc"};

static int run(struct worker *ws, int threads)
{
    if (strcmp(workload, "larson") == 0) {
        for (int r = 0; r < LARSON_ROUNDS; r++)
            run_threads(ws, threads, run_larson_round);
        return 0;
    }
    if (strcmp(workload, "xthread") == 0) {
        for (int i = 0; i < threads; i++)
            pthread_create(&ws[i].th, NULL, i % 2 ? run_consumer : run_producer, &ws[i]);
        for (int i = 0; i < threads; i++)
            pthread_join(ws[i].th, NULL);
        return 0;
    }
    for (size_t k = 0; k < sizeof runners / sizeof runners[0]; k++) {
        if (strcmp(workload, runner_names[k]) == 0) {
            run_threads(ws, threads, runners[k]);
            return 0;
        }
    }
    return -1;
}

static size_t slots_for(const char *name)
{
    if (strcmp(name, "churn") == 0)
        return 10000;
    if (strcmp(name, "larson") == 0)
        return 1000;
    if (strcmp(name, "sizes") == 0)
        return 500;
    return strcmp(name, "scratch") == 0 ? 1 : 0;
}

static void setup(struct worker *ws, int threads, long ops)
{
    size_t nslots = slots_for(workload);
    for (int i = 0; i < threads; i++) {
        ws[i].id = i;
        ws[i].ops = ops;
        ws[i].rng = 0x9e3779b97f4a7c15ull * (uint64_t)(i + 1);
        ws[i].nslots = nslots;
        ws[i].slots = calloc(nslots ? nslots : 1, sizeof(void *));
        for (size_t k = 0; k < nslots; k++)
            ws[i].slots[k] = strcmp(workload, "scratch") == 0 ? malloc(8) : NULL;
    }
    rings = calloc((size_t)threads / 2 + 1, sizeof *rings);
}

static void latency(const struct worker *ws, int threads, uint64_t *max, uint64_t *p9999)
{
    uint64_t hist[LAT_BUCKETS] = {0}, total = 0;
    *max = 0;
    for (int i = 0; i < threads; i++) {
        if (ws[i].lat_max > *max)
            *max = ws[i].lat_max;
        for (int b = 0; b < LAT_BUCKETS; b++) {
            hist[b] += ws[i].lat_hist[b];
            total += ws[i].lat_hist[b];
        }
    }
    uint64_t seen = 0;
    *p9999 = 0;
    for (int b = 0; b < LAT_BUCKETS; b++) {
        seen += hist[b];
        if (seen * 10000 >= total * 9999) {
            *p9999 = (uint64_t)2 << b;   /* upper edge of the bucket */
            break;
        }
    }
}

int main(int argc, char **argv)
{
    if (argc < 4) {
        fprintf(stderr, "usage: allocbench churn|larson|xthread|scratch|realloc|sizes THREADS OPS "
                        "[latency]\n");
        return 2;
    }
    workload = argv[1];
    int threads = atoi(argv[2]);
    long ops = atol(argv[3]);
    timing = argc > 4 && strcmp(argv[4], "latency") == 0;
    if (threads < 1 || ops < 1 || (strcmp(workload, "xthread") == 0 && threads % 2))
        return 2;
    struct worker *ws = calloc((size_t)threads, sizeof *ws);
    setup(ws, threads, ops);
    uint64_t t0 = now_ns();
    if (run(ws, threads) != 0) {
        fprintf(stderr, "allocbench: unknown workload %s\n", workload);
        return 2;
    }
    double wall = (double)(now_ns() - t0) / 1e9;
    printf("{\"workload\": \"%s\", \"threads\": %d, \"ops\": %ld, \"wall_s\": %.6f", workload,
           threads, ops, wall);
    if (timing) {
        uint64_t max, p9999;
        latency(ws, threads, &max, &p9999);
        printf(", \"lat_max_ns\": %llu, \"lat_p9999_ns\": %llu", (unsigned long long)max,
               (unsigned long long)p9999);
    }
    printf(", \"peak_rss_kib\": %ld}\n", peak_rss_kib());
    return 0;
}
