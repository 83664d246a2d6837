/* Page tables and address spaces (vm.c). */
#ifndef VM_H
#define VM_H
#include "arch.h"
#include "marker.h"
#include "spinlock.h"
#include "types.h"

#define PTE_P    (1ull << 0)
#define PTE_W    (1ull << 1)
#define PTE_U    (1ull << 2)
#define PTE_PWT  (1ull << 3)
#define PTE_PCD  (1ull << 4)
#define PTE_PS   (1ull << 7)
#define PTE_G    (1ull << 8)
#define PTE_ANON   (1ull << 9)    /* software: the frame is this mapping's own, freed with it */
#define PTE_PARKED (1ull << 10)   /* software, not present: frame kept, access faults (PROT_NONE) */
#define PTE_FILE   (1ull << 11)   /* software: a file object's frame (fileobj.c), not this mapping's */
#define PTE_COUNTED (PTE_ANON | PTE_FILE)   /* in the frame's map count and reverse map */
#define PTE_NX   (1ull << 63)
#define PTE_ADDR 0x000ffffffffff000ull

struct region;
struct rmap_family;
struct vm_batch;

struct aspace {
    u64 pml4_pa;
    u64 cr3;                  /* pml4_pa, with the asid as PCID when pcid_active */
    int asid;                 /* small id for the cache model (and PCID); 0 = kernel */
    u64 map_next;             /* where the next "anywhere" mapping search starts */
    u64 pages;                /* user PTEs in use (present or parked) */
    struct region *regions;   /* sorted by address, disjoint (region.c) */
    u64 check_gen;            /* the rmap checker's pass that last saw it (rmap.c) */
    struct rmap_family *family; /* rmap=family: its fork family (rmap.c); changes under lock */
    bool shared;              /* mmu=off: every task's (aspace_for_task); regions have owners */
    struct spinlock lock;     /* class aspace: regions, page tables, pages, batch (below) */
    struct vm_batch *batch;   /* the lock holder's flush batch, or NULL (vm_batch_begin) */
    u32 holds;                /* calls working on it without the kernel lock (aspace_hold),
                                 and ASPACE_DOOMED: its task went while held, the last
                                 aspace_unhold destroys it; atomic */
    struct aspace *doomed_next; /* the list of doomed ones (aspaces_doomed_each) */
};

/* The address space's lock (docs/smp.md "Locking"): its regions and page tables change,
 * and a fault is resolved, only under it. The region operations and vm_resolve/vm_supply
 * take it (region.c, fault.c); vm_set_pte and vm_take_pte check it is held (lockcheck).
 * Still under the BKL: a later step takes the page-fault path out of it. */
static inline void aspace_lock(struct aspace *as) { spin_lock(&as->lock); }
static inline void aspace_unlock(struct aspace *as) { spin_unlock(&as->lock); }
/* Two address spaces (a clone's source and copy), the lower address first, so that two
 * clones in opposite directions cannot deadlock; the same one once. */
void aspace_lock_pair(struct aspace *a, struct aspace *b);
void aspace_unlock_pair(struct aspace *a, struct aspace *b);

/* A kernel write through the physical map into pages of `as` it resolved (vm_resolve with
 * VM_ACCESS_WRITE: IPC's long messages, SYS_TASK_COPY's locked way, the IK server's
 * copies; vm_copy_unlocked needs none: it writes under as's lock), under the kernel
 * lock: marked on this CPU from before the first resolve to after the last byte.
 * A clone without the kernel lock that finds its source marked answers VM_NEEDS_LOCK
 * (regions_clone): else it could share a frame the write resolved as private, and the
 * rest of the write would land in the frame both then map, while the source's next write
 * fault copies it half written. */
void vm_kwrite_begin(struct aspace *as);
void vm_kwrite_end(void);
bool vm_kwrite_busy(const struct aspace *as);

void vm_init(u64 max_phys);
struct aspace *aspace_create(void);
void aspace_destroy(struct aspace *as);
/* No CPU has as loaded after this: this one switches to the kernel's tables, the others
 * (idle since they ran one of its threads) are asked to (TLB_LEAVE). For an address space
 * no thread will run in again (its task's last thread is leaving): its teardown's flushes
 * then reach no other CPU. */
void aspace_leave_all(struct aspace *as);
/* A memory call that works on the address space of a task it controls without the
 * kernel lock (syscall.c) holds it: the task may go meanwhile, and then aspace_destroy
 * (under the kernel lock) only marks it, and the last aspace_unhold destroys it, taking
 * the kernel lock for that if it does not hold it. A hold is taken while the task is
 * known to have it: under the kernel lock, or under the task table's (task.h
 * task_hold_aspace). */
#define ASPACE_DOOMED 0x80000000u
void aspace_hold(struct aspace *as);
void aspace_unhold(struct aspace *as);
/* Call fn on every doomed address space (kernel lock held): its task is gone from the task
 * list, but its mappings stay until the last hold ends, and the reverse-map checker must
 * count them (syscall.c, vm_check_all). */
void aspaces_doomed_each(void (*fn)(struct aspace *as, void *arg), void *arg);
/* The address space for a new task: its own (aspace_create), or with mmu=off the one every
 * task shares, made on first use and never destroyed (a task's exit unmaps only the
 * regions it owns: regions_destroy_owned). NULL when memory runs out. */
