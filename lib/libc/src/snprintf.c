/* snprintf/vsnprintf on top of fmt_format (no system calls). */
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>

#include <ondol/fmt.h>

struct strbuf {
    char *buf;
    size_t size;   /* capacity including the terminating NUL */
    size_t len;    /* characters produced so far (may exceed size) */
};

static void strbuf_emit(char c, void *ctx)
{
    struct strbuf *sb = ctx;
    if (sb->len + 1 < sb->size)
        sb->buf[sb->len] = c;
    sb->len++;
}

int vsnprintf(char *restrict buf, size_t size, const char *restrict fmt, va_list ap)
{
    struct strbuf sb = { buf, size, 0 };
    int n = fmt_format(strbuf_emit, &sb, fmt, ap);
    if (size > 0)
        buf[sb.len < size ? sb.len : size - 1] = '\0';
    return n;
}

int snprintf(char *restrict buf, size_t size, const char *restrict fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(buf, size, fmt, ap);
    va_end(ap);
    return n;
}
