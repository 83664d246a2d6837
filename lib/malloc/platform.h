/*
 * The page, thread and lock layer under ondol's allocator (lib/malloc/malloc.c).
 * platform_linux.c implements it with mmap/munmap/madvise, pthread keys and futexes;
 * platform_ondol.c with SYS_VM_MAP / SYS_VM_UNMAP, SYS_KOPT and SYS_YIELD.
 * Every function may be called before main() and from any thread; none may call malloc.
 */
#ifndef ONDOL_MALLOC_PLATFORM_H
#define ONDOL_MALLOC_PLATFORM_H

#include <stddef.h>

#include "ondol_malloc.h"

struct heap;

/* A mapping as the page layer handed it out; `base`/`len` are what os_unmap needs. */
struct os_region {
    void *base;
    size_t len;
};

/* `len` bytes (a multiple of 4096) of zero-filled memory aligned to `align` (a power of
 * two >= 4096); fills *r with what to unmap later. NULL when the system has none left. */
void *os_map_aligned(size_t len, size_t align, struct os_region *r);
void os_unmap(const struct os_region *r);
/* The pages of [addr, addr+len) may be dropped; they read as zero when touched again. */
void os_purge(void *addr, size_t len);

/* The page-layer calls made so far (counted by the functions above). */
void os_page_stats(struct ondol_malloc_pages *out);

/* The value of option `name` (environment on Linux, SYS_KOPT on ondol) copied into buf,
 * or 0 when it is not set. */
int os_option(const char *name, char *buf, size_t len);

/* The calling thread's heap (NULL before its first allocation); set by the allocator.
 * os_has_tls() is 0 where the system has no thread-local storage: the allocator then
 * runs every thread on one shared heap under its lock. */
#ifdef MALLOC_TLS
/* Linux: an initial-exec TLS word, read inline on every malloc and free. */
extern __thread struct heap *os_tls_heap __attribute__((tls_model("initial-exec")));
static inline int os_has_tls(void) { return 1; }
static inline struct heap *os_thread_heap(void) { return os_tls_heap; }
static inline void os_set_thread_heap(struct heap *h) { os_tls_heap = h; }
#else
static inline int os_has_tls(void) { return 0; }
static inline struct heap *os_thread_heap(void) { return NULL; }
static inline void os_set_thread_heap(struct heap *h) { (void)h; }
#endif
/* Call fn(h) when the calling thread exits (once per registration). */
void os_at_thread_exit(void (*fn)(struct heap *), struct heap *h);
/* Run prepare() before fork() and after() in both processes afterwards. */
void os_at_fork(void (*prepare)(void), void (*after)(void));

/* Lock support: block while *word == value (or return at once); wake one waiter. */
void os_wait(int *word, int value);
void os_wake(int *word);
void os_sleep_ms(unsigned ms);
void os_yield(void);

/* errno = ENOMEM / EINVAL where the system has errno (Linux); nothing on ondol. */
void os_out_of_memory(void);
void os_invalid_argument(void);

/* Writes msg to the error stream and ends the process abnormally. */
__attribute__((noreturn)) void os_fatal(const char *msg);

#endif
