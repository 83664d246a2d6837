/*
 * ondol's allocator (issue 14, P2): size classes, per-thread heaps, page-local free lists,
 * large blocks straight from the page layer, memory given back. Design: docs/alloc.md.
 *
 * Memory comes in spans of SPAN_SIZE bytes aligned to SPAN_SIZE. A small span serves one
 * size class; its header sits at its start, so the header of any pointer p we handed out is
 * at (p - 1) rounded down to SPAN_SIZE (the "- 1" lets a large block whose payload starts
 * exactly on a span boundary keep its header in the span before). A small span has
 *   - a local free list and a bump pointer, used only by the owning heap (no atomics);
 *   - a thread_free list that other threads push freed blocks on with one double-width
 *     compare-and-swap, {head | TF_FULL, count}, so the owner takes all of them in O(1)
 *     with the count of blocks it got back.
 * Invariants (owner's view of a span, `state`):
 *   CURRENT  the heap allocates from it (h->cur[cls]); never released while current;
 *   AVAIL    on h->avail[cls]: has local free blocks or remote ones to collect;
 *   FULL     nothing left; TF_FULL is set in thread_free, so the first remote free clears
 *            it and queues the span on h->delayed, where the owner finds it again;
 *   QUEUED   the owner saw TF_FULL cleared by a remote freer: the span is (or is about to
 *            be) on h->delayed and is neither released nor listed until taken from there.
 * A span is released (back to the heap's cache or the global pool) when a local free
 * brings `used` to 0 while it is AVAIL.
 *
 * Locking (malloc_lock=, lock.h): lock-free gives every thread its own heap (TLS); the
 * other kinds run all threads on one heap under one lock, as P2's uClibc malloc does.
 * Worst case of a small malloc, system calls excluded: free-list pop, bump, one collect,
 * one mark-full CAS, the delayed spans queued since the last refill (one step each), one
 * list pop or one span header initialisation; no loop over a list of blocks.
 */
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "lock.h"
#include "ondol_malloc.h"
#include "platform.h"

#define SPAN_SHIFT 18
#define SPAN_SIZE ((uintptr_t)1 << SPAN_SHIFT)
#define SPAN_MASK (SPAN_SIZE - 1)
#define PAGE 4096u
#define SMALL_MAX 32768u
#define NCLASSES 41
#define BITMAP_BYTES (SPAN_SIZE / 16 / 8)   /* check mode: one bit per 16-byte block */
#define HEAP_CACHE_SPANS 1u                 /* empty spans a heap keeps unpurged */
#define POOL_KEEP_SPANS 64u                 /* purged empty spans kept mapped, globally */
#define LARGE_CACHE_ENTRIES 32u
#define LARGE_CACHE_BYTES ((size_t)32 << 20)
#define REGISTRY_SLOTS (1u << 16)
/* Large blocks up to 4 MiB are rounded to quarter-power sizes and a freeing thread keeps
 * a few of each size, mapped and touched, for its next allocations (no lock, no mmap). */
#define LARGE_BIN_LIMIT ((size_t)4 << 20)
#define LARGE_BINS 28
#define LARGE_BIN_BLOCKS 16u
#define HEAP_LARGE_BYTES ((size_t)16 << 20)

#define MAGIC_SPAN 0x6f6e646f6c53504eull    /* "ondolSPN" */
#define MAGIC_LARGE 0x6f6e646f6c4c5247ull   /* "ondolLRG" */
#define MAGIC_FREED 0x6f6e646f6c465245ull   /* a large block already given back */
#define TF_FULL ((uint64_t)1)

/* Error numbers posix_memalign returns (Linux's values; ondol has no errno). */
#define MALLOC_EINVAL 22
#define MALLOC_ENOMEM 12

#define likely(x) __builtin_expect(!!(x), 1)
#define unlikely(x) __builtin_expect(!!(x), 0)
#define EXPORT __attribute__((visibility("default")))

enum span_state { ST_CURRENT, ST_AVAIL, ST_FULL, ST_QUEUED };

struct block {
    struct block *next;
};

typedef unsigned __int128 tfword;   /* low: head | TF_FULL, high: number of blocks */

