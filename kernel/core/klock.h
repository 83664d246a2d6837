/* The big kernel lock (klock.c, docs/smp.md "Locking"): most entries from user mode take
 * it, and every exit releases it if held (docs/architecture.md), on every CPU. It is never
 * held across a switch: schedule() lets it go and a thread resuming a kernel continuation
 * that held it takes it again (Linux 2.6's release_kernel_lock); a thread resumed through
 * its frame never does. What it still covers and the per-object locks beside it:
 * docs/smp.md.
 *
 * The lock is one byte, on a cache line of its own (ipcfast.S defines it; the IPC fastpath
 * does not take it: it holds the two threads' ipc locks). Inline: it is taken and released
 * on every system call. While it waits, a CPU answers the call-function and TLB-shootdown requests
 * posted to it (ipi_poll): the holder may be waiting for exactly those, and interrupts are
 * off here. Its class is LOCK_BKL (lockclass.def); with option lockcheck the checker sees
 * its C acquisitions, through the slow path, and counts it held while this CPU owns it,
 * so the release needs no hook for it.
 *
 * The checker and the coherence model's markers (option markers: acquire, release and
 * wait events, marker.h) share one flag byte, kernel_bkl_slow, set while either is on:
 * the uncontended acquisition tests it together with the exchange's result (one branch
 * for both), the release tests it once. */
#ifndef KLOCK_H
#define KLOCK_H
#include "arch.h"
#include "marker.h"
#include "spinlock.h"
#include "types.h"

extern volatile u8 kernel_bkl_byte;          /* ipcfast.S, a line of its own */
extern u8 kernel_bkl_slow;                   /* lockcheck_on || markers_on; recomputed by
                                                kernel_lock_flags_update (options.h) */
/* Who holds it: each CPU's byte (struct cpu's bkl, in the word the exit checks test, so
 * that a system call's exit lets a plainly held lock go, or skips a lock it does not
 * hold, with the one test it makes anyway: sched.h sched_leave_kernel). BKL_HELD (cpu.h) is
 * 0 for that test: held, taken with neither the checker nor the markers on, so the release
 * has nothing to tell them. A CPU never holds it across a switch (sched.c schedule), so
 * the CPU's byte is also the running thread's. */
void kernel_lock_slow(u8 busy);              /* klock.c: contended, checked or marked */
static inline void kernel_lock(void)
{
    u8 busy = __atomic_exchange_n(&kernel_bkl_byte, 1, __ATOMIC_ACQUIRE);
    if (__builtin_expect(busy | kernel_bkl_slow, 0))
        kernel_lock_slow(busy);              /* sets this CPU's byte */
    else
        this_cpu()->bkl = BKL_HELD;
}
/* The release when this CPU's byte is BKL_HELD (the exit's common case). */
static inline void kernel_unlock_plain(struct cpu *c)
{
    c->bkl = BKL_NOT_HELD;
    __atomic_store_n(&kernel_bkl_byte, 0, __ATOMIC_RELEASE);
}
static inline void kernel_unlock(void)
{
    if (__builtin_expect(kernel_bkl_slow, 0))
        marker_lock(LOCK_EV_RELEASE, LOCK_ID_BKL);   /* the coherence model's hand-offs */
    kernel_unlock_plain(this_cpu());
}
/* Whether this CPU holds it through kernel_lock. */
static inline bool kernel_lock_held(void) { return this_cpu()->bkl != BKL_NOT_HELD; }
/* The CPU that holds it, or -1 (the checker's reports). */
int kernel_lock_holder(void);
/* With the checker on, reports (once) when this CPU does not hold it through kernel_lock:
 * for code whose data the BKL still covers (a thread's wait-queue link, its IPC state). */
void lockcheck_assert_bkl(void);
extern bool lockcheck_on;
static inline void kernel_lock_assert_held(void)
{
    if (__builtin_expect(lockcheck_on, 0))
        lockcheck_assert_bkl();
}
#endif
