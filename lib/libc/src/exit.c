/* Program termination. */
#include <stdio.h>
#include <stdlib.h>

#include <ondol/sys.h>

#include "libc_internal.h"

void exit(int status)
{
    __libc_stdio_flush();
    sys_exit(status);
}

void abort(void)
{
    fputs("abort\n", stderr);
    exit(127);
}

void __assert_fail(const char *expr, const char *file, int line, const char *func)
{
    fprintf(stderr, "assertion failed: %s (%s:%d, %s)\n", expr, file, line, func);
    abort();
}
