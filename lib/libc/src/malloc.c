/*
 * A small first-fit allocator.
 *
 * Memory comes from __libc_get_pages() (SYS_VM_MAP on ondol) in chunks of at least
 * 64 KiB and is never returned. Every block starts with a 16-byte header:
 *
 *     size   total block size in bytes (header included), a multiple of 16
 *     link   free block: next free block (the free list is sorted by address)
 *            used block: USED_MAGIC ^ address, to catch bad and double frees
 *
 * Payloads are therefore 16-byte aligned. free() inserts the block in address order
 * and merges it with its neighbours when they touch, so the free list never holds
 * two adjacent blocks. A global lock makes the allocator safe for threads.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "libc_internal.h"

#define ALIGN       16u
#define HDR_SIZE    16u
#define MIN_BLOCK   32u                /* header + 16 bytes of payload */
#define CHUNK_MIN   (64u * 1024u)
#define PAGE_SIZE   4096u
#define USED_MAGIC  0x6f6e646f6c6d616cull   /* "ondolmal" */

struct block {
    size_t size;
    union {
        struct block *next;   /* while free */
        uintptr_t magic;      /* while used */
    };
};

_Static_assert(sizeof(struct block) == HDR_SIZE, "header must be 16 bytes");

static struct block *free_list;
static size_t heap_bytes;          /* total obtained from the page source */
static libc_lock_t heap_lock;

static uintptr_t used_tag(struct block *b)
{
    return (uintptr_t)USED_MAGIC ^ (uintptr_t)b;
}

static struct block *block_of(void *p)
{
    return (struct block *)((char *)p - HDR_SIZE);
}

/* Inserts a free block in address order and merges it with touching neighbours. */
static void insert_free(struct block *b)
{
    struct block *prev = NULL, *cur = free_list;
    while (cur != NULL && cur < b) {
        prev = cur;
        cur = cur->next;
    }
    if (cur == b)
        __libc_fatal("free: block already free");
    if (prev != NULL && (char *)prev + prev->size > (char *)b)
        __libc_fatal("free: block overlaps a free block");
    if (cur != NULL && (char *)b + b->size > (char *)cur)
        __libc_fatal("free: block overlaps a free block");

    b->next = cur;
    if (cur != NULL && (char *)b + b->size == (char *)cur) {
        b->size += cur->size;
        b->next = cur->next;
    }
    if (prev != NULL && (char *)prev + prev->size == (char *)b) {
        prev->size += b->size;
        prev->next = b->next;
    } else if (prev != NULL) {
        prev->next = b;
    } else {
        free_list = b;
    }
}

static int grow(size_t need)
{
    size_t len = (need + PAGE_SIZE - 1) & ~(size_t)(PAGE_SIZE - 1);
    if (len < need)
        return 0;
    if (len < CHUNK_MIN)
        len = CHUNK_MIN;
    struct block *b = __libc_get_pages(len);
    if (b == NULL)
        return 0;
    heap_bytes += len;
    b->size = len;
    insert_free(b);
    return 1;
}

/* Total block size for a request of n bytes, 0 if it overflows. */
static size_t block_size_for(size_t n)
{
    if (n > SIZE_MAX - HDR_SIZE - ALIGN - PAGE_SIZE)
        return 0;
    size_t need = (n + ALIGN - 1) & ~(size_t)(ALIGN - 1);
    need += HDR_SIZE;
    return need < MIN_BLOCK ? MIN_BLOCK : need;
}

/* Takes `need` bytes from the front of free block b (whose predecessor is prev). */
static void *take(struct block *prev, struct block *b, size_t need)
{
    struct block *rest;
    if (b->size - need >= MIN_BLOCK) {
        rest = (struct block *)((char *)b + need);
        rest->size = b->size - need;
        rest->next = b->next;
        b->size = need;
    } else {
        rest = b->next;
    }
    if (prev != NULL)
        prev->next = rest;
    else
        free_list = rest;
    b->magic = used_tag(b);
    return (char *)b + HDR_SIZE;
}

