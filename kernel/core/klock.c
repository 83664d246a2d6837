/* The big kernel lock (klock.h). */
#include "klock.h"
#include "lockcheck.h"
#include "options.h"

u8 kernel_bkl_slow;

/* The flag changes under the lock (an option set by a system call, the checker's start at
 * boot): this CPU's byte follows, so that the release tells the markers as before. */
void kernel_lock_flags_update(void)
{
    kernel_bkl_slow = lockcheck_on || markers_on;
    if (kernel_lock_held())
        this_cpu()->bkl = kernel_bkl_slow ? BKL_HELD_SLOW : BKL_HELD;
}

/* Among the CPUs set up (cpu_init: self set, the byte BKL_NOT_HELD until it locks). */
int kernel_lock_holder(void)
{
    for (int i = 0; i < MAX_CPUS; i++)
        if (cpus[i].self && __atomic_load_n(&cpus[i].bkl, __ATOMIC_RELAXED) != BKL_NOT_HELD)
            return i;
    return -1;
}

/* Spin until the lock is free and ours, answering IPI requests meanwhile (interrupts are
 * off: the holder may be waiting for this CPU's answer). `pause` also lets QEMU's
 * round-robin vCPU loop run the holder under -icount. */
static void wait(struct lockcheck_wait *w)
{
    marker_lock(LOCK_EV_WAIT, LOCK_ID_BKL);     /* the model does not count the spinning */
    do {
        while (kernel_bkl_byte) {
            pause();
            ipi_poll();
            if (w)
                lockcheck_waiting((const void *)&kernel_bkl_byte, LOCK_BKL, w);
        }
    } while (__atomic_exchange_n(&kernel_bkl_byte, 1, __ATOMIC_ACQUIRE));
}

void bkl_grace_wait(const struct bkl_grace *g)
{
    struct lockcheck_wait w = {0, false};
    while (!bkl_grace_over(g)) {
        pause();
        ipi_poll();
        if (lockcheck_on)
            lockcheck_waiting((const void *)&kernel_bkl_byte, LOCK_BKL, &w);
    }
}

/* The lock was busy, or the checker runs: the order check first, then the wait. */
static void take_checked(u8 busy)
{
    u64 stack[LOCKCHECK_DEPTH];
    struct lockcheck_wait w = {0, false};
    lockcheck_bkl_before(stack);
    if (busy)
        wait(&w);
    lockcheck_bkl_taken(stack);
}

/* Contended, checked or marked (kernel_bkl_slow): the wait, then the model's acquire
 * event (the coherence model's hand-offs, marker.h). */
void kernel_lock_slow(u8 busy, long call)
{
    if (lockcheck_on) {
        lockcheck_bkl_census((u64)__builtin_return_address(0), call);
        take_checked(busy);
    }
    else if (busy)
        wait(NULL);
    marker_lock(LOCK_EV_ACQUIRE, LOCK_ID_BKL);
    this_cpu()->bkl = kernel_bkl_slow ? BKL_HELD_SLOW : BKL_HELD;
}
