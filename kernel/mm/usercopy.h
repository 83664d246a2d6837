/* Checked access to user memory. Every user pointer the kernel touches goes through here. */
#ifndef USERCOPY_H
#define USERCOPY_H
#include "types.h"

bool user_range_ok(u64 addr, u64 len);
int copyin(void *dst, u64 usrc, size_t n);            /* 0 or E_FAULT */
int copyout(u64 udst, const void *src, size_t n);     /* 0 or E_FAULT */
long copyin_str(char *dst, u64 usrc, size_t cap);     /* length, E_FAULT, or E_2BIG */
#endif
