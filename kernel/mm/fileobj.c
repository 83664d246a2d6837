/*
 * File objects (fileobj.h; docs/memory.md, "File objects"). A file's bytes live once, in
 * the object's contiguous run; every mapping of them is a PTE marked PTE_FILE, counted in
 * the frame's map count and recorded in the reverse map (rmap.c), exactly as an anonymous
 * page's, except that the frame stays the object's when the mapping goes. So a read-only
 * page of a library is one frame however many processes map it; a private (copy-on-write)
 * region maps it read-only and a write copies it into an anonymous page (fault.c); a
 * shared region maps it writable.
 *
 * The reverse map is what keeps the mappings right when the file changes under them:
 * truncation drops the pages past the new end from every mapping, and growing the run
 * drops every mapping of the old frames; either way the next access faults the page in
 * from the object again (or, past the end, faults for the user: SIGBUS). Private copies
 * already made stay their writers' (Linux also drops those past a truncation; see
 * docs/memory.md). The kernel lock serializes these walks with every other change of a
 * page table, as it does every page-table change today.
 */
#include <ondol/abi.h>
#include "fileobj.h"
#include "kernel.h"
#include "memlayout.h"
#include "pmm.h"
#include "region.h"
#include "rmap.h"

long fileobj_map(struct aspace *as, int owner, u64 addr, u64 len, unsigned prot,
                 unsigned flags, struct memobj *obj, u64 off)
{
    if (obj->kind != MEMOBJ_FILE || (off & (PAGE_SIZE - 1)) || off > (1ull << 52))
        return E_INVAL;
    memobj_get(obj);
    long at = region_map(as, owner, addr, len, prot, flags & VM_MMAP_FIXED, obj);
    if (at < 0)
        return at;
    region_bind_file(as, (u64)at, off, !(flags & VM_MMAP_SHARED));
    return at;
}

/* Every mapping of the frame at pa leaves its page table. The list is read after the
 * logs are applied; an entry is unlinked by its own removal (lock modes) or later (log
 * mode), so the next one is taken first. */
static void drop_mappings(u64 pa)
{
    rmap_sync();
    for (struct rmap_entry *e = frame_meta(pa)->rmap, *next; e; e = next) {
        next = e->next;
        region_drop_page(e->as, e->va);
    }
    rmap_sync();
}

/* drop_mappings for the object's pages [from, to) (byte offsets, page aligned). */
static void drop_range(struct memobj *obj, u64 from, u64 to)
{
    for (u64 off = from; off < to; off += PAGE_SIZE)
        if (frame_maps(obj->phys_base + off))
            drop_mappings(obj->phys_base + off);
}

int fileobj_set_eof(struct memobj *obj, u64 eof)
{
    if (obj->kind != MEMOBJ_FILE || eof > obj->size)
        return E_INVAL;
    u64 old = ALIGN_UP(obj->eof, PAGE_SIZE);
    obj->eof = eof;
    if (ALIGN_UP(eof, PAGE_SIZE) < old)
        drop_range(obj, ALIGN_UP(eof, PAGE_SIZE), old);
    return 0;
}

int fileobj_grow(struct memobj *obj, u64 size)
{
    if (obj->kind != MEMOBJ_FILE || size <= obj->size || (size & (PAGE_SIZE - 1)))
        return E_INVAL;
    u64 pa = frame_alloc_contig(size / PAGE_SIZE);
    if (!pa)
        return E_NOMEM;
    memcpy(phys_to_virt(pa), phys_to_virt(obj->phys_base), obj->size);
    drop_range(obj, 0, obj->size);
    frame_free_contig(obj->phys_base, obj->size / PAGE_SIZE);
    obj->phys_base = pa;
    obj->size = size;
    return 0;
}
