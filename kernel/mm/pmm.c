/*
 * Physical frame allocator: one bit per 4 KiB frame below PMM_MAX_PHYS (set = in use).
 * Allocation scans from a moving hint. The bitmap is static so the allocator works before
 * anything else exists; memory above PMM_MAX_PHYS is ignored (and reported at boot).
 * Beside it, per-frame metadata sized to the memory found (struct frame_meta): the map
 * count of every frame (how many user PTEs map it as anonymous memory; copy-on-write
 * shares a frame while it is above 1), changed with atomic operations so it needs no
 * lock, and the frame's reverse map with its lock (rmap.c).
 *
 * Single frames go through a cache per CPU (issue 9, "physical memory"): a free pushes
 * the frame on its CPU's stack, an allocation pops one, and only a full or empty stack
 * moves a batch to or from the bitmap under the global lock. So the common alloc/free
 * pair touches no shared cache line and scans nothing; on many CPUs the lock is taken
 * once per batch. Cached frames stay marked in use in the bitmap; a run of contiguous
 * frames that does not fit drains every cache and searches again, so the caches never
 * make an allocation fail. frames_free() counts them (exact accounting).
 */
#include "kernel.h"
#include "memlayout.h"
#include "pcnt.h"
#include "pmm.h"
#include "spinlock.h"

#define PMM_MAX_PHYS (16ull << 30)
#define NFRAMES (PMM_MAX_PHYS / PAGE_SIZE)

static u64 bitmap[NFRAMES / 64];
static u64 nframes;          /* frames covered: up to the highest usable address */
/* The bitmap's counters, written under `lock` at every batch a cache takes or gives back:
 * on a line of their own, so that the read-mostly `meta` and `nframes`, read at every
 * frame operation, do not move from CPU to CPU with them (they shared a line: the
 * coherence model's hot lines, docs/smp.md "Where a COW break's modelled cycles go"). */
static struct {
    u64 total, nfree, hint, kernel_reserved;
} __attribute__((aligned(64))) bm;
static struct spinlock lock = SPINLOCK_INIT(PMM);
static struct frame_meta *meta;   /* per frame below nframes */

#define CACHE_MAX 64                  /* frames a CPU may keep */
#define CACHE_BATCH 16                /* frames moved at once to or from the bitmap */
struct frame_cache {                  /* one a CPU, on lines of its own */
    struct spinlock lock;             /* its CPU, or a drain from another */
    int n;                            /* under lock; read unlocked by frames_cached */
    /* frame_alloc leaves the last FRAMES_RESERVED frames alone (frame_reserve_guard):
     * written by its CPU at every page fault, so here and not in an array of MAX_CPUS
     * bools, 64 CPUs to a line */
    bool reserve_guard;
    u64 frames[CACHE_MAX];            /* physical addresses, not zeroed */
} __attribute__((aligned(64)));
static struct frame_cache caches[MAX_CPUS];
static bool caches_on;                /* per-CPU state exists (pmm_caches_start) */

void pmm_caches_start(void)
{
    for (int i = 0; i < MAX_CPUS; i++)
        spin_lock_init(&caches[i].lock, LOCK_FRAME_CACHE);
    caches_on = true;
}

/* Frames in every cache, summed from the caches' own counts: a global count beside them
 * was written by every CPU's every frame allocation and free (the coherence model's
 * hottest pmm line). Exact when no CPU is changing its cache; read only where memory
 * runs short, and for statistics. */
static u64 frames_cached(void)
{
    u64 n = 0;
    for (int i = 0; i < MAX_CPUS; i++)
        n += (u64)__atomic_load_n(&caches[i].n, __ATOMIC_RELAXED);
    return n;
}

static bool frame_used(u64 f) { return bitmap[f / 64] & (1ull << (f % 64)); }
static void set_used(u64 f) { bitmap[f / 64] |= 1ull << (f % 64); }
static void set_free(u64 f) { bitmap[f / 64] &= ~(1ull << (f % 64)); }

static void mark_range(u64 base, u64 len, bool used)
{
    u64 first = ALIGN_UP(base, PAGE_SIZE) / PAGE_SIZE;
    u64 last = ALIGN_DOWN(base + len, PAGE_SIZE) / PAGE_SIZE;
    if (used) {
        first = base / PAGE_SIZE;
        last = ALIGN_UP(base + len, PAGE_SIZE) / PAGE_SIZE;
    }
    for (u64 f = first; f < last && f < NFRAMES; f++) {
        if (used && !frame_used(f)) {
            set_used(f);
            bm.nfree--;
            bm.kernel_reserved++;
        } else if (!used && frame_used(f)) {
            set_free(f);
            bm.nfree++;
            bm.total++;
        }
    }
}