struct aspace *aspace_for_task(void);
extern bool one_aspace;       /* mmu=off and the shared space exists (ipcfast.S's CR3 gate) */
void aspace_load_tagged(u64 cr3, int asid);  /* with PCID: keep the TLB (vm.c) */
/* Marker + CR3 load. Inline: every IPC between tasks does it. The CR3 is published
 * first (cpu->loaded_cr3): the TLB shootdown's initiator reads it (vm.c cpus_with_loaded). */
static inline void aspace_load(u64 cr3, int asid)
{
    this_cpu()->loaded_cr3 = cr3;
    if (pcid_active) {
        aspace_load_tagged(cr3, asid);
        return;
    }
    marker_asid_switch(asid);
    write_cr3(cr3);
}
void aspace_tlb_stale(struct aspace *as);   /* its tables changed while not loaded */
extern u64 kernel_pml4_pa;
/* Switch page tables if they differ (NULL: kernel-only tables); true when CR3 was loaded
 * (the caller counts it: cpu.h). CR3 reads back without the no-flush bit, so it equals
 * as->cr3 exactly when as is loaded. */
static inline bool aspace_switch(struct aspace *as)
{
    u64 cr3 = as ? as->cr3 : kernel_pml4_pa;
    if (read_cr3() == cr3)
        return false;
    aspace_load(cr3, as ? as->asid : 0);
    return true;
}
/* The PTE of user page va (NULL if absent; with create, intermediate tables are made and
 * NULL means out of memory). Changes go through vm_set_pte / vm_take_pte, which keep the
 * page count and flush the TLB entry when the address space is loaded. */
u64 *vm_pte(struct aspace *as, u64 va, bool create);
/* The reverse-map slot beside a user PTE (the second frame of its page table). */
struct rmap_entry;
static inline struct rmap_entry **pte_rmap_slot(u64 *pte) { return (struct rmap_entry **)(pte + 512); }
void vm_set_pte(struct aspace *as, u64 va, u64 *pte, u64 val);
/* One mapping fewer of the frame an old PTE held (address | PTE_ANON or PTE_FILE): an
 * anonymous frame is freed with its last one, a file object's stays the object's. After
 * the flush of that PTE: at once, or with the batch. */
void vm_frame_put(struct aspace *as, u64 old);

/* An anonymous frame whose last mapping goes without the kernel lock (a fault, an unmap
 * of one's own memory: docs/smp.md "mmap and munmap without the BKL") is freed under it
 * or after a grace period of it (klock.h bkl_grace; docs/smp.md "Frees without the
 * BKL"): kernel code holding the kernel lock copies through the physical map to frames
 * it resolved (IPC's long messages, the IK server's copies), and the frame must not be
 * reused while it does. Such a frame waits on this CPU's list, which holds VM_DEFER_MAX:
 * a range operation without the kernel lock covers at most that many pages, and whoever
 * added some frees them before anything else runs on this CPU: under the lock
 * (vm_free_deferred), or without it (vm_free_deferred_unlocked: at once when the lock
 * is free, else once its holder of the moment has let it go). */
#define VM_DEFER_MAX 512
bool vm_frames_deferred(void);
void vm_free_deferred(void);
void vm_free_deferred_unlocked(void);

/* A flush batch (docs/smp.md "TLB shootdown"): between vm_batch_begin and vm_batch_end,
 * under the address space's lock, the pages whose present PTEs change are flushed
 * together, here and on every other CPU with the address space loaded (one shootdown
 * round per VM_BATCH pages instead of one per page), and the frames those PTEs held
 * (vm_frame_put) and the page tables emptied (vm_prune) are released only after that
 * flush: until then another CPU may still reach them through its TLB or its
 * paging-structure caches. The batch lives on the caller's stack. */
#define VM_BATCH 32
struct vm_batch {
    u32 pages, puts;
    u64 va[VM_BATCH];
    u64 put[VM_BATCH];        /* old PTEs (vm_frame_put), or table frames | their count */
};
void vm_batch_begin(struct aspace *as, struct vm_batch *b);
void vm_batch_end(struct aspace *as);
/* The batch's pages flushed and what it holds released now (none: nothing to do): before
 * an object that owns frames loses its last reference (region.c). */
void vm_batch_flush(struct aspace *as);
/* Range walks go a page table at a time: vm_pt finds the 512 PTEs covering va once (NULL
 * if absent, or out of memory with create), the caller reads them in place. VM_PT_SPAN is
 * what one table maps. */
#define VM_PT_SPAN (512ull << 12)
static inline unsigned vm_pt_index(u64 va) { return (unsigned)(va >> 12) & 511; }
u64 *vm_pt(struct aspace *as, u64 va, bool create);
/* Empty the PTE of page va in place (the page count and TLB kept right); the old entry.
 * The page tables stay: vm_prune(as, va) then frees those on va's path left empty. */
u64 vm_take_pte(struct aspace *as, u64 va, u64 *pte);
void vm_prune(struct aspace *as, u64 va);
/* va itself when its page table exists, else the first address past the absent table's span
 * (so range walks skip unpopulated gigabytes at once). */
u64 vm_next_candidate(struct aspace *as, u64 va);
u64 vm_lookup(struct aspace *as, u64 va, u64 *flags);             /* phys of page, 0 if none */
u64 pte_flags_for_prot(unsigned prot);
extern u64 marker_zero_frame;
#endif
