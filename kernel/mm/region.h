/* Regions of an address space (region.c): the mechanism under SYS_VM_MAP, SYS_VM_MMAP,
 * SYS_VM_UNMAP and SYS_VM_PROTECT, the ELF loader and the stack (docs/memory.md). */
#ifndef REGION_H
#define REGION_H
#include "memobj.h"
#include "types.h"
#include "vm.h"

/* [start, end) maps obj from byte offset off; pages appear on first touch (fault.c). */
struct region {
    u64 start, end;
    unsigned prot;            /* PROT_READ | PROT_WRITE | PROT_EXEC; 0 = guard, any access faults */
    int owner;                /* the task it was mapped for: in a shared address space
                                 (mmu=off) only that task's calls change it */
    struct memobj *obj;
    u64 off;
    bool cow;                 /* a file object mapped private: its frames read-only, a
                                 write copies the page (fault.c) */
    bool bound;               /* a file's user: pages wholly past the object's eof fault */
    struct region *next;
};

#define VM_MIN_ADDR 0x10000ull     /* nothing is mapped below: null-pointer accesses fault */

/* Where a new mapping goes: VM_MMAP_FIXED replaces whatever is in [addr, addr + len);
 * otherwise a non-zero addr is a hint, taken when the range is free, and the mapping
 * lands "anywhere" in the map area with an unmapped guard page on each side. */
/* `owner` is the task the region is for. In a shared address space (as->shared, mmu=off)
 * a call on a range holding another owner's region fails with E_PERM and changes nothing:
 * without an MMU nothing else would keep one task from unmapping another's memory. */
long region_map(struct aspace *as, int owner, u64 addr, u64 len, unsigned prot, unsigned flags,
                struct memobj *obj);   /* address, or E_INVAL / E_NOMEM / E_PERM; takes obj's reference */
/* Fresh anonymous memory at exactly addr (ELF segments, the stack): 0 or an E_* code. */
int region_map_anon_fixed(struct aspace *as, int owner, u64 addr, u64 len, unsigned prot);
/* The start of a free range of len bytes in the map area with a guard page each side
 * (what a map "anywhere" would take), or 0. */
u64 region_free_range(struct aspace *as, u64 len);
int region_unmap(struct aspace *as, int owner, u64 start, u64 end);        /* 0, E_NOMEM, E_PERM */
int region_protect(struct aspace *as, int owner, u64 start, u64 end, unsigned prot); /* 0, E_NOMEM, E_FAULT, E_PERM */
/* Drop the pages [start, end) maps and keep its regions (Linux's MADV_DONTNEED): the next
 * touch faults a page in afresh, zero-filled for private anonymous memory, the object's
 * page for shared memory, the pager's for a pager region. 0, or E_FAULT when part of the
 * range is not mapped (the mapped parts are dropped all the same, as Linux's madvise). */
int region_discard(struct aspace *as, int owner, u64 start, u64 end);   /* also E_PERM */
/* A user's mapping of file object obj from byte offset off, copy-on-write or shared
 * (fileobj_map): as region_map, the region made whole (its view of the file, bound by the
 * file's end) under one hold of the lock. */
long region_map_file(struct aspace *as, int owner, u64 addr, u64 len, unsigned prot,
                     unsigned flags, struct memobj *obj, u64 off, bool cow);
/* Without the kernel lock (docs/smp.md "mmap and munmap without the BKL") map (fixed),
 * unmap, protect and discard answer VM_NEEDS_LOCK (fault.h), having changed nothing,
 * for a range of more than VM_DEFER_MAX pages (lock_allows, region.c). */
/* The region holding va, or NULL: under the address space's lock (fault.c). */
struct region *region_find(struct aspace *as, u64 va);
/* A copy of the region holding va taken under the address space's lock: true, or false
 * when va is in none. Its object pointer stays valid after the lock goes for any object
 * but private anonymous memory (every other kind is freed under the kernel lock only:
 * memobj_put), and only while the caller holds that lock. */
bool region_lookup(struct aspace *as, u64 va, struct region *copy);
/* The same with a reference on its object taken under that lock (memobj_get), which the
 * caller drops (memobj_put): for a caller without the kernel lock. */
bool region_lookup_get(struct aspace *as, u64 va, struct region *copy);
u64 region_pte_flags(const struct region *r);    /* present-PTE bits for its protection */
void regions_destroy(struct aspace *as);
/* Unmap every region of `owner` (a task leaving a shared address space). */
void regions_destroy_owned(struct aspace *as, int owner);
/* regions_destroy for an address space about to be freed: its page tables stay (emptied)
 * for aspace_destroy to free in one pass. */
void regions_teardown(struct aspace *as);
/* The same (but the page tables go with the pages), for the last thread of a task
 * leaving (task.c), without the kernel lock for the work: called with the lock held, it
 * lets it go around pieces of at most VM_DEFER_MAX pages and takes it again after each to
 * free the piece's frames and objects (docs/smp.md "Done: teardown without the BKL").
 * Returns with the lock held; regions mapped meanwhile by a call already under way, or
 * left when the reverse-map checker's gate is closed, go with aspace_destroy. Never in a
 * shared address space. */
void regions_teardown_unlocked(struct aspace *as);
/* Make dst a copy-on-write copy of src: dst's regions are replaced by src's, and every
 * anonymous page is shared read-only with one more map count. 0 or E_NOMEM (then dst
 * holds part of the copy, consistent; the caller destroys it); E_NOTSUP, with nothing
 * changed, in a shared address space (mmu=off: there is no second copy to make, as fork
 * has none on uClinux). Under the two address spaces' locks (aspace_lock_pair: lower
 * address first), with or without the kernel lock; without it, VM_NEEDS_LOCK with nothing
 * changed when dst has regions. */
int regions_clone(struct aspace *dst, struct aspace *src);
/* The PTE for frame (address | PTE_ANON or PTE_FILE) in r: its protection, parked for
 * PROT_NONE, without write while an anonymous frame is shared and for a file's frame in
 * a copy-on-write region. */
u64 region_pte(const struct region *r, u64 frame);
/* Take the page at va out of as if it maps file frame pa, keeping its region (its PTE,
 * map count and reverse-map entry go; the next touch faults it in afresh): a file
 * object's page that moves or went past the end of its file (fileobj.c). Takes the
 * address space's lock; a page that maps anything else (the mapping went meanwhile) is
 * left alone. */
void region_drop_file_page(struct aspace *as, u64 va, u64 pa);
#endif
