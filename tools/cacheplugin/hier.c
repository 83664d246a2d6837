/*
 * Per-vCPU cache and TLB hierarchy.
 *
 * Policies (see README): every cache allocates on a miss, reads and writes alike.
 * Write-back caches keep dirty bits and write a dirty victim to the next level;
 * write-through caches also pass every store down. A full-line write-back that misses in
 * the next level allocates there without fetching the line. An inclusive outer level
 * drops the inner copies of each line it evicts (dirty inner data leaves with it).
 * The L1 TLBs and the second-level TLB are looked up in order; a miss in the last one is
 * a page walk, counted with an estimated number of memory references.
 */
#include "hier.h"

#include <stddef.h>

enum req { REQ_READ, REQ_STORE, REQ_WRITEBACK };

const char *hier_config_check(const struct hier_config *cfg)
{
    const char *err;
    if ((err = cache_geom_check(&cfg->l1i)) || (err = cache_geom_check(&cfg->l1d)))
        return err;
    if (cfg->l2_on && (err = cache_geom_check(&cfg->l2)))
        return err;
    if (cfg->l3_on && (err = cache_geom_check(&cfg->l3)))
        return err;
    if ((err = tlb_geom_check(&cfg->itlb)) || (err = tlb_geom_check(&cfg->dtlb)))
        return err;
    if (cfg->stlb_on && (err = tlb_geom_check(&cfg->stlb)))
        return err;
    if (cfg->kpage_shift != 12 && cfg->kpage_shift != 21)
        return "kernel page size must be 4k or 2m";
    if (cfg->walk_refs < 1 || cfg->walk_refs > 8)
        return "walk_refs must be 1..8";
    return NULL;
}

static int add_outer(struct hier *h, const struct cache_geom *g, bool inclusive, int ctr,
                     uint64_t seed)
{
    unsigned i = h->n_outer;
    if (cache_init(&h->outer[i], g, seed) != 0)
        return -1;
    h->outer_inclusive[i] = inclusive;
    h->outer_ctr[i] = ctr;
    h->n_outer++;
    return 0;
}

int hier_init(struct hier *h, const struct hier_config *cfg)
{
    uint64_t s = cfg->seed;

    *h = (struct hier){0};
    h->kpage_shift = cfg->kpage_shift;
    h->walk_refs = cfg->walk_refs;
    h->has_stlb = cfg->stlb_on;
    if (cache_init(&h->l1i, &cfg->l1i, s + 1) || cache_init(&h->l1d, &cfg->l1d, s + 2))
        goto fail;
    if (cfg->l2_on && add_outer(h, &cfg->l2, cfg->l2_inclusive, CTR_L2_ACC, s + 3))
        goto fail;
    if (cfg->l3_on && add_outer(h, &cfg->l3, cfg->l3_inclusive, CTR_L3_ACC, s + 4))
        goto fail;
    if (tlb_init(&h->itlb, &cfg->itlb, s + 5) || tlb_init(&h->dtlb, &cfg->dtlb, s + 6))
        goto fail;
    if (cfg->stlb_on && tlb_init(&h->stlb, &cfg->stlb, s + 7))
        goto fail;
    return 0;
fail:
    hier_free(h);
    return -1;
}

void hier_free(struct hier *h)
{
    cache_free(&h->l1i);
    cache_free(&h->l1d);
    for (unsigned i = 0; i < MAX_OUTER; i++)
        cache_free(&h->outer[i]);
    tlb_free(&h->itlb);
    tlb_free(&h->dtlb);
    tlb_free(&h->stlb);
}

/* ---- TLBs ------------------------------------------------------------------------ */

static struct tlb_page page_of(const struct hier *h, uint16_t asid, uint64_t vaddr)
{
    bool kernel = vaddr >= KERNEL_HALF_START;
    unsigned shift = kernel ? h->kpage_shift : 12;
    return (struct tlb_page){
        .vpn = vaddr >> shift, .shift = shift, .asid = asid, .global = kernel,
    };
}

static void walk(const struct hier *h, struct counters *c, const struct tlb_page *p)
{
    c->v[CTR_WALKS]++;
    /* 4-level paging: one reference per level; a 2 MiB leaf sits one level higher. */
    c->v[CTR_WALK_REFS] += p->shift == 21 ? h->walk_refs - 1 : h->walk_refs;
}

