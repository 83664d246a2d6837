/* JSON result lines on the result stream (COM2), see ondol/result.h. */
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>

#include <ondol/abi.h>
#include <ondol/result.h>
#include <ondol/sys.h>

long result_vprintf(const char *fmt, va_list ap)
{
    char line[RESULT_LINE_MAX];
    int n = vsnprintf(line, sizeof line - 1, fmt, ap);
    if (n < 0 || n >= (int)sizeof line - 1)
        return E_2BIG;
    if (n == 0 || line[n - 1] != '\n')
        line[n++] = '\n';
    return sys_result_write(line, (size_t)n);
}

long result_printf(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    long r = result_vprintf(fmt, ap);
    va_end(ap);
    return r;
}
