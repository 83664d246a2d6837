/* The lock checker (lockcheck.c; option lockcheck, docs/smp.md "Locking"). The lock
 * operations call it through spinlock.h and klock.h; this header is for the code that
 * waits for locks of its own kind and for the tests. */
#ifndef LOCKCHECK_H
#define LOCKCHECK_H
#include "types.h"

#define LOCKCHECK_DEPTH 8              /* return addresses kept per acquisition */

extern bool lockcheck_opt;             /* option lockcheck */
extern u64 lockcheck_spin_ms;          /* option lockcheck_spin_ms */
/* From now on the checker runs, if the option asks (this CPU's per-CPU state exists). */
void lockcheck_start(void);

struct lockcheck_stats {
    u64 reports, inversions, long_waits;
};
extern struct lockcheck_stats lockcheck_stats;

/* With the checker on, one console line at power off: the reports made and every order
 * of classes seen ("lockcheck: 0 reports; orders seen: bkl>kobj kobj>frame_cache ..."). */
void lockcheck_summary(void);

/* The BKL census (docs/smp.md "Who takes the BKL"): with the checker on, every
 * acquisition of the BKL is counted by the system call whose dispatch took it (call >= 0)
 * or else by its call site (the return address into kernel_lock's caller); the summary
 * prints the total and the largest of each. */
void lockcheck_bkl_census(u64 site, long call);

/* One wait for a lock: called on each turn of the wait loop, it reports the wait once
 * when it has lasted lockcheck_spin_ms. Start with {0, false}. */
struct lockcheck_wait {
    u64 since;
    bool reported;
};
void lockcheck_waiting(const void *lock, u32 cls, struct lockcheck_wait *w);
/* The BKL's C acquisition (klock.c): the order check with this stack before, then the
 * stack kept for reports once it is held. */
void lockcheck_bkl_before(u64 *stack);
void lockcheck_bkl_taken(const u64 *stack);
/* A switch away from the running thread (sched.c): reported (once) if this CPU still
 * holds a lock, the BKL included: none is held across a switch. */
void lockcheck_assert_switch(void);
#endif
