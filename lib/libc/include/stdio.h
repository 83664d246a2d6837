/* ondol libc: minimal stdio on the serial console.
 * stdout is line-buffered (flushed at '\n', when full, by fflush and at exit);
 * stderr is unbuffered (stdout is flushed first so the order is kept). */
#ifndef ONDOL_STDIO_H
#define ONDOL_STDIO_H

#include <stdarg.h>
#include <stddef.h>

#define EOF (-1)

typedef struct ondol_file FILE;
extern FILE *const stdout;
extern FILE *const stderr;

int printf(const char *restrict fmt, ...) __attribute__((format(printf, 1, 2)));
int vprintf(const char *restrict fmt, va_list ap);
int fprintf(FILE *f, const char *restrict fmt, ...) __attribute__((format(printf, 2, 3)));
int vfprintf(FILE *f, const char *restrict fmt, va_list ap);
int snprintf(char *restrict buf, size_t size, const char *restrict fmt, ...)
    __attribute__((format(printf, 3, 4)));
int vsnprintf(char *restrict buf, size_t size, const char *restrict fmt, va_list ap);

int putchar(int c);
int fputc(int c, FILE *f);
int puts(const char *s);
int fputs(const char *s, FILE *f);
int fflush(FILE *f);      /* f == NULL flushes everything */
int getchar(void);        /* one raw byte from the console (blocks); EOF on error */

#endif
