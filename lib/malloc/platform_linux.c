/* The Linux page/thread/lock layer of ondol's allocator (platform.h). */
#include <errno.h>
#include <linux/futex.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "platform.h"

__thread struct heap *os_tls_heap __attribute__((tls_model("initial-exec")));

static pthread_key_t exit_key;
static pthread_once_t exit_key_once = PTHREAD_ONCE_INIT;
static void (*exit_fn)(struct heap *);

static struct ondol_malloc_pages page_calls;     /* counts only; ticks stay 0 here */

static void count(unsigned long *calls)
{
    __atomic_add_fetch(calls, 1, __ATOMIC_RELAXED);
}

static void unmap_counted(void *addr, size_t len)
{
    count(&page_calls.unmaps);
    munmap(addr, len);
}

/* Over-map by `align`, then give back the unaligned head and the tail. */
void *os_map_aligned(size_t len, size_t align, struct os_region *r)
{
    size_t over = len + align - 4096;
    count(&page_calls.maps);
    char *m = mmap(NULL, over, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (m == MAP_FAILED)
        return NULL;
    char *p = (char *)(((uintptr_t)m + align - 1) & ~(uintptr_t)(align - 1));
    if (p > m)
        unmap_counted(m, (size_t)(p - m));
    if (m + over > p + len)
        unmap_counted(p + len, (size_t)(m + over - (p + len)));
    r->base = p;
    r->len = len;
    return p;
}

void os_unmap(const struct os_region *r)
{
    unmap_counted(r->base, r->len);
}

void os_purge(void *addr, size_t len)
{
    count(&page_calls.purges);
    madvise(addr, len, MADV_DONTNEED);
}

void os_page_stats(struct ondol_malloc_pages *out)
{
    out->maps = __atomic_load_n(&page_calls.maps, __ATOMIC_RELAXED);
    out->unmaps = __atomic_load_n(&page_calls.unmaps, __ATOMIC_RELAXED);
    out->purges = __atomic_load_n(&page_calls.purges, __ATOMIC_RELAXED);
    out->map_ticks = out->unmap_ticks = 0;
}

int os_option(const char *name, char *buf, size_t len)
{
    const char *v = getenv(name);
    if (v == NULL || strlen(v) >= len)
        return 0;
    strcpy(buf, v);
    return 1;
}

static void thread_exit(void *arg)
{
    exit_fn(arg);
}

static void make_exit_key(void)
{
    pthread_key_create(&exit_key, thread_exit);
}

void os_at_thread_exit(void (*fn)(struct heap *), struct heap *h)
{
    exit_fn = fn;
    pthread_once(&exit_key_once, make_exit_key);
    pthread_setspecific(exit_key, h);
}

void os_at_fork(void (*prepare)(void), void (*after)(void))
{
    pthread_atfork(prepare, after, after);
}

void os_wait(int *word, int value)
{
    syscall(SYS_futex, word, FUTEX_WAIT_PRIVATE, value, NULL, NULL, 0);
}

void os_wake(int *word)
{
    syscall(SYS_futex, word, FUTEX_WAKE_PRIVATE, 1, NULL, NULL, 0);
}

void os_sleep_ms(unsigned ms)
{
    struct timespec ts = {ms / 1000u, (long)(ms % 1000u) * 1000000L};
    while (nanosleep(&ts, &ts) != 0 && errno == EINTR)
        continue;
}

void os_yield(void)
{
    sched_yield();
}

void os_out_of_memory(void)
{
    errno = ENOMEM;
}

void os_invalid_argument(void)
{
    errno = EINVAL;
}

void os_fatal(const char *msg)
{
    size_t len = strlen(msg);
    while (len > 0) {
        ssize_t w = write(2, msg, len);
        if (w <= 0)
            break;
        msg += w;
        len -= (size_t)w;
    }
    if (write(2, "\n", 1) < 0)
        abort();
    abort();
}
