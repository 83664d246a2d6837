/* Spinlocks. The kernel runs with interrupts off except in the idle loop, so plain
 * spin_lock is enough for most state; the irqsave forms are for code the idle loop reaches.
 *
 * Every lock has a class (lockclass.def), given where the lock is defined: SPINLOCK_INIT
 * for static locks, spin_lock_init for locks in allocated objects. With option lockcheck
 * the checker (lockcheck.c) sees every acquisition and release: it records the order the
 * classes are taken in, reports an inversion with both stacks, and reports a wait that
 * lasts longer than lockcheck_spin_ms as a suspected deadlock (holder CPU, class, stack).
 * Off, an acquisition pays one extra test of a byte it loads anyway with the exchange's
 * result (the slow path's condition), a release one test. */
#ifndef SPINLOCK_H
#define SPINLOCK_H
#include "arch.h"
#include "types.h"

enum lock_class {
#define LOCK_CLASS(id, name, doc) LOCK_##id,
#include "lockclass.def"
#undef LOCK_CLASS
    LOCK_CLASSES
};

#include "spinlock_types.h"
#define SPINLOCK_INIT(c) {.locked = 0, .cls = LOCK_##c}
static inline void spin_lock_init(struct spinlock *l, enum lock_class cls)
{
    l->locked = 0;
    l->cls = cls;
}

extern bool lockcheck_on;                        /* lockcheck.c: the checker runs */
void spin_lock_slow(struct spinlock *l, u32 busy);   /* lockcheck.c: contended, or checked */
void lockcheck_release(const void *lock);
/* A second lock of a class this CPU holds one of already, taken in an order the caller
 * keeps everywhere (e.g. by address: aspace_lock_pair): the checker does not report the
 * nesting. Out of line: rare. */
void spin_lock_nested(struct spinlock *l);
/* With the checker on, reports (once) when this CPU does not hold l: for code whose
 * caller must hold a lock (vm_set_pte: the address space's). */
void lockcheck_assert_held(const struct spinlock *l);
static inline void spin_assert_held(const struct spinlock *l)
{
    if (__builtin_expect(lockcheck_on, 0))
        lockcheck_assert_held(l);
}

static inline void spin_lock(struct spinlock *l)
{
    u32 busy = __atomic_exchange_n(&l->locked, 1, __ATOMIC_ACQUIRE);
    if (__builtin_expect(busy | lockcheck_on, 0))
        spin_lock_slow(l, busy);
}
static inline void spin_unlock(struct spinlock *l)
{
    if (__builtin_expect(lockcheck_on, 0))
        lockcheck_release(l);
    __atomic_store_n(&l->locked, 0, __ATOMIC_RELEASE);
}
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
