/* Kernel printing to the console, built on the shared formatter in lib/libc/src/fmt.c. */
#include <ondol/fmt.h>
#include "console.h"
#include "kernel.h"

struct outbuf {
    char buf[256];
    size_t len;
};

static void emit_console(char c, void *ctx)
{
    struct outbuf *o = ctx;
    if (o->len == sizeof(o->buf)) {
        console_write(o->buf, o->len);
        o->len = 0;
    }
    o->buf[o->len++] = c;
}

int vprintk(const char *fmt, va_list ap)
{
    struct outbuf o = {.len = 0};
    int n = fmt_format(emit_console, &o, fmt, ap);
    console_write(o.buf, o.len);
    return n;
}

int printk(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int n = vprintk(fmt, ap);
    va_end(ap);
    return n;
}

struct strbuf {
    char *buf;
    size_t cap, len;
};

static void emit_str(char c, void *ctx)
{
    struct strbuf *s = ctx;
    if (s->len + 1 < s->cap)
        s->buf[s->len] = c;
    s->len++;
}

int ksnprintf(char *buf, size_t n, const char *fmt, ...)
{
    struct strbuf s = {buf, n, 0};
    va_list ap;
    va_start(ap, fmt);
    fmt_format(emit_str, &s, fmt, ap);
    va_end(ap);
    if (n)
        buf[MIN(s.len, n - 1)] = 0;
    return (int)s.len;
}
