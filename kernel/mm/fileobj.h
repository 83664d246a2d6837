/* File objects (fileobj.c): the mechanism under a server's page cache. A file object
 * (MEMOBJ_FILE, memobj.h) holds one file's bytes in a contiguous run of frames; its
 * server reads and writes them through a window (MK: a shared region of its own address
 * space; IK: the physical map) and maps them into the file's users, shared or
 * copy-on-write. What a file is, and when its bytes move in, is the server's business. */
#ifndef FILEOBJ_H
#define FILEOBJ_H
#include "memobj.h"
#include "region.h"
#include "rmap.h"
#include "types.h"
#include "vm.h"

/* Map [addr, addr + len) of as to obj from byte offset off (page aligned; it may lie past
 * the file's end, as Linux allows, and its pages then fault until the file grows),
 * placed as region_map places (flags: VM_MMAP_FIXED; VM_MMAP_SHARED for a shared mapping, else
 * copy-on-write), for task `owner` (region.h). A user's mapping: pages wholly past the
 * object's eof fault. Takes a new reference on obj. The address, or E_INVAL / E_NOMEM /
 * E_PERM (or VM_NEEDS_LOCK without the kernel lock: region.h). The caller holds a
 * reference to obj, or the kernel lock. */
long fileobj_map(struct aspace *as, int owner, u64 addr, u64 len, unsigned prot,
                 unsigned flags, struct memobj *obj, u64 off);
/* The first touch of page va (PTE pte, empty) of r, a region of a file object, under
 * as's lock (fault.c): 0 and *frame (address | PTE_FILE), counted and recorded in the
 * reverse map with e; else e is unused and VM_PAST_EOF (a user's page wholly past the
 * file's end), E_FAULT (past the object), or VM_NEEDS_LOCK when `unlocked` (the caller
 * holds no kernel lock) while set_eof or grow drops the object's mappings. */
int fileobj_fault(struct aspace *as, const struct region *r, u64 va, u64 *pte,
                  struct rmap_entry *e, bool unlocked, u64 *frame);
/* Under the kernel lock: the file's size is now eof bytes (at most the object's size):
 * 0, or E_INVAL. The pages wholly past it leave every mapping (found by the reverse map),
 * so that its users' next access there faults (SIGBUS); pages before it are reached
 * again. */
int fileobj_set_eof(struct memobj *obj, u64 eof);
/* The same without the kernel lock when no page leaves (the end does not move down past
 * a page boundary, and no truncation or growth is dropping mappings): 0, else
 * VM_NEEDS_LOCK with nothing changed (the caller then calls fileobj_set_eof under it). */
int fileobj_set_eof_unlocked(struct memobj *obj, u64 eof);
/* Under the kernel lock: the object's run becomes size bytes (a page multiple, larger):
 * every mapping of the old frames is dropped (found by the reverse map) and the bytes move
 * to a new run, so each mapping's next access maps the new frame. 0, or E_INVAL / E_NOMEM
 * (nothing changed). */
int fileobj_grow(struct memobj *obj, u64 size);
#endif
