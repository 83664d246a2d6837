/*
 * Randomised allocator stress with a checker (issue 14). Threads allocate, resize, free
 * and hand blocks to each other through shared slots; every live block is filled with a
 * pattern made from its address, size and a tag, and is verified before it is freed or
 * resized (corruption, or an overlap with a block written later, shows as a bad byte).
 * At checkpoints all threads stop and every live block is sorted by address and checked
 * for overlap. Runs against whatever malloc the program is linked with (glibc, ondol's
 * static library, an LD_PRELOAD library) or, in the sanitizer build, ondol's om_* names.
 *
 *   stress THREADS OPS SEED        exit 0 and a summary line when everything held
 *   stress selftest                the checker must catch a planted overlap and corruption
 */
#include <malloc.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define SLOTS 512
#define SHARED 256
#define CHECKPOINTS 4

struct live {
    unsigned char *p;
    size_t n;
    uint64_t tag;
};

struct worker {
    pthread_t th;
    uint64_t rng;
    long ops;
    struct live slot[SLOTS];
};

static struct live shared[SHARED];
static pthread_mutex_t shared_lock[SHARED];
static pthread_barrier_t barrier;
static int nthreads;
static struct worker *workers;
static long failures;

static uint64_t next(uint64_t *s)
{
    *s ^= *s << 13;
    *s ^= *s >> 7;
    *s ^= *s << 17;
    return *s;
}

static unsigned char pattern(const struct live *b, size_t i)
{
    return (unsigned char)((b->tag * 31u + i * 7u) >> 3);
}

/* Blocks above 4 KiB are written and checked every 61st byte (and the last): enough to
 * see an overlap or a stray write, cheap enough for a run of seconds. */
static size_t stride(const struct live *b)
{
    return b->n > 4096 ? 61 : 1;
}

static void fill(struct live *b)
{
    for (size_t i = 0; i < b->n; i += stride(b))
        b->p[i] = pattern(b, i);
    if (b->n != 0)
        b->p[b->n - 1] = pattern(b, b->n - 1);
}

/* Returns 1 when the first `limit` bytes of the block hold what fill() wrote there. */
static int intact_upto(const struct live *b, size_t limit)
{
    for (size_t i = 0; i < limit; i += stride(b)) {
        if (b->p[i] != pattern(b, i))
            return 0;
    }
    return b->n == 0 || b->n > limit || b->p[b->n - 1] == pattern(b, b->n - 1);
}

static int intact(const struct live *b)
{
    return intact_upto(b, b->n);
}

static void failed(const char *what, const struct live *b)
{
    __atomic_fetch_add(&failures, 1, __ATOMIC_RELAXED);
    fprintf(stderr, "stress: %s: block %p size %zu\n", what, (void *)b->p, b->n);
}

/* Sizes: mostly small, some medium, a few large (up to 1 MiB). */
static size_t random_size(uint64_t *rng)
{
    uint64_t r = next(rng);
    switch (r % 16) {
    case 0: return (r >> 8) % 1048576;
    case 1: case 2: return (r >> 8) % 65536;
    case 3: case 4: case 5: return (r >> 8) % 4096;
    default: return (r >> 8) % 256;
    }
}

static int aligned_ok(const void *p, size_t align)
{
    return ((uintptr_t)p & (align - 1)) == 0;
}

static void allocate(struct worker *w, struct live *b)
{
    size_t n = random_size(&w->rng);
    uint64_t how = next(&w->rng) % 8;
    void *p = NULL;
    size_t align = 16;
    if (how == 0) {
        p = calloc(1, n);
        for (size_t i = 0; p != NULL && i < n; i += (n > 4096 ? 97 : 1)) {
            if (((unsigned char *)p)[i] != 0) {
                struct live bad = {p, n, 0};
                failed("calloc memory not zero", &bad);
                break;
            }
        }
    } else if (how == 1) {
        align = (size_t)16 << (next(&w->rng) % 12);
        if (posix_memalign(&p, align, n) != 0)
            p = NULL;
    } else {
        p = malloc(n);
    }
    if (p == NULL) {
        struct live bad = {NULL, n, 0};
        failed("allocation failed", &bad);
        b->p = NULL;
        return;
    }
    b->p = p;
    b->n = n;
    b->tag = next(&w->rng);
    if (!aligned_ok(p, align) || malloc_usable_size(p) < n)
        failed("misaligned or too small", b);
    fill(b);
}

static void release(struct live *b)
{
    if (b->p == NULL)
        return;
    if (!intact(b))
        failed("corrupted before free", b);
    free(b->p);
    b->p = NULL;
}

static void resize(struct worker *w, struct live *b)
{
    if (!intact(b))
        failed("corrupted before realloc", b);
    size_t n = random_size(&w->rng);
    unsigned char *q = realloc(b->p, n);
    if (q == NULL && n != 0) {
        failed("realloc failed", b);
        return;
    }
    size_t keep = n < b->n ? n : b->n;
    struct live moved = {q, b->n, b->tag};
    if (q != NULL && !intact_upto(&moved, keep))
        failed("realloc lost the contents", &moved);
    b->p = q;
    b->n = n;
    if (q != NULL)
        fill(b);
}

