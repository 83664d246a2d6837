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

int result_json_string(char *buf, int size, const char *s)
{
    static const char hex[] = "0123456789abcdef";
    int n = 0;
#define OUT(ch)                   \
    do {                          \
        if (n + 1 < size)         \
            buf[n] = (char)(ch);  \
        n++;                      \
    } while (0)
    OUT('"');
    for (; *s != '\0'; s++) {
        unsigned char c = (unsigned char)*s;
        if (c == '"' || c == '\\') {
            OUT('\\');
            OUT(c);
        } else if (c == '\n') {
            OUT('\\');
            OUT('n');
        } else if (c < 0x20 || c == 0x7f) {
            OUT('\\');
            OUT('u');
            OUT('0');
            OUT('0');
            OUT(hex[c >> 4]);
            OUT(hex[c & 15]);
        } else {
            OUT(c);
        }
    }
    OUT('"');
#undef OUT
    if (size > 0)
        buf[n < size ? n : size - 1] = '\0';
    return n;
}
