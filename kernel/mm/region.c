/*
 * Regions: an address space is a sorted list of disjoint regions, each mapping a range of
 * a memory object with one protection. Invariant: a user PTE (present or parked) exists
 * only inside a region, and its flags are region_pte()'s (the region's protection, minus
 * write while an anonymous frame is shared copy-on-write), so unmapping or protecting a
 * range only has to visit the regions' own pages. Unmap and protect of part
 * of a region split it; every region a split needs is allocated before anything changes,
 * so a call that fails with E_NOMEM leaves the address space as it was.
 * Every operation below runs under the address space's lock (aspace_lock, vm.h), taken by
 * the public entry points; the static helpers assume it. A caller without the kernel lock
 * (docs/smp.md "mmap and munmap without the BKL") may change regions of every kind of
 * object, at most VM_DEFER_MAX pages a call (lock_allows); a larger range answers
 * VM_NEEDS_LOCK before anything changes, and the caller takes the kernel lock and calls
 * again.
 */
#include <ondol/abi.h>
#include "kernel.h"
#include "fault.h"
#include "klock.h"
#include "kobj.h"
#include "memlayout.h"
#include "pcnt.h"
#include "pmm.h"
#include "region.h"
#include "rmap.h"

#define MAP_AREA_END (USER_STACK_TOP - USER_STACK_SIZE - (1ull << 30))

static struct kcache region_cache = KCACHE_INIT("region", sizeof(struct region));

/* The link that points at the first region ending above va. */
static struct region **link_after(struct aspace *as, u64 va)
{
    struct region **pp = &as->regions;
    while (*pp && (*pp)->end <= va)
        pp = &(*pp)->next;
    return pp;
}

struct region *region_find(struct aspace *as, u64 va)
{
    spin_assert_held(&as->lock);
    struct region *r = *link_after(as, va);
    return r && r->start <= va ? r : NULL;
}

bool region_lookup(struct aspace *as, u64 va, struct region *copy)
{
    aspace_lock(as);
    struct region *r = region_find(as, va);
    if (r)
        *copy = *r;
    aspace_unlock(as);
    return r != NULL;
}

bool region_lookup_get(struct aspace *as, u64 va, struct region *copy)
{
    aspace_lock(as);
    struct region *r = region_find(as, va);
    if (r) {
        *copy = *r;
        memobj_get(r->obj);
    }
    aspace_unlock(as);
    return r != NULL;
}

static bool range_free(struct aspace *as, u64 start, u64 end)
{
    struct region *r = *link_after(as, start);
    return !r || r->start >= end;
}

/* Whether a caller without the kernel lock may change [start, end): when the range is
 * at most VM_DEFER_MAX pages (the frames it frees wait for the kernel lock: vm.h), whatever
 * the objects (an object whose last reference goes waits for the lock too: memobj_put).
 * Always with the lock. */
static bool lock_allows(u64 start, u64 end)
{
    return kernel_lock_held() || end - start <= (u64)VM_DEFER_MAX * PAGE_SIZE;
}

/* Whether owner may change [start, end): always in a task's own address space; in a
 * shared one (mmu=off) when no other owner's region overlaps the range. */
static bool may_change(struct aspace *as, int owner, u64 start, u64 end)
{
    if (!as->shared)
        return true;
    for (struct region *r = *link_after(as, start); r && r->start < end; r = r->next)
        if (r->owner != owner)
            return false;
    return true;
}

u64 region_pte_flags(const struct region *r)
{
    return PTE_P | PTE_U | pte_flags_for_prot(r->prot);
}

/* The address space's lock with a flush batch (vm.h): the pages a range operation
 * changes are flushed together, and their frames released, before the lock goes. */
static void lock_batched(struct aspace *as, struct vm_batch *b)
{
    aspace_lock(as);
    vm_batch_begin(as, b);
}

static void unlock_batched(struct aspace *as)
{
    vm_batch_end(as);
    aspace_unlock(as);
}

typedef int pte_fn(struct aspace *as, u64 va, u64 *pte, void *arg);

/* The first address past va's page table, skipping every absent table above it too. */
static u64 next_table(struct aspace *as, u64 va)
{
    return MAX(vm_next_candidate(as, va), ALIGN_DOWN(va, VM_PT_SPAN) + VM_PT_SPAN);
}

/* Calls fn on every page of [start, end) whose PTE is not empty, a page table at a time:
 * each table is found once (absent ones skipped whole) and its entries are read in
 * place. With prune, a table left empty is freed after its pages (vm_prune). Stops at
 * fn's first error and returns it; else 0. */
