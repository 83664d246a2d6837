/* Generation-tagged id tables (idtable.h). */
#include "idtable.h"

int idtable_alloc(struct idtable *t, void *obj, int *id_out)
{
    int cap = 1 << t->bits;
    u32 max_gen = (u32)(0x7fffffff >> t->bits);
    for (int i = 0; i < cap - 1; i++) {
        int s = (t->next + i) % cap;
        if (s == 0 || t->objs[s])
            continue;
        t->gens[s] = t->gens[s] % max_gen + 1;        /* 1..max_gen, never 0 */
        *id_out = (int)(t->gens[s] << t->bits) | s;
        __atomic_store_n(&t->objs[s], obj, __ATOMIC_RELEASE);   /* last (idtable.h) */
        t->next = s + 1;
        t->count++;
        return *id_out;
    }
    return -1;
}

void idtable_free(struct idtable *t, int id)
{
    t->objs[id & ((1 << t->bits) - 1)] = NULL;
    t->count--;
}
