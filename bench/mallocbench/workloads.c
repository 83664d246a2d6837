/*
 * mallocbench workloads: P2's Table 2 on ondol. Small programs in the spirit of MiBench's
 * categories (written for ondol, not ported), each allocating the way its kind of
 * program does; for each, the calls it made to malloc, calloc, realloc and free (counted
 * by the wrappers below), the page-layer system calls the allocator made meanwhile
 * (mmap = SYS_VM_MAP, munmap = SYS_VM_UNMAP; ondol_malloc_info), and the share of the
 * workload's ticks spent inside the allocation calls (P2: "mostly < 1 %, up to 38 %"),
 * and the pool's length over the run (below). One result row per workload.
 * Deterministic: a fixed xorshift seed per workload.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <ondol/result.h>
#include <ondol/sys.h>
#include <ondol/timing.h>

#include "mallocbench.h"
#include "ondol_malloc.h"

struct calls {
    unsigned long malloc, calloc, realloc, free;
    uint64_t ticks;                  /* inside the four functions */
};

static struct calls calls;
static uint64_t seed;

static uint64_t rnd(void) { return bench_random(&seed); }

/*
 * The pool over time (P2: "the library pool rarely holds more than 1-3 chunks"): what the
 * allocator keeps for reuse beyond the blocks in use, as
 *   spans     the empty spans (in the pool and the heaps' caches) and cached large
 *             blocks: the analogue of P2's pool chunks (ondol_malloc_info);
 *   kept_kib  mapped memory not in live blocks (mapped_bytes less the usable size of
 *             every live block, which the wrappers track), in KiB.
 * Sampled every 16 allocation calls. Point i holds the largest sample of calls up to
 * (i + 1) * stride; when POOL_POINTS points are full, neighbours merge and the stride
 * doubles, so a run of any length ends with fewer than POOL_POINTS points. The sampling's
 * and the tracking's own ticks are left out of the workload's.
 */
#define POOL_POINTS 48
struct series {
    unsigned n, max;
    unsigned point[POOL_POINTS];
};
static struct {
    unsigned long stride, countdown;
    struct series spans, kept_kib;
    size_t live;                     /* usable bytes of the live blocks */
    uint64_t ticks;
} pool;

static void pool_start(void)
{
    pool.stride = pool.countdown = 16;
    pool.spans.n = pool.spans.max = pool.kept_kib.n = pool.kept_kib.max = 0;
    pool.live = 0;
    pool.ticks = 0;
}

static void series_add(struct series *s, unsigned v, int merge)
{
    s->point[s->n++] = v;
    if (v > s->max)
        s->max = v;
    if (!merge)
        return;
    for (unsigned i = 0; i < POOL_POINTS / 2; i++) {
        unsigned a = s->point[2 * i], b = s->point[2 * i + 1];
        s->point[i] = a > b ? a : b;
    }
    s->n = POOL_POINTS / 2;
}

/* Live bytes change by `sign` times p's usable size (p may be NULL). */
static void pool_track(void *p, int sign)
{
    if (p == NULL)
        return;
    uint64_t t0 = rdtsc();
    size_t n = malloc_usable_size(p);
    pool.live = sign > 0 ? pool.live + n : pool.live - n;
    pool.ticks += rdtsc() - t0;
}

static void pool_sample(void)
{
    if (--pool.countdown != 0)
        return;
    uint64_t t0 = rdtsc();
    struct ondol_malloc_info info;
    ondol_malloc_info(&info);
    int full = pool.spans.n + 1 == POOL_POINTS;
    series_add(&pool.spans, info.pool_spans + info.heap_cached + info.large_cached, full);
    size_t kept = info.mapped_bytes > pool.live ? info.mapped_bytes - pool.live : 0;
    series_add(&pool.kept_kib, (unsigned)(kept >> 10), full);
    if (full)
        pool.stride *= 2;
    pool.countdown = pool.stride;
    pool.ticks += rdtsc() - t0;
}

