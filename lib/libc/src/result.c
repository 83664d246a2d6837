/* JSON result lines on the result stream (COM2), see ondol/result.h. */
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include <ondol/abi.h>
#include <ondol/result.h>
#include <ondol/sys.h>

#define RESULT_PREFIX "{\"type\":\"result\""

/* A result record ({"type":"result",...}) gets "pcnt_probes": whether the kernel's probes
 * were on when it was written, so no number measured with them on passes for a clean one
 * (docs/measuring.md). Returns the new length, or -1 if it does not fit. */
static int add_probes_field(char *line, int n, int size)
{
    if (strncmp(line, RESULT_PREFIX, strlen(RESULT_PREFIX)) || n == 0 || line[n - 1] != '}')
        return n;
    struct pcnt_events ev = {0};
    syscall6(SYS_PCNT, PCNT_GET_EVENT, (long)&ev, 0, 0, 0, 0);
    int m = snprintf(line + n - 1, (size_t)(size - n + 1), ",\"pcnt_probes\":%s}",
                     ev.probes ? "true" : "false");
    return m < 0 || m >= size - n + 1 ? -1 : n - 1 + m;
}

long result_vprintf(const char *fmt, va_list ap)
{
    char line[RESULT_LINE_MAX];
    int n = vsnprintf(line, sizeof line - 1, fmt, ap);
    if (n >= 0 && n < (int)sizeof line - 1)
        n = add_probes_field(line, n, (int)sizeof line - 1);
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
