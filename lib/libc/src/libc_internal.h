/*
 * Internal interface between the portable parts of libc and the system.
 * sysdep.c implements it with ondol system calls; the host unit tests
 * (tests/host/host_sysdep.c) implement it with mmap/abort so the same
 * malloc.c runs under the host's sanitizers.
 */
#ifndef ONDOL_LIBC_INTERNAL_H
#define ONDOL_LIBC_INTERNAL_H

#include <stddef.h>

/* Fresh zero-filled read/write memory of `len` bytes (a multiple of 4096), page
 * aligned; NULL when none is left. */
void *__libc_get_pages(size_t len);

/* Give the CPU away (used while waiting for a lock held by another thread). */
void __libc_yield(void);

/* Report heap corruption or misuse and end the program. */
__attribute__((noreturn)) void __libc_fatal(const char *msg);

/* Flush buffered stdout (called by exit()). */
void __libc_stdio_flush(void);

/* Heap statistics and a consistency check of the free list (0 = fine); for tests. */
void __malloc_stats(size_t *total, size_t *free_bytes, size_t *free_blocks);
int __malloc_check(void);

/* A tiny test-and-set lock that yields while contended. */
typedef struct {
    volatile int locked;
} libc_lock_t;

static inline void libc_lock(libc_lock_t *l)
{
    while (__atomic_exchange_n(&l->locked, 1, __ATOMIC_ACQUIRE) != 0) {
        while (__atomic_load_n(&l->locked, __ATOMIC_RELAXED) != 0)
            __libc_yield();
    }
}

static inline void libc_unlock(libc_lock_t *l)
{
    __atomic_store_n(&l->locked, 0, __ATOMIC_RELEASE);
}

#endif
