/*
 * Machine-readable result lines (COM2, see docs/measuring.md, "The result stream").
 * result_printf() formats one line (a '\n' is appended when missing) and sends it
 * with a single SYS_RESULT_WRITE, so lines from different programs never interleave.
 * A line longer than RESULT_LINE_MAX - 1 bytes is not sent; the call returns E_2BIG.
 * Returns the kernel's answer (bytes written or a negative E_* code).
 */
#ifndef ONDOL_RESULT_H
#define ONDOL_RESULT_H

#include <stdarg.h>

#define RESULT_LINE_MAX 1024

long result_printf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
long result_vprintf(const char *fmt, va_list ap);

/* Writes `s` as a JSON string literal (with quotes and escapes) into buf; returns the
 * length the literal needs (like snprintf). Handy for free-form text fields. */
int result_json_string(char *buf, int size, const char *s);

#endif