static void *w_malloc(size_t n)
{
    uint64_t t0 = rdtsc();
    void *p = malloc(n);
    calls.ticks += rdtsc() - t0;
    calls.malloc++;
    pool_track(p, 1);
    pool_sample();
    if (p == NULL)
        bench_fail("malloc failed");
    return p;
}

static void *w_calloc(size_t n, size_t size)
{
    uint64_t t0 = rdtsc();
    void *p = calloc(n, size);
    calls.ticks += rdtsc() - t0;
    calls.calloc++;
    pool_track(p, 1);
    pool_sample();
    if (p == NULL)
        bench_fail("calloc failed");
    return p;
}

static void *w_realloc(void *old, size_t n)
{
    pool_track(old, -1);
    uint64_t t0 = rdtsc();
    void *p = realloc(old, n);
    calls.ticks += rdtsc() - t0;
    calls.realloc++;
    pool_track(p, 1);
    pool_sample();
    if (p == NULL)
        bench_fail("realloc failed");
    return p;
}

static void w_free(void *p)
{
    pool_track(p, -1);
    uint64_t t0 = rdtsc();
    free(p);
    calls.ticks += rdtsc() - t0;
    calls.free++;
    pool_sample();
}

/* ---- automotive: sort records (MiBench qsort) ------------------------------------------ */
struct record {
    unsigned key;
    char *name;
};

static int by_key(const void *a, const void *b)
{
    const struct record *x = *(struct record *const *)a, *y = *(struct record *const *)b;
    return (x->key > y->key) - (x->key < y->key);
}

static uint64_t automotive_qsort(void)
{
    enum { N = 3000 };
    struct record **r = w_malloc(sizeof *r * N);
    for (int i = 0; i < N; i++) {
        r[i] = w_malloc(sizeof **r);
        r[i]->key = (unsigned)rnd();
        size_t len = 4 + rnd() % 28;
        r[i]->name = w_malloc(len + 1);
        memset(r[i]->name, 'a' + i % 26, len);
        r[i]->name[len] = '\0';
    }
    qsort(r, N, sizeof *r, by_key);
    uint64_t check = 0;
    for (int i = 0; i < N; i++) {
        check = check * 31 + r[i]->key + (unsigned char)r[i]->name[0];
        w_free(r[i]->name);
        w_free(r[i]);
    }
    w_free(r);
    return check;
}

/* ---- network: shortest paths with a queue of allocated entries (MiBench dijkstra) ------ */
struct qentry {
    int node, dist;
    struct qentry *next;
};

static struct qentry *queue_push(struct qentry *head, int node, int dist)
{
    struct qentry *e = w_malloc(sizeof *e), **at = &head;
    e->node = node;
    e->dist = dist;
    while (*at != NULL && (*at)->dist <= dist)
        at = &(*at)->next;
    e->next = *at;
    *at = e;
    return head;
}

static uint64_t network_dijkstra(void)
{
    enum { NODES = 80 };
    int *w = w_calloc(NODES * NODES, sizeof *w), *dist = w_malloc(sizeof *dist * NODES);
    for (int i = 0; i < NODES * NODES; i++)
        w[i] = rnd() % 4 == 0 ? 1 + (int)(rnd() % 100) : 0;
    uint64_t check = 0;
    for (int src = 0; src < 20; src++) {
        for (int i = 0; i < NODES; i++)
            dist[i] = -1;
        struct qentry *q = queue_push(NULL, src, 0);
        while (q != NULL) {
            struct qentry *e = q;
            q = q->next;
            if (dist[e->node] < 0) {
                dist[e->node] = e->dist;
                for (int v = 0; v < NODES; v++)
                    if (w[e->node * NODES + v] && dist[v] < 0)
                        q = queue_push(q, v, e->dist + w[e->node * NODES + v]);
            }
            w_free(e);
        }
        for (int i = 0; i < NODES; i++)
            check += (uint64_t)dist[i];
    }
    w_free(dist);
    w_free(w);
    return check;
}

/* ---- network: a binary trie of routes (MiBench patricia) -------------------------------- */
struct trie {
    struct trie *child[2];
    unsigned route;
};

static void trie_free(struct trie *t)
{
    if (t == NULL)
        return;
    trie_free(t->child[0]);
    trie_free(t->child[1]);
    w_free(t);
}

