/* Wait queues: blocking on and waking from a FIFO of threads (waitq.h). The inline
 * waitq_append/waitq_remove are shared with the scheduler and the IPC paths. */
#include <ondol/abi.h>
#include "sched.h"
#include "thread.h"
#include "waitq.h"

int waitq_sleep(struct waitq *q, u64 timeout)
{
    struct thread *t = current_thread();
    if (thread_dying(t))
        return WAIT_KILLED;
    if (timeout == 0)
        return E_TIMEOUT;
    t->state = T_BLOCKED;              /* before a waker can find it (sched.c) */
    t->wait_result = 0;
    waitq_append(q, t);
    sleep_until(t, timeout);
    schedule();
    return thread_dying(t) ? WAIT_KILLED : t->wait_result;
}

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
