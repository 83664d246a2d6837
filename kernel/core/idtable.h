/* Tables of objects named by ids that carry a generation: id = generation << bits | slot,
 * so a stale id never names a newer object that reuses the slot. Used for threads and
 * tasks. Ids are always > 0 and fit in an int. */
#ifndef IDTABLE_H
#define IDTABLE_H
#include "types.h"

struct idtable {
    int bits;                 /* slot bits: capacity is 1 << bits, slot 0 unused */
    void **objs;
    u32 *gens;
    int next, count;
};

#define IDTABLE(name, b)                                                   \
    static void *name##_objs[1 << (b)];                                    \
    static u32 name##_gens[1 << (b)];                                      \
    static struct idtable name = {(b), name##_objs, name##_gens, 1, 0}

/* A new id for obj, or -1 when full. Callers serialise allocations and frees (a lock);
 * a lookup may run beside them: the slot's generation and *id_out (the object's own copy
 * of its id) are written before the slot is, so an object found is found with its
 * current generation (a stale id never matches it) and knows its id. */
int idtable_alloc(struct idtable *t, void *obj, int *id_out);
/* The slot's object, if `id` is its current id. `bits` must equal t->bits; passing it as
 * a constant lets the hot lookups (threads, on every IPC) compile to a few instructions. */
static inline void *idtable_lookup(struct idtable *t, int id, int bits)
{
    int s = id & ((1 << bits) - 1);
    void *obj = __atomic_load_n(&t->objs[s], __ATOMIC_ACQUIRE);   /* before gens[s] */
    return id > 0 && obj && (int)(t->gens[s] << bits | (u32)s) == id ? obj : NULL;
}
static inline void *idtable_get(struct idtable *t, int id) { return idtable_lookup(t, id, t->bits); }
void idtable_free(struct idtable *t, int id);
static inline void *idtable_at(struct idtable *t, int slot) { return t->objs[slot]; }
static inline int idtable_capacity(struct idtable *t) { return 1 << t->bits; }
#endif
