/*
 * Page faults. The region containing the address decides: an access its protection allows
 * is resolved (a fresh frame from the region's object on first touch, a parked page
 * brought back, a copy-on-write break, or a stale TLB entry refreshed); anything else is
 * the thread's fault. A write to a shared anonymous frame copies it only while it is
 * shared: the last sharer finds a map count of 1 and writes in place. A page of a pager
 * region that was never supplied is VM_NEEDS_PAGER; the pager's copy arrives later
 * through vm_supply (pager.c).
 * Every kind of object is resolved without the kernel lock too (vm_fault_unlocked), under
 * the address space's lock and the object's own where it has one (a shared anonymous
 * object's directory, a file object's end and run); only a page its pager must supply,
 * and a file object's page while the kernel lock's holder drops its mappings, go the
 * locked way.
 */
#include <ondol/abi.h>
#include "arch.h"
#include "fault.h"
#include "fileobj.h"
#include "kernel.h"
#include "memlayout.h"
#include "pcnt.h"
#include "pmm.h"
#include "region.h"
#include "rmap.h"

/* A private copy, for the writer, of the frame that pte maps: a shared anonymous frame,
 * or a file object's frame in a copy-on-write region. 0 and *frame replaced (the reverse
 * map and the PTE follow), or E_NOMEM. The PTE moves to the copy, flushed on every CPU,
 * before the old frame loses this mapping: once its count is 1, the other address space
 * sharing it writes it in place (its own fault, under its own lock only), and no CPU may
 * then still read it through this one's old translation. */
static int cow_copy(struct aspace *as, const struct region *r, u64 page, u64 *pte, u64 *frame)
{
    u64 old = *frame & PTE_ADDR, copy = frame_alloc();
    struct rmap_entry *e = copy ? rmap_entry_alloc() : NULL;
    if (!e) {
        if (copy)
            frame_free(copy);
        return E_NOMEM;
    }
    memcpy(phys_to_virt(copy), phys_to_virt(old), PAGE_SIZE);
    frame_map_inc(copy);
    rmap_remove(pte);
    rmap_insert(e, as, page, copy | PTE_ANON, pte);
    u64 was = *frame;                 /* not *pte: first_frame may not have set it yet */
    *frame = copy | PTE_ANON;
    vm_set_pte(as, page, pte, region_pte(r, *frame));
    vm_frame_put(as, was);
    return 0;
}

/* cow_copy under the cow_fault probe (docs/measuring.md). */
static PCNT_COLD int cow_copy_probed(struct aspace *as, const struct region *r, u64 page,
                                    u64 *pte, u64 *frame)
{
    pcnt_probe_start(PROBE_COW_FAULT, page);
    int err = cow_copy(as, r, page, pte, frame);
    pcnt_probe_stop(PROBE_COW_FAULT);
    return err;
}

/* The first frame for an untouched page: from the region's object; an anonymous one
 * and a file object's (fileobj_fault, under the object's lock) get their map count and
 * reverse-map entry. */
static int first_frame(struct aspace *as, const struct region *r, u64 page, u64 *pte, u64 *frame,
                       bool unlocked)
{
    struct rmap_entry *e = rmap_entry_alloc();
    if (!e)
        return E_NOMEM;
    bool owned = false;
    int err = r->obj->kind == MEMOBJ_FILE
                  ? fileobj_fault(as, r, page, pte, e, unlocked, frame)
                  : memobj_frame(r->obj, r->off + (page - r->start), frame, &owned);
    if (!err && owned) {
        frame_map_inc(*frame);
        rmap_insert(e, as, page, *frame | PTE_ANON, pte);
        *frame |= PTE_ANON;
    } else if (err || r->obj->kind != MEMOBJ_FILE) {
        rmap_entry_discard(e);
    }
    return err;
}

/* Whether a write must copy the page first: an anonymous frame while it is shared, a
 * file's frame in a copy-on-write region always. */
