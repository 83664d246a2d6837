/*
 * The event counters kept per (vCPU, domain) and the metrics derived from them.
 * A plain array indexed by enum ctr, so folding and printing are loops.
 */
#ifndef CACHESIM_COUNTERS_H
#define CACHESIM_COUNTERS_H

#include <stdint.h>

enum ctr {
    CTR_INSNS,        /* instructions executed (exact, from per-instruction callbacks) */
    CTR_LOADS,        /* data loads seen (marker and MMIO accesses excluded) */
    CTR_STORES,       /* data stores seen */
    CTR_L1I_ACC,
    CTR_L1I_MISS,
    CTR_L1D_ACC,
    CTR_L1D_MISS,
    CTR_L1D_WB,       /* dirty lines L1D wrote back to the next level */
    CTR_L2_ACC,       /* requests reaching L2: fills, write-backs, write-through stores */
    CTR_L2_MISS,
    CTR_L2_WB,
    CTR_L3_ACC,
    CTR_L3_MISS,
    CTR_L3_WB,
    CTR_BACKINV,      /* inner lines dropped to keep an inclusive level inclusive */
    CTR_ITLB_ACC,
    CTR_ITLB_MISS,
    CTR_DTLB_ACC,
    CTR_DTLB_MISS,
    CTR_STLB_ACC,
    CTR_STLB_MISS,
    CTR_WALKS,        /* page walks (misses of the last TLB level) */
    CTR_WALK_REFS,    /* ESTIMATED memory references made by those walks */
    CTR_TLB_FLUSHES,  /* CR3 writes that dropped entries (all non-global, or one asid's) */
    CTR_INVLPG,       /* INVLPG instructions seen */
    CTR_AS_SWITCHES,  /* address-space switch markers (cmd 0) */
    NCTR
};

struct counters {
    uint64_t v[NCTR];
};

/* Latencies in cycles, used only for the modelled-cycle estimate. */
struct penalties {
    double cpi;       /* base cycles per instruction with a perfect memory system */
    double lat_l2;    /* L1 miss served by L2 */
    double lat_l3;    /* L2 miss served by L3 */
    double lat_mem;   /* miss of the last cache level, served by memory */
    double lat_stlb;  /* L1 TLB miss served by the second-level TLB */
    double lat_walk;  /* one page walk */
};

/* Which optional levels exist; decides which latency a miss pays. */
struct levels {
    int l2, l3, stlb;
};

extern const char *const ctr_names[NCTR];

void counters_add(struct counters *dst, const struct counters *src);
int counters_is_zero(const struct counters *c);
/* Memory stall cycles: each miss pays the latency of the level that serves it
 * (incrementally: an L1 miss pays lat_l2, an L2 miss additionally lat_mem - lat_l2). */
double counters_stall_cycles(const struct counters *c, const struct penalties *p,
                             const struct levels *lv);
double counters_cycles(const struct counters *c, const struct penalties *p,
                       const struct levels *lv);

#endif
