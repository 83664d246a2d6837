/* Set-associative TLB keyed by (address space, page number, page size) with global pages. */
#include "tlb.h"

#include <stdlib.h>

#define NO_SLOT UINT32_MAX


const char *tlb_geom_check(const struct tlb_geom *g)
{
    if (g->assoc == 0 || g->assoc > 64)
        return "TLB associativity must be 1..64";
    if (g->entries == 0 || g->entries % g->assoc != 0)
        return "TLB entries must be a multiple of the associativity";
    uint32_t sets = g->entries / g->assoc;
    if (sets & (sets - 1))
        return "TLB sets (entries / assoc) must be a power of two";
    return NULL;
}

int tlb_init(struct tlb *t, const struct tlb_geom *g, uint64_t seed)
{
    uint32_t n = g->entries;

    t->g = *g;
    t->set_mask = g->entries / g->assoc - 1;
    t->key = malloc(sizeof(*t->key) * n);
    t->asid = calloc(n, sizeof(*t->asid));
    t->global = calloc(n, sizeof(*t->global));
    t->stamp = calloc(n, sizeof(*t->stamp));
    if (!t->key || !t->asid || !t->global || !t->stamp) {
        tlb_free(t);
        return -1;
    }
    for (uint32_t i = 0; i < n; i++)
        t->key[i] = TLB_EMPTY;
    t->clock = 0;
    t->rng = seed ? seed : 0xD1B54A32D192ED03ull;
    t->mru_slot = 0;
    return 0;
}

void tlb_free(struct tlb *t)
{
    free(t->key);
    free(t->asid);
    free(t->global);
    free(t->stamp);
    t->key = NULL;
    t->asid = NULL;
    t->global = NULL;
    t->stamp = NULL;
}

static bool slot_matches(const struct tlb *t, uint32_t s, uint64_t key, uint16_t asid)
{
    return t->key[s] == key && (t->global[s] || t->asid[s] == asid);
}

static uint32_t set_base(const struct tlb *t, uint64_t vpn)
{
    return (uint32_t)(vpn & t->set_mask) * t->g.assoc;
}

bool tlb_lookup_set(struct tlb *t, const struct tlb_page *p, uint64_t key)
{
    uint32_t base = set_base(t, p->vpn);
    for (uint32_t w = 0; w < t->g.assoc; w++) {
        if (slot_matches(t, base + w, key, p->asid)) {
            if (t->g.repl == REPL_LRU)
                t->stamp[base + w] = ++t->clock;
            t->mru_slot = base + w;
            return true;
        }
    }
    return false;
}

static uint64_t xorshift(uint64_t *s)
{
    uint64_t x = *s;
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    *s = x;
    return x;
}

static uint32_t choose_victim(struct tlb *t, uint32_t base)
{
    for (uint32_t w = 0; w < t->g.assoc; w++)
        if (t->key[base + w] == TLB_EMPTY)
            return base + w;
    if (t->g.repl == REPL_RANDOM)
        return base + (uint32_t)(xorshift(&t->rng) % t->g.assoc);
    uint32_t best = base;
    for (uint32_t w = 1; w < t->g.assoc; w++)
        if (t->stamp[base + w] < t->stamp[best])
            best = base + w;
    return best;
}

void tlb_fill(struct tlb *t, const struct tlb_page *p)
{
    uint32_t s = choose_victim(t, set_base(t, p->vpn));

    t->key[s] = tlb_page_key(p->vpn, p->shift);
    t->asid[s] = p->asid;
    t->global[s] = p->global;
    t->stamp[s] = ++t->clock;
    t->mru_slot = s;
}

unsigned tlb_flush_nonglobal(struct tlb *t)
{
    unsigned n = 0;
    for (uint32_t i = 0; i < t->g.entries; i++) {
        if (t->key[i] != TLB_EMPTY && !t->global[i]) {
            t->key[i] = TLB_EMPTY;
            n++;
        }
    }
    return n;
}

unsigned tlb_flush_asid(struct tlb *t, uint16_t asid)
{
    unsigned n = 0;
    for (uint32_t i = 0; i < t->g.entries; i++) {
        if (t->key[i] != TLB_EMPTY && !t->global[i] && t->asid[i] == asid) {
            t->key[i] = TLB_EMPTY;
            n++;
        }
    }
    return n;
}

static unsigned drop_key(struct tlb *t, uint64_t vpn, unsigned shift)
{
    uint64_t key = tlb_page_key(vpn, shift);
    uint32_t base = set_base(t, vpn);
    unsigned n = 0;
    for (uint32_t w = 0; w < t->g.assoc; w++) {
        if (t->key[base + w] == key) {
            t->key[base + w] = TLB_EMPTY;
            n++;
        }
    }
    return n;
}

unsigned tlb_invalidate_addr(struct tlb *t, uint64_t vaddr)
{
    /* The caller does not know the page size of the mapping, so try both. */
    return drop_key(t, vaddr >> 12, 12) + drop_key(t, vaddr >> 21, 21);
}

unsigned tlb_count_valid(const struct tlb *t)
{
    unsigned n = 0;
    for (uint32_t i = 0; i < t->g.entries; i++)
        n += t->key[i] != TLB_EMPTY;
    return n;
}