static bool write_copies(const struct region *r, u64 frame)
{
    if (frame & PTE_ANON)
        return frame_maps(frame & PTE_ADDR) > 1;
    return (frame & PTE_FILE) && r->cow;
}

static bool allows(unsigned prot, unsigned access)
{
    if (access & VM_ACCESS_WRITE)
        return prot & PROT_WRITE;
    if (access & VM_ACCESS_EXEC)
        return prot & PROT_EXEC;
    return prot != 0;
}

/* Whether a present PTE already permits the access: its flags follow its region's
 * protection (region.c), so then there is nothing to decide. */
static bool pte_allows(u64 pte, unsigned access)
{
    return (pte & PTE_P) && (!(access & VM_ACCESS_WRITE) || (pte & PTE_W)) &&
           (!(access & VM_ACCESS_EXEC) || !(pte & PTE_NX));
}

/* The region decides: map the page for an access it allows. */
static int resolve_in_region(struct aspace *as, u64 va, unsigned access, u64 *pa)
{
    struct region *r = region_find(as, va);
    if (!r || !allows(r->prot, access))
        return E_FAULT;
    u64 page = ALIGN_DOWN(va, PAGE_SIZE);
    u64 *pte = vm_pte(as, page, true);
    if (!pte)
        return E_NOMEM;
    u64 frame = *pte & (PTE_ADDR | PTE_COUNTED);
    int err = 0;
    if (!*pte)
        err = first_frame(as, r, page, pte, &frame, access & VM_ACCESS_UNLOCKED);
    if (!err && (access & VM_ACCESS_WRITE) && write_copies(r, frame))
        err = pcnt_probed() ? cow_copy_probed(as, r, page, pte, &frame)
                            : cow_copy(as, r, page, pte, &frame);
    if (err)
        return err;
    u64 want = region_pte(r, frame);
    if (*pte != want)
        vm_set_pte(as, page, pte, want);
    *pa = frame & PTE_ADDR;
    return 0;
}

/* vm_resolve's work, the address space's lock held. Inlined into both callers: a call
 * here cost the IPC long messages' resolves about 90 instructions a round trip (the MK
 * echo server's ping, icount). */
static inline __attribute__((always_inline)) int resolve_locked(struct aspace *as, u64 va,
                                                                unsigned access, u64 *pa)
{
    u64 *pte = vm_pte(as, ALIGN_DOWN(va, PAGE_SIZE), false);
    if (pte && pte_allows(*pte, access)) {
        *pa = *pte & PTE_ADDR;
        return 0;
    }
    return resolve_in_region(as, va, access, pa);
}

/* Under the address space's lock (vm.h): the region decides, the PTE changes. */
int vm_resolve(struct aspace *as, u64 va, unsigned access, u64 *pa)
{
    if (!as || va >= USER_TOP)
        return E_FAULT;
    aspace_lock(as);
    int err = resolve_locked(as, va, access, pa);
    aspace_unlock(as);
    return err;
}

int vm_copy_unlocked(struct aspace *as, u64 va, void *kbuf, size_t n, bool to_as)
{
    if (va >= USER_TOP || n > PAGE_SIZE - (va & (PAGE_SIZE - 1)))
        return E_FAULT;
    u64 pa;
    aspace_lock(as);
    int err = resolve_locked(as, va, (to_as ? VM_ACCESS_WRITE : VM_ACCESS_READ) |
                                         VM_ACCESS_UNLOCKED, &pa);
    if (!err) {
        u8 *k = (u8 *)phys_to_virt(pa) + (va & (PAGE_SIZE - 1));
        memcpy(to_as ? k : kbuf, to_as ? kbuf : k, n);
    }
    aspace_unlock(as);
    return err == 0 || err == VM_NEEDS_LOCK ? err : E_FAULT;
}

static PCNT_COLD int vm_fault_probed(struct aspace *as, u64 va, unsigned access)
{
    u64 pa;
    pcnt_probe_start(PROBE_VM_FAULT, va);
    int err = vm_resolve(as, va, access, &pa);
    pcnt_probe_stop(PROBE_VM_FAULT);
    return err;
}

