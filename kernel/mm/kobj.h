/* Kernel objects (kobj.c): fixed-size caches with accounting; a frame goes back as soon
 * as its last object is freed. */
#ifndef KOBJ_H
#define KOBJ_H
#include "spinlock.h"
#include "types.h"

struct kcache {
    const char *name;
    size_t size;
    u64 in_use, pages;
    void *partial;            /* pages with free objects */
    struct spinlock lock;
};
#define KCACHE_INIT(n, sz) {.name = (n), .size = (sz), .lock = SPINLOCK_INIT(KOBJ)}
void *kobj_alloc(struct kcache *c);      /* zeroed object or NULL */
void kobj_free(struct kcache *c, void *p);
u64 kobj_bytes_in_use(void);
u64 kobj_frames(void);
void kobj_register(struct kcache *c);
#endif
