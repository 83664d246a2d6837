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
 * docs/memory.md).
 *
 * Locking (docs/smp.md, "File and pager objects without the BKL"). Faults, maps, unmaps
 * and protects of file regions run under their address space's lock only; truncation and
 * growth run under the kernel lock. The object's lock (class fileobj, under aspace) orders
 * the two: a first touch reads the end and the run and makes its mapping (map count,
 * reverse-map entry) under it; set_eof and grow change the end or mark the object
 * `dropping` under it, then let it go and drop the mappings they find. So every mapping
 * made before is on the lists they walk, and every fault after either sees the change or,
 * without the kernel lock while they drop, goes the locked way and waits for them. The
 * walk never holds a list's lock while it takes an address space's (rmap_first), and
 * leaves a frame only once its map count is 0 (drop_mappings says why).
 */
#include <ondol/abi.h>
#include "arch.h"
#include "fault.h"
#include "fileobj.h"
#include "kernel.h"
#include "klock.h"
#include "lockcheck.h"
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
    return region_map_file(as, owner, addr, len, prot, flags & VM_MMAP_FIXED, obj, off,
                           !(flags & VM_MMAP_SHARED));
}

int fileobj_fault(struct aspace *as, const struct region *r, u64 va, u64 *pte,
                  struct rmap_entry *e, bool unlocked, u64 *frame)
{
    struct memobj *obj = r->obj;
    u64 off = r->off + (va - r->start);
    spin_lock(&obj->lock);
    int err = unlocked && obj->dropping                          ? VM_NEEDS_LOCK
              : r->bound && off >= ALIGN_UP(obj->eof, PAGE_SIZE) ? VM_PAST_EOF
              : off >= obj->size                                 ? E_FAULT
                                                                 : 0;
    if (!err) {
        *frame = obj->phys_base + off;
        frame_map_inc(*frame);
        rmap_insert(e, as, va, *frame | PTE_FILE, pte);
        *frame |= PTE_FILE;
    }
    spin_unlock(&obj->lock);
    return err;
}

/* Every mapping of the frame at pa leaves its page table, one at a time, and its map
 * count reaches 0: the first on the frame's list is read under the list's lock, then
 * dropped under its address space's lock if it still maps pa (it may have gone
 * meanwhile: an unmap, a copy-on-write break). Nothing maps pa anew meanwhile (the
 * object is dropping: faults wait; a clone copies only a mapping the frame's count
 * already holds). A mapping leaves the list before its count goes: the count goes only
 * after the flush of its PTE (release_page's batch, cow_copy), and that flush may be
 * waiting for this CPU's answer to a shootdown (the address space is loaded here: a
 * thread of the caller's task). So a count left with the list empty is a flush in
 * flight on another CPU: it is waited for, answering shootdowns; else the run could be
 * freed (growth) while a TLB still reaches it and its count is above 0. Under the lock
 * checker a wait past lockcheck_spin_ms is reported as a suspected deadlock (class
 * map_count) instead of hanging unnoticed. */
static void drop_mappings(u64 pa)
{
    struct aspace *as;
    u64 va;
    struct lockcheck_wait w = {0, false};
    while (frame_maps(pa)) {
        if (rmap_first(pa, &as, &va)) {
            region_drop_file_page(as, va, pa);
            continue;
        }
        pause();
        ipi_poll();
        if (lockcheck_on)
            lockcheck_waiting(frame_meta(pa), LOCK_MAP_COUNT, &w);
    }
}

static void set_dropping(struct memobj *obj, bool on)
{
    spin_lock(&obj->lock);
    obj->dropping = on;
    spin_unlock(&obj->lock);
}

/* drop_mappings for the object's pages [from, to) (byte offsets, page aligned), while
 * it is dropping. */
static void drop_range(struct memobj *obj, u64 from, u64 to)
{
    for (u64 off = from; off < to; off += PAGE_SIZE)
        drop_mappings(obj->phys_base + off);
}

int fileobj_set_eof(struct memobj *obj, u64 eof)
{
    ASSERT(kernel_lock_held());
    if (obj->kind != MEMOBJ_FILE || eof > obj->size)
        return E_INVAL;
    u64 old = ALIGN_UP(obj->eof, PAGE_SIZE), new = ALIGN_UP(eof, PAGE_SIZE);
    spin_lock(&obj->lock);
    obj->eof = eof;
    obj->dropping = new < old;
    spin_unlock(&obj->lock);
    if (new < old) {
        drop_range(obj, new, old);
        set_dropping(obj, false);
    }
    return 0;
}

/* A later end exposes pages no one maps yet (a fault maps none past the old end: it
 * reads the end under the same lock), so nothing is dropped and the walk's BKL is not
 * needed. */
int fileobj_set_eof_unlocked(struct memobj *obj, u64 eof)
{
    if (obj->kind != MEMOBJ_FILE)
        return E_INVAL;
    spin_lock(&obj->lock);
    bool keeps = !obj->dropping && eof <= obj->size &&
                 ALIGN_UP(eof, PAGE_SIZE) >= ALIGN_UP(obj->eof, PAGE_SIZE);
    if (keeps)
        obj->eof = eof;
    spin_unlock(&obj->lock);
    return keeps ? 0 : VM_NEEDS_LOCK;
}

/* The mappings go before the bytes are copied, and faults wait meanwhile (dropping):
 * a write through a shared mapping or the server's window can then not land in the old
 * run after its copy. */
int fileobj_grow(struct memobj *obj, u64 size)
{
    ASSERT(kernel_lock_held());
    if (obj->kind != MEMOBJ_FILE || size <= obj->size || (size & (PAGE_SIZE - 1)))
        return E_INVAL;
    u64 pa = frame_alloc_contig(size / PAGE_SIZE), old = obj->phys_base;
    if (!pa)
        return E_NOMEM;
    set_dropping(obj, true);
    drop_range(obj, 0, obj->size);
    memcpy(phys_to_virt(pa), phys_to_virt(old), obj->size);
    u64 frames = obj->size / PAGE_SIZE;
    spin_lock(&obj->lock);
    obj->phys_base = pa;
    obj->size = size;
    obj->dropping = false;
    spin_unlock(&obj->lock);
    frame_free_contig(old, frames);
    return 0;
}