static void *malloc_locked(size_t need)
{
    for (int attempt = 0; attempt < 2; attempt++) {
        struct block *prev = NULL;
        for (struct block *b = free_list; b != NULL; prev = b, b = b->next) {
            if (b->size >= need)
                return take(prev, b, need);
        }
        if (!grow(need))
            return NULL;
    }
    return NULL;
}

void *malloc(size_t n)
{
    size_t need = block_size_for(n);
    if (need == 0)
        return NULL;
    libc_lock(&heap_lock);
    void *p = malloc_locked(need);
    libc_unlock(&heap_lock);
    return p;
}

static struct block *checked_block(void *p, const char *what)
{
    struct block *b = block_of(p);
    if (((uintptr_t)p & (ALIGN - 1)) != 0 || b->magic != used_tag(b))
        __libc_fatal(what);
    return b;
}

void free(void *p)
{
    if (p == NULL)
        return;
    libc_lock(&heap_lock);
    struct block *b = checked_block(p, "free: invalid pointer or double free");
    insert_free(b);
    libc_unlock(&heap_lock);
}

void *calloc(size_t nmemb, size_t size)
{
    if (size != 0 && nmemb > SIZE_MAX / size)
        return NULL;
    void *p = malloc(nmemb * size);
    if (p != NULL)
        memset(p, 0, nmemb * size);
    return p;
}

void *realloc(void *p, size_t n)
{
    if (p == NULL)
        return malloc(n);
    if (n == 0) {
        free(p);
        return NULL;
    }
    size_t need = block_size_for(n);
    if (need == 0)
        return NULL;

    libc_lock(&heap_lock);
    struct block *b = checked_block(p, "realloc: invalid pointer");
    if (need <= b->size) {
        /* Shrink in place, returning a large enough tail to the free list. */
        if (b->size - need >= MIN_BLOCK) {
            struct block *tail = (struct block *)((char *)b + need);
            tail->size = b->size - need;
            b->size = need;
            insert_free(tail);
        }
        libc_unlock(&heap_lock);
        return p;
    }
    /* Grow in place when the following block is free and big enough. */
    struct block *prev = NULL, *cur = free_list;
    while (cur != NULL && (char *)cur < (char *)b + b->size) {
        prev = cur;
        cur = cur->next;
    }
    if (cur != NULL && (char *)cur == (char *)b + b->size && b->size + cur->size >= need) {
        if (prev != NULL)
            prev->next = cur->next;
        else
            free_list = cur->next;
        b->size += cur->size;
        if (b->size - need >= MIN_BLOCK) {
            struct block *tail = (struct block *)((char *)b + need);
            tail->size = b->size - need;
            b->size = need;
            insert_free(tail);
        }
        libc_unlock(&heap_lock);
        return p;
    }
    size_t old_payload = b->size - HDR_SIZE;
    void *q = malloc_locked(need);
    if (q != NULL) {
        memcpy(q, p, old_payload);
        insert_free(b);
    }
    libc_unlock(&heap_lock);
    return q;
}

void __malloc_stats(size_t *total, size_t *free_bytes, size_t *free_blocks)
{
    size_t fb = 0, nb = 0;
    libc_lock(&heap_lock);
    for (struct block *b = free_list; b != NULL; b = b->next) {
        fb += b->size;
        nb++;
    }
    *total = heap_bytes;
    libc_unlock(&heap_lock);
    *free_bytes = fb;
    *free_blocks = nb;
}

int __malloc_check(void)
{
    int bad = 0;
    libc_lock(&heap_lock);
    for (struct block *b = free_list; b != NULL; b = b->next) {
        if (((uintptr_t)b & (ALIGN - 1)) != 0 || b->size < MIN_BLOCK || (b->size & (ALIGN - 1)))
            bad = 1;
        if (b->next != NULL && (char *)b + b->size >= (char *)b->next)
            bad = 1;   /* unsorted, overlapping, or touching but not merged */
    }
    libc_unlock(&heap_lock);
    return bad ? -1 : 0;
}