static uint64_t network_patricia(void)
{
    enum { ROUTES = 1500, LOOKUPS = 5000, DEPTH = 20 };
    struct trie *root = w_calloc(1, sizeof *root);
    for (int i = 0; i < ROUTES; i++) {
        unsigned key = (unsigned)rnd();
        struct trie *t = root;
        for (int bit = 0; bit < DEPTH; bit++) {
            int b = (key >> (31 - bit)) & 1;
            if (t->child[b] == NULL)
                t->child[b] = w_calloc(1, sizeof *t);
            t = t->child[b];
        }
        t->route = (unsigned)i + 1;
    }
    uint64_t check = 0;
    for (int i = 0; i < LOOKUPS; i++) {
        unsigned key = (unsigned)rnd();
        const struct trie *t = root;
        for (int bit = 0; bit < DEPTH && t != NULL; bit++)
            t = t->child[(key >> (31 - bit)) & 1];
        check += t != NULL ? t->route : 0;
    }
    trie_free(root);
    return check;
}

/* ---- security: a message that grows as it arrives, then is digested (MiBench sha) ----- */
static uint64_t security_digest(void)
{
    uint64_t check = 0;
    for (int msg = 0; msg < 8; msg++) {
        size_t len = 0, cap = 0;
        unsigned char *buf = NULL;
        size_t total = 4096 + rnd() % (192 << 10);
        while (len < total) {
            size_t chunk = 64 + rnd() % 2048;
            if (len + chunk > cap) {
                cap = (len + chunk) * 3 / 2;
                buf = w_realloc(buf, cap);
            }
            memset(buf + len, (int)(msg + len), chunk);
            len += chunk;
        }
        uint64_t h = 0xcbf29ce484222325ull;          /* FNV-1a stands in for the hash */
        for (size_t i = 0; i < len; i++)
            h = (h ^ buf[i]) * 0x100000001b3ull;
        check ^= h;
        w_free(buf);
    }
    return check;
}

/* ---- office: words set into lines (MiBench stringsearch, typeset) ----------------------- */
static uint64_t office_typeset(void)
{
    enum { WORDS = 4000, WIDTH = 72 };
    char **word = w_malloc(sizeof *word * WORDS);
    for (int i = 0; i < WORDS; i++) {
        size_t len = 1 + rnd() % 12;
        word[i] = w_malloc(len + 1);
        for (size_t k = 0; k < len; k++)
            word[i][k] = (char)('a' + rnd() % 26);
        word[i][len] = '\0';
    }
    uint64_t check = 0;
    char *line = NULL;
    size_t used = 0;
    for (int i = 0; i < WORDS; i++) {
        size_t len = strlen(word[i]);
        if (line == NULL || used + len + 1 > WIDTH) {
            if (line != NULL)
                check += used + (unsigned char)line[0];
            w_free(line);
            line = w_malloc(1);
            used = 0;
        }
        line = w_realloc(line, used + len + 2);
        memcpy(line + used, word[i], len);
        used += len;
        line[used++] = ' ';
        line[used] = '\0';
        if (strstr(line, "ondol") != NULL)
            check++;
    }
    w_free(line);
    for (int i = 0; i < WORDS; i++)
        w_free(word[i]);
    w_free(word);
    return check;
}

/* ---- telecom: frames through a codec, one buffer per frame (MiBench adpcm, CRC32) ------- */
static uint64_t telecom_frames(void)
{
    enum { FRAMES = 600, SAMPLES = 1024 };
    unsigned crc = 0xffffffffu;
    short *history = w_malloc(sizeof *history * SAMPLES * 64);   /* a large block */
    for (int f = 0; f < FRAMES; f++) {
        short *in = w_malloc(sizeof *in * SAMPLES);
        unsigned char *out = w_malloc(SAMPLES / 2);
        short prev = 0;
        for (int i = 0; i < SAMPLES; i++) {
            in[i] = (short)(rnd() & 0xfff);
            out[i / 2] = (unsigned char)(out[i / 2] << 4 | ((in[i] - prev) >> 8 & 0xf));
            prev = in[i];
        }
        for (int i = 0; i < SAMPLES / 2; i++) {
            crc ^= out[i];
            for (int b = 0; b < 8; b++)
                crc = crc >> 1 ^ (0xedb88320u & -(crc & 1));
        }
        memcpy(history + (f % 64) * SAMPLES, in, sizeof *in * SAMPLES);
        w_free(out);
        w_free(in);
    }
    w_free(history);
    return crc;
}

