/*
 * Copies between the server and a process's memory (unix.h), over the runtime's
 * rt_copy_to/rt_copy_from on the process's task: every form checks the addresses there
 * (MK: SYS_TASK_COPY; IK: the kernel's fault-safe copy), so a bad address is -EFAULT and
 * never a fault of the server.
 */
#include "runtime.h"
#include "vfs.h"

long copy_in(struct proc *p, void *dst, uint64_t uaddr, size_t n)
{
    if (!n)
        return 0;
    if (!user_range_ok(uaddr, n))
        return -EFAULT;
    return rt_copy_from(p->task, dst, uaddr, n) < 0 ? -EFAULT : 0;
}

long copy_out(struct proc *p, uint64_t uaddr, const void *src, size_t n)
{
    if (!n)
        return 0;
    if (!user_range_ok(uaddr, n))
        return -EFAULT;
    return rt_copy_to(p->task, uaddr, src, n) < 0 ? -EFAULT : 0;
}

/* Page by page, so a string that ends just before an unmapped page is read. */
long copy_in_str(struct proc *p, char *dst, uint64_t uaddr, size_t cap)
{
    size_t got = 0;
    while (got < cap) {
        size_t chunk = 4096 - (size_t)((uaddr + got) & 4095);
        if (chunk > cap - got)
            chunk = cap - got;
        if (copy_in(p, dst + got, uaddr + got, chunk) < 0)
            return -EFAULT;
        const char *nul = vfs_memchr(dst + got, 0, chunk);
        if (nul)
            return (long)(nul - dst);
        got += chunk;
    }
    return -ENAMETOOLONG;
}
