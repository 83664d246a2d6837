/* The ondol implementation of libc_internal.h. */
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <ondol/sys.h>

#include "libc_internal.h"

void *__libc_get_pages(size_t len)
{
    long r = sys_vm_map(len, PROT_READ | PROT_WRITE);
    if (r < 0)
        return NULL;
    return (void *)(uintptr_t)r;
}

void __libc_yield(void)
{
    sys_yield();
}

void __libc_fatal(const char *msg)
{
    static const char prefix[] = "libc fatal: ";
    __libc_stdio_flush();
    sys_console_write(prefix, sizeof prefix - 1);
    sys_console_write(msg, strlen(msg));
    sys_console_write("\n", 1);
    sys_exit(127);
}