struct span {
    uint64_t magic;
    struct heap *heap;          /* owner; NULL for large blocks */
    uint32_t free_flags;        /* non-zero: free() must take the slow path */
    uint32_t used;              /* blocks handed out, not freed locally or collected */
    struct block *free;         /* local free list */
    char *bump, *bump_end;      /* blocks never handed out yet: [bump, bump_end) */
    char *start;                /* first block (large: the payload) */
    size_t bsize;               /* block size (large: usable bytes) */
    uint32_t cls;
    uint8_t state;
    uint8_t interior;           /* aligned allocations point inside blocks */
    struct span *next, *prev;   /* h->avail[cls], a heap cache, the pool, the large cache */
    struct span *delayed_next;
    struct os_region region;
    uint64_t *bitmap;           /* check mode: allocated blocks */
    _Alignas(64) volatile tfword thread_free;
};

struct heap {
    struct span *cur[NCLASSES];
    struct span *avail[NCLASSES];
    struct span *delayed;       /* pushed by remote freers, taken by the owner */
    struct span *cache;
    unsigned ncache;
    struct heap *next_abandoned;
    struct span *large_bin[LARGE_BINS];
    unsigned large_count[LARGE_BINS];
    size_t large_bytes;
};

/* Settings, fixed at the first allocation. */
static enum lock_kind lock_kind;
static int check_on;
static size_t span_header;      /* offset of the first block in a small span */
static size_t large_header;
static uint32_t class_size[NCLASSES];
static int init_state;          /* 0 not yet, 1 running, 2 done */

/* Shared state; `global_lock` serialises everything in the locked kinds, `pool_lock`
 * guards the pool, the large cache, the registry and the heap lists in every kind. */
static struct mlock global_lock, pool_lock;
static struct heap main_heap;
static struct heap *abandoned;
static struct span *pool;
static unsigned pool_count;
static struct span *large_cache;
static unsigned large_cache_count;
static unsigned heap_cached_spans;          /* in every heap's cache (ondol_malloc_info) */
static size_t large_cache_bytes;
static size_t mapped_bytes;
static uintptr_t registry[REGISTRY_SLOTS];   /* check mode: live headers, 1 = deleted */

/* Current span of a class that has nothing yet: the slow path replaces it. */
static struct span empty_span = {.free_flags = 1};

/* ---- size classes -------------------------------------------------------------------- */

/* Classes 1..8 are 16..128 in steps of 16, then four per power of two up to 32 KiB. */
static inline unsigned size_class(size_t n)
{
    if (n <= 128)
        return n == 0 ? 1 : (unsigned)((n + 15) >> 4);
    unsigned msb = 63u - (unsigned)__builtin_clzll(n - 1);
    unsigned sub = (unsigned)((n - 1) >> (msb - 2)) & 3u;
    return 8u + (msb - 7u) * 4u + sub + 1u;
}

/* Bin of a large block of n bytes (SMALL_MAX < n <= LARGE_BIN_LIMIT) and its size. */
static unsigned large_bin(size_t n)
{
    unsigned msb = 63u - (unsigned)__builtin_clzll(n - 1);
    return (msb - 15u) * 4u + ((unsigned)((n - 1) >> (msb - 2)) & 3u);
}

static size_t large_bin_size(unsigned bin)
{
    return (size_t)(4u + bin % 4u + 1u) << (bin / 4u + 13u);
}

static void init_classes(void)
{
    for (unsigned c = 1; c <= 8; c++)
        class_size[c] = c * 16u;
    for (unsigned c = 9; c < NCLASSES; c++) {
        unsigned msb = 7u + (c - 9u) / 4u, sub = (c - 9u) % 4u;
        class_size[c] = (4u + sub + 1u) << (msb - 2u);
    }
}

/* ---- initialisation --------------------------------------------------------------------- */

static int option_is_on(const char *name)
{
    char v[16];
    return os_option(name, v, sizeof v) && (strcmp(v, "on") == 0 || strcmp(v, "1") == 0);
}

static void read_lock_option(void)
{
    char v[32];
    int kind = os_option("malloc_lock", v, sizeof v) ? lock_kind_parse(v) : LOCK_FREE;
    if (kind < 0)
        os_fatal("ondol malloc: malloc_lock must be sleep-retry, blocking or lock-free");
    /* Per-thread heaps need thread-local storage (not yet on native ondol). */
    lock_kind = (kind == LOCK_FREE && !os_has_tls()) ? LOCK_BLOCKING : (enum lock_kind)kind;
}

static void before_fork(void)
{
    mlock_acquire(&global_lock, lock_kind);
    mlock_acquire(&pool_lock, lock_kind);
}

static void after_fork(void)
{
    mlock_release(&pool_lock, lock_kind);
    mlock_release(&global_lock, lock_kind);
}

