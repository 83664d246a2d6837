/*
 * Physical frame allocator: one bit per 4 KiB frame below PMM_MAX_PHYS (set = in use).
 * Allocation scans from a moving hint. The bitmap is static so the allocator works before
 * anything else exists; memory above PMM_MAX_PHYS is ignored (and reported at boot).
 * Beside it, per-frame metadata sized to the memory found (struct frame_meta): the map
 * count of every frame (how many user PTEs map it as anonymous memory; copy-on-write
 * shares a frame while it is above 1), changed with atomic operations so it needs no
 * lock, and the frame's reverse map with its lock (rmap.c).
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
static u64 total, nfree, hint, kernel_reserved;
static struct spinlock lock;
static struct frame_meta *meta;   /* per frame below nframes */

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
            nfree--;
            kernel_reserved++;
        } else if (!used && frame_used(f)) {
            set_free(f);
            nfree++;
            total++;
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
    hint = 0;
    metadata_init();
}

static u64 find_run(size_t n)
{
    for (u64 pass = 0; pass < 2; pass++) {
        u64 start = pass ? 0 : hint;
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

static u64 take_run(size_t n)
{
    spin_lock(&lock);
    u64 f = n <= nfree ? find_run(n) : ~0ull;
    if (f == ~0ull) {
        spin_unlock(&lock);
        return 0;
    }
    for (u64 i = 0; i < n; i++)
        set_used(f + i);
    nfree -= n;
    hint = f + n;
    spin_unlock(&lock);
    memset(phys_to_virt(f * PAGE_SIZE), 0, n * PAGE_SIZE);
    return f * PAGE_SIZE;
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

u64 frame_alloc(void) { return frame_alloc_contig(1); }

void frame_free_contig(u64 pa, size_t n)
{
    spin_lock(&lock);
    for (u64 i = 0; i < n; i++) {
        u64 f = pa / PAGE_SIZE + i;
        if (!frame_used(f) || meta[f].maps)
            panic("frame_free: frame %#lx is not allocated or still mapped",
                  (unsigned long)(f * PAGE_SIZE));
        set_free(f);
    }
    nfree += n;
    if (pa / PAGE_SIZE < hint)
        hint = pa / PAGE_SIZE;
    spin_unlock(&lock);
}

void frame_free(u64 pa) { frame_free_contig(pa, 1); }
u64 frames_total(void) { return total; }
u64 frames_free(void) { return nfree; }
u64 frames_kernel(void) { return kernel_reserved; }

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
