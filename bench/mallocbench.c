/*
 * mallocbench sizes: P2's per-layer cost of dynamic allocation on ondol (`./ondol bench
 * alloc`, docs/alloc.md). Linked with ondol's allocator (build/user/libondolmalloc.a), in
 * the lock kind the kernel option malloc_lock= names.
 *
 * For each size from 16 B to 1 MiB (powers of two) it allocates a batch of blocks, writes
 * one byte in every page of each, and frees them, twice: "cold" (the first blocks of that
 * size) and "warm" (again, on what the first round left in the allocator's caches). Each
 * malloc and free call is timed on its own with the TSC (under QEMU icount: exact guest
 * instructions) and split by layer:
 *   library   the call minus the page-layer system calls it made (user-side TSC around
 *             each SYS_VM_MAP / SYS_VM_UNMAP, kept by lib/malloc/platform_ondol.c);
 *   page      those system calls (count, ticks), and the kernel's part of them: the
 *             vm_map / vm_unmap probes' sums;
 *   frames    the frame_alloc probe: frames allocated in the phase and their ticks (the
 *             data pages' frames come in the "touch" phase, on first write).
 * The kernel probes are read from pcnt slots; they count only when the probes are on, so
 * `./ondol bench alloc` runs `pcnt stat mallocbench sizes`. Without probes the kernel
 * fields are left out of the rows.
 * One result row per size, round and phase (malloc, touch, free); then an "end" line.
 *
 * mallocbench contend THREADS N: the allocator's lock under contention (see contend()).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <ondol/result.h>
#include <ondol/sys.h>
#include <ondol/thread.h>
#include <ondol/timing.h>

#include "ondol_malloc.h"

#define MIN_SIZE 16u
#define MAX_SIZE (1u << 20)
#define MAX_BLOCKS 64
#define BATCH_BYTES (8u << 20)       /* the largest sizes get fewer blocks: guest RAM is small */
#define PAGE 4096u
#define PROBE_VM_MAP 6               /* the kernel's probe slots (docs/measuring.md) */
#define PROBE_VM_UNMAP 7
#define PROBE_FRAME 8
#define PROBE_SLOTS 9

/* What one phase cost beyond the per-call samples, read before and after it. */
struct layers {
    struct ondol_malloc_pages pages;
    struct pcnt_slot_info slot[PROBE_SLOTS];
};

struct phase {
    const char *name;
    uint64_t t[MAX_BLOCKS];          /* per call (or per block touched) */
    int n;
    struct layers before, after;
};

static const char *lock_kind;
static int probes_on;

static void read_layers(struct layers *l)
{
    struct ondol_malloc_info info;
    ondol_malloc_info(&info);
    l->pages = info.pages;
    if (probes_on)
        SC4(SYS_PCNT, PCNT_DUMP, (long)l->slot, PROBE_SLOTS, 0);
}

static int blocks_for(size_t size)
{
    size_t n = BATCH_BYTES / size;
    return n > MAX_BLOCKS ? MAX_BLOCKS : (int)n;
}

static uint64_t slot_delta_sum(const struct phase *p, int slot)
{
    return p->after.slot[slot].sum - p->before.slot[slot].sum;
}

static uint64_t slot_delta_count(const struct phase *p, int slot)
{
    return p->after.slot[slot].count - p->before.slot[slot].count;
}

static uint64_t slot_delta_dropped(const struct phase *p, int slot)
{
    return p->after.slot[slot].dropped - p->before.slot[slot].dropped;
}

/* The kernel probes' part of a row, or "" without probes. */
static void kernel_fields(const struct phase *p, char *buf, size_t len)
{
    if (!probes_on) {
        buf[0] = '\0';
        return;
    }
    snprintf(buf, len,
             ",\"kernel_vm\":%llu,\"frames\":%llu,\"frame_ticks\":%llu,\"probe_dropped\":%llu",
             (unsigned long long)(slot_delta_sum(p, PROBE_VM_MAP) + slot_delta_sum(p, PROBE_VM_UNMAP)),
             (unsigned long long)slot_delta_count(p, PROBE_FRAME),
             (unsigned long long)slot_delta_sum(p, PROBE_FRAME),
             (unsigned long long)(slot_delta_dropped(p, PROBE_VM_MAP) +
                                  slot_delta_dropped(p, PROBE_VM_UNMAP) +
                                  slot_delta_dropped(p, PROBE_FRAME)));
}

/* One result row: per-call statistics (TSC), the library's own mean, the page layer. */
static void report(const struct phase *p, size_t size, const char *round)
{
    uint64_t sorted[MAX_BLOCKS], total = 0;
    memcpy(sorted, p->t, sizeof(uint64_t) * (size_t)p->n);
    sort_u64(sorted, (size_t)p->n);
    for (int i = 0; i < p->n; i++)
        total += p->t[i];
    const struct ondol_malloc_pages *a = &p->after.pages, *b = &p->before.pages;
    uint64_t page_calls = (a->maps - b->maps) + (a->unmaps - b->unmaps);
    uint64_t page_ticks = (a->map_ticks - b->map_ticks) + (a->unmap_ticks - b->unmap_ticks);
    char kernel[160];
    kernel_fields(p, kernel, sizeof kernel);
    result_printf("{\"type\":\"result\",\"bench\":\"alloc\",\"test\":\"%s\",\"size\":%zu,"
                  "\"round\":\"%s\",\"lock_in_force\":\"%s\",\"unit\":\"tsc\",\"median\":%llu,\"min\":%llu,"
                  "\"max\":%llu,\"n\":%d,\"mean\":%llu,\"library\":%llu,\"page_calls\":%llu,"
                  "\"page_ticks\":%llu%s}",
                  p->name, size, round, lock_kind, (unsigned long long)sorted[p->n / 2],
                  (unsigned long long)sorted[0], (unsigned long long)sorted[p->n - 1], p->n,
                  (unsigned long long)(total / (uint64_t)p->n),
                  (unsigned long long)((total - page_ticks) / (uint64_t)p->n),
                  (unsigned long long)page_calls, (unsigned long long)page_ticks, kernel);
}

