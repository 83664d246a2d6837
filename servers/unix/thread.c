/*
 * The threads of Linux processes as the server knows them (unix.h): a forwarded call
 * names its caller by ondol thread id, and uthread_find turns that into the thread and so
 * the process. A small hash table by tid; each process also lists its own threads.
 * A freed thread is kept until the end of the entry that freed it (uthread_collect).
 */
#include "unix.h"

struct uthread *uthread_buckets[UTHREAD_BUCKETS];
static struct uthread *graveyard;         /* freed by uthread_collect */

static struct uthread **bucket(int tid)
{
    return &uthread_buckets[(unsigned)tid % UTHREAD_BUCKETS];
}

struct uthread *uthread_new(struct proc *p, int tid, int ltid)
{
    struct uthread *t = unix_alloc(sizeof(*t));
    if (!t)
        return NULL;
    t->tid = tid;
    t->ltid = ltid;
    t->proc = p;
    t->next_in_proc = p->threads;
    p->threads = t;
    t->next_hash = *bucket(tid);
    *bucket(tid) = t;
    return t;
}

void uthread_free(struct uthread *t)
{
    unix_wait_drop(t);
    futex_forget(t);
    for (struct uthread **q = bucket(t->tid); *q; q = &(*q)->next_hash)
        if (*q == t) {
            *q = t->next_hash;
            break;
        }
    for (struct uthread **q = &t->proc->threads; *q; q = &(*q)->next_in_proc)
        if (*q == t) {
            *q = t->next_in_proc;
            break;
        }
    t->gone = true;
    unix_step_pending = true;
    t->next_hash = graveyard;
    graveyard = t;
}

void uthread_collect(void)
{
    while (graveyard) {
        struct uthread *t = graveyard;
        graveyard = t->next_hash;
        unix_free(t);
    }
}
