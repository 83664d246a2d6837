/*
 * The native ondol page/thread/lock layer of ondol's allocator (platform.h).
 * Pages come from SYS_VM_MAP (frames are allocated on first touch; with mmu=off at once,
 * see os_map_aligned) and go back with
 * SYS_VM_UNMAP, which may unmap part of a mapping; each call is counted and timed for
 * ondol_malloc_info(). A blocked locker sleeps on the kernel futex (SYS_FUTEX_WAIT).
 * The thread's heap is a `__thread` word (libc's TLS, ondol/thread.h), so every thread
 * calling malloc must have been started by libc; a thread's heap is abandoned for
 * adoption when it ends (thread_at_exit). Purging (madvise) is not available, so empty
 * spans stay mapped in the pool.
 */
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <ondol/sys.h>
#include <ondol/thread.h>
#include <ondol/timing.h>

#include "platform.h"

static struct ondol_malloc_pages page_calls;

__thread struct heap *os_tls_heap __attribute__((tls_model("initial-exec")));

/* Every page-layer call is counted and timed (P2's per-layer costs, docs/alloc.md): a
 * counter read on each side of the system call, which is rare next to malloc calls. */
static long map_timed(size_t len)
{
    uint64_t t0 = rdtsc();
    long m = sys_vm_map(len, PROT_READ | PROT_WRITE);
    __atomic_add_fetch(&page_calls.map_ticks, rdtsc() - t0, __ATOMIC_RELAXED);
    __atomic_add_fetch(&page_calls.maps, 1, __ATOMIC_RELAXED);
    return m;
}

static void unmap_timed(void *addr, size_t len)
{
    uint64_t t0 = rdtsc();
    sys_vm_unmap(addr, len);
    __atomic_add_fetch(&page_calls.unmap_ticks, rdtsc() - t0, __ATOMIC_RELAXED);
    __atomic_add_fetch(&page_calls.unmaps, 1, __ATOMIC_RELAXED);
}

/* With mmu=off (docs/alloc.md) a mapping takes its frames at once: the alignment slack
 * must not. It is reserved without access (no frames), and the aligned part mapped over
 * it: one page-layer call more per mapping. Read once; a racing first read is harmless. */
static int eager_maps(void)
{
    static int known, eager;
    if (!known) {
        char v[8];
        eager = os_option("mmu", v, sizeof v) && strcmp(v, "off") == 0;
        known = 1;
    }
    return eager;
}

static long map_timed_at(uintptr_t addr, size_t len, unsigned prot, unsigned flags)
{
    uint64_t t0 = rdtsc();
    long m = sys_vm_mmap((void *)addr, len, prot, flags, 0);
    __atomic_add_fetch(&page_calls.map_ticks, rdtsc() - t0, __ATOMIC_RELAXED);
    __atomic_add_fetch(&page_calls.maps, 1, __ATOMIC_RELAXED);
    return m;
}

/* The eager form: reserve len + align, map [p, p + len) over the reservation. */
static long map_eager(size_t over, size_t len, size_t align, uintptr_t *p)
{
    long m = map_timed_at(0, over, PROT_NONE, 0);
    if (m < 0)
        return m;
    *p = ((uintptr_t)m + align - 1) & ~(uintptr_t)(align - 1);
    if (map_timed_at(*p, len, PROT_READ | PROT_WRITE, VM_MMAP_FIXED) < 0) {
        unmap_timed((void *)m, over);
        return -1;
    }
    return m;
}

void *os_map_aligned(size_t len, size_t align, struct os_region *r)
{
    size_t over = len + align - 4096;
    uintptr_t p = 0;
    long m = eager_maps() ? map_eager(over, len, align, &p) : map_timed(over);
    if (m < 0)
        return NULL;
    uintptr_t base = (uintptr_t)m;
    p = p ? p : (base + align - 1) & ~(uintptr_t)(align - 1);
    if (p > base)
        unmap_timed((void *)base, p - base);
    if (base + over > p + len)
        unmap_timed((void *)(p + len), base + over - (p + len));
    r->base = (void *)p;
    r->len = len;
    return (void *)p;
}

void os_unmap(const struct os_region *r)
{
    unmap_timed(r->base, r->len);
}

void os_purge(void *addr, size_t len)
{
    (void)addr;
    (void)len;
}

void os_page_stats(struct ondol_malloc_pages *out)
{
    out->maps = __atomic_load_n(&page_calls.maps, __ATOMIC_RELAXED);
    out->unmaps = __atomic_load_n(&page_calls.unmaps, __ATOMIC_RELAXED);
    out->purges = 0;
    out->map_ticks = __atomic_load_n(&page_calls.map_ticks, __ATOMIC_RELAXED);
    out->unmap_ticks = __atomic_load_n(&page_calls.unmap_ticks, __ATOMIC_RELAXED);
}

int os_option(const char *name, char *buf, size_t len)
{
    long n = sys_kopt(name, buf, len);
    return n >= 0 && (size_t)n < len;
}

/* One registration a thread is all libc keeps, and all the allocator makes (its heap,
 * once); the heap type is opaque here, hence the wrapper. */
static void (*heap_exit_fn)(struct heap *);

static void heap_exit(void *h) { heap_exit_fn(h); }

void os_at_thread_exit(void (*fn)(struct heap *), struct heap *h)
{
    heap_exit_fn = fn;
    thread_at_exit(heap_exit, h);
}

void os_at_fork(void (*prepare)(void), void (*after)(void))
{
    (void)prepare;
    (void)after;
}

/* The kernel futex: blocks only while *word still holds value (checked in the kernel). */
void os_wait(int *word, int value)
{
    sys_futex_wait((const uint32_t *)word, (uint32_t)value, SLEEP_FOREVER);
}

void os_wake(int *word)
{
    sys_futex_wake((const uint32_t *)word, 1);
}

void os_sleep_ms(unsigned ms)
{
    struct time_info t;
    uint64_t hz = 100;
    if (sys_time(&t) == 0 && t.hz != 0)
        hz = t.hz;
    uint64_t ticks = ((uint64_t)ms * hz + 999) / 1000;
    sys_sleep(ticks != 0 ? ticks : 1);
}

void os_yield(void)
{
    sys_yield();
}

void os_out_of_memory(void)
{
}

void os_invalid_argument(void)
{
}

void os_fatal(const char *msg)
{
    sys_console_write(msg, strlen(msg));
    sys_console_write("\n", 1);
    sys_exit(127);
}
