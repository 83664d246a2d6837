/* Wait queues: blocking on and waking from a FIFO of threads (waitq.h). The inline
 * waitq_append/waitq_remove are shared with the scheduler and the IPC paths. */
#include <ondol/abi.h>
#include "sched.h"
#include "spinlock.h"
#include "thread.h"
#include "waitq.h"

int waitq_sleep_unlocking(struct waitq *q, u64 timeout, struct spinlock *l)
{
    struct thread *t = current_thread();
    int r = thread_dying(t) ? WAIT_KILLED : timeout == 0 ? E_TIMEOUT : 0;
    if (!r) {
        t->state = T_BLOCKED;          /* before a waker can find it (sched.c) */
        t->wait_result = 0;
        waitq_append(q, t);
        sleep_until(t, timeout);
    }
    if (l)
        spin_unlock(l);
    if (r)
        return r;
    schedule();
    return thread_dying(t) ? WAIT_KILLED : t->wait_result;
}

int waitq_sleep(struct waitq *q, u64 timeout) { return waitq_sleep_unlocking(q, timeout, NULL); }

bool waitq_wake_one(struct waitq *q, int result)
{
    if (!q->head)
        return false;
    thread_wake(q->head, result);
    return true;
}

void waitq_wake_all(struct waitq *q, int result)
{
    while (q->head)
        thread_wake(q->head, result);
}
