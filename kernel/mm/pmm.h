/* Physical frames (pmm.c): a bitmap allocator of zeroed 4 KiB frames. */
#ifndef PMM_H
#define PMM_H
#include "types.h"

struct mem_region {
    u64 base, len;
};
void pmm_init(const struct mem_region *usable, int n, const struct mem_region *reserved, int nres);
u64 frame_alloc(void);              /* zeroed 4 KiB frame, physical address; 0 when out */
u64 frame_alloc_contig(size_t n);   /* n contiguous zeroed frames; 0 when out */
void frame_free(u64 pa);
void frame_free_contig(u64 pa, size_t n);
u64 frames_total(void);
u64 frames_free(void);
u64 frames_kernel(void);
#endif
