/* The reverse map (rmap.c): for every anonymous user frame and file object frame, the
 * (address space, page) mappings of it, updated under one global lock, a lock per frame,
 * per-CPU logs (P4), or a lock per fork family of address spaces (P4's Linux), chosen by
 * the boot option rmap= (docs/memory.md). */
#ifndef RMAP_H
#define RMAP_H
#include "types.h"
#include "vm.h"

enum { RMAP_GLOBAL, RMAP_LOCK, RMAP_LOG, RMAP_FAMILY };  /* the order of the words in options.def */
extern int rmap_mode;

struct rmap_entry {
    struct aspace *as;
    u64 va, pa;
    struct rmap_entry *next;     /* on the frame's list */
    u32 insert_mark;             /* log mode: 1 while the insert waits in a log */
    bool file;                   /* a file object's frame, not an anonymous one */
};

/* Entries are allocated before a PTE changes, so a mapping never lacks one: NULL when out
 * of kernel objects (the caller fails with E_NOMEM), and rmap_entry_discard if unused. */
struct rmap_entry *rmap_entry_alloc(void);
void rmap_entry_discard(struct rmap_entry *e);
/* Record the mapping of frame (its address | PTE_ANON or PTE_FILE) at va in as, whose PTE
 * is pte; its slot keeps e. Both the updates run under as's lock (its family is stable). */
void rmap_insert(struct rmap_entry *e, struct aspace *as, u64 va, u64 frame, u64 *pte);
/* Forget the mapping whose PTE is pte (before the PTE is cleared or changes frame). */
void rmap_remove(u64 *pte);
/* Apply the pending logs (log mode); every reader of the map calls it first. */
void rmap_sync(void);
/* One mapping of the file object's frame at pa, read under its list's lock (after the logs are
 * applied): true and (*as, *va), or false when the frame has none. The mapping may go as
 * soon as the lock does; its address space stays while the caller holds the kernel lock
 * (address spaces are destroyed only under it). fileobj.c's walks use it, so that they
 * never hold a list's lock while taking an address space's (the order is aspace first). */
bool rmap_first(u64 pa, struct aspace **as, u64 *va);

/* The updates so far, all CPUs: inserts and removes (every mode), removes that cancelled
 * a logged insert, logged operations applied, passes a CPU made over its own full log and
 * the operations a CPU applied from other CPUs' logs (log mode: readers only), and the TSC
 * ticks the rmap_insert/remove/apply probes measured (0 unless probes are on). */
struct rmap_stats {
    u64 inserts, removes, cancelled, applied, full_passes, foreign, probe_ticks;
};
void rmap_stats(struct rmap_stats *st);

/* rmap=family (else these do nothing and as->family stays NULL): an address space's fork
 * family, whose lock guards the lists of the anonymous frames its members map. A new
 * address space starts one (a fresh task, exec: false when out of kernel objects); a
 * clone's destination, emptied and locked, joins its source's (fork); the last member's
 * leave frees it. */
bool rmap_family_start(struct aspace *as);
void rmap_family_join(struct aspace *dst, struct aspace *src);
void rmap_family_leave(struct aspace *as);
u64 rmap_families(void);                 /* families alive (meminfo) */

struct rmap_check_stats {
    u64 mappings, entries, errors, gen;
};
/* The consistency checker: every anonymous PTE of as must have its entry on its frame's
 * list (call for every live address space first, with the same stats), then every list
 * entry must be such a PTE and every list as long as the frame's map count; with
 * rmap=family every mapper of an anonymous frame must be in one family. */
void rmap_check_aspace(struct aspace *as, struct rmap_check_stats *st);
void rmap_check_frames(struct rmap_check_stats *st);
#endif