static void init_once(void)
{
    read_lock_option();
    check_on = option_is_on("malloc_check");
    init_classes();
    size_t hdr = (sizeof(struct span) + 63) & ~(size_t)63;
    large_header = hdr;
    span_header = check_on ? hdr + BITMAP_BYTES : hdr;
    for (unsigned c = 0; c < NCLASSES; c++)
        main_heap.cur[c] = &empty_span;
}

static void ensure_init(void)
{
    if (likely(__atomic_load_n(&init_state, __ATOMIC_ACQUIRE) == 2))
        return;
    int expected = 0;
    if (__atomic_compare_exchange_n(&init_state, &expected, 1, 0, __ATOMIC_ACQ_REL,
                                    __ATOMIC_ACQUIRE)) {
        init_once();
        __atomic_store_n(&init_state, 2, __ATOMIC_RELEASE);
        os_at_fork(before_fork, after_fork);   /* may allocate: after init is complete */
        return;
    }
    while (__atomic_load_n(&init_state, __ATOMIC_ACQUIRE) != 2)
        os_yield();
}

/* ---- misuse reports (check mode keeps a registry of live headers) ------------------------ */

static __attribute__((noreturn)) void report(const char *what, const void *p)
{
    static const char hex[] = "0123456789abcdef";
    char msg[160] = "ondol malloc: ";
    size_t len = strlen(msg);
    while (*what != '\0' && len < sizeof msg - 24)
        msg[len++] = *what++;
    msg[len++] = ' ';
    msg[len++] = '0';
    msg[len++] = 'x';
    for (int shift = 60; shift >= 0; shift -= 4)
        msg[len++] = hex[((uintptr_t)p >> shift) & 15];
    msg[len] = '\0';
    os_fatal(msg);
}

static unsigned registry_slot(uintptr_t key)
{
    return (unsigned)(((key >> SPAN_SHIFT) * 0x9e3779b97f4a7c15ull) >> 48) & (REGISTRY_SLOTS - 1);
}

/* Callers hold pool_lock. */
static void registry_add(const struct span *s)
{
    if (!check_on)
        return;
    unsigned i = registry_slot((uintptr_t)s);
    for (unsigned probes = 0; probes < REGISTRY_SLOTS; probes++, i = (i + 1) & (REGISTRY_SLOTS - 1)) {
        if (registry[i] <= 1) {
            __atomic_store_n(&registry[i], (uintptr_t)s, __ATOMIC_RELEASE);
            return;
        }
    }
    os_fatal("ondol malloc: malloc_check registry full");
}

static void registry_remove(const struct span *s)
{
    if (!check_on)
        return;
    unsigned i = registry_slot((uintptr_t)s);
    while (registry[i] != 0) {
        if (registry[i] == (uintptr_t)s) {
            __atomic_store_n(&registry[i], 1, __ATOMIC_RELEASE);
            return;
        }
        i = (i + 1) & (REGISTRY_SLOTS - 1);
    }
}

static int registry_has(const struct span *s)
{
    unsigned i = registry_slot((uintptr_t)s);
    uintptr_t v;
    while ((v = __atomic_load_n(&registry[i], __ATOMIC_ACQUIRE)) != 0) {
        if (v == (uintptr_t)s)
            return 1;
        i = (i + 1) & (REGISTRY_SLOTS - 1);
    }
    return 0;
}

static inline struct span *span_of(const void *p)
{
    return (struct span *)(((uintptr_t)p - 1) & ~SPAN_MASK);
}

/* The block p points into (aligned allocations may point inside their block). */
static char *block_start(const struct span *s, const void *p)
{
    size_t off = (size_t)((const char *)p - s->start);
    return s->start + off / s->bsize * s->bsize;
}

static size_t block_index(const struct span *s, const char *b)
{
    return (size_t)(b - s->start) / s->bsize;
}

static void bitmap_set(struct span *s, const char *b)
{
    size_t i = block_index(s, b);
    __atomic_fetch_or(&s->bitmap[i / 64], (uint64_t)1 << (i % 64), __ATOMIC_RELAXED);
}

/* Check mode: p must be a live block of ours; reports and ends the program otherwise. */
static void check_free(struct span *s, const void *p)
{
    if (!registry_has(s) || s->magic != MAGIC_SPAN)
        report("free of a pointer malloc never returned:", p);
    char *b = block_start(s, p);
    if ((const char *)p < s->start || (const char *)p >= s->bump || (!s->interior && b != p))
        report("free of a pointer that is not the start of a block:", p);
    size_t i = block_index(s, b);
    uint64_t bit = (uint64_t)1 << (i % 64);
    if (!(__atomic_fetch_and(&s->bitmap[i / 64], ~bit, __ATOMIC_RELAXED) & bit))
        report("double free of", p);
}

