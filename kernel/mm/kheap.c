/*
 * The kernel heap (kheap.h). Small blocks come from kobj caches of power-of-two sizes
 * (32 B .. 2 KiB, so they show in meminfo's kernel-object counts and their frames go
 * back when empty); larger ones are contiguous frames. Each block starts with a 16-byte
 * header naming its class (or its frame count), so kheap_free needs no size. 16 bytes
 * keep the payload 16-byte aligned, which the server's structures assume.
 */
#include "kheap.h"
#include "kernel.h"
#include "kobj.h"
#include "memlayout.h"
#include "pmm.h"

#define HEADER 16
#define SMALL_CLASSES 7                 /* 32, 64, ... 2048 */
#define LARGE (-1)

struct header {
    long class;                         /* index into caches, or LARGE */
    u64 pages;                          /* LARGE: contiguous frames */
};

static struct kcache caches[SMALL_CLASSES] = {
    KCACHE_INIT("heap32", 32), KCACHE_INIT("heap64", 64), KCACHE_INIT("heap128", 128),
    KCACHE_INIT("heap256", 256), KCACHE_INIT("heap512", 512), KCACHE_INIT("heap1k", 1024),
    KCACHE_INIT("heap2k", 2048),
};

static int class_of(size_t total)
{
    for (int c = 0; c < SMALL_CLASSES; c++)
        if (total <= caches[c].size)
            return c;
    return LARGE;
}

static struct header *alloc_large(size_t total, u64 *pages)
{
    *pages = ALIGN_UP(total, PAGE_SIZE) / PAGE_SIZE;
    u64 pa = frame_alloc_contig(*pages);
    return pa ? phys_to_virt(pa) : NULL;
}

void *kheap_alloc(size_t n)
{
    if (n > (1ull << 32))
        return NULL;
    size_t total = (n ? n : 1) + HEADER;
    int c = class_of(total);
    u64 pages = 0;
    struct header *h = c == LARGE ? alloc_large(total, &pages) : kobj_alloc(&caches[c]);
    if (!h)
        return NULL;
    h->class = c;
    h->pages = pages;
    return (u8 *)h + HEADER;
}

void kheap_free(void *p)
{
    if (!p)
        return;
    struct header *h = (struct header *)((u8 *)p - HEADER);
    if (h->class == LARGE)
        frame_free_contig(virt_to_phys(h), h->pages);
    else
        kobj_free(&caches[h->class], h);
}
