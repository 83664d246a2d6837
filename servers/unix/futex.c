/*
 * futex (docs/unix.md, "Threads"): FUTEX_WAIT, FUTEX_WAKE, their _BITSET forms, FUTEX_REQUEUE
 * and FUTEX_CMP_REQUEUE. A waiter is a record (process, address, bitset) with a wait list
 * of its own; FUTEX_WAKE marks it woken and wakes its list, and the waiting call, run
 * again from the start, finds its record woken and returns 0. The record belongs to one
 * call: a re-run is recognised by the call's started_ns. Addresses are per process (the
 * private and the shared forms alike: shared memory between processes does not reach
 * another process's waiters).
 */
#include "devices.h"
#include "runtime.h"

#define FUTEX_WAIT 0
#define FUTEX_WAKE 1
#define FUTEX_REQUEUE 3
#define FUTEX_CMP_REQUEUE 4
#define FUTEX_WAIT_BITSET 9
#define FUTEX_WAKE_BITSET 10
#define FUTEX_CMD_MASK 0x7f            /* without PRIVATE (128) and CLOCK_REALTIME (256) */

struct futex_waiter {
    struct futex_waiter *next;
    struct proc *proc;
    uint64_t addr;
    uint32_t bitset;
    struct uthread *thread;
    uint64_t started_ns;               /* the call it belongs to */
    bool woken;
    struct waitlist list;
};

static struct futex_waiter *waiters;   /* oldest first */

static void unlink_waiter(struct futex_waiter *w)
{
    for (struct futex_waiter **q = &waiters; *q; q = &(*q)->next)
        if (*q == w) {
            *q = w->next;
            break;
        }
    unix_free(w);
}

static struct futex_waiter *waiter_of(const struct uthread *t)
{
    for (struct futex_waiter *w = waiters; w; w = w->next)
        if (w->thread == t)
            return w;
    return NULL;
}

void futex_forget(struct uthread *t)
{
    struct futex_waiter *w;
    while ((w = waiter_of(t)))
        unlink_waiter(w);
}

/* The deadline of a wait: FUTEX_WAIT's timeout is relative, _BITSET's absolute. */
static long deadline_of(struct ucall *c, bool absolute, uint64_t *out)
{
    *out = UNIX_NO_DEADLINE;
    if (!c->a[3])
        return 0;
    struct linux_timespec ts;
    if (copy_in(c->proc, &ts, c->a[3], sizeof(ts)) < 0)
        return -EFAULT;
    if (ts.tv_sec < 0 || ts.tv_nsec < 0 || ts.tv_nsec >= 1000000000)
        return -EINVAL;
    uint64_t ns = (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
    *out = absolute ? ns : ucall_start_ns(c) + ns;
    return 0;
}

static long futex_wait(struct ucall *c, uint32_t bitset, bool absolute)
{
    struct futex_waiter *w = waiter_of(c->thread);
    if (w && w->started_ns != ucall_start_ns(c)) {        /* left over from an ended call */
        unlink_waiter(w);
        w = NULL;
    }
    if (w && w->woken) {
        unlink_waiter(w);
        return 0;
    }
    uint64_t deadline;
    long r = deadline_of(c, absolute, &deadline);
    if (r < 0 || (w && unix_now_ns() >= deadline)) {
        if (w)
            unlink_waiter(w);
        return r < 0 ? r : -ETIMEDOUT;
    }
    if (!w) {
        uint32_t v;
        if (copy_in(c->proc, &v, c->a[0], 4) < 0)
            return -EFAULT;
        if (v != (uint32_t)c->a[2])
            return -EAGAIN;
        if (!(w = unix_alloc(sizeof(*w))))
            return -ENOMEM;
        *w = (struct futex_waiter){.proc = c->proc, .addr = c->a[0], .bitset = bitset,
                                   .thread = c->thread, .started_ns = ucall_start_ns(c)};
        struct futex_waiter **q = &waiters;
        while (*q)
            q = &(*q)->next;
        *q = w;
    }
    return ucall_block(c, &w->list, deadline);
}

/* Wake up to n waiters on (p, addr) whose bitset meets mask; move up to `move` more to
 * to_addr (requeue). The number woken. */
static long wake(struct proc *p, uint64_t addr, uint32_t mask, long n, long move,
                 uint64_t to_addr)
{
    long woken = 0;
    for (struct futex_waiter *w = waiters; w; w = w->next) {
        if (w->proc != p || w->addr != addr || w->woken || !(w->bitset & mask))
            continue;
        if (woken < n) {
            w->woken = true;
            waitlist_wake(&w->list);
            woken++;
        } else if (move-- > 0) {
            w->addr = to_addr;
        } else {
            break;
        }
    }
    return woken;
}

static long requeue(struct ucall *c, bool compare)
{
    if (compare) {
        uint32_t v;
        if (copy_in(c->proc, &v, c->a[0], 4) < 0)
            return -EFAULT;
        if (v != (uint32_t)c->a[5])
            return -EAGAIN;
    }
    if ((int32_t)c->a[2] < 0 || (int64_t)c->a[3] < 0 || (c->a[4] & 3))
        return -EINVAL;
    return wake(c->proc, c->a[0], ~0u, (int32_t)c->a[2], (long)c->a[3], c->a[4]);
}

long lx_futex(struct ucall *c)
{
    unsigned cmd = (unsigned)c->a[1] & FUTEX_CMD_MASK;
    uint32_t bitset = (uint32_t)c->a[5];
    if (c->a[0] & 3)
        return -EINVAL;
    switch (cmd) {
    case FUTEX_WAIT:
        return futex_wait(c, ~0u, false);
    case FUTEX_WAIT_BITSET:
        return bitset ? futex_wait(c, bitset, true) : -EINVAL;
    case FUTEX_WAKE:
        return wake(c->proc, c->a[0], ~0u, (int32_t)c->a[2] < 0 ? 0 : (int32_t)c->a[2], 0, 0);
    case FUTEX_WAKE_BITSET:
        return bitset ? wake(c->proc, c->a[0], bitset, (int32_t)c->a[2], 0, 0) : -EINVAL;
    case FUTEX_REQUEUE:
        return requeue(c, false);
    case FUTEX_CMP_REQUEUE:
        return requeue(c, true);
    default:
        return -ENOSYS;
    }
}

/* A thread's exit with CLONE_CHILD_CLEARTID / set_tid_address: 0 into the word and one
 * waiter woken (pthread_join waits there). */
void futex_clear_child_tid(struct uthread *t)
{
    if (!t->clear_child_tid)
        return;
    uint32_t zero = 0;
    if (copy_out(t->proc, t->clear_child_tid, &zero, 4) == 0)
        wake(t->proc, t->clear_child_tid, ~0u, 1, 0, 0);
}