/* ---- the page layer: spans and the global pool ---------------------------------------- */

static struct span *span_map(void)
{
    struct os_region r;
    struct span *s = os_map_aligned(SPAN_SIZE, SPAN_SIZE, &r);
    if (s == NULL)
        return NULL;
    s->region = r;
    __atomic_fetch_add(&mapped_bytes, r.len, __ATOMIC_RELAXED);
    return s;
}

static void region_unmap(struct span *s)
{
    struct os_region r = s->region;
    __atomic_fetch_sub(&mapped_bytes, r.len, __ATOMIC_RELAXED);
    os_unmap(&r);
}

static struct span *pool_get(void)
{
    mlock_acquire(&pool_lock, lock_kind);
    struct span *s = pool;
    if (s != NULL) {
        pool = s->next;
        pool_count--;
    }
    mlock_release(&pool_lock, lock_kind);
    if (s == NULL) {
        s = span_map();
        if (s != NULL) {
            mlock_acquire(&pool_lock, lock_kind);
            registry_add(s);
            mlock_release(&pool_lock, lock_kind);
        }
    }
    return s;
}

/* An empty span goes back: its pages (all but the header's) are purged, and beyond
 * POOL_KEEP_SPANS it is unmapped. */
static void pool_put(struct span *s)
{
    s->magic = 0;
    os_purge((char *)s + PAGE, SPAN_SIZE - PAGE);
    mlock_acquire(&pool_lock, lock_kind);
    if (pool_count < POOL_KEEP_SPANS) {
        s->next = pool;
        pool = s;
        pool_count++;
        s = NULL;
    } else {
        registry_remove(s);
    }
    mlock_release(&pool_lock, lock_kind);
    if (s != NULL)
        region_unmap(s);
}

static void span_init(struct span *s, struct heap *h, unsigned cls)
{
    size_t bsize = class_size[cls];
    size_t blocks = (SPAN_SIZE - span_header) / bsize;
    s->magic = MAGIC_SPAN;
    s->heap = h;
    s->free_flags = (uint32_t)check_on;
    s->used = 0;
    s->free = NULL;
    s->start = (char *)s + span_header;
    s->bump = s->start;
    s->bump_end = s->start + blocks * bsize;
    s->bsize = bsize;
    s->cls = cls;
    s->state = ST_CURRENT;
    s->interior = 0;
    s->next = s->prev = s->delayed_next = NULL;
    s->thread_free = 0;
    s->bitmap = (uint64_t *)((char *)s + large_header);
    if (check_on)
        memset(s->bitmap, 0, (blocks + 63) / 64 * 8);
}

/* ---- spans in their heap -------------------------------------------------------------- */

static void avail_push(struct heap *h, struct span *s)
{
    s->state = ST_AVAIL;
    s->prev = NULL;
    s->next = h->avail[s->cls];
    if (s->next != NULL)
        s->next->prev = s;
    h->avail[s->cls] = s;
}

static void avail_unlink(struct heap *h, struct span *s)
{
    if (s->prev != NULL)
        s->prev->next = s->next;
    else
        h->avail[s->cls] = s->next;
    if (s->next != NULL)
        s->next->prev = s->prev;
}

static void span_release(struct heap *h, struct span *s)
{
    avail_unlink(h, s);
    if (h->ncache < HEAP_CACHE_SPANS) {
        s->next = h->cache;
        h->cache = s;
        h->ncache++;
        __atomic_add_fetch(&heap_cached_spans, 1, __ATOMIC_RELAXED);
        return;
    }
    pool_put(s);
}

static struct span *span_new(struct heap *h, unsigned cls)
{
    struct span *s = h->cache;
    if (s != NULL) {
        h->cache = s->next;
        h->ncache--;
        __atomic_sub_fetch(&heap_cached_spans, 1, __ATOMIC_RELAXED);
    } else {
        s = pool_get();
        if (s == NULL)
            return NULL;
    }
    span_init(s, h, cls);
    return s;
}

/* Takes every block other threads gave back, in one CAS; returns how many. */
static uint64_t collect(struct span *s)
{
    tfword old = s->thread_free;
    if (old == 0)
        return 0;
    tfword seen;
    while ((seen = __sync_val_compare_and_swap(&s->thread_free, old, 0)) != old)
        old = seen;
    uint64_t head = (uint64_t)old & ~TF_FULL, count = (uint64_t)(old >> 64);
    struct block *list = (struct block *)(uintptr_t)head;
    if (list == NULL)
        return 0;
    s->free = list;   /* the local list is empty whenever we collect */
    s->used -= (uint32_t)count;
    return count;
}

