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
                                 fault its pages in at once); MEMOBJ_FILE: eof, phys_base,
                                 size and dropping, and each first mapping of a frame */
    struct memobj *next;      /* on its CPU's list of objects to free (memobj_put) */
    int pager, pager_task;    /* MEMOBJ_PAGER: the pager thread's id and its task's id */
    u64 eof;                  /* MEMOBJ_FILE: the file's size; its users' pages wholly
                                 past it fault (SIGBUS), its server's window does not */
    bool dropping;            /* MEMOBJ_FILE: set_eof or grow is dropping mappings of its
                                 frames; faults without the kernel lock wait for it */
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
void memobj_get(struct memobj *obj);
/* Frees it with the last reference. Every kind of object but private anonymous memory
 * is freed under the kernel lock or after a grace period of it (klock.h bkl_grace): a
 * last reference dropped without the lock waits on this CPU's list (vm.h's reason: the
 * frames of a shared, file or contiguous object may be in a copy under the kernel lock;
 * and code holding that lock reads objects it found through region_lookup: the pager
 * call, a server's window). */
void memobj_put(struct memobj *obj);
/* Under the kernel lock: this CPU's objects whose last reference went without it. */
void memobj_free_deferred(void);
/* Without it: after the lock's grace period (vm.h vm_free_deferred_unlocked). */
void memobj_free_deferred_unlocked(void);
/* Whether the object owns frames it frees with its last reference (shared anonymous,
 * contiguous, file): a region of it flushes its batch before dropping a reference
 * (region.c). */
static inline bool memobj_owns_frames(const struct memobj *obj)
{
    return obj->kind == MEMOBJ_SHARED || obj->kind == MEMOBJ_CONTIG || obj->kind == MEMOBJ_FILE;
}
/* The frame backing byte offset `off` (page aligned): 0 and *pa, with *owned set when the
 * frame was allocated for the caller (it must free it on unmap); E_NOMEM or E_FAULT. A
 * shared object's frame stays the object's (not owned): allocated on the first touch by
 * any mapper, freed with the object. A pager object has no frame to give: VM_NEEDS_PAGER
 * (fault.h), and the page comes from the pager (pager.c). Not for file objects: their
 * first touch is fileobj_fault's. */
int memobj_frame(struct memobj *obj, u64 off, u64 *pa, bool *owned);
#endif
