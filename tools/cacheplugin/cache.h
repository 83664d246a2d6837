/*
 * One set-associative, tag-only cache array. It knows nothing about levels or counters:
 * the hierarchy (hier.c) decides what a miss means. Lines are named by their line number
 * (physical address >> line shift) so that levels with different line sizes can talk.
 */
#ifndef CACHESIM_CACHE_H
#define CACHESIM_CACHE_H

#include <stdbool.h>
#include <stdint.h>

enum repl { REPL_LRU, REPL_FIFO, REPL_RANDOM };
enum wpolicy { WRITE_BACK, WRITE_THROUGH };

struct cache_geom {
    uint32_t size;   /* bytes */
    uint32_t line;   /* bytes, power of two */
    uint32_t assoc;  /* ways; size / (line * assoc) sets, a power of two */
    enum repl repl;
    enum wpolicy write;
};

/* What a fill pushed out, if anything. */
struct victim {
    bool valid;
    bool dirty;
    uint64_t line;
};

struct cache {
    struct cache_geom g;
    unsigned line_shift;
    uint32_t set_mask;
    uint64_t *tag;    /* [sets * assoc] line numbers; CACHE_EMPTY if the way is empty */
    uint64_t *stamp;  /* LRU: time of last use; FIFO: time of fill */
    uint8_t *dirty;
    uint64_t clock;
    uint64_t rng;     /* xorshift state for REPL_RANDOM: deterministic per seed */
    uint64_t mru_line;  /* the most recently used line and its slot: a guaranteed hit */
    uint32_t mru_slot;
};

#define CACHE_EMPTY UINT64_MAX

/* Returns NULL on success, or a static message saying what is wrong with the geometry. */
const char *cache_geom_check(const struct cache_geom *g);
/* Allocates the arrays; the geometry must have passed cache_geom_check. 0 or -1. */
int cache_init(struct cache *c, const struct cache_geom *g, uint64_t seed);
void cache_free(struct cache *c);

/* Looks a line up; on a hit updates replacement state and, for a store into a write-back
 * cache, the dirty bit. Does not allocate on a miss. */
bool cache_lookup_set(struct cache *c, uint64_t line, bool store);
/* The same, inline where it is cheapest: the MRU line is already the newest in its set,
 * so a repeat hit needs no stamp (only, for a write-back store, the dirty bit). */
static inline bool cache_lookup(struct cache *c, uint64_t line, bool store)
{
    if (line == c->mru_line) {
        if (store && c->g.write == WRITE_BACK)
            c->dirty[c->mru_slot] = 1;
        return true;
    }
    return cache_lookup_set(c, line, store);
}
/* Installs a line that is known to be absent, evicting a victim if the set is full. */
void cache_fill(struct cache *c, uint64_t line, bool dirty, struct victim *out);
/* Drops a line if present; returns whether it was present and reports its dirty bit. */
bool cache_invalidate(struct cache *c, uint64_t line, bool *was_dirty);
/* True if present, without touching replacement state (for tests and inclusion checks). */
bool cache_contains(const struct cache *c, uint64_t line);

#endif