static u64 find_run(size_t n);

/* The metadata array takes frames of its own (counted as the kernel's), low enough to be
 * reachable through the boot page tables' first GiB. */
static void metadata_init(void)
{
    u64 n = ALIGN_UP(nframes * sizeof(struct frame_meta), PAGE_SIZE) / PAGE_SIZE;
    u64 f = find_run(n);
    if (f == ~0ull || (f + n) * PAGE_SIZE > (1ull << 30))
        panic("pmm: no room for the frame metadata (%lu frames)", (unsigned long)n);
    mark_range(f * PAGE_SIZE, n * PAGE_SIZE, true);
    meta = phys_to_virt(f * PAGE_SIZE);
    memset(meta, 0, n * PAGE_SIZE);
    for (u64 i = 0; i < nframes; i++)
        spin_lock_init(&meta[i].lock, LOCK_RMAP_FRAME);
}

void pmm_init(const struct mem_region *usable, int n, const struct mem_region *reserved, int nres)
{
    memset(bitmap, 0xff, sizeof(bitmap));
    for (int i = 0; i < n; i++) {
        u64 base = MAX(usable[i].base, 0x100000ull);   /* keep the first MiB for firmware */
        u64 end = MIN(usable[i].base + usable[i].len, PMM_MAX_PHYS);
        if (end > base) {
            mark_range(base, end - base, false);
            nframes = MAX(nframes, end / PAGE_SIZE);
        }
    }
    for (int i = 0; i < nres; i++)
        mark_range(reserved[i].base, reserved[i].len, true);
    bm.hint = 0;
    metadata_init();
}

static u64 find_run(size_t n)
{
    for (u64 pass = 0; pass < 2; pass++) {
        u64 start = pass ? 0 : bm.hint;
        u64 run = 0;
        for (u64 f = start; f < nframes; f++) {
            if (f % 64 == 0 && run == 0 && bitmap[f / 64] == ~0ull) {
                f += 63;
                continue;
            }
            run = frame_used(f) ? 0 : run + 1;
            if (run == n)
                return f + 1 - n;
        }
    }
    return ~0ull;
}

/* n contiguous frames out of the bitmap (the global lock held), or ~0. */
static u64 take_run_locked(size_t n)
{
    u64 f = n <= bm.nfree ? find_run(n) : ~0ull;
    if (f == ~0ull)
        return f;
    for (u64 i = 0; i < n; i++)
        set_used(f + i);
    bm.nfree -= n;
    bm.hint = f + n;
    return f;
}

/* Frames back from a cache into the bitmap (both locks held). */
static void cache_drain_locked(struct frame_cache *c, int n)
{
    for (; n > 0 && c->n > 0; n--) {
        u64 f = c->frames[--c->n] / PAGE_SIZE;
        meta[f].cached = false;
        set_free(f);
        bm.nfree++;
        if (f < bm.hint)
            bm.hint = f;
    }
}

/* Every CPU's cache emptied: a contiguous run may lie across cached frames. The lock
 * order is always a cache's, then the global one. */
static void drain_all(void)
{
    for (int i = 0; i < MAX_CPUS; i++) {
        spin_lock(&caches[i].lock);
        spin_lock(&lock);
        cache_drain_locked(&caches[i], CACHE_MAX);
        spin_unlock(&lock);
        spin_unlock(&caches[i].lock);
    }
}

static u64 take_run(size_t n)
{
    spin_lock(&lock);
    u64 f = take_run_locked(n);
    spin_unlock(&lock);
    if (f == ~0ull && frames_cached()) {
        drain_all();
        spin_lock(&lock);
        f = take_run_locked(n);
        spin_unlock(&lock);
    }
    if (f == ~0ull)
        return 0;
    memset(phys_to_virt(f * PAGE_SIZE), 0, n * PAGE_SIZE);
    return f * PAGE_SIZE;
}

/* Refill an empty cache with up to CACHE_BATCH frames from the bitmap (its lock held). */
static void cache_refill(struct frame_cache *c)
{
    spin_lock(&lock);
    while (c->n < CACHE_BATCH) {
        u64 f = take_run_locked(1);
        if (f == ~0ull)
            break;
        meta[f].cached = true;
        c->frames[c->n++] = f * PAGE_SIZE;
    }
    spin_unlock(&lock);
}