/* A page fault, measured by the vm_fault probe (the trap handler's part is outside it). */
int vm_fault(struct aspace *as, u64 va, unsigned access)
{
    u64 pa;
    return pcnt_probed() ? vm_fault_probed(as, va, access) : vm_resolve(as, va, access, &pa);
}

/* A new anonymous frame holding a copy of src_pa, mapped at page (whose PTE is empty). */
static int install_copy(struct aspace *as, const struct region *r, u64 page, u64 *pte, u64 src_pa)
{
    u64 frame = frame_alloc();
    struct rmap_entry *e = frame ? rmap_entry_alloc() : NULL;
    if (!e) {
        if (frame)
            frame_free(frame);
        return E_NOMEM;
    }
    memcpy(phys_to_virt(frame), phys_to_virt(src_pa), PAGE_SIZE);
    frame_map_inc(frame);
    rmap_insert(e, as, page, frame | PTE_ANON, pte);
    vm_set_pte(as, page, pte, region_pte(r, frame | PTE_ANON));
    return 0;
}

static int supply(struct aspace *as, u64 va, u64 src_pa)
{
    struct region *r = region_find(as, va);
    if (!r || r->obj->kind != MEMOBJ_PAGER)
        return 0;                  /* unmapped or replaced while the pager worked */
    u64 page = ALIGN_DOWN(va, PAGE_SIZE);
    u64 *pte = vm_pte(as, page, true);
    if (!pte)
        return E_NOMEM;
    return *pte ? 0 : install_copy(as, r, page, pte, src_pa);
}

int vm_supply(struct aspace *as, u64 va, u64 src_pa)
{
    aspace_lock(as);
    int err = supply(as, va, src_pa);
    aspace_unlock(as);
    return err;
}

/* ---- memory work without the kernel lock (docs/smp.md "Page faults without the BKL",
 * "mmap and munmap without the BKL") -------------------------------------------------
 * A reader that must see every address space still (the reverse map's checker, which
 * holds the kernel lock) closes the gate: later faults and map calls go the locked way,
 * and it waits until those in flight are done. Each CPU's in-flight flag is stored
 * before the gate is read, and the gate before the flags are read (a fence on each
 * side): either the work sees the gate closed, or the closer sees the flag and waits.
 * One flag a CPU: the work runs with interrupts off and does not nest. */
static volatile bool gate_closed;
static struct {
    volatile u8 busy;
} __attribute__((aligned(64))) in_flight[MAX_CPUS];

bool vm_unlocked_enter(void)
{
    volatile u8 *busy = &in_flight[this_cpu()->id].busy;
    *busy = 1;
    __atomic_thread_fence(__ATOMIC_SEQ_CST);
    if (!gate_closed)
        return true;
    __atomic_store_n(busy, 0, __ATOMIC_RELEASE);
    return false;
}

void vm_unlocked_leave(void) { __atomic_store_n(&in_flight[this_cpu()->id].busy, 0, __ATOMIC_RELEASE); }

int vm_fault_unlocked(struct aspace *as, u64 va, unsigned access)
{
    if (!vm_unlocked_enter())
        return VM_NEEDS_LOCK;
    int err = vm_fault(as, va, access | VM_ACCESS_UNLOCKED);
    vm_unlocked_leave();
    return err;
}

void vm_faults_stop(void)
{
    gate_closed = true;
    __atomic_thread_fence(__ATOMIC_SEQ_CST);
    for (unsigned i = 0; i < cpus_running; i++)
        while (__atomic_load_n(&in_flight[i].busy, __ATOMIC_ACQUIRE)) {
            pause();
            ipi_poll();     /* the fault may wait for this CPU's answer to a shootdown */
        }
}

void vm_faults_resume(void) { __atomic_store_n(&gate_closed, false, __ATOMIC_RELEASE); }
