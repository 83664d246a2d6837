/* Memory objects (memobj.c): what a region maps. Anonymous zero-fill memory gets a fresh
 * frame on first touch, owned by the page table that touched it (private: copy-on-write
 * when cloned); shared anonymous memory keeps its frames in the object, so every address
 * space that maps it (after a clone too) sees the same frames; a physical range (device
 * memory) maps fixed frames that the kernel never frees; a contiguous object (DMA buffers)
 * owns its run of frames and frees it with its last reference; a pager object gets each
 * page from a pager thread (pager.c) and is private like anonymous memory once supplied;
 * a file object (fileobj.c) owns a contiguous run like a contiguous one and holds a
 * file's bytes for its server, mapped shared or copy-on-write into the file's users.
 * Objects are reference counted by the regions mapping them. */
#ifndef MEMOBJ_H
#define MEMOBJ_H
#include "spinlock.h"
#include "types.h"

enum memobj_kind { MEMOBJ_ANON, MEMOBJ_SHARED, MEMOBJ_PHYS, MEMOBJ_CONTIG, MEMOBJ_PAGER, MEMOBJ_FILE };

struct memobj {
    enum memobj_kind kind;
    int refs;                 /* atomic (memobj_get/memobj_put) */
    u64 phys_base;            /* MEMOBJ_PHYS, MEMOBJ_CONTIG: first byte of the range */
    u64 size;                 /* bytes; offsets at or beyond it are invalid */
    u64 *pages;               /* MEMOBJ_SHARED: page-table-like directory of its frames */
    struct spinlock lock;     /* MEMOBJ_SHARED: its directory (several address spaces
                                 fault its pages in at once) */
    struct memobj *next;      /* MEMOBJ_SHARED: on its CPU's list of objects to free */
    int pager, pager_task;    /* MEMOBJ_PAGER: the pager thread's id and its task's id */
    u64 eof;                  /* MEMOBJ_FILE: the file's size; its users' pages wholly
                                 past it fault (SIGBUS), its server's window does not */
};

#define MEMOBJ_SHARED_MAX (1ull << 30)   /* one directory frame of 512 leaves of 512 pages */

struct memobj *memobj_anon(u64 size);                 /* NULL when out of kernel objects */
struct memobj *memobj_phys(u64 phys_base, u64 size);
/* Shared anonymous memory of at most MEMOBJ_SHARED_MAX bytes: NULL when out of memory. */
struct memobj *memobj_shared(u64 size);
/* size bytes (page multiple) of zeroed contiguous frames; NULL when out of frames or objects. */
struct memobj *memobj_contig(u64 size);
/* A file object of size bytes (page multiple) of zeroed contiguous frames, eof = size:
 * NULL when out of frames or objects (fileobj.c says what it is for). */
struct memobj *memobj_file(u64 size);
/* Pages supplied by thread `pager` of task `pager_task`: NULL when out of kernel objects. */
struct memobj *memobj_pager(u64 size, int pager, int pager_task);
/* Whether the object's frames need no kernel lock: private anonymous memory (its frames
 * are the mappings' own: the address space's lock, the frame and reverse-map locks cover
 * them), shared anonymous memory (its directory has its own lock; its frames go with the
 * object, and an object whose last reference goes without the kernel lock is freed
 * under it: memobj_put) and fixed runs (nothing to change). Regions of these objects are
 * faulted in, mapped, unmapped and protected under their address space's lock alone;
 * pager objects and file objects (fileobj.c walks their frames' mappings) still need the
 * kernel lock (docs/smp.md), so a region of theirs is created and freed, and their
 * references taken and dropped, only under it. */
static inline bool memobj_lock_free(const struct memobj *obj)
{
    return obj->kind == MEMOBJ_ANON || obj->kind == MEMOBJ_SHARED || obj->kind == MEMOBJ_PHYS ||
           obj->kind == MEMOBJ_CONTIG;
}
void memobj_get(struct memobj *obj);
/* Frees it with the last reference; a shared object's last one dropped without the
 * kernel lock waits on this CPU's list until memobj_free_deferred (vm.h's reason: its
 * frames may be in a copy under the kernel lock). */
void memobj_put(struct memobj *obj);
/* Under the kernel lock: this CPU's shared objects whose last reference went without it. */
void memobj_free_deferred(void);
/* The frame backing byte offset `off` (page aligned): 0 and *pa, with *owned set when the
 * frame was allocated for the caller (it must free it on unmap); E_NOMEM or E_FAULT. A
 * shared object's frame stays the object's (not owned): allocated on the first touch by
 * any mapper, freed with the object. A pager object has no frame to give: VM_NEEDS_PAGER
 * (fault.h), and the page comes from the pager (pager.c). */
int memobj_frame(struct memobj *obj, u64 off, u64 *pa, bool *owned);
#endif
