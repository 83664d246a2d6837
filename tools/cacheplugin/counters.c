/* Counter names (the JSON keys), folding, and the modelled-cycle formula. */
#include "counters.h"

const char *const ctr_names[NCTR] = {
    [CTR_INSNS] = "instructions",
    [CTR_LOADS] = "loads",
    [CTR_STORES] = "stores",
    [CTR_L1I_ACC] = "l1i_accesses",
    [CTR_L1I_MISS] = "l1i_misses",
    [CTR_L1D_ACC] = "l1d_accesses",
    [CTR_L1D_MISS] = "l1d_misses",
    [CTR_L1D_WB] = "l1d_writebacks",
    [CTR_L2_ACC] = "l2_accesses",
    [CTR_L2_MISS] = "l2_misses",
    [CTR_L2_WB] = "l2_writebacks",
    [CTR_L3_ACC] = "l3_accesses",
    [CTR_L3_MISS] = "l3_misses",
    [CTR_L3_WB] = "l3_writebacks",
    [CTR_BACKINV] = "back_invalidations",
    [CTR_ITLB_ACC] = "itlb_accesses",
    [CTR_ITLB_MISS] = "itlb_misses",
    [CTR_DTLB_ACC] = "dtlb_accesses",
    [CTR_DTLB_MISS] = "dtlb_misses",
    [CTR_STLB_ACC] = "stlb_accesses",
    [CTR_STLB_MISS] = "stlb_misses",
    [CTR_WALKS] = "page_walks",
    [CTR_WALK_REFS] = "page_walk_refs_est",
    [CTR_TLB_FLUSHES] = "tlb_flushes",
    [CTR_INVLPG] = "invlpg",
    [CTR_AS_SWITCHES] = "as_switches",
};

void counters_add(struct counters *dst, const struct counters *src)
{
    for (int i = 0; i < NCTR; i++)
        dst->v[i] += src->v[i];
}

int counters_is_zero(const struct counters *c)
{
    for (int i = 0; i < NCTR; i++)
        if (c->v[i])
            return 0;
    return 1;
}

/* Latency of the first level present among L2 (if l2), L3 (if l3) and memory. */
static double next_latency(int l2, int l3, const struct penalties *p)
{
    if (l2)
        return p->lat_l2;
    if (l3)
        return p->lat_l3;
    return p->lat_mem;
}

static double cache_stalls(const struct counters *c, const struct penalties *p,
                           const struct levels *lv)
{
    double l1_misses = (double)(c->v[CTR_L1I_MISS] + c->v[CTR_L1D_MISS]);
    double s = l1_misses * next_latency(lv->l2, lv->l3, p);

    if (lv->l2)
        s += (double)c->v[CTR_L2_MISS] * (next_latency(0, lv->l3, p) - p->lat_l2);
    if (lv->l3)
        s += (double)c->v[CTR_L3_MISS] * (p->lat_mem - p->lat_l3);
    return s;
}

static double tlb_stalls(const struct counters *c, const struct penalties *p,
                         const struct levels *lv)
{
    double s = (double)c->v[CTR_WALKS] * p->lat_walk;
    if (lv->stlb)
        s += (double)(c->v[CTR_ITLB_MISS] + c->v[CTR_DTLB_MISS]) * p->lat_stlb;
    return s;
}

double counters_stall_cycles(const struct counters *c, const struct penalties *p,
                             const struct levels *lv)
{
    return cache_stalls(c, p, lv) + tlb_stalls(c, p, lv);
}

double counters_cycles(const struct counters *c, const struct penalties *p,
                       const struct levels *lv)
{
    return (double)c->v[CTR_INSNS] * p->cpi + counters_stall_cycles(c, p, lv);
}
