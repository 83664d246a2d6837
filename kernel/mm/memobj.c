/*
 * Memory objects. An object describes where the pages of a region come from; it holds no
 * page list: an anonymous page, once allocated, is recorded only in the page table of the
 * address space that touched it (marked PTE_ANON there), and freed when that mapping goes.
 * Splitting a region shares its object (one reference per region).
 */
#include <ondol/abi.h>
#include "kernel.h"
#include "kobj.h"
#include "memlayout.h"
#include "memobj.h"
#include "pmm.h"

static struct kcache memobj_cache = KCACHE_INIT("memobj", sizeof(struct memobj));

static struct memobj *memobj_new(enum memobj_kind kind, u64 phys_base, u64 size)
{
    struct memobj *obj = kobj_alloc(&memobj_cache);
    if (!obj)
        return NULL;
    obj->kind = kind;
    obj->refs = 1;
    obj->phys_base = phys_base;
    obj->size = size;
    return obj;
}

struct memobj *memobj_anon(u64 size) { return memobj_new(MEMOBJ_ANON, 0, size); }
struct memobj *memobj_phys(u64 phys_base, u64 size) { return memobj_new(MEMOBJ_PHYS, phys_base, size); }

struct memobj *memobj_contig(u64 size)
{
    u64 pa = frame_alloc_contig(size / PAGE_SIZE);
    struct memobj *obj = pa ? memobj_new(MEMOBJ_CONTIG, pa, size) : NULL;
    if (pa && !obj)
        frame_free_contig(pa, size / PAGE_SIZE);
    return obj;
}

void memobj_get(struct memobj *obj) { obj->refs++; }

void memobj_put(struct memobj *obj)
{
    ASSERT(obj->refs > 0);
    if (--obj->refs > 0)
        return;
    if (obj->kind == MEMOBJ_CONTIG)
        frame_free_contig(obj->phys_base, obj->size / PAGE_SIZE);
    kobj_free(&memobj_cache, obj);
}

int memobj_frame(struct memobj *obj, u64 off, u64 *pa, bool *owned)
{
    if (off >= obj->size)
        return E_FAULT;
    if (obj->kind != MEMOBJ_ANON) {
        *pa = obj->phys_base + off;
        *owned = false;
        return 0;
    }
    *pa = frame_alloc();
    *owned = true;
    return *pa ? 0 : E_NOMEM;
}
