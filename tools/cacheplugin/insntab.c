/* Hash set of instruction descriptors, backed by chunks that are never moved. */
#include "insntab.h"

#include <stdlib.h>

#define CHUNK 4096

void insntab_init(struct insntab *t)
{
    *t = (struct insntab){0};
}

static size_t hash(const struct insn_desc *d)
{
    uint64_t h = d->vaddr * 0x9E3779B97F4A7C15ull;
    h ^= (d->paddr + ((uint64_t)d->size << 56) + ((uint64_t)d->kind << 48))
         * 0xC2B2AE3D27D4EB4Full;
    return (size_t)(h ^ (h >> 29));
}

static int same(const struct insn_desc *a, const struct insn_desc *b)
{
    return a->vaddr == b->vaddr && a->paddr == b->paddr && a->size == b->size &&
           a->kernel == b->kernel && a->kind == b->kind;
}

static void place(struct insn_desc **slots, size_t cap, struct insn_desc *d)
{
    size_t i = hash(d) & (cap - 1);
    while (slots[i])
        i = (i + 1) & (cap - 1);
    slots[i] = d;
}

static int grow(struct insntab *t)
{
    size_t cap = t->cap ? t->cap * 2 : 1 << 14;
    struct insn_desc **slots = calloc(cap, sizeof(*slots));
    if (!slots)
        return -1;
    for (size_t i = 0; i < t->cap; i++)
        if (t->slot[i])
            place(slots, cap, t->slot[i]);
    free(t->slot);
    t->slot = slots;
    t->cap = cap;
    return 0;
}

static struct insn_desc *new_desc(struct insntab *t)
{
    if (!t->chunk || t->chunk_used == t->chunk_cap) {
        t->chunk = malloc(CHUNK * sizeof(*t->chunk));
        if (!t->chunk)
            return NULL;
        t->chunk_used = 0;
        t->chunk_cap = CHUNK;
    }
    return &t->chunk[t->chunk_used++];
}

const struct insn_desc *insntab_intern(struct insntab *t, const struct insn_desc *d)
{
    if (t->cap == 0 || 2 * (t->count + 1) > t->cap)
        if (grow(t) != 0)
            return NULL;
    size_t i = hash(d) & (t->cap - 1);
    for (; t->slot[i]; i = (i + 1) & (t->cap - 1))
        if (same(t->slot[i], d))
            return t->slot[i];
    struct insn_desc *n = new_desc(t);
    if (!n)
        return NULL;
    *n = *d;
    t->slot[i] = n;
    t->count++;
    return n;
}
