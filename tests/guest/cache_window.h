/*
 * The assembly that brackets a measured loop in the cache_* validation programs with a
 * cache-model window (SYS_MEASURE begin/end), shared so every program counts the same
 * instructions around its loop. The loop's asm statement must name `window`, `begin_rc`
 * and `rc_end` and use the operand and clobber lists below. Inside the window the user
 * side runs exactly 1 instruction before the loop and 4 after it (the "1 + ... + 4" in
 * each program's count).
 */
#ifndef CACHE_WINDOW_H
#define CACHE_WINDOW_H

#include <ondol/abi.h>

#define WINDOW_OPEN                                                                   \
    "mov %[nr], %%eax\n\t"                                                            \
    "mov %[op_begin], %%edi\n\t"                                                      \
    "mov %[win], %%rsi\n\t"                                                           \
    "syscall\n\t"                                 /* the window opens in the kernel */ \
    "mov %%rax, %%r13\n\t"

#define WINDOW_CLOSE                                                                  \
    "mov %[nr], %%eax\n\t"                                                            \
    "mov %[op_end], %%edi\n\t"                                                        \
    "mov %[win], %%rsi\n\t"                                                           \
    "syscall\n\t"                                 /* ... and closes there */          \
    "mov %%rax, %[rc_end]\n\t"                                                        \
    "mov %%r13, %[begin_rc]"

#define WINDOW_OUTPUTS [begin_rc] "=r"(begin_rc), [rc_end] "=r"(rc_end)
#define WINDOW_INPUTS                                                                 \
    [win] "r"(window), [nr] "i"(SYS_MEASURE), [op_begin] "i"(MEASURE_WINDOW_BEGIN),   \
        [op_end] "i"(MEASURE_WINDOW_END)
#define WINDOW_CLOBBERS "rax", "rcx", "rdi", "rsi", "r11", "r13", "memory", "cc"

#endif
