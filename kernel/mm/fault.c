/*
 * Page faults. The region containing the address decides: an access its protection allows
 * is resolved (a fresh frame from the region's object on first touch, a parked page
 * brought back, a copy-on-write break, or a stale TLB entry refreshed); anything else is
 * the thread's fault. A write to a shared anonymous frame copies it only while it is
 * shared: the last sharer finds a map count of 1 and writes in place.
 */
#include <ondol/abi.h>
#include "fault.h"
#include "kernel.h"
#include "memlayout.h"
#include "pmm.h"
#include "region.h"

/* A private copy of a shared anonymous frame for the writer: 0 and *frame replaced, or
 * E_NOMEM. */
static int cow_copy(u64 *frame)
{
    u64 old = *frame & PTE_ADDR, copy = frame_alloc();
    if (!copy)
        return E_NOMEM;
    memcpy(phys_to_virt(copy), phys_to_virt(old), PAGE_SIZE);
    frame_map_inc(copy);
    anon_frame_unmapped(old);
    *frame = copy | PTE_ANON;
    return 0;
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
    u64 frame = *pte & (PTE_ADDR | PTE_ANON);
    if (!*pte) {
        bool owned;
        int err = memobj_frame(r->obj, r->off + (page - r->start), &frame, &owned);
        if (err)
            return err;
        if (owned)
            frame_map_inc(frame);
        frame |= owned ? PTE_ANON : 0;
    } else if ((access & VM_ACCESS_WRITE) && (frame & PTE_ANON) && frame_maps(frame & PTE_ADDR) > 1) {
        int err = cow_copy(&frame);
        if (err)
            return err;
    }
    u64 want = region_pte(r, frame);
    if (*pte != want)
        vm_set_pte(as, page, pte, want);
    *pa = frame & PTE_ADDR;
    return 0;
}

int vm_resolve(struct aspace *as, u64 va, unsigned access, u64 *pa)
{
    if (!as || va >= USER_TOP)
        return E_FAULT;
    u64 *pte = vm_pte(as, ALIGN_DOWN(va, PAGE_SIZE), false);
    if (pte && pte_allows(*pte, access)) {
        *pa = *pte & PTE_ADDR;
        return 0;
    }
    return resolve_in_region(as, va, access, pa);
}

int vm_fault(struct aspace *as, u64 va, unsigned access)
{
    u64 pa;
    return vm_resolve(as, va, access, &pa);
}