static int each_pte(struct aspace *as, u64 start, u64 end, pte_fn *fn, void *arg, bool prune)
{
    for (u64 va = start; va < end;) {
        u64 *pt = vm_pt(as, va, false);
        u64 stop = MIN(end, next_table(as, va));
        for (u64 at = va; pt && at < stop; at += PAGE_SIZE) {
            int err = pt[vm_pt_index(at)] ? fn(as, at, &pt[vm_pt_index(at)], arg) : 0;
            if (err)
                return err;
        }
        if (pt && prune)
            vm_prune(as, va);
        va = stop;
    }
    return 0;
}

u64 region_pte(const struct region *r, u64 frame)
{
    if (!r->prot)
        return frame | PTE_PARKED;
    u64 pte = frame | region_pte_flags(r);
    if ((frame & PTE_ANON) ? frame_maps(frame & PTE_ADDR) > 1 : (frame & PTE_FILE) && r->cow)
        pte &= ~PTE_W;
    return pte;
}

/* The page's mapping goes; its frame loses the mapping after the flush (vm_frame_put). */
static int release_page(struct aspace *as, u64 va, u64 *pte, void *unused)
{
    (void)unused;
    if (*pte & PTE_COUNTED)
        rmap_remove(pte);
    vm_frame_put(as, vm_take_pte(as, va, pte));
    return 0;
}

void region_drop_file_page(struct aspace *as, u64 va, u64 pa)
{
    aspace_lock(as);
    u64 *pte = vm_pte(as, va, false);
    if (pte && (*pte & PTE_FILE) && (*pte & PTE_ADDR) == pa)
        release_page(as, va, pte, NULL);
    aspace_unlock(as);
}

static int reprotect_page(struct aspace *as, u64 va, u64 *pte, void *region)
{
    vm_set_pte(as, va, pte, region_pte(region, *pte & (PTE_ADDR | PTE_COUNTED)));
    return 0;
}

/* An object that owns frames (shared anonymous, contiguous, file) frees them with its
 * last reference: only after the batch's flush, when no TLB reaches them and their map
 * counts are down. Its references change without the kernel lock too (in other address
 * spaces at once), so which put is the last cannot be known here: its region always
 * flushes first, and whichever put is last finds every mapper flushed. */
static void region_obj_put(struct aspace *as, struct memobj *obj)
{
    if (memobj_owns_frames(obj))
        vm_batch_flush(as);
    memobj_put(obj);
}

/* A region whose pages are gone: its object's reference and itself. */
static void region_drop(struct aspace *as, struct region *r)
{
    region_obj_put(as, r->obj);
    kobj_free(&region_cache, r);
}

/* prune: free the page tables the region's pages leave empty (not when the whole
 * address space goes: aspace_destroy frees every table after). */
static void region_free(struct aspace *as, struct region *r, bool prune)
{
    each_pte(as, r->start, r->end, release_page, NULL, prune);
    region_drop(as, r);
}

/* ---- splitting --------------------------------------------------------------------- */

static bool splits_at(struct aspace *as, u64 va)
{
    struct region *r = region_find(as, va);
    return r && r->start != va;
}

struct spares {
    struct region *r[2];
};

/* Allocate the regions splitting at start and end will need: 0 or E_NOMEM. */
static int spares_get(struct aspace *as, u64 start, u64 end, struct spares *s)
{
    int need = splits_at(as, start) + splits_at(as, end);
    s->r[0] = s->r[1] = NULL;
    for (int i = 0; i < need; i++) {
        s->r[i] = kobj_alloc(&region_cache);
        if (!s->r[i]) {
            if (i)
                kobj_free(&region_cache, s->r[0]);
            return E_NOMEM;
        }
    }
    return 0;
}

/* Split the region containing va (if va is inside it, not at its start) into two. */
static void split_at(struct aspace *as, u64 va, struct spares *s)
{
    struct region *r = region_find(as, va);
    if (!r || r->start == va)
        return;
    struct region *tail = s->r[0] ? s->r[0] : s->r[1];
    ASSERT(tail);
    if (tail == s->r[0])
        s->r[0] = NULL;
    else
        s->r[1] = NULL;
    *tail = *r;
    tail->start = va;
    tail->off = r->off + (va - r->start);
    r->end = va;
    r->next = tail;
    memobj_get(r->obj);
}

static int split_range(struct aspace *as, u64 start, u64 end)
{
    struct spares s;
    int err = spares_get(as, start, end, &s);
    if (err)
        return err;
    split_at(as, start, &s);
    split_at(as, end, &s);
    ASSERT(!s.r[0] && !s.r[1]);
    return 0;
}

/* ---- the operations ------------------------------------------------------------------ */

