/* The spinlock's layout alone (spinlock.h has the operations), for headers that embed a
 * lock but come before spinlock.h's includes: struct cpu's run-queue lock (cpu.h). */
#ifndef SPINLOCK_TYPES_H
#define SPINLOCK_TYPES_H
#include "types.h"

struct spinlock {
    volatile u32 locked;
    u32 cls;                     /* enum lock_class (lockclass.def) */
};
#endif