static inline void tlb_access(struct hier *h, struct counters *c, struct tlb *l1, int acc_ctr,
                       const struct tlb_page *p)
{
    c->v[acc_ctr]++;
    if (tlb_lookup(l1, p))
        return;
    c->v[acc_ctr + 1]++;
    if (h->has_stlb) {
        c->v[CTR_STLB_ACC]++;
        if (tlb_lookup(&h->stlb, p)) {
            tlb_fill(l1, p);
            return;
        }
        c->v[CTR_STLB_MISS]++;
        tlb_fill(&h->stlb, p);
    }
    walk(h, c, p);
    tlb_fill(l1, p);
}

/* Looks up the page of the first byte, and of the last byte if the access crosses. */
static inline void translate(struct hier *h, struct counters *c, struct tlb *l1, int acc_ctr,
                      uint16_t asid, uint64_t vaddr, unsigned size)
{
    struct tlb_page first = page_of(h, asid, vaddr);
    tlb_access(h, c, l1, acc_ctr, &first);
    if (((vaddr ^ (vaddr + size - 1)) >> 12) == 0)
        return; /* one 4 KiB page, so one page of either size (the common case) */
    struct tlb_page last = page_of(h, asid, vaddr + size - 1);
    if (last.vpn != first.vpn || last.shift != first.shift)
        tlb_access(h, c, l1, acc_ctr, &last);
}

void hier_cr3_write(struct hier *h, struct counters *c)
{
    h->memo_valid = false;
    c->v[CTR_TLB_FLUSHES]++;
    tlb_flush_nonglobal(&h->itlb);
    tlb_flush_nonglobal(&h->dtlb);
    if (h->has_stlb)
        tlb_flush_nonglobal(&h->stlb);
}

/* A CR3 write with PCID and the no-flush bit: entries are tagged by asid, all stay. */
void hier_cr3_keep(struct hier *h, struct counters *c)
{
    (void)c;
    h->memo_valid = false;
}

/* A CR3 write with PCID, no-flush bit clear: only the new asid's entries go. */
void hier_cr3_flush_asid(struct hier *h, struct counters *c, uint16_t asid)
{
    h->memo_valid = false;
    c->v[CTR_TLB_FLUSHES]++;
    tlb_flush_asid(&h->itlb, asid);
    tlb_flush_asid(&h->dtlb, asid);
    if (h->has_stlb)
        tlb_flush_asid(&h->stlb, asid);
}

void hier_invlpg(struct hier *h, struct counters *c, uint64_t vaddr)
{
    h->memo_valid = false;
    c->v[CTR_INVLPG]++;
    tlb_invalidate_addr(&h->itlb, vaddr);
    tlb_invalidate_addr(&h->dtlb, vaddr);
    if (h->has_stlb)
        tlb_invalidate_addr(&h->stlb, vaddr);
}

void hier_invlpg_unknown(struct hier *h, struct counters *c)
{
    h->memo_valid = false;
    c->v[CTR_INVLPG]++;
    tlb_flush_nonglobal(&h->itlb);
    tlb_flush_nonglobal(&h->dtlb);
    if (h->has_stlb)
        tlb_flush_nonglobal(&h->stlb);
}

/* ---- caches ---------------------------------------------------------------------- */

static void outer_access(struct hier *h, struct counters *c, unsigned i, uint64_t addr,
                         enum req r);

static bool drop_range(struct cache *k, struct counters *c, uint64_t addr, uint32_t len)
{
    bool dirty = false;
    uint64_t first = addr >> k->line_shift;
    uint64_t last = (addr + len - 1) >> k->line_shift;
    for (uint64_t line = first; line <= last; line++) {
        bool d;
        if (cache_invalidate(k, line, &d)) {
            c->v[CTR_BACKINV]++;
            dirty |= d;
        }
    }
    return dirty;
}

/* Keeps outer level i inclusive: drops every inner copy of [addr, addr + len). */
static bool back_invalidate(struct hier *h, struct counters *c, unsigned i, uint64_t addr,
                            uint32_t len)
{
    h->memo_valid = false;
    bool dirty = drop_range(&h->l1i, c, addr, len);
    dirty |= drop_range(&h->l1d, c, addr, len);
    for (unsigned j = 0; j < i; j++)
        dirty |= drop_range(&h->outer[j], c, addr, len);
    return dirty;
}