static int unmap_range(struct aspace *as, u64 start, u64 end)
{
    int err = split_range(as, start, end);
    if (err)
        return err;
    struct region **pp = link_after(as, start);
    while (*pp && (*pp)->start < end) {
        struct region *r = *pp;
        *pp = r->next;
        region_free(as, r, true);
    }
    return 0;
}

static PCNT_COLD int unmap_probed(struct aspace *as, u64 start, u64 end)
{
    pcnt_probe_start(PROBE_VM_UNMAP, end - start);
    int err = unmap_range(as, start, end);
    pcnt_probe_stop(PROBE_VM_UNMAP);
    return err;
}

/* Unmap [start, end), measured by the vm_unmap probe (para: the length). */
int region_unmap(struct aspace *as, int owner, u64 start, u64 end)
{
    struct vm_batch b;
    lock_batched(as, &b);
    int err = !may_change(as, owner, start, end)  ? E_PERM
              : !lock_allows(start, end)          ? VM_NEEDS_LOCK
              : pcnt_probed()                     ? unmap_probed(as, start, end)
                                                 : unmap_range(as, start, end);
    unlock_batched(as);
    return err;
}

static bool covered(struct aspace *as, u64 start, u64 end)
{
    u64 at = start;
    for (struct region *r = *link_after(as, start); r && r->start <= at && at < end; r = r->next)
        at = r->end;
    return at >= end;
}

static int protect_range(struct aspace *as, int owner, u64 start, u64 end, unsigned prot)
{
    if (!covered(as, start, end))
        return E_FAULT;
    if (!may_change(as, owner, start, end))
        return E_PERM;
    if (!lock_allows(start, end))
        return VM_NEEDS_LOCK;
    int err = split_range(as, start, end);
    if (err)
        return err;
    for (struct region *r = *link_after(as, start); r && r->start < end; r = r->next) {
        r->prot = prot;
        each_pte(as, r->start, r->end, reprotect_page, r, false);
    }
    return 0;
}

int region_protect(struct aspace *as, int owner, u64 start, u64 end, unsigned prot)
{
    struct vm_batch b;
    lock_batched(as, &b);
    int err = protect_range(as, owner, start, end, prot);
    unlock_batched(as);
    return err;
}

int region_discard(struct aspace *as, int owner, u64 start, u64 end)
{
    struct vm_batch b;
    lock_batched(as, &b);
    bool allowed = may_change(as, owner, start, end), whole = covered(as, start, end);
    bool locks = lock_allows(start, end);
    if (allowed && locks)
        each_pte(as, start, end, release_page, NULL, true);   /* only mapped pages have PTEs */
    unlock_batched(as);
    if (!allowed)
        return E_PERM;
    if (!locks)
        return VM_NEEDS_LOCK;
    return whole ? 0 : E_FAULT;
}

/* First address >= from in the map area where len bytes fit with a free guard page on
 * each side; 0 if none. */
static u64 gap_from(struct aspace *as, u64 from, u64 len)
{
    u64 at = from;
    for (struct region *r = as->regions; r; r = r->next) {
        if (r->end + PAGE_SIZE <= at)
            continue;
        if (at + len + PAGE_SIZE <= r->start)
            break;
        at = r->end + PAGE_SIZE;
    }
    return at + len <= MAP_AREA_END ? at : 0;
}

/* "Anywhere": next fit from where the last search ended, then from the area's start. */
static u64 find_gap(struct aspace *as, u64 len)
{
    u64 at = gap_from(as, MAX(as->map_next, USER_MAP_BASE), len);
    if (!at)
        at = gap_from(as, USER_MAP_BASE, len);
    if (at)
        as->map_next = at + len + PAGE_SIZE;
    return at;
}

u64 region_free_range(struct aspace *as, u64 len)
{
    aspace_lock(as);
    u64 at = find_gap(as, len);
    aspace_unlock(as);
    return at;
}

static bool fits_user(u64 addr, u64 len)
{
    return addr >= VM_MIN_ADDR && addr < USER_MAP_END && len <= USER_MAP_END - addr;
}

/* Where a mapping of len bytes goes: its address, or E_INVAL (bad fixed address) or
 * E_NOMEM (no room in the map area). */
static long place(struct aspace *as, u64 addr, u64 len, bool fixed)
{
    u64 hint = ALIGN_DOWN(addr, PAGE_SIZE);
    if (fixed)
        return fits_user(addr, len) && addr == hint ? (long)addr : E_INVAL;
    if (addr && fits_user(hint, len) && range_free(as, hint, hint + len))
        return (long)hint;
    u64 at = find_gap(as, len);
    return at ? (long)at : E_NOMEM;
}

