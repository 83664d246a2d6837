/* Spinlocks. The kernel runs with interrupts off except in the idle loop, so plain
 * spin_lock is enough for most state; the irqsave forms are for code the idle loop reaches. */
#ifndef SPINLOCK_H
#define SPINLOCK_H
#include "arch.h"
#include "types.h"

struct spinlock {
    volatile u32 locked;
};

static inline void spin_lock(struct spinlock *l)
{
    while (__atomic_exchange_n(&l->locked, 1, __ATOMIC_ACQUIRE))
        while (l->locked)
            pause();
}
static inline void spin_unlock(struct spinlock *l) { __atomic_store_n(&l->locked, 0, __ATOMIC_RELEASE); }
static inline u64 spin_lock_irqsave(struct spinlock *l)
{
    u64 flags = read_rflags();
    cli();
    spin_lock(l);
    return flags;
}
static inline void spin_unlock_irqrestore(struct spinlock *l, u64 flags)
{
    spin_unlock(l);
    if (flags & RFLAGS_IF)
        sti();
}
#endif
