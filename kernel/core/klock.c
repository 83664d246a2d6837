/* The big kernel lock (klock.h). Owner -1: free, or held by the IPC fastpath. */
#include "klock.h"

volatile int kernel_bkl_owner = -1;

/* Spin until the lock is free and ours, answering IPI requests meanwhile (interrupts are
 * off: the holder may be waiting for this CPU's answer). `pause` also lets QEMU's
 * round-robin vCPU loop run the holder under -icount. */
void kernel_lock_wait(void)
{
    marker_lock(LOCK_EV_WAIT, LOCK_ID_BKL);     /* the model does not count the spinning */
    do {
        while (kernel_bkl_byte) {
            pause();
            ipi_poll();
        }
    } while (__atomic_exchange_n(&kernel_bkl_byte, 1, __ATOMIC_ACQUIRE));
}
