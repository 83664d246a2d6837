/*
 * Memory objects. An object describes where the pages of a region come from. A private
 * anonymous object holds no page list: a page, once allocated, is recorded only in the
 * page table of the address space that touched it (marked PTE_ANON there), and freed when
 * that mapping goes. A shared anonymous object (MAP_SHARED|MAP_ANONYMOUS) must hand every
 * mapper the same frame, so it keeps its frames in a two-level directory (one frame of 512
 * leaf pointers, each leaf a frame of 512 frame addresses: 1 GiB at most), filled on first
 * touch and freed with the object. A pager object (pager.c) has no frames of its own:
 * each page is supplied by its pager, copied into a frame owned by the mapping that
 * faulted, exactly like an anonymous page from then on. A file object (fileobj.c) is a
 * contiguous run whose frames its mappings count and record in the reverse map.
 * Splitting a region shares its object (one reference per region).
 */
#include <ondol/abi.h>
#include "kernel.h"
#include "kobj.h"
#include "fault.h"
#include "klock.h"
#include "memlayout.h"
#include "memobj.h"
#include "pmm.h"

static struct kcache memobj_cache = KCACHE_INIT("memobj", sizeof(struct memobj));

static struct memobj *memobj_new(enum memobj_kind kind, u64 phys_base, u64 size)
{
    struct memobj *obj = kobj_alloc(&memobj_cache);
    if (!obj)
        return NULL;
    obj->kind = kind;
    obj->refs = 1;
    obj->phys_base = phys_base;
    obj->size = size;
    return obj;
}

struct memobj *memobj_anon(u64 size) { return memobj_new(MEMOBJ_ANON, 0, size); }
struct memobj *memobj_phys(u64 phys_base, u64 size) { return memobj_new(MEMOBJ_PHYS, phys_base, size); }

struct memobj *memobj_pager(u64 size, int pager, int pager_task)
{
    struct memobj *obj = memobj_new(MEMOBJ_PAGER, 0, size);
    if (obj) {
        obj->pager = pager;
        obj->pager_task = pager_task;
    }
    return obj;
}

struct memobj *memobj_shared(u64 size)
{
    u64 dir = size <= MEMOBJ_SHARED_MAX ? frame_alloc() : 0;
    struct memobj *obj = dir ? memobj_new(MEMOBJ_SHARED, 0, size) : NULL;
    if (!obj) {
        if (dir)
            frame_free(dir);
        return NULL;
    }
    obj->pages = phys_to_virt(dir);
    spin_lock_init(&obj->lock, LOCK_MEMOBJ);
    return obj;
}

#define DIR_SLOTS 512

/* Every frame of a shared object, its leaves and its directory back to the allocator. */
static void shared_free(struct memobj *obj)
{
    for (int i = 0; i < DIR_SLOTS; i++) {
        if (!obj->pages[i])
            continue;
        u64 *leaf = phys_to_virt(obj->pages[i]);
        for (int j = 0; j < DIR_SLOTS; j++)
            if (leaf[j])
                frame_free(leaf[j]);
        frame_free(obj->pages[i]);
    }
    frame_free(virt_to_phys(obj->pages));
}

static struct memobj *run_object(enum memobj_kind kind, u64 size)
{
    u64 pa = frame_alloc_contig(size / PAGE_SIZE);
    struct memobj *obj = pa ? memobj_new(kind, pa, size) : NULL;
    if (pa && !obj)
        frame_free_contig(pa, size / PAGE_SIZE);
    return obj;
}

struct memobj *memobj_contig(u64 size) { return run_object(MEMOBJ_CONTIG, size); }

struct memobj *memobj_file(u64 size)
{
    struct memobj *obj = run_object(MEMOBJ_FILE, size);
    if (obj) {
        obj->eof = size;
        spin_lock_init(&obj->lock, LOCK_FILEOBJ);
    }
    return obj;
}

/* Atomic: a region of any object is split, unmapped or cloned under its address space's
 * lock alone, and the object may be another address space's too (after a clone, or a
 * file's in every process mapping it). */
void memobj_get(struct memobj *obj) { __atomic_add_fetch(&obj->refs, 1, __ATOMIC_RELAXED); }

static void memobj_free(struct memobj *obj)
{
    if (obj->kind == MEMOBJ_SHARED)
        shared_free(obj);
    if (obj->kind == MEMOBJ_CONTIG || obj->kind == MEMOBJ_FILE)
        frame_free_contig(obj->phys_base, obj->size / PAGE_SIZE);
    kobj_free(&memobj_cache, obj);
}

/* Per CPU without a lock, as vm.c's frames: interrupts are off, and the path that adds
 * one frees them before it leaves the kernel. */
static struct memobj *deferred[MAX_CPUS];

void memobj_put(struct memobj *obj)
{
    int left = __atomic_sub_fetch(&obj->refs, 1, __ATOMIC_ACQ_REL);
    ASSERT(left >= 0);
    if (left > 0)
        return;
    if (obj->kind != MEMOBJ_ANON && !kernel_lock_held()) {
        struct memobj **head = &deferred[this_cpu()->id];
        obj->next = *head;
        *head = obj;
        return;
    }
    memobj_free(obj);
}

static void free_all(struct memobj **head)
{
    while (*head) {
        struct memobj *obj = *head;
        *head = obj->next;
        memobj_free(obj);
    }
}

void memobj_free_deferred(void)
{
    ASSERT(kernel_lock_held());
    free_all(&deferred[this_cpu()->id]);
}

void memobj_free_deferred_unlocked(void)
{
    ASSERT(!kernel_lock_held());            /* its holder would wait for itself */
    struct memobj **head = &deferred[this_cpu()->id];
    struct bkl_grace g;
    if (*head && !bkl_grace_start(&g))
        bkl_grace_wait(&g);
    free_all(head);
}

/* The shared object's frame for page number `page`, allocated (zeroed) on first use,
 * under the object's lock: mappers in other address spaces fault the same page in at
 * once, and each must get the one frame. */
static int shared_frame(struct memobj *obj, u64 page, u64 *pa)
{
    spin_lock(&obj->lock);
    u64 *slot = &obj->pages[page / DIR_SLOTS];
    u64 *entry = *slot || (*slot = frame_alloc()) ? (u64 *)phys_to_virt(*slot) + page % DIR_SLOTS
                                                  : NULL;
    if (entry && !*entry)
        *entry = frame_alloc();
    *pa = entry ? *entry : 0;
    spin_unlock(&obj->lock);
    return *pa ? 0 : E_NOMEM;
}

int memobj_frame(struct memobj *obj, u64 off, u64 *pa, bool *owned)
{
    if (off >= obj->size)
        return E_FAULT;
    if (obj->kind == MEMOBJ_SHARED) {
        *owned = false;
        return shared_frame(obj, off / PAGE_SIZE, pa);
    }
    if (obj->kind == MEMOBJ_PAGER)
        return VM_NEEDS_PAGER;
    if (obj->kind != MEMOBJ_ANON) {           /* physical, contiguous: a fixed run */
        *pa = obj->phys_base + off;
        *owned = false;
        return 0;
    }
    *pa = frame_alloc();
    *owned = true;
    return *pa ? 0 : E_NOMEM;
}