/* The new region is *proto (its protection, owner, object and a file's view) at the
 * place found for [addr, addr + len), made whole under the lock: a fault on it, which
 * may come at once from another thread, sees it complete. */
static long map_region(struct aspace *as, u64 addr, u64 len, unsigned flags,
                       const struct region *proto)
{
    bool fixed = flags & VM_MMAP_FIXED;
    long start = place(as, addr, len, fixed);
    if (start >= 0 && fixed && !may_change(as, proto->owner, (u64)start, (u64)start + len))
        start = E_PERM;
    bool needs_lock = start >= 0 && fixed && !lock_allows((u64)start, (u64)start + len);
    struct region *r = start >= 0 && !needs_lock ? kobj_alloc(&region_cache) : NULL;
    long err = needs_lock ? VM_NEEDS_LOCK : start < 0 ? start : r ? 0 : E_NOMEM;
    if (!err && fixed)
        err = unmap_range(as, (u64)start, (u64)start + len);
    if (err) {
        if (r)
            kobj_free(&region_cache, r);
        memobj_put(proto->obj);
        return err;
    }
    *r = *proto;
    r->start = (u64)start;
    r->end = (u64)start + len;
    struct region **pp = link_after(as, (u64)start);
    r->next = *pp;
    *pp = r;
    return start;
}

static PCNT_COLD long map_probed(struct aspace *as, u64 addr, u64 len, unsigned flags,
                                  const struct region *proto)
{
    pcnt_probe_start(PROBE_VM_MAP, len);
    long r = map_region(as, addr, len, flags, proto);
    pcnt_probe_stop(PROBE_VM_MAP);
    return r;
}

/* Map a region, measured by the vm_map probe (para: the length); pages come on first touch. */
static long map_locked(struct aspace *as, u64 addr, u64 len, unsigned flags,
                       const struct region *proto)
{
    struct vm_batch b;
    lock_batched(as, &b);
    long r = pcnt_probed() ? map_probed(as, addr, len, flags, proto)
                           : map_region(as, addr, len, flags, proto);
    unlock_batched(as);
    return r;
}

long region_map(struct aspace *as, int owner, u64 addr, u64 len, unsigned prot, unsigned flags,
                struct memobj *obj)
{
    const struct region proto = {.prot = prot, .obj = obj, .owner = owner};
    return map_locked(as, addr, len, flags, &proto);
}

long region_map_file(struct aspace *as, int owner, u64 addr, u64 len, unsigned prot,
                     unsigned flags, struct memobj *obj, u64 off, bool cow)
{
    const struct region proto = {.prot = prot, .obj = obj, .owner = owner, .off = off,
                                 .cow = cow, .bound = true};
    return map_locked(as, addr, len, flags, &proto);
}

int region_map_anon_fixed(struct aspace *as, int owner, u64 addr, u64 len, unsigned prot)
{
    struct memobj *obj = memobj_anon(len);
    long r = obj ? region_map(as, owner, addr, len, prot, VM_MMAP_FIXED, obj) : E_NOMEM;
    return r < 0 ? (int)r : 0;
}

static void free_regions(struct aspace *as, bool prune)
{
    while (as->regions) {
        struct region *r = as->regions;
        as->regions = r->next;
        region_free(as, r, prune);
    }
}

/* ---- copy-on-write clone ------------------------------------------------------------ */

/* Share one page of src with dst (its PTE in src is spte): an anonymous frame gains a
 * mapping and loses write permission on both sides; a file object's frame gains a
 * mapping and keeps its PTE (read-only already where copy-on-write); other frames
 * (physical objects) are simply mapped again. */
static int clone_page(struct aspace *src, u64 va, u64 *spte, void *dst_as)
{
    struct aspace *dst = dst_as;
    struct rmap_entry *e = NULL;
    if ((*spte & PTE_COUNTED) && !(e = rmap_entry_alloc()))
        return E_NOMEM;
    u64 *d = vm_pte(dst, va, true);
    if (!d) {
        if (e)
            rmap_entry_discard(e);
        return E_NOMEM;
    }
    u64 pte = *spte;
    if (pte & PTE_COUNTED) {
        frame_map_inc(pte & PTE_ADDR);
        rmap_insert(e, dst, va, pte & (PTE_ADDR | PTE_COUNTED), d);
    }
    if (pte & PTE_ANON) {
        pte &= ~PTE_W;
        if (*spte != pte)
            vm_set_pte(src, va, spte, pte);
    }
    vm_set_pte(dst, va, d, pte);
    return 0;
}