/* A block from span s, or NULL when s has none left. */
static void *span_take(struct span *s)
{
    struct block *b = s->free;
    if (b == NULL) {
        if (s->bump < s->bump_end) {
            b = (struct block *)s->bump;
            s->bump += s->bsize;
            s->used++;
            return b;
        }
        if (collect(s) == 0)
            return NULL;
        b = s->free;
    }
    s->free = b->next;
    s->used++;
    return b;
}

/* Owner: the current span is exhausted. Set TF_FULL so that the next remote free queues
 * it on h->delayed; returns 0 if blocks came back meanwhile (collect them instead). */
static int mark_full(struct span *s)
{
    if (!__sync_bool_compare_and_swap(&s->thread_free, (tfword)0, (tfword)TF_FULL))
        return 0;
    s->state = ST_FULL;
    return 1;
}

/* Remote freers put spans they found FULL on h->delayed; make them available again. */
static void take_delayed(struct heap *h)
{
    if (__atomic_load_n(&h->delayed, __ATOMIC_RELAXED) == NULL)
        return;
    struct span *s = __atomic_exchange_n(&h->delayed, NULL, __ATOMIC_ACQUIRE);
    while (s != NULL) {
        struct span *next = s->delayed_next;
        avail_push(h, s);
        s = next;
    }
}

static struct span *next_span(struct heap *h, unsigned cls)
{
    struct span *old = h->cur[cls];
    if (old != &empty_span && !mark_full(old))
        return old;   /* remote frees arrived: span_take collects them */
    take_delayed(h);
    struct span *s = h->avail[cls];
    if (s != NULL) {
        avail_unlink(h, s);
        s->state = ST_CURRENT;
    } else {
        s = span_new(h, cls);
        if (s == NULL) {
            h->cur[cls] = &empty_span;
            return NULL;
        }
    }
    h->cur[cls] = s;
    return s;
}

static void *small_alloc(struct heap *h, size_t n)
{
    unsigned cls = size_class(n);
    struct span *s = h->cur[cls];
    void *p = span_take(s);
    while (p == NULL) {
        s = next_span(h, cls);
        if (s == NULL)
            return NULL;
        p = span_take(s);
    }
    if (check_on)
        bitmap_set(s, p);
    return p;
}

/* A local free on a span that is not CURRENT (or in check/aligned mode). */
static void free_local_state(struct heap *h, struct span *s)
{
    if (s->state == ST_FULL) {
        /* Take it back unless a remote freer cleared TF_FULL (it queues the span). */
        if (__sync_bool_compare_and_swap(&s->thread_free, (tfword)TF_FULL, (tfword)0))
            avail_push(h, s);
        else
            s->state = ST_QUEUED;
        return;
    }
    if (s->state == ST_AVAIL && s->used == 0)
        span_release(h, s);
}

static void free_local(struct heap *h, struct span *s, struct block *b)
{
    b->next = s->free;
    s->free = b;
    s->used--;
    if (s->state != ST_CURRENT)
        free_local_state(h, s);
}

static void free_remote(struct span *s, struct block *b)
{
    tfword old = s->thread_free, seen, next;
    for (;;) {
        b->next = (struct block *)(uintptr_t)((uint64_t)old & ~TF_FULL);
        next = (((old >> 64) + 1) << 64) | (uintptr_t)b;
        seen = __sync_val_compare_and_swap(&s->thread_free, old, next);
        if (seen == old)
            break;
        old = seen;
    }
    if (!((uint64_t)old & TF_FULL))
        return;
    /* We cleared TF_FULL: the owner waits for this span on its delayed list. */
    struct heap *h = s->heap;
    struct span *head = __atomic_load_n(&h->delayed, __ATOMIC_RELAXED);
    do {
        s->delayed_next = head;
    } while (!__atomic_compare_exchange_n(&h->delayed, &head, s, 1, __ATOMIC_RELEASE,
                                          __ATOMIC_RELAXED));
}

/* ---- heaps of threads -------------------------------------------------------------- */

static void heap_abandon(struct heap *h)
{
    os_set_thread_heap(NULL);
    mlock_acquire(&pool_lock, lock_kind);
    h->next_abandoned = abandoned;
    abandoned = h;
    mlock_release(&pool_lock, lock_kind);
}

/* Heaps are never unmapped: a thread that ends leaves its heap (and its spans, which
 * others may still free into) to the next thread that starts. */
