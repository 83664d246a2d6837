/*
 * ondol's allocator beyond the standard functions (lib/malloc/malloc.c, docs/alloc.md).
 * malloc, free, calloc, realloc, reallocarray, posix_memalign, aligned_alloc, memalign,
 * valloc, pvalloc and malloc_usable_size have their usual C/POSIX/glibc meaning.
 */
#ifndef ONDOL_MALLOC_H
#define ONDOL_MALLOC_H

#include <stddef.h>

/* The page layer's system calls since the process started (P2's mmap/munmap counts).
 * ticks: TSC ticks spent in them, entry and exit included (guest instructions under QEMU
 * icount); measured on ondol only, 0 on Linux. */
struct ondol_malloc_pages {
    unsigned long maps, unmaps, purges;
    unsigned long long map_ticks, unmap_ticks;
};

struct ondol_malloc_info {
    const char *lock;           /* the lock kind in force (malloc_lock=) */
    int check;                  /* malloc_check=on: double/invalid frees are reported */
    size_t mapped_bytes;        /* mapped from the page layer now */
    unsigned pool_spans;        /* empty spans kept (purged) for reuse */
    unsigned heap_cached;       /* empty spans the heaps keep unpurged, one each at most */
    unsigned large_cached;      /* freed large blocks kept for reuse */
    size_t span_size;
    size_t small_max;           /* largest size served from size classes */
    struct ondol_malloc_pages pages;
};

/* Usable bytes of a block malloc returned (declared here for native ondol programs, whose
 * libc headers have no malloc.h). */
size_t malloc_usable_size(void *p);

/* Fills *out; the allocator's options are read by the first allocation (or this call). */
void ondol_malloc_info(struct ondol_malloc_info *out);

#endif
