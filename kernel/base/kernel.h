/* Things almost every kernel file needs: printing, panics, assertions. */
#ifndef KERNEL_H
#define KERNEL_H
#include <stdarg.h>
#include <string.h>
#include "types.h"

int printk(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
int vprintk(const char *fmt, va_list ap);
int ksnprintf(char *buf, size_t n, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
struct trapframe;
__attribute__((noreturn)) void panic(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
__attribute__((noreturn)) void panic_trap(struct trapframe *tf, const char *why);

#define ASSERT(c)                                                                    \
    do {                                                                             \
        if (!(c)) panic("assertion failed: %s (%s:%d)", #c, __FILE__, __LINE__);     \
    } while (0)

extern const char ondol_version[];
#endif