/* One zeroed frame from this CPU's cache, or 0 when none is left anywhere. */
static u64 cached_frame(void)
{
    if (!caches_on)
        return take_run(1);
    struct frame_cache *c = &caches[this_cpu()->id];
    spin_lock(&c->lock);
    if (c->n == 0)
        cache_refill(c);
    u64 pa = 0;
    if (c->n > 0) {
        pa = c->frames[--c->n];
        meta[pa / PAGE_SIZE].cached = false;
    }
    spin_unlock(&c->lock);
    if (!pa)
        return take_run(1);         /* other CPUs' caches may hold the last frames */
    memset(phys_to_virt(pa), 0, PAGE_SIZE);
    return pa;
}

/* The frame_alloc probe times every frame allocation, zeroing included: the bottom layer
 * of P2's allocator stack (docs/alloc.md). Never blocks. */
u64 frame_alloc_contig(size_t n)
{
    pcnt_probe_start(PROBE_FRAME, n);
    u64 pa = take_run(n);
    pcnt_probe_stop(PROBE_FRAME);
    return pa;
}

/* Per CPU, in its frame cache (user page faults come after the caches are on, and
 * this_cpu() works from then on). */
void frame_reserve_guard(bool on) { caches[this_cpu()->id].reserve_guard = on; }

/* Whether the reserve is reached: the caches are summed only when the bitmap alone is
 * short (frames_free is at least its count). */
static bool reserve_reached(void)
{
    u64 nfree = __atomic_load_n(&bm.nfree, __ATOMIC_RELAXED);
    return nfree <= FRAMES_RESERVED && nfree + frames_cached() <= FRAMES_RESERVED;
}

u64 frame_alloc(void)
{
    if (caches_on && caches[this_cpu()->id].reserve_guard && reserve_reached())
        return 0;
    pcnt_probe_start(PROBE_FRAME, 1);
    u64 pa = cached_frame();
    pcnt_probe_stop(PROBE_FRAME);
    return pa;
}

static void check_freeable(u64 f)
{
    if (!frame_used(f) || meta[f].maps || meta[f].cached)
        panic("frame_free: frame %#lx is not allocated or still mapped",
              (unsigned long)(f * PAGE_SIZE));
}

void frame_free_contig(u64 pa, size_t n)
{
    spin_lock(&lock);
    for (u64 i = 0; i < n; i++) {
        u64 f = pa / PAGE_SIZE + i;
        check_freeable(f);
        set_free(f);
    }
    bm.nfree += n;
    if (pa / PAGE_SIZE < bm.hint)
        bm.hint = pa / PAGE_SIZE;
    spin_unlock(&lock);
}

/* Onto this CPU's cache; a full cache first gives a batch back to the bitmap. */
void frame_free(u64 pa)
{
    if (!caches_on) {
        frame_free_contig(pa, 1);
        return;
    }
    u64 f = pa / PAGE_SIZE;
    struct frame_cache *c = &caches[this_cpu()->id];
    spin_lock(&c->lock);
    check_freeable(f);
    if (c->n == CACHE_MAX) {
        spin_lock(&lock);
        cache_drain_locked(c, CACHE_BATCH);
        spin_unlock(&lock);
    }
    meta[f].cached = true;
    c->frames[c->n++] = pa;
    spin_unlock(&c->lock);
}

u64 frames_total(void) { return bm.total; }
u64 frames_free(void) { return __atomic_load_n(&bm.nfree, __ATOMIC_RELAXED) + frames_cached(); }
u64 frames_kernel(void) { return bm.kernel_reserved; }

struct frame_meta *frame_meta(u64 pa) { return &meta[pa / PAGE_SIZE]; }
u64 frames_span(void) { return nframes; }
u32 frame_maps(u64 pa) { return __atomic_load_n(&meta[pa / PAGE_SIZE].maps, __ATOMIC_ACQUIRE); }
void frame_map_inc(u64 pa) { __atomic_add_fetch(&meta[pa / PAGE_SIZE].maps, 1, __ATOMIC_ACQ_REL); }

u32 frame_map_dec(u64 pa)
{
    u32 left = __atomic_sub_fetch(&meta[pa / PAGE_SIZE].maps, 1, __ATOMIC_ACQ_REL);
    ASSERT(left != ~0u);
    return left;
}
