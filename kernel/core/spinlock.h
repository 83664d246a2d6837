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
/* One exchange and no wait: true with l held, false when it was busy. A try never waits
 * (nor answers IPI requests meanwhile), so it takes no place in the order: the checker
 * records it as a nested acquisition. Out of line: rare. */
bool spin_trylock(struct spinlock *l);
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
/* Two locks of one class (a != b), e.g. the two threads of an IPC rendezvous. Each is
 * taken with one exchange and no wait: the order of two locks matters only to a waiter, so
 * when either is busy (or the checker is on) the slow path lets go what the exchanges took
 * and takes both lower address first, the second with spin_lock_nested (lockcheck.c). Off
 * the checker and uncontended: two exchanges and one test for the pair. */
void spin_lock_two_slow(struct spinlock *a, struct spinlock *b, u32 busy_a, u32 busy_b);
static inline void spin_lock_two(struct spinlock *a, struct spinlock *b)
{
    u32 busy_a = __atomic_exchange_n(&a->locked, 1, __ATOMIC_ACQUIRE);
    u32 busy_b = __atomic_exchange_n(&b->locked, 1, __ATOMIC_ACQUIRE);
    if (__builtin_expect(busy_a | busy_b | lockcheck_on, 0))
        spin_lock_two_slow(a, b, busy_a, busy_b);
}
/* Both released, in any order, with one test of the checker's flag. */
static inline void spin_unlock_two(struct spinlock *a, struct spinlock *b)
{
    if (__builtin_expect(lockcheck_on, 0)) {
        lockcheck_release(a);
        lockcheck_release(b);
    }
    __atomic_store_n(&a->locked, 0, __ATOMIC_RELEASE);
    __atomic_store_n(&b->locked, 0, __ATOMIC_RELEASE);
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
