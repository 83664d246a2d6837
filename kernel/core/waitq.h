/*
 * Wait queues (waitq.c): FIFO lists of blocked threads through q_next/q_prev. A thread is on
 * at most one queue at a time (its waiting_on), and on no ready queue while it is on one.
 */
#ifndef WAITQ_H
#define WAITQ_H
#include "thread.h"
#include "types.h"

#define WAIT_FOREVER UINT64_MAX
#define WAIT_KILLED  (-1000)          /* internal: the waiter's task is being torn down */

/* Block the current thread on q for at most timeout_ticks. Returns the result its waker
 * passed (0 for a plain wake-up), E_TIMEOUT, or WAIT_KILLED; never blocks when it would
 * return E_TIMEOUT or WAIT_KILLED at once. */
int waitq_sleep(struct waitq *q, u64 timeout_ticks);
/* The same for a queue covered by lock l (held on entry, let go before the switch or
 * the return) instead of the BKL: every waker of a thread on q holds l. */
struct spinlock;
int waitq_sleep_unlocking(struct waitq *q, u64 timeout_ticks, struct spinlock *l);
void waitq_wake_all(struct waitq *q, int result);
bool waitq_wake_one(struct waitq *q, int result);   /* false when q was empty */

/* Inline: IPC queues and dequeues on its fast path. */
static inline void waitq_append(struct waitq *q, struct thread *t)
{
    t->q_next = NULL;
    t->q_prev = q->tail;
    if (q->tail)
        q->tail->q_next = t;
    else
        q->head = t;
    q->tail = t;
    t->waiting_on = q;
}

static inline void waitq_remove(struct waitq *q, struct thread *t)
{
    if (t->q_prev)
        t->q_prev->q_next = t->q_next;
    else
        q->head = t->q_next;
    if (t->q_next)
        t->q_next->q_prev = t->q_prev;
    else
        q->tail = t->q_prev;
    t->q_next = t->q_prev = NULL;
    t->waiting_on = NULL;
}
#endif