/* Swap our block with a shared slot: another thread will free what we leave there. */
static void exchange(struct worker *w, struct live *b)
{
    unsigned i = (unsigned)(next(&w->rng) % SHARED);
    pthread_mutex_lock(&shared_lock[i]);
    struct live theirs = shared[i];
    shared[i] = *b;
    pthread_mutex_unlock(&shared_lock[i]);
    *b = theirs;
}

static void step(struct worker *w)
{
    struct live *b = &w->slot[next(&w->rng) % SLOTS];
    uint64_t op = next(&w->rng) % 10;
    if (b->p == NULL)
        allocate(w, b);
    else if (op < 5)
        release(b);
    else if (op < 7)
        resize(w, b);
    else
        exchange(w, b);
}

static int by_address(const void *a, const void *b)
{
    uintptr_t x = (uintptr_t)((const struct live *)a)->p, y = (uintptr_t)((const struct live *)b)->p;
    return x < y ? -1 : x > y;
}

/* Sorts the live blocks and reports any two that overlap (usable sizes included). */
static long overlaps(struct live *all, size_t count)
{
    long bad = 0;
    qsort(all, count, sizeof all[0], by_address);
    for (size_t i = 1; i < count; i++) {
        if (all[i - 1].p + all[i - 1].n > all[i].p) {
            failed("blocks overlap", &all[i]);
            bad++;
        }
    }
    return bad;
}

static size_t gather(struct live *all)
{
    size_t count = 0;
    for (int t = 0; t < nthreads; t++) {
        for (int i = 0; i < SLOTS; i++) {
            if (workers[t].slot[i].p != NULL && workers[t].slot[i].n != 0)
                all[count++] = workers[t].slot[i];
        }
    }
    for (int i = 0; i < SHARED; i++) {
        if (shared[i].p != NULL && shared[i].n != 0)
            all[count++] = shared[i];
    }
    return count;
}

static void checkpoint(struct worker *w)
{
    if (pthread_barrier_wait(&barrier) == PTHREAD_BARRIER_SERIAL_THREAD) {
        struct live *all = malloc(sizeof(struct live) * (size_t)(nthreads * SLOTS + SHARED));
        overlaps(all, gather(all));
        free(all);
    }
    pthread_barrier_wait(&barrier);
    (void)w;
}

static void *run(void *arg)
{
    struct worker *w = arg;
    for (int c = 0; c < CHECKPOINTS; c++) {
        for (long i = 0; i < w->ops / CHECKPOINTS; i++)
            step(w);
        checkpoint(w);
    }
    for (int i = 0; i < SLOTS; i++)
        release(&w->slot[i]);
    return NULL;
}

static int selftest(void)
{
    struct live blocks[2];
    unsigned char *p = malloc(64);
    blocks[0] = (struct live){p, 64, 1};
    blocks[1] = (struct live){p + 32, 64, 2};
    long before = failures;
    fill(&blocks[0]);
    fill(&blocks[1]);
    int caught_overlap = overlaps(blocks, 2) == 1;
    int caught_corruption = !intact(&blocks[0]);
    free(p);
    failures = before;
    printf("selftest: overlap %s, corruption %s\n", caught_overlap ? "caught" : "MISSED",
           caught_corruption ? "caught" : "MISSED");
    return caught_overlap && caught_corruption ? 0 : 1;
}

int main(int argc, char **argv)
{
    if (argc == 2 && strcmp(argv[1], "selftest") == 0)
        return selftest();
    if (argc != 4) {
        fprintf(stderr, "usage: stress THREADS OPS SEED | stress selftest\n");
        return 2;
    }
    nthreads = atoi(argv[1]);
    long ops = atol(argv[2]);
    uint64_t seed = strtoull(argv[3], NULL, 0);
    workers = calloc((size_t)nthreads, sizeof *workers);
    for (int i = 0; i < SHARED; i++)
        pthread_mutex_init(&shared_lock[i], NULL);
    pthread_barrier_init(&barrier, NULL, (unsigned)nthreads);
    for (int t = 0; t < nthreads; t++) {
        workers[t].rng = seed * 0x9e3779b97f4a7c15ull + (uint64_t)t + 1;
        workers[t].ops = ops;
        pthread_create(&workers[t].th, NULL, run, &workers[t]);
    }
    for (int t = 0; t < nthreads; t++)
        pthread_join(workers[t].th, NULL);
    for (int i = 0; i < SHARED; i++)
        release(&shared[i]);
    printf("stress: %d threads x %ld ops, seed %llu: %ld failures\n", nthreads, ops,
           (unsigned long long)seed, failures);
    free(workers);
    return failures == 0 ? 0 : 1;
}