static int clone_regions(struct aspace *dst, struct aspace *src)
{
    if (dst->shared || src->shared)
        return E_NOTSUP;
    free_regions(dst, true);
    rmap_family_join(dst, src);         /* emptied: a fork's child joins its parent's */
    struct region **tail = &dst->regions;
    for (const struct region *r = src->regions; r; r = r->next) {
        struct region *copy = kobj_alloc(&region_cache);
        if (!copy)
            return E_NOMEM;
        *copy = *r;
        copy->next = NULL;
        memobj_get(copy->obj);
        *tail = copy;
        tail = &copy->next;
        int err = each_pte(src, r->start, r->end, clone_page, dst, false);
        if (err)
            return err;
    }
    dst->map_next = src->map_next;
    return 0;
}

/* Without the kernel lock (docs/smp.md "Done: clone without the BKL") only into an empty
 * address space (emptying one frees its frames, whose number is not bounded; nothing else
 * a clone does frees anything: it maps frames again and makes page tables) and while no
 * kernel write into the source is under way (vm_kwrite_begin). */
int regions_clone(struct aspace *dst, struct aspace *src)
{
    struct vm_batch bd, bs;
    aspace_lock_pair(dst, src);
    if ((dst->regions || vm_kwrite_busy(src)) && !kernel_lock_held()) {
        aspace_unlock_pair(dst, src);
        return VM_NEEDS_LOCK;
    }
    vm_batch_begin(dst, &bd);
    if (src != dst)
        vm_batch_begin(src, &bs);
    int err = clone_regions(dst, src);
    if (src != dst)
        vm_batch_end(src);
    vm_batch_end(dst);
    aspace_unlock_pair(dst, src);
    return err;
}

/* The address space goes whole: every region with its pages, under its lock. */
static void free_all(struct aspace *as, bool prune)
{
    struct vm_batch b;
    lock_batched(as, &b);
    free_regions(as, prune);
    unlock_batched(as);
}

void regions_destroy(struct aspace *as) { free_all(as, true); }

void regions_destroy_owned(struct aspace *as, int owner)
{
    struct vm_batch b;
    lock_batched(as, &b);
    for (struct region **pp = &as->regions; *pp;) {
        struct region *r = *pp;
        if (r->owner != owner) {
            pp = &r->next;
            continue;
        }
        *pp = r->next;
        region_free(as, r, true);
    }
    unlock_batched(as);
}

void regions_teardown(struct aspace *as) { free_all(as, false); }

/* ---- teardown in pieces (docs/smp.md "Done: teardown without the BKL") ------------------ */

struct budget {
    u32 left;      /* PTEs this piece may still release */
    u64 stop;      /* where it stopped, when it ran out */
};

#define PIECE_FULL 1      /* each_pte's stop: not an E_* code */

static int release_budgeted(struct aspace *as, u64 va, u64 *pte, void *arg)
{
    struct budget *b = arg;
    if (!b->left) {
        b->stop = va;
        return PIECE_FULL;
    }
    b->left--;
    return release_page(as, va, pte, NULL);
}

/* The front of the address space goes, at most `pages` PTEs of it, under its lock: whole
 * regions, then the part of the next one that the budget reaches (the region keeps its
 * tail, as a split's tail: start and offset move together). Page tables left empty go
 * too, as an unmap's (vm_prune: freed at once after the flush, as no copy under the
 * kernel lock writes them). Each PTE frees at most one frame, so a piece of VM_DEFER_MAX
 * fits the CPU's list of deferred frames without the kernel lock. True when no region is
 * left. */
static bool teardown_piece(struct aspace *as, u32 pages)
{
    struct vm_batch b;
    struct budget left = {.left = pages};
    lock_batched(as, &b);
    while (as->regions) {
        struct region *r = as->regions;
        if (each_pte(as, r->start, r->end, release_budgeted, &left, true) == PIECE_FULL) {
            r->off += left.stop - r->start;
            r->start = left.stop;
            break;
        }
        as->regions = r->next;
        region_drop(as, r);
    }
    bool empty = !as->regions;
    unlock_batched(as);
    return empty;
}

void regions_teardown_unlocked(struct aspace *as)
{
    ASSERT(kernel_lock_held() && !as->shared);
    for (bool empty = false; !empty;) {
        kernel_unlock();
        bool entered = vm_unlocked_enter();
        if (entered) {
            empty = teardown_piece(as, VM_DEFER_MAX);
            vm_unlocked_leave();
        }
        kernel_lock();
        vm_free_deferred();
        memobj_free_deferred();
        if (!entered)
            return;      /* the reverse-map checker's gate: the rest under the lock */
    }
}
