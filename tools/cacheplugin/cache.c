/* Set-associative tag array with LRU, FIFO or random replacement. */
#include "cache.h"

#include <stdlib.h>

#define NO_SLOT UINT32_MAX

static bool is_pow2(uint64_t x)
{
    return x != 0 && (x & (x - 1)) == 0;
}

static unsigned log2u(uint64_t x)
{
    unsigned n = 0;
    while (x > 1) {
        x >>= 1;
        n++;
    }
    return n;
}

const char *cache_geom_check(const struct cache_geom *g)
{
    if (!is_pow2(g->line) || g->line < 4)
        return "line size must be a power of two >= 4";
    if (g->assoc == 0 || g->assoc > 64)
        return "associativity must be 1..64";
    if (g->size == 0 || g->size % ((uint64_t)g->line * g->assoc) != 0)
        return "size must be a multiple of line * assoc";
    if (!is_pow2(g->size / ((uint64_t)g->line * g->assoc)))
        return "number of sets (size / (line * assoc)) must be a power of two";
    return NULL;
}

int cache_init(struct cache *c, const struct cache_geom *g, uint64_t seed)
{
    uint32_t sets = g->size / (g->line * g->assoc);
    uint32_t n = sets * g->assoc;

    c->g = *g;
    c->line_shift = log2u(g->line);
    c->set_mask = sets - 1;
    c->tag = malloc(sizeof(*c->tag) * n);
    c->stamp = calloc(n, sizeof(*c->stamp));
    c->dirty = calloc(n, sizeof(*c->dirty));
    if (!c->tag || !c->stamp || !c->dirty) {
        cache_free(c);
        return -1;
    }
    for (uint32_t i = 0; i < n; i++)
        c->tag[i] = CACHE_EMPTY;
    c->clock = 0;
    c->rng = seed ? seed : 0x9E3779B97F4A7C15ull;
    c->mru_line = CACHE_EMPTY;
    c->mru_slot = NO_SLOT;
    return 0;
}

void cache_free(struct cache *c)
{
    free(c->tag);
    free(c->stamp);
    free(c->dirty);
    c->tag = NULL;
    c->stamp = NULL;
    c->dirty = NULL;
}

static uint32_t set_base(const struct cache *c, uint64_t line)
{
    return (uint32_t)(line & c->set_mask) * c->g.assoc;
}

static uint32_t find_slot(const struct cache *c, uint64_t line)
{
    uint32_t base = set_base(c, line);
    for (uint32_t w = 0; w < c->g.assoc; w++)
        if (c->tag[base + w] == line)
            return base + w;
    return NO_SLOT;
}

static void touch(struct cache *c, uint32_t slot, uint64_t line, bool store)
{
    /* FIFO keeps the fill time; only LRU refreshes on use. */
    if (c->g.repl == REPL_LRU)
        c->stamp[slot] = ++c->clock;
    if (store && c->g.write == WRITE_BACK)
        c->dirty[slot] = 1;
    c->mru_line = line;
    c->mru_slot = slot;
}

bool cache_lookup_set(struct cache *c, uint64_t line, bool store)
{
    uint32_t slot = find_slot(c, line);
    if (slot == NO_SLOT)
        return false;
    touch(c, slot, line, store);
    return true;
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

static uint32_t choose_victim(struct cache *c, uint32_t base)
{
    for (uint32_t w = 0; w < c->g.assoc; w++)
        if (c->tag[base + w] == CACHE_EMPTY)
            return base + w;
    if (c->g.repl == REPL_RANDOM)
        return base + (uint32_t)(xorshift(&c->rng) % c->g.assoc);
    uint32_t best = base;
    for (uint32_t w = 1; w < c->g.assoc; w++)
        if (c->stamp[base + w] < c->stamp[best])
            best = base + w;
    return best;
}

void cache_fill(struct cache *c, uint64_t line, bool dirty, struct victim *out)
{
    uint32_t slot = choose_victim(c, set_base(c, line));

    out->valid = c->tag[slot] != CACHE_EMPTY;
    out->dirty = out->valid && c->dirty[slot];
    out->line = c->tag[slot];
    c->tag[slot] = line;
    c->stamp[slot] = ++c->clock;
    c->dirty[slot] = dirty && c->g.write == WRITE_BACK;
    c->mru_line = line;
    c->mru_slot = slot;
}

bool cache_invalidate(struct cache *c, uint64_t line, bool *was_dirty)
{
    uint32_t slot = find_slot(c, line);
    *was_dirty = false;
    if (slot == NO_SLOT)
        return false;
    *was_dirty = c->dirty[slot];
    c->tag[slot] = CACHE_EMPTY;
    c->dirty[slot] = 0;
    if (c->mru_slot == slot) {
        c->mru_line = CACHE_EMPTY;
        c->mru_slot = NO_SLOT;
    }
    return true;
}

bool cache_contains(const struct cache *c, uint64_t line)
{
    return find_slot(c, line) != NO_SLOT;
}
