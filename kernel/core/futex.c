/*
 * Futexes: waiters hash by (address space, user address) into a few wait queues; a waiter
 * remembers its address in the TCB (futex_addr) so a wake picks only its own. The check of
 * the word and the sleep happen under the kernel lock with interrupts off, so no wake can
 * fall between them: the lost-wake-up race futexes exist to close.
 */
#include <ondol/abi.h>
#include "futex.h"
#include "kernel.h"
#include "sched.h"
#include "task.h"
#include "thread.h"
#include "usercopy.h"
#include "waitq.h"

#define FUTEX_BUCKETS 64

static struct waitq buckets[FUTEX_BUCKETS];

static struct aspace *own_space(void) { return current_thread()->task->as; }

static struct waitq *bucket(const struct aspace *as, u64 uaddr)
{
    u64 h = ((u64)(uintptr_t)as >> 6) ^ (uaddr >> 2);
    h *= 0x9e3779b97f4a7c15ull;                        /* Fibonacci hashing */
    return &buckets[h >> 58];
}

static bool word_address_ok(u64 uaddr) { return (uaddr & 3) == 0; }

long futex_wait(u64 uaddr, u32 expected, u64 timeout)
{
    if (!word_address_ok(uaddr))
        return E_INVAL;
    u32 now;
    if (copyin(&now, uaddr, sizeof now))
        return E_FAULT;
    if (now != expected)
        return FUTEX_CHANGED;
    struct thread *t = current_thread();
    t->futex_addr = uaddr;
    int r = waitq_sleep(bucket(own_space(), uaddr), timeout == SLEEP_FOREVER ? WAIT_FOREVER : timeout);
    t->futex_addr = 0;
    return r == WAIT_KILLED ? E_DEAD : r;
}

long futex_wake(u64 uaddr, u64 n)
{
    if (!word_address_ok(uaddr) || (i64)n < 0)
        return E_INVAL;
    if (!user_range_ok(uaddr, sizeof(u32)))
        return E_FAULT;
    struct aspace *as = own_space();
    struct waitq *q = bucket(as, uaddr);
    long woken = 0;
    for (struct thread *t = q->head, *next; t != NULL && (u64)woken < n; t = next) {
        next = t->q_next;
        if (t->futex_addr == uaddr && t->task->as == as) {
            thread_wake(t, 0);
            woken++;
        }
    }
    return woken;
}
