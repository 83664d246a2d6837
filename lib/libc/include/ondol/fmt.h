/*
 * The printf formatting core, shared by the kernel and user space.
 *
 * fmt_format() walks `fmt` and hands every output character to `emit(c, ctx)`.
 * Supported: conversions d i u x X o p s c %; flags - 0 + space #; field width and
 * precision (both may be `*`); length modifiers hh h l ll z t j.
 * No floating point (the kernel is built with -mgeneral-regs-only).
 * %p prints 0x followed by lower-case hex digits ("0x0" for NULL); %s of NULL prints
 * "(null)". An unknown conversion is copied to the output unchanged.
 * Returns the number of characters emitted.
 *
 * This file and fmt.c include only compiler headers, so the kernel can build them
 * with its own flags.
 */
#ifndef ONDOL_FMT_H
#define ONDOL_FMT_H

#include <stdarg.h>

typedef void (*fmt_emit_fn)(char c, void *ctx);

int fmt_format(fmt_emit_fn emit, void *ctx, const char *fmt, va_list ap);

#endif
