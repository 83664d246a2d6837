/*
 * Interned instruction descriptors. QEMU keeps a pointer to each descriptor as callback
 * data for as long as the translated block lives, and retranslates code often (new
 * programs, invalidated pages), so descriptors are deduplicated by content instead of
 * allocated per translation: memory stays bounded by the distinct instructions seen.
 * Descriptors are never freed while the plugin runs.
 */
#ifndef CACHESIM_INSNTAB_H
#define CACHESIM_INSNTAB_H

#include <stddef.h>

#include "sim.h"

struct insntab {
    struct insn_desc **slot;   /* open addressing; NULL = empty */
    size_t cap, count;
    struct insn_desc *chunk;   /* current allocation chunk */
    size_t chunk_used, chunk_cap;
};

void insntab_init(struct insntab *t);
/* Returns the stored descriptor equal to *d, adding a copy if new; NULL if out of memory.
 * Not thread-safe: the caller serialises translation. */
const struct insn_desc *insntab_intern(struct insntab *t, const struct insn_desc *d);

#endif