static struct heap *heap_carve(void)
{
    static char *chunk;
    static size_t left;
    size_t size = (sizeof(struct heap) + 63) & ~(size_t)63;
    if (left < size) {
        struct os_region r;
        chunk = os_map_aligned(SPAN_SIZE, PAGE, &r);
        if (chunk == NULL)
            return NULL;
        __atomic_fetch_add(&mapped_bytes, r.len, __ATOMIC_RELAXED);
        left = SPAN_SIZE;
    }
    struct heap *h = (struct heap *)chunk;
    chunk += size;
    left -= size;
    for (unsigned c = 0; c < NCLASSES; c++)
        h->cur[c] = &empty_span;
    return h;
}

static struct heap *thread_heap(void)
{
    struct heap *h = os_thread_heap();
    if (h != NULL)
        return h;
    mlock_acquire(&pool_lock, lock_kind);
    h = abandoned;
    if (h != NULL)
        abandoned = h->next_abandoned;
    else
        h = heap_carve();
    mlock_release(&pool_lock, lock_kind);
    if (h == NULL)
        return NULL;
    os_set_thread_heap(h);
    os_at_thread_exit(heap_abandon, h);
    return h;
}

/* ---- large blocks --------------------------------------------------------------------- */

static struct span *large_cache_take(size_t n)
{
    struct span *found = NULL;
    mlock_acquire(&pool_lock, lock_kind);
    for (struct span **pp = &large_cache; *pp != NULL; pp = &(*pp)->next) {
        struct span *s = *pp;
        if (s->bsize >= n && s->bsize - n <= n + SPAN_SIZE) {
            *pp = s->next;
            large_cache_count--;
            large_cache_bytes -= s->bsize;
            found = s;
            break;
        }
    }
    mlock_release(&pool_lock, lock_kind);
    return found;
}

/* Payload offset from the mapping's start: the header fits before it and the payload is
 * aligned; from SPAN_SIZE alignment on, the header lives one span before the payload. */
static size_t large_offset(size_t align)
{
    if (align >= SPAN_SIZE)
        return align;
    return (large_header + align - 1) & ~(align - 1);
}

/* The calling thread's heap when large blocks may use its bins (lock-free kind). */
static struct heap *bin_heap(void)
{
    return lock_kind == LOCK_FREE ? os_thread_heap() : NULL;
}

static void *large_from_bin(struct heap *h, unsigned bin)
{
    struct span *s = h->large_bin[bin];
    if (s == NULL)
        return NULL;
    h->large_bin[bin] = s->next;
    h->large_count[bin]--;
    h->large_bytes -= s->bsize;
    s->magic = MAGIC_LARGE;
    return s->start;
}

static void *large_alloc(size_t n, size_t align, int *zeroed)
{
    *zeroed = 0;
    unsigned bin = 0;
    int binned = align <= 64 && n <= LARGE_BIN_LIMIT && n > SMALL_MAX;
    if (binned) {
        bin = large_bin(n);
        n = large_bin_size(bin);
        struct heap *h = bin_heap();
        void *p = h != NULL ? large_from_bin(h, bin) : NULL;
        if (p != NULL)
            return p;
    }
    if (align <= 64) {
        struct span *s = large_cache_take(n);
        if (s != NULL) {
            s->magic = MAGIC_LARGE;
            return s->start;
        }
    }
    size_t off = large_offset(align);
    if (n > SIZE_MAX / 2 - off - SPAN_SIZE)
        return NULL;
    size_t total = (off + n + PAGE - 1) & ~(size_t)(PAGE - 1);
    struct os_region r;
    char *base = os_map_aligned(total, align > SPAN_SIZE ? align : SPAN_SIZE, &r);
    if (base == NULL)
        return NULL;
    __atomic_fetch_add(&mapped_bytes, r.len, __ATOMIC_RELAXED);
    char *p = base + off;
    struct span *s = span_of(p);
    s->magic = MAGIC_LARGE;
    s->heap = NULL;
    s->free_flags = 1;
    s->start = p;
    s->bsize = total - off;
    s->cls = binned ? bin + 1u : 0u;
    s->region = r;
    mlock_acquire(&pool_lock, lock_kind);
    registry_add(s);
    mlock_release(&pool_lock, lock_kind);
    *zeroed = 1;
    return p;
}

/* Keeps a freed large block in the calling thread's bin; 0 if it does not fit there. */
static int large_to_bin(struct span *s)
{
    struct heap *h = bin_heap();
    if (h == NULL || s->cls == 0)
        return 0;
    unsigned bin = s->cls - 1u;
    if (h->large_count[bin] >= LARGE_BIN_BLOCKS || h->large_bytes + s->bsize > HEAP_LARGE_BYTES)
        return 0;
    s->next = h->large_bin[bin];
    h->large_bin[bin] = s;
    h->large_count[bin]++;
    h->large_bytes += s->bsize;
    return 1;
}

