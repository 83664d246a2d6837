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
    size_t stable_from;       /* 0, or type-stable: an object's bytes from this offset on
                                 are zeroed once, when its frame is carved, and then left to
                                 the object's owner (a lock that code without a reference
                                 may take: thread.c), and ... */
    bool (*grace)(void);      /* ... an empty frame goes back only once this returns true
                                 (called without the cache's lock; false keeps the frame) */
} __attribute__((aligned(64)));   /* a line of its own: every CPU's allocation writes its
                                     lock and counts, and two caches (or a cache and a
                                     read-mostly global such as rmap_mode) shared lines */
#define KCACHE_INIT(n, sz) {.name = (n), .size = (sz), .lock = SPINLOCK_INIT(KOBJ)}
#define KCACHE_STABLE_INIT(n, sz, from, g) {.name = (n), .size = (sz), \
    .lock = SPINLOCK_INIT(KOBJ), .stable_from = (from), .grace = (g)}
void *kobj_alloc(struct kcache *c);      /* zeroed object (to stable_from) or NULL */
void kobj_free(struct kcache *c, void *p);
u64 kobj_bytes_in_use(void);
u64 kobj_frames(void);
void kobj_register(struct kcache *c);
#endif
