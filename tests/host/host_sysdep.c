/* Host implementation of lib/libc/src/libc_internal.h for the unit tests: the
 * allocator's page source is mmap, fatal errors abort. */
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>

#include "libc_internal.h"
#include "ondol_host.h"

size_t host_pages_calls;
size_t host_pages_bytes;
int host_pages_fail;

void *__libc_get_pages(size_t len)
{
    if (host_pages_fail || len % 4096 != 0)
        return NULL;
    void *p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED)
        return NULL;
    host_pages_calls++;
    host_pages_bytes += len;
    return p;
}

void __libc_yield(void)
{
    sched_yield();
}

void __libc_fatal(const char *msg)
{
    fprintf(stderr, "libc fatal: %s\n", msg);
    abort();
}

void __libc_stdio_flush(void)
{
}
