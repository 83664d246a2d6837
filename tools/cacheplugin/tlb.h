/*
 * One set-associative TLB array. An entry maps one virtual page of one size (4 KiB or
 * 2 MiB) in one address space; global entries match in every address space and survive
 * a CR3 write. Small and large pages share the array (see README "Limits").
 */
#ifndef CACHESIM_TLB_H
#define CACHESIM_TLB_H

#include <stdbool.h>
#include <stdint.h>

#include "cache.h" /* enum repl */

struct tlb_geom {
    uint32_t entries;
    uint32_t assoc;  /* entries / assoc sets, a power of two */
    enum repl repl;
};

/* A page as the TLB sees it. */
struct tlb_page {
    uint64_t vpn;      /* vaddr >> shift */
    unsigned shift;    /* 12 or 21 */
    uint16_t asid;
    bool global;
};

struct tlb {
    struct tlb_geom g;
    uint32_t set_mask;
    uint64_t *key;     /* (vpn << 1) | large; TLB_EMPTY if the way is empty */
    uint16_t *asid;
    uint8_t *global;
    uint64_t *stamp;
    uint64_t clock;
    uint64_t rng;
    uint32_t mru_slot; /* most recent hit or fill: checked first */
};

#define TLB_EMPTY UINT64_MAX

const char *tlb_geom_check(const struct tlb_geom *g);
int tlb_init(struct tlb *t, const struct tlb_geom *g, uint64_t seed);
void tlb_free(struct tlb *t);

/* The set search behind tlb_lookup (the MRU entry did not match). */
bool tlb_lookup_set(struct tlb *t, const struct tlb_page *p, uint64_t key);

static inline uint64_t tlb_page_key(uint64_t vpn, unsigned shift)
{
    return (vpn << 1) | (shift > 12);
}

/* Looks a page up; a hit refreshes LRU state. Consecutive instructions and accesses
 * mostly stay on one page, so the most recent entry is checked first, inline; it is
 * already the newest, so that hit changes nothing. */
static inline bool tlb_lookup(struct tlb *t, const struct tlb_page *p)
{
    uint64_t key = tlb_page_key(p->vpn, p->shift);
    uint32_t s = t->mru_slot;
    if (t->key[s] == key && (t->global[s] || t->asid[s] == p->asid))
        return true;
    return tlb_lookup_set(t, p, key);
}
void tlb_fill(struct tlb *t, const struct tlb_page *p);
/* CR3 write without PCID: every non-global entry goes. Returns entries dropped. */
unsigned tlb_flush_nonglobal(struct tlb *t);
unsigned tlb_flush_asid(struct tlb *t, uint16_t asid);    /* non-global entries of asid */
/* INVLPG: drops the entries (either page size, global or not) that map vaddr. */
unsigned tlb_invalidate_addr(struct tlb *t, uint64_t vaddr);
unsigned tlb_count_valid(const struct tlb *t);

#endif