static const struct workload {
    const char *name, *category;
    uint64_t (*run)(void);
} workloads[] = {
    {"qsort", "automotive", automotive_qsort},
    {"dijkstra", "network", network_dijkstra},
    {"patricia", "network", network_patricia},
    {"digest", "security", security_digest},
    {"typeset", "office", office_typeset},
    {"frames", "telecom", telecom_frames},
};

/* Writes a series as a JSON array into buf (room for POOL_POINTS numbers). */
static void series_json(const struct series *s, char *buf, size_t cap)
{
    size_t at = 0;
    for (unsigned i = 0; i < s->n && at < cap; i++)
        at += (size_t)snprintf(buf + at, cap - at, "%s%u", i ? "," : "", s->point[i]);
    buf[at < cap ? at : cap - 1] = '\0';
}

/* The pool samples of the workload just run, one row: a point every `stride` calls. */
static void print_pool(const struct workload *w)
{
    char spans[POOL_POINTS * 4 + 1], kept[POOL_POINTS * 7 + 1];
    series_json(&pool.spans, spans, sizeof spans);
    series_json(&pool.kept_kib, kept, sizeof kept);
    result_printf("{\"type\":\"result\",\"bench\":\"%s\",\"test\":\"pool\",\"workload\":\"%s\","
                  "\"stride\":%lu,\"spans_max\":%u,\"kept_kib_max\":%u,\"spans\":[%s],"
                  "\"kept_kib\":[%s]}",
                  bench_name, w->name, pool.stride, pool.spans.max, pool.kept_kib.max, spans, kept);
}

/* Each workload is cache-model window `window` (SYS_MEASURE; a no-op without the plugin),
 * so `./ondol bench alloc-cache --cache ...` models its caches (docs/alloc.md). */
static void run_workload(const struct workload *w, int window)
{
    struct ondol_malloc_info before, after;
    calls = (struct calls){0};
    seed = 0x9e3779b97f4a7c15ull;
    ondol_malloc_info(&before);
    pool_start();
    SC2(SYS_MEASURE, MEASURE_WINDOW_BEGIN, window);
    uint64_t t0 = rdtsc();
    uint64_t check = w->run();
    uint64_t ticks = rdtsc() - t0 - pool.ticks;
    SC2(SYS_MEASURE, MEASURE_WINDOW_END, window);
    ondol_malloc_info(&after);
    result_printf("{\"type\":\"result\",\"bench\":\"%s\",\"test\":\"workload\","
                  "\"workload\":\"%s\",\"category\":\"%s\",\"window\":%d,\"lock_in_force\":\"%s\","
                  "\"unit\":\"tsc\",\"malloc\":%lu,\"calloc\":%lu,\"realloc\":%lu,\"free\":%lu,"
                  "\"mmap\":%lu,\"munmap\":%lu,\"ticks\":%llu,\"alloc_ticks\":%llu,"
                  "\"alloc_permille\":%llu,\"check\":%llu}",
                  bench_name, w->name, w->category, window, after.lock, calls.malloc, calls.calloc, calls.realloc,
                  calls.free, after.pages.maps - before.pages.maps,
                  after.pages.unmaps - before.pages.unmaps, (unsigned long long)ticks,
                  (unsigned long long)calls.ticks,
                  (unsigned long long)(calls.ticks * 1000 / (ticks ? ticks : 1)),
                  (unsigned long long)check);
    print_pool(w);
}

int run_workloads(void)
{
    for (size_t i = 0; i < sizeof workloads / sizeof *workloads; i++)
        run_workload(&workloads[i], (int)i + 1);
    return 0;
}
