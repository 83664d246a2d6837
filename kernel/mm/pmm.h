/* Physical frames (pmm.c): a bitmap allocator of zeroed 4 KiB frames with a cache per CPU,
 * and per-frame map counts. */
#ifndef PMM_H
#define PMM_H
#include "spinlock.h"
#include "types.h"

struct rmap_entry;
struct frame_meta {
    u32 maps;                    /* user PTEs mapping it: anonymous memory, file pages */
    bool cached;                 /* free, in a CPU's frame cache (pmm.c) */
    struct spinlock lock;        /* rmap=lock: guards rmap */
    struct rmap_entry *rmap;     /* the frame's mappings (rmap.c) */
};

struct mem_region {
    u64 base, len;
};
void pmm_init(const struct mem_region *usable, int n, const struct mem_region *reserved, int nres);
void pmm_caches_start(void);       /* once this CPU's per-CPU state is set (cpu_init) */
u64 frame_alloc(void);              /* zeroed 4 KiB frame, physical address; 0 when out */
/* Frames kept for the kernel and privileged tasks (the servers): while the guard is on
 * (trap.c, around the page fault of an unprivileged task), frame_alloc gives 0 rather
 * than take them, so that a process that exhausts memory is ended (a Linux process by
 * its server, as Linux's OOM killer would) while the kernel and the UNIX server can still
 * allocate (docs/unix.md, "Reliability"). 8 MiB. */
#define FRAMES_RESERVED 2048
void frame_reserve_guard(bool on);
u64 frame_alloc_contig(size_t n);   /* n contiguous zeroed frames; 0 when out */
void frame_free(u64 pa);
void frame_free_contig(u64 pa, size_t n);
/* Map counts (copy-on-write sharing): user PTEs mapping the frame as anonymous memory.
 * A frame goes back to the allocator only at count 0. */
struct frame_meta *frame_meta(u64 pa);   /* pa below frames_span() frames */
u64 frames_span(void);                    /* frames covered by the metadata */
u32 frame_maps(u64 pa);
void frame_map_inc(u64 pa);
u32 frame_map_dec(u64 pa);          /* the count left */
u64 frames_total(void);
u64 frames_free(void);
u64 frames_kernel(void);
#endif