static void outer_fill(struct hier *h, struct counters *c, unsigned i, uint64_t line,
                       bool dirty)
{
    struct cache *k = &h->outer[i];
    struct victim v;

    cache_fill(k, line, dirty, &v);
    if (!v.valid)
        return;
    uint64_t addr = v.line << k->line_shift;
    bool dirty_out = v.dirty;
    if (h->outer_inclusive[i])
        dirty_out |= back_invalidate(h, c, i, addr, k->g.line);
    if (dirty_out && k->g.write == WRITE_BACK) {
        c->v[h->outer_ctr[i] + 2]++;
        outer_access(h, c, i + 1, addr, REQ_WRITEBACK);
    }
}

static void outer_access(struct hier *h, struct counters *c, unsigned i, uint64_t addr,
                         enum req r)
{
    if (i >= h->n_outer)
        return; /* memory */
    struct cache *k = &h->outer[i];
    uint64_t line = addr >> k->line_shift;
    bool write = r != REQ_READ;
    int base = h->outer_ctr[i];

    c->v[base]++;
    bool hit = cache_lookup(k, line, write);
    if (write && k->g.write == WRITE_THROUGH)
        outer_access(h, c, i + 1, addr, r);
    if (hit)
        return;
    c->v[base + 1]++;
    if (r != REQ_WRITEBACK)
        outer_access(h, c, i + 1, addr, REQ_READ);
    outer_fill(h, c, i, line, write);
}

/* ctr: CTR_L1I_ACC or CTR_L1D_ACC; the miss counter follows, then (D only) write-backs. */
static inline void l1_access(struct hier *h, struct counters *c, struct cache *k, int ctr,
                      uint64_t line, bool store)
{
    uint64_t addr = line << k->line_shift;

    c->v[ctr]++;
    bool hit = cache_lookup(k, line, store);
    if (store && k->g.write == WRITE_THROUGH)
        outer_access(h, c, 0, addr, REQ_STORE);
    if (hit)
        return;
    c->v[ctr + 1]++;
    outer_access(h, c, 0, addr, REQ_READ);
    struct victim v;
    cache_fill(k, line, store, &v);
    if (v.dirty) {
        c->v[CTR_L1D_WB]++;
        outer_access(h, c, 0, v.line << k->line_shift, REQ_WRITEBACK);
    }
}

/* Every line the access touches is one access (a line-crossing access counts twice). */
static inline void l1_range(struct hier *h, struct counters *c, struct cache *k, int ctr,
                     uint64_t paddr, unsigned size, bool store)
{
    uint64_t first = paddr >> k->line_shift;
    uint64_t last = (paddr + size - 1) >> k->line_shift;
    for (uint64_t line = first; line <= last; line++)
        l1_access(h, c, k, ctr, line, store);
}

void hier_fetch(struct hier *h, struct counters *c, uint16_t asid,
                uint64_t vaddr, uint64_t paddr, unsigned size)
{
    if (hier_fetch_repeats(h, asid, vaddr, paddr, size)) {
        c->v[CTR_ITLB_ACC]++;
        c->v[CTR_L1I_ACC]++;
        return;
    }
    uint64_t line = paddr >> h->l1i.line_shift;
    uint64_t page = vaddr >> 12;
    translate(h, c, &h->itlb, CTR_ITLB_ACC, asid, vaddr, size);
    l1_range(h, c, &h->l1i, CTR_L1I_ACC, paddr, size, false);
    /* Set after the slow path: its own fills may have invalidated an older memo. */
    h->memo_valid = ((paddr + size - 1) >> h->l1i.line_shift) == line &&
                    ((vaddr + size - 1) >> 12) == page;
    h->memo_line = line;
    h->memo_page = page;
    h->memo_asid = asid;
}

void hier_data(struct hier *h, struct counters *c, uint16_t asid,
               uint64_t vaddr, uint64_t paddr, unsigned size, bool store)
{
    c->v[store ? CTR_STORES : CTR_LOADS]++;
    translate(h, c, &h->dtlb, CTR_DTLB_ACC, asid, vaddr, size);
    l1_range(h, c, &h->l1d, CTR_L1D_ACC, paddr, size, store);
}