static void large_free(struct span *s, void *p)
{
    if (s->start != p)
        report("free of a pointer that is not the start of a block:", p);
    s->magic = MAGIC_FREED;
    if (large_to_bin(s))
        return;
    int cacheable = (char *)p - (char *)s == (ptrdiff_t)large_header;
    mlock_acquire(&pool_lock, lock_kind);
    if (cacheable && large_cache_count < LARGE_CACHE_ENTRIES &&
        large_cache_bytes + s->bsize <= LARGE_CACHE_BYTES) {
        s->next = large_cache;
        large_cache = s;
        large_cache_count++;
        large_cache_bytes += s->bsize;
        s = NULL;
    } else {
        registry_remove(s);
    }
    mlock_release(&pool_lock, lock_kind);
    if (s != NULL)
        region_unmap(s);
}

/* ---- the entry points ---------------------------------------------------------------- */

static void *alloc_small_any(size_t n)
{
    if (lock_kind == LOCK_FREE) {
        struct heap *h = thread_heap();
        return h != NULL ? small_alloc(h, n) : NULL;
    }
    mlock_acquire(&global_lock, lock_kind);
    void *p = small_alloc(&main_heap, n);
    mlock_release(&global_lock, lock_kind);
    return p;
}

static __attribute__((noinline)) void *malloc_slow(size_t n)
{
    ensure_init();
    void *p;
    if (n <= SMALL_MAX) {
        p = alloc_small_any(n);
    } else {
        int zeroed;
        p = large_alloc(n, 16, &zeroed);
    }
    if (p == NULL)
        os_out_of_memory();
    return p;
}

EXPORT void *malloc(size_t n)
{
    struct heap *h = os_thread_heap();
    if (likely(h != NULL && n <= SMALL_MAX && !check_on)) {
        struct span *s = h->cur[size_class(n)];
        struct block *b = s->free;
        if (likely(b != NULL)) {
            s->free = b->next;
            s->used++;
            return b;
        }
        if (s->bump < s->bump_end) {   /* a fresh span: blocks never handed out */
            b = (struct block *)s->bump;
            s->bump += s->bsize;
            s->used++;
            return b;
        }
    }
    return malloc_slow(n);
}

static void free_small(struct span *s, void *p)
{
    if (check_on)
        check_free(s, p);
    else if (unlikely(s->magic != MAGIC_SPAN))
        report("free of a pointer malloc never returned (or freed twice):", p);
    struct block *b = (struct block *)(s->interior ? block_start(s, p) : (char *)p);
    if (lock_kind != LOCK_FREE) {
        mlock_acquire(&global_lock, lock_kind);
        free_local(&main_heap, s, b);
        mlock_release(&global_lock, lock_kind);
        return;
    }
    struct heap *h = os_thread_heap();
    if (s->heap == h)
        free_local(h, s, b);
    else
        free_remote(s, b);
}

static __attribute__((noinline)) void free_slow(void *p)
{
    if (unlikely(__atomic_load_n(&init_state, __ATOMIC_ACQUIRE) != 2))
        report("free before any allocation:", p);
    struct span *s = span_of(p);
    if (check_on && !registry_has(s))
        report("free of a pointer malloc never returned:", p);
    if (s->magic == MAGIC_LARGE)
        large_free(s, p);
    else if (s->magic == MAGIC_FREED)
        report("double free of", p);
    else
        free_small(s, p);
}

EXPORT void free(void *p)
{
    if (p == NULL)
        return;
    if (unlikely(check_on)) {   /* before reading a header p may not have */
        free_slow(p);
        return;
    }
    struct span *s = span_of(p);
    struct heap *h = os_thread_heap();
    if (likely(s->heap == h && s->free_flags == 0)) {
        struct block *b = p;
        b->next = s->free;
        s->free = b;
        s->used--;
        if (likely(s->state == ST_CURRENT))
            return;
        free_local_state(h, s);
        return;
    }
    free_slow(p);
}

EXPORT size_t malloc_usable_size(void *p)
{
    if (p == NULL)
        return 0;
    struct span *s = span_of(p);
    if (check_on && !registry_has(s))
        report("malloc_usable_size of a pointer malloc never returned:", p);
    if (s->magic == MAGIC_LARGE)
        return s->bsize;
    if (s->magic != MAGIC_SPAN)
        report("malloc_usable_size of a pointer malloc never returned:", p);
    char *b = s->interior ? block_start(s, p) : (char *)p;
    return s->bsize - (size_t)((char *)p - b);
}

