/* The big kernel lock (klock.c): the kernel is non-preemptive and serialised; every entry
 * from user mode takes it and every exit releases it (docs/architecture.md). Inline: it is
 * taken and released on every system call. */
#ifndef KLOCK_H
#define KLOCK_H
#include "arch.h"
#include "spinlock.h"
#include "types.h"

extern struct spinlock kernel_bkl;
extern volatile int kernel_bkl_owner;
static inline void kernel_lock(void)
{
    spin_lock(&kernel_bkl);
    kernel_bkl_owner = this_cpu()->id;
}
static inline void kernel_unlock(void)
{
    kernel_bkl_owner = -1;
    spin_unlock(&kernel_bkl);
}
static inline bool kernel_lock_held(void) { return kernel_bkl_owner == this_cpu()->id; }
#endif
