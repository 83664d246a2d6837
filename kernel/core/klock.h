/* The big kernel lock (klock.c, docs/smp.md "What the kernel lock covers"): the kernel is
 * non-preemptive and serialised; every entry from user mode takes it and every exit
 * releases it (docs/architecture.md), on every CPU.
 *
 * The lock is one byte: the last byte of the IPC fastpath's gate word (ipcfast.S), so that
 * the fastpath takes it with the same locked compare-exchange that tests its settings
 * (the gate is open only while the lock is free). Inline: it is taken and released on every
 * system call. While it waits, a CPU answers the call-function and TLB-shootdown requests
 * posted to it (ipi_poll): the holder may be waiting for exactly those, and interrupts are
 * off here. */
#ifndef KLOCK_H
#define KLOCK_H
#include "arch.h"
#include "marker.h"
#include "types.h"

extern volatile u8 kernel_bkl_byte;          /* ipcfast.S: ipc_fast_gate's last byte */
extern volatile int kernel_bkl_owner;        /* the C holder's CPU, or -1 */
void kernel_lock_wait(void);                 /* klock.c: the contended case */
static inline void kernel_lock(void)
{
    if (__atomic_exchange_n(&kernel_bkl_byte, 1, __ATOMIC_ACQUIRE))
        kernel_lock_wait();
    marker_lock(LOCK_EV_ACQUIRE, LOCK_ID_BKL);   /* the coherence model's hand-offs */
    kernel_bkl_owner = this_cpu()->id;
}
static inline void kernel_unlock(void)
{
    marker_lock(LOCK_EV_RELEASE, LOCK_ID_BKL);
    kernel_bkl_owner = -1;
    __atomic_store_n(&kernel_bkl_byte, 0, __ATOMIC_RELEASE);
}
/* Whether this CPU holds it through kernel_lock (the fastpath, which holds it without an
 * owner, never traps and never calls code that asks). */
static inline bool kernel_lock_held(void) { return kernel_bkl_owner == this_cpu()->id; }
#endif
