/*
 * The allocator's mutex in P2's kinds (docs/alloc.md). One lock word, three ways to wait:
 *   LOCK_SLEEP_RETRY  uClibc's: test-and-set, a short spin, then sleep 10 ms and retry;
 *   LOCK_BLOCKING     a futex-style mutex (0 free, 1 held, 2 held with waiters);
 *   LOCK_FREE         the allocator takes no lock on its fast paths (per-thread heaps and
 *                     atomic remote frees); its rare global paths use the blocking mutex.
 */
#ifndef ONDOL_MALLOC_LOCK_H
#define ONDOL_MALLOC_LOCK_H

enum lock_kind { LOCK_SLEEP_RETRY, LOCK_BLOCKING, LOCK_FREE, LOCK_KINDS };

struct mlock {
    int word;
};

/* The lock kind named `name` ("sleep-retry", "blocking", "lock-free"), or -1. */
int lock_kind_parse(const char *name);
const char *lock_kind_name(enum lock_kind kind);

/* Acquire and release; both may be called before main() and never allocate.
 * Acquisition waits as `kind` says (LOCK_FREE waits as LOCK_BLOCKING). */
void mlock_acquire(struct mlock *l, enum lock_kind kind);
void mlock_release(struct mlock *l, enum lock_kind kind);

#endif
