/*
 * Console stdio. stdout and stderr share one buffer (so their output stays in
 * order); it is flushed at '\n', when full, by fflush, at exit, before reading
 * input, and at the end of every stderr call.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include <ondol/fmt.h>
#include <ondol/sys.h>

#include "libc_internal.h"

struct ondol_file {
    int unbuffered;
};

static struct ondol_file file_stdout = { 0 };
static struct ondol_file file_stderr = { 1 };
FILE *const stdout = &file_stdout;
FILE *const stderr = &file_stderr;

#define OBUF_SIZE 512
static char obuf[OBUF_SIZE];
static size_t olen;
static libc_lock_t olock;

static void write_all(const char *p, size_t n)
{
    while (n > 0) {
        long r = sys_console_write(p, n);
        if (r <= 0)
            return;      /* nothing sensible to do; drop the rest */
        p += r;
        n -= (size_t)r;
    }
}

static void flush_locked(void)
{
    if (olen > 0) {
        write_all(obuf, olen);
        olen = 0;
    }
}

static void put_locked(char c)
{
    obuf[olen++] = c;
    if (c == '\n' || olen == OBUF_SIZE)
        flush_locked();
}

static void emit_locked(char c, void *ctx)
{
    (void)ctx;
    put_locked(c);
}

void __libc_stdio_flush(void)
{
    libc_lock(&olock);
    flush_locked();
    libc_unlock(&olock);
}

int vfprintf(FILE *f, const char *restrict fmt, va_list ap)
{
    libc_lock(&olock);
    int n = fmt_format(emit_locked, NULL, fmt, ap);
    if (f->unbuffered)
        flush_locked();
    libc_unlock(&olock);
    return n;
}

int fprintf(FILE *f, const char *restrict fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int n = vfprintf(f, fmt, ap);
    va_end(ap);
    return n;
}

int vprintf(const char *restrict fmt, va_list ap)
{
    return vfprintf(stdout, fmt, ap);
}

int printf(const char *restrict fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int n = vfprintf(stdout, fmt, ap);
    va_end(ap);
    return n;
}

int fputc(int c, FILE *f)
{
    libc_lock(&olock);
    put_locked((char)c);
    if (f->unbuffered)
        flush_locked();
    libc_unlock(&olock);
    return (unsigned char)c;
}

int putchar(int c)
{
    return fputc(c, stdout);
}

int fputs(const char *s, FILE *f)
{
    libc_lock(&olock);
    while (*s != '\0')
        put_locked(*s++);
    if (f->unbuffered)
        flush_locked();
    libc_unlock(&olock);
    return 0;
}

int puts(const char *s)
{
    libc_lock(&olock);
    while (*s != '\0')
        put_locked(*s++);
    put_locked('\n');
    libc_unlock(&olock);
    return 0;
}

int fflush(FILE *f)
{
    (void)f;
    __libc_stdio_flush();
    return 0;
}

int getchar(void)
{
    char c;
    __libc_stdio_flush();
    long r = sys_console_read(&c, 1);
    return r == 1 ? (unsigned char)c : EOF;
}
