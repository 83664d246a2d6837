/* Kernel symbols and stacks (ksyms.c): return addresses walked through the frame-pointer
 * chain (the kernel keeps frame pointers) and named from the .ksyms table that
 * tools/gen_ksyms.py makes from the first link. Used by panics and the lock checker. */
#ifndef KSYMS_H
#define KSYMS_H
#include "types.h"

/* The name of the function containing addr and the offset into it; NULL when unknown. */
const char *ksym_name(u64 addr, u64 *off);
/* Up to n return addresses of the caller's callers, from frame pointer rbp; the rest 0.
 * The chain is followed while it stays in the kernel half (thread stacks are in PHYSMAP,
 * the boot stacks in the kernel image), climbs the stack within 16 KiB of rbp and
 * returns into kernel text. */
void ksym_stack(u64 rbp, u64 *out, int n);
/* Prints "  #depth address name+offset" for each non-zero address of stack[0..n). */
void ksym_print(const u64 *stack, int n);
#endif
