/*
 * The memory hierarchy of one vCPU: L1 I, L1 D, optional unified L2 and L3, ITLB, DTLB
 * and an optional second-level TLB. Each access updates the model state and charges the
 * resulting events to the counters it is given (the caller picks the domain).
 */
#ifndef CACHESIM_HIER_H
#define CACHESIM_HIER_H

#include <stdbool.h>
#include <stdint.h>

#include "cache.h"
#include "counters.h"
#include "tlb.h"

/* ondol's address-space convention: the kernel half is global and mapped with large pages. */
#define KERNEL_HALF_START 0xFFFF800000000000ull

struct hier_config {
    struct cache_geom l1i, l1d, l2, l3;
    bool l2_on, l3_on;
    bool l2_inclusive;   /* L2 holds everything in L1 I and L1 D */
    bool l3_inclusive;   /* L3 holds everything in L2 and the L1s */
    struct tlb_geom itlb, dtlb, stlb;
    bool stlb_on;
    unsigned kpage_shift;  /* page size of the kernel half: 21 (2 MiB) or 12 */
    unsigned walk_refs;    /* memory references per 4 KiB walk; one fewer per 2 MiB walk */
    uint64_t seed;         /* for random replacement */
};

#define MAX_OUTER 2

struct hier {
    struct cache l1i, l1d;
    struct cache outer[MAX_OUTER];  /* L2 then L3, whichever are enabled */
    unsigned n_outer;
    bool outer_inclusive[MAX_OUTER];
    int outer_ctr[MAX_OUTER];       /* CTR_L2_ACC or CTR_L3_ACC: base of acc, miss, wb */
    struct tlb itlb, dtlb, stlb;
    bool has_stlb;
    unsigned kpage_shift;
    unsigned walk_refs;
    /* The last fetch's L1 I line and 4 KiB page: fetching there again is a hit in both
     * the L1 I and the ITLB that changes no state, so it only needs counting. Cleared by
     * anything that could remove that line or page (back-invalidation, CR3, INVLPG). */
    bool memo_valid;
    uint16_t memo_asid;
    uint64_t memo_line;
    uint64_t memo_page;
};

const char *hier_config_check(const struct hier_config *cfg);
int hier_init(struct hier *h, const struct hier_config *cfg);
void hier_free(struct hier *h);

/* True if fetching `size` bytes at vaddr/paddr is a repeat of the last fetch: same L1 I
 * line and 4 KiB page, within both, same asid, nothing dropped since. Such a fetch is a
 * hit in the L1 I and the ITLB that changes no state, so it only needs counting. */
static inline bool hier_fetch_repeats(const struct hier *h, uint16_t asid, uint64_t vaddr,
                                      uint64_t paddr, unsigned size)
{
    uint64_t line = paddr >> h->l1i.line_shift;
    uint64_t page = vaddr >> 12;
    return h->memo_valid && line == h->memo_line && page == h->memo_page &&
           asid == h->memo_asid && ((paddr + size - 1) >> h->l1i.line_shift) == line &&
           ((vaddr + size - 1) >> 12) == page;
}
/* One executed instruction of `size` bytes at vaddr/paddr. */
void hier_fetch(struct hier *h, struct counters *c, uint16_t asid,
                uint64_t vaddr, uint64_t paddr, unsigned size);
/* One data access. */
void hier_data(struct hier *h, struct counters *c, uint16_t asid,
               uint64_t vaddr, uint64_t paddr, unsigned size, bool store);
/* A CR3 write: drops every non-global TLB entry. */
void hier_cr3_write(struct hier *h, struct counters *c);                 /* full flush */
void hier_cr3_keep(struct hier *h, struct counters *c);                  /* PCID, no flush */
void hier_cr3_flush_asid(struct hier *h, struct counters *c, uint16_t asid);  /* PCID */
/* An INVLPG of vaddr. */
void hier_invlpg(struct hier *h, struct counters *c, uint64_t vaddr);
/* An INVLPG whose address is unknown: drops every non-global entry (an upper bound). */
void hier_invlpg_unknown(struct hier *h, struct counters *c);

#endif