static void run_round(size_t size, const char *round)
{
    static struct phase alloc = {.name = "malloc"}, touch = {.name = "touch"},
                        release = {.name = "free"};
    static char *block[MAX_BLOCKS];
    int n = blocks_for(size);
    alloc.n = touch.n = release.n = n;

    read_layers(&alloc.before);
    for (int i = 0; i < n; i++) {
        uint64_t t0 = rdtsc();
        block[i] = malloc(size);
        alloc.t[i] = rdtsc() - t0;
    }
    read_layers(&alloc.after);
    for (int i = 0; i < n; i++) {
        if (block[i] == NULL) {
            printf("mallocbench: malloc(%zu) failed\n", size);
            exit(1);
        }
    }
    touch.before = alloc.after;
    for (int i = 0; i < n; i++) {
        uint64_t t0 = rdtsc();
        for (size_t off = 0; off < size; off += PAGE)
            ((volatile char *)block[i])[off] = 1;
        touch.t[i] = rdtsc() - t0;
    }
    read_layers(&touch.after);
    release.before = touch.after;
    for (int i = 0; i < n; i++) {
        uint64_t t0 = rdtsc();
        free(block[i]);
        release.t[i] = rdtsc() - t0;
    }
    read_layers(&release.after);
    report(&alloc, size, round);
    report(&touch, size, round);
    report(&release, size, round);
}

static int sizes(void)
{
    int total = 0, done = 0;
    for (size_t s = MIN_SIZE; s <= MAX_SIZE; s *= 2)
        total++;
    for (size_t s = MIN_SIZE; s <= MAX_SIZE; s *= 2) {
        run_round(s, "cold");
        run_round(s, "warm");
        result_printf("{\"type\":\"progress\",\"bench\":\"alloc\",\"done\":%d,\"total\":%d}",
                      ++done, total);
    }
    return 0;
}

/* ---- contend: P2's lock latency --------------------------------------------------------
 * THREADS threads each make N malloc calls (16-271 B, into 16 slots, freeing the slot's old
 * block first); every malloc and free call is timed. With one CPU, two threads meet in the
 * allocator's lock only when the timer preempts a holder: then sleep-retry spins and sleeps
 * 10 ms (P2's outliers), blocking sleeps on the futex until the holder releases it. */
#define CONTEND_MAX_THREADS 8
#define CONTEND_SLOTS 16
#define HIST_BUCKETS 7                /* decades of ticks: < 10^2, [10^2, 10^3), ..., >= 10^7 */

struct contender {
    struct thread t;
    int n;
    uint64_t seed;
    uint32_t *lat;                    /* 2n samples, saturated at 2^32 - 1 */
};

static uint64_t next_random(uint64_t *s)
{
    *s ^= *s >> 12;
    *s ^= *s << 25;
    *s ^= *s >> 27;
    return *s * 0x2545f4914f6cdd1dull;
}

static uint32_t saturate(uint64_t v) { return v > UINT32_MAX ? UINT32_MAX : (uint32_t)v; }

static int contend_thread(void *arg)
{
    struct contender *c = arg;
    void *slot[CONTEND_SLOTS] = {0};
    for (int i = 0; i < c->n; i++) {
        uint64_t r = next_random(&c->seed);
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

static int contend(int threads, int n)
{
    static struct contender c[CONTEND_MAX_THREADS];
    if (threads < 1 || threads > CONTEND_MAX_THREADS || n < 1) {
        printf("mallocbench contend: 1..%d threads, n >= 1\n", CONTEND_MAX_THREADS);
        return 2;
    }
    int total = 2 * n * threads;
    uint32_t *all = malloc(sizeof(uint32_t) * (size_t)total);
    if (all == NULL)
        return 1;
    for (int i = 0; i < threads; i++) {
        c[i] = (struct contender){.n = n, .seed = 0x9e3779b97f4a7c15ull * (uint64_t)(i + 1),
                                  .lat = all + 2 * n * i};
        if (thread_start(&c[i].t, contend_thread, &c[i], PRIO_INHERIT, THREAD_STACK_DEFAULT) < 0)
            return 1;
    }
    for (int i = 0; i < threads; i++)
        thread_join(&c[i].t, NULL);
    report_contention(all, total, threads);
    free(all);
    return 0;
}

int main(int argc, char **argv)
{
    struct ondol_malloc_info info;
    ondol_malloc_info(&info);        /* reads the options; allocates nothing */
    lock_kind = info.lock;
    struct pcnt_events ev;
    probes_on = SC4(SYS_PCNT, PCNT_GET_EVENT, (long)&ev, 0, 0) == 0 && ev.probes;
    const char *mode = argc > 1 ? argv[1] : "";
    int status = 2;
    if (!strcmp(mode, "sizes"))
        status = sizes();
    else if (!strcmp(mode, "contend") && argc == 4)
        status = contend(atoi(argv[2]), atoi(argv[3]));
    else
        printf("usage: mallocbench sizes | contend THREADS N\n");
    result_printf("{\"type\":\"end\",\"bench\":\"alloc\",\"status\":%d}", status);
    return status;
}
