/* Checked user-memory access on top of the fault-safe copy in arch/x86_64/usercopy.S. */
#include <ondol/abi.h>
#include "memlayout.h"
#include "usercopy.h"

long copy_user_raw(void *dst, const void *src, size_t n);

bool user_range_ok(u64 addr, u64 len) { return addr < USER_TOP && len <= USER_TOP - addr; }

int copyin(void *dst, u64 usrc, size_t n)
{
    if (!user_range_ok(usrc, n))
        return E_FAULT;
    return copy_user_raw(dst, (const void *)usrc, n) ? E_FAULT : 0;
}

int copyout(u64 udst, const void *src, size_t n)
{
    if (!user_range_ok(udst, n))
        return E_FAULT;
    return copy_user_raw((void *)udst, src, n) ? E_FAULT : 0;
}

long copyin_str(char *dst, u64 usrc, size_t cap)
{
    for (size_t i = 0; i < cap; i++) {
        if (copyin(&dst[i], usrc + i, 1))
            return E_FAULT;
        if (dst[i] == 0)
            return (long)i;
    }
    return E_2BIG;
}
