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
extern volatile u32 kernel_bkl_gen;          /* on that line: every release adds one */
extern u8 kernel_bkl_slow;                   /* lockcheck_on || markers_on; recomputed by
                                                kernel_lock_flags_update (options.h) */
/* Who holds it: each CPU's byte (struct cpu's bkl, in the word the exit checks test, so
 * that a system call's exit lets a plainly held lock go, or skips a lock it does not
 * hold, with the one test it makes anyway: sched.h sched_leave_kernel). BKL_HELD (cpu.h) is
 * 0 for that test: held, taken with neither the checker nor the markers on, so the release
 * has nothing to tell them. A CPU never holds it across a switch (sched.c schedule), so
 * the CPU's byte is also the running thread's. */
/* klock.c: contended, checked or marked. call: the system call's number when the
 * dispatch takes it, else -1 (for the checker's census of who takes it, lockcheck.h). */
void kernel_lock_slow(u8 busy, long call);
static inline void kernel_lock_for(long call)
{
    u8 busy = __atomic_exchange_n(&kernel_bkl_byte, 1, __ATOMIC_ACQUIRE);
    if (__builtin_expect(busy | kernel_bkl_slow, 0))
        kernel_lock_slow(busy, call);        /* sets this CPU's byte */
    else
        this_cpu()->bkl = BKL_HELD;
}
static inline void kernel_lock(void) { kernel_lock_for(-1); }
/* The release when this CPU's byte is BKL_HELD (the exit's common case). */
static inline void kernel_unlock_plain(struct cpu *c)
{
    c->bkl = BKL_NOT_HELD;
    /* One instruction (the null call's count, icount): only the holder writes it, and an
     * aligned 4-byte store is seen whole by bkl_grace's atomic loads. */
    __asm__ volatile("incl %0" : "+m"(kernel_bkl_gen));
    __atomic_store_n(&kernel_bkl_byte, 0, __ATOMIC_RELEASE);
}
static inline void kernel_unlock(void)
{
    if (__builtin_expect(kernel_bkl_slow, 0))
        marker_lock(LOCK_EV_RELEASE, LOCK_ID_BKL);   /* the coherence model's hand-offs */
    kernel_unlock_plain(this_cpu());
}
/* A grace period of the lock (docs/smp.md "Frees without the BKL"): code holding the BKL
 * copies through the physical map to frames it resolved and reads objects it found, so a
 * frame or object whose last reference goes without the lock is freed only once every
 * hold under way at that moment has ended. bkl_grace_start, called after the last
 * reference went (a full fence orders it after the stores that dropped it), returns true
 * when the lock is free (nothing to wait for), else notes the release count;
 * bkl_grace_over tells whether a release has come since. A hold that began later cannot
 * reach what was dropped before it. Neither takes the lock, nor waits for its holders'
 * successors: the count moves at the first release. */
struct bkl_grace {
    u32 gen;
};
static inline bool bkl_grace_start(struct bkl_grace *g)
{
    __atomic_thread_fence(__ATOMIC_SEQ_CST);
    if (!__atomic_load_n(&kernel_bkl_byte, __ATOMIC_ACQUIRE))
        return true;
    g->gen = __atomic_load_n(&kernel_bkl_gen, __ATOMIC_ACQUIRE);
    return false;
}
static inline bool bkl_grace_over(const struct bkl_grace *g)
{
    return !__atomic_load_n(&kernel_bkl_byte, __ATOMIC_ACQUIRE) ||
           __atomic_load_n(&kernel_bkl_gen, __ATOMIC_ACQUIRE) != g->gen;
}
/* Until bkl_grace_over, answering IPI requests meanwhile (as the lock's own wait). */
void bkl_grace_wait(const struct bkl_grace *g);
/* Whether this CPU holds it through kernel_lock. */
static inline bool kernel_lock_held(void) { return this_cpu()->bkl != BKL_NOT_HELD; }
/* For code reached both with and without it: taken unless this CPU holds it; true when
 * taken here, for kernel_unlock_if to let it go again. */
static inline bool kernel_lock_unless_held(void)
{
    if (kernel_lock_held())
        return false;
    kernel_lock();
    return true;
}
static inline void kernel_unlock_if(bool took)
{
    if (took)
        kernel_unlock();
}
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
