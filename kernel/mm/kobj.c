/*
 * Kernel-object caches. Each cache hands out fixed-size zeroed objects carved from whole
 * frames; a frame goes back to the frame allocator as soon as its last object is freed,
 * so object churn leaves the free-frame count exactly where it was. The shell's meminfo
 * shows the per-type counts.
 */
#include "kernel.h"
#include "kobj.h"
#include "memlayout.h"
#include "pmm.h"

struct slab {
    struct kcache *cache;
    struct slab *next, *prev;     /* in cache->partial while it has free objects */
    void *free;                   /* free objects, linked through their first word */
    u32 in_use, capacity;
};

#define MAX_CACHES 16
static struct kcache *caches[MAX_CACHES];
static int ncaches;

void kobj_register(struct kcache *c)
{
    for (int i = 0; i < ncaches; i++)
        if (caches[i] == c)
            return;
    ASSERT(ncaches < MAX_CACHES);
    caches[ncaches++] = c;
}

static size_t obj_size(struct kcache *c) { return ALIGN_UP(MAX(c->size, sizeof(void *)), 16); }

static struct slab *slab_new(struct kcache *c)
{
    u64 pa = frame_alloc();
    if (!pa)
        return NULL;
    struct slab *s = phys_to_virt(pa);
    size_t hdr = ALIGN_UP(sizeof(*s), 16), sz = obj_size(c);
    s->cache = c;
    s->capacity = (PAGE_SIZE - hdr) / sz;
    for (u32 i = 0; i < s->capacity; i++) {
        void **obj = (void **)((char *)s + hdr + i * sz);
        if (c->stable_from)
            memset(obj, 0, c->size);
        *obj = s->free;
        s->free = obj;
    }
    c->pages++;
    return s;
}

static void partial_remove(struct kcache *c, struct slab *s)
{
    if (s->prev)
        s->prev->next = s->next;
    else
        c->partial = s->next;
    if (s->next)
        s->next->prev = s->prev;
    s->next = s->prev = NULL;
}

static void partial_push(struct kcache *c, struct slab *s)
{
    s->prev = NULL;
    s->next = c->partial;
    if (s->next)
        s->next->prev = s;
    c->partial = s;
}

void *kobj_alloc(struct kcache *c)
{
    ASSERT(obj_size(c) <= PAGE_SIZE / 2);
    kobj_register(c);
    spin_lock(&c->lock);
    struct slab *s = c->partial;
    if (!s) {
        s = slab_new(c);
        if (!s) {
            spin_unlock(&c->lock);
            return NULL;
        }
        partial_push(c, s);
    }
    void **obj = s->free;
    s->free = *obj;
    s->in_use++;
    c->in_use++;
    if (!s->free)
        partial_remove(c, s);
    spin_unlock(&c->lock);
    memset(obj, 0, c->stable_from ? c->stable_from : c->size);
    return obj;
}

/* An empty slab of a type-stable cache, out of its lists (no object of it can be handed
 * out): its frame goes back after the cache's grace, or the slab stays, empty. */
static void free_after_grace(struct kcache *c, struct slab *s)
{
    if (c->grace()) {
        frame_free(virt_to_phys(s));
        return;
    }
    spin_lock(&c->lock);
    c->pages++;
    partial_push(c, s);
    spin_unlock(&c->lock);
}

void kobj_free(struct kcache *c, void *p)
{
    struct slab *s = (struct slab *)ALIGN_DOWN((u64)p, PAGE_SIZE);
    ASSERT(s->cache == c);
    spin_lock(&c->lock);
    bool was_full = s->free == NULL;
    *(void **)p = s->free;
    s->free = p;
    s->in_use--;
    c->in_use--;
    if (s->in_use == 0) {
        if (!was_full)
            partial_remove(c, s);
        c->pages--;
        if (c->grace) {
            spin_unlock(&c->lock);
            free_after_grace(c, s);
            return;
        }
        frame_free(virt_to_phys(s));
    } else if (was_full) {
        partial_push(c, s);
    }
    spin_unlock(&c->lock);
}

u64 kobj_bytes_in_use(void)
{
    u64 b = 0;
    for (int i = 0; i < ncaches; i++)
        b += caches[i]->in_use * caches[i]->size;
    return b;
}

u64 kobj_frames(void)
{
    u64 n = 0;
    for (int i = 0; i < ncaches; i++)
        n += caches[i]->pages;
    return n;
}

u64 kobj_count_of(const char *name)
{
    for (int i = 0; i < ncaches; i++)
        if (strcmp(caches[i]->name, name) == 0)
            return caches[i]->in_use;
    return 0;
}