EXPORT void *calloc(size_t nmemb, size_t size)
{
    size_t n;
    if (__builtin_mul_overflow(nmemb, size, &n)) {
        os_out_of_memory();
        return NULL;
    }
    if (n > SMALL_MAX) {
        ensure_init();
        int zeroed;
        void *p = large_alloc(n, 16, &zeroed);
        if (p == NULL)
            os_out_of_memory();
        else if (!zeroed)
            memset(p, 0, n);
        return p;
    }
    void *p = malloc(n);
    if (p != NULL)
        memset(p, 0, n);
    return p;
}

EXPORT void *realloc(void *p, size_t n)
{
    if (p == NULL)
        return malloc(n);
    if (n == 0) {
        free(p);
        return NULL;
    }
    size_t usable = malloc_usable_size(p);
    if (n <= usable && (n >= usable / 2 || usable <= 64))
        return p;
    /* Growing large blocks get a quarter more, so that a run of small growths copies
     * O(log n) times. */
    size_t want = n;
    if (n > usable && n > SMALL_MAX && n < SIZE_MAX / 2)
        want = n + n / 4;
    void *q = malloc(want);
    if (q == NULL)
        return NULL;
    memcpy(q, p, n < usable ? n : usable);
    free(p);
    return q;
}

EXPORT void *reallocarray(void *p, size_t nmemb, size_t size)
{
    size_t n;
    if (__builtin_mul_overflow(nmemb, size, &n)) {
        os_out_of_memory();
        return NULL;
    }
    return realloc(p, n);
}

static void mark_interior(void *p)
{
    struct span *s = span_of(p);
    if (!s->interior) {
        s->interior = 1;
        s->free_flags = 1;
    }
}

/* `align` is a power of two. Small aligned requests take a block big enough to contain
 * an aligned address; the span then resolves pointers to their block on free. */
static void *alloc_aligned(size_t align, size_t n)
{
    if (align <= 16)
        return malloc(n);
    ensure_init();
    if (n == 0)
        n = 1;   /* p must lie inside its block, not at the start of the next one */
    if (n <= SMALL_MAX && align <= SMALL_MAX && n + align - 16 <= SMALL_MAX) {
        char *q = malloc(n + align - 16);
        if (q == NULL)
            return NULL;
        char *p = (char *)(((uintptr_t)q + align - 1) & ~(uintptr_t)(align - 1));
        if (p != q)
            mark_interior(p);
        return p;
    }
    int zeroed;
    void *p = large_alloc(n, align, &zeroed);
    if (p == NULL)
        os_out_of_memory();
    return p;
}

static int power_of_two(size_t x)
{
    return x != 0 && (x & (x - 1)) == 0;
}

EXPORT int posix_memalign(void **out, size_t align, size_t n)
{
    if (!power_of_two(align) || align % sizeof(void *) != 0)
        return MALLOC_EINVAL;
    void *p = alloc_aligned(align, n);
    if (p == NULL)
        return MALLOC_ENOMEM;
    *out = p;
    return 0;
}

EXPORT void *aligned_alloc(size_t align, size_t n)
{
    if (!power_of_two(align)) {
        os_invalid_argument();
        return NULL;
    }
    return alloc_aligned(align, n);
}

EXPORT void *memalign(size_t align, size_t n)
{
    return aligned_alloc(align, n);
}

EXPORT void *valloc(size_t n)
{
    return alloc_aligned(PAGE, n);
}

EXPORT void *pvalloc(size_t n)
{
    if (n > SIZE_MAX - PAGE)
        return NULL;
    return alloc_aligned(PAGE, (n + PAGE - 1) & ~(size_t)(PAGE - 1));
}

EXPORT void ondol_malloc_info(struct ondol_malloc_info *out)
{
    ensure_init();
    out->lock = lock_kind_name(lock_kind);
    out->check = check_on;
    out->mapped_bytes = __atomic_load_n(&mapped_bytes, __ATOMIC_RELAXED);
    mlock_acquire(&pool_lock, lock_kind);
    out->pool_spans = pool_count;
    out->large_cached = large_cache_count;
    mlock_release(&pool_lock, lock_kind);
    out->heap_cached = __atomic_load_n(&heap_cached_spans, __ATOMIC_RELAXED);
    out->span_size = SPAN_SIZE;
    out->small_max = SMALL_MAX;
    os_page_stats(&out->pages);
}
