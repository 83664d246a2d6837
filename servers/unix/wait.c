/*
 * Waiting calls (unix.h, "waiting"): a call that cannot finish yet is kept here and run
 * again from the start when something it waits for may have changed.
 *
 * A handler calls ucall_block(c, list, deadline) once per list it waits on (poll waits on
 * several) and returns UNIX_BLOCKED. The first ucall_block of a run copies the call into
 * a struct ucall_wait; each further one in the same run adds a link to another list.
 * waitlist_wake moves every call linked on the list to the woken queue, unlinking it from
 * all its lists and from the timer, so a call is woken once whatever woke it.
 * unix_run_woken then runs each woken call again; one that blocks again gets a new record,
 * one that finishes is answered through the runtime (unix_answer). Deadlines: a call
 * with one is also on the timer list (sorted); unix_timers_expire wakes those past due,
 * and the re-run sees that its time has passed.
 */
#include "unix.h"

struct wait_link {                  /* one list a waiting call is on */
    struct ucall_wait *call;
    struct wait_link *next;         /* next on the same waitlist */
    struct waitlist *list;
    struct wait_link *sibling;      /* the call's next link */
};

struct ucall_wait {
    struct ucall call;              /* a copy: it runs again from the start */
    struct wait_link *links;
    uint64_t deadline_ns;
    struct ucall_wait *next;        /* on the woken queue or the timer list */
    bool woken;
};

static struct ucall_wait *woken_head, *woken_tail;
static struct ucall_wait *timers;           /* sorted by deadline */
struct ucall_wait *ucall_blocking;          /* the record of the call now running, if it
                                               has blocked during this run (reset by
                                               ucall_run_begin) */
static const struct ucall *blocking_call;

bool unix_step_pending;

static void timer_insert(struct ucall_wait *w)
{
    unix_step_pending = true;
    struct ucall_wait **p = &timers;
    while (*p && (*p)->deadline_ns <= w->deadline_ns)
        p = &(*p)->next;
    w->next = *p;
    *p = w;
}

static void timer_remove(struct ucall_wait *w)
{
    for (struct ucall_wait **p = &timers; *p; p = &(*p)->next)
        if (*p == w) {
            *p = w->next;
            return;
        }
}

/* The earliest deadline any ucall_block of the run gave is the call's. */
static void set_deadline(struct ucall_wait *w, uint64_t deadline_ns)
{
    if (deadline_ns >= w->deadline_ns)
        return;
    if (w->deadline_ns != UNIX_NO_DEADLINE)
        timer_remove(w);
    w->deadline_ns = deadline_ns;
    timer_insert(w);
}

/* The record of c for this run: the one made by an earlier ucall_block of the same run,
 * or a new one. NULL when memory runs out. */
static struct ucall_wait *record_of(struct ucall *c, uint64_t deadline_ns)
{
    if (ucall_blocking && blocking_call == c) {
        set_deadline(ucall_blocking, deadline_ns);
        return ucall_blocking;
    }
    struct ucall_wait *w = unix_alloc(sizeof(*w));
    if (!w)
        return NULL;
    w->call = *c;
    w->deadline_ns = UNIX_NO_DEADLINE;
    set_deadline(w, deadline_ns);
    if (c->thread)
        c->thread->wait = w;
    ucall_blocking = w;
    blocking_call = c;
    return w;
}

long ucall_block(struct ucall *c, struct waitlist *list, uint64_t deadline_ns)
{
    struct ucall_wait *w = record_of(c, deadline_ns);
    if (!w)
        return -ENOMEM;
    if (!list)
        return UNIX_BLOCKED;                /* the deadline only (nanosleep) */
    struct wait_link *l = unix_alloc(sizeof(*l));
    if (!l)
        return -ENOMEM;     /* the record stays: its other links or deadline still wake it */
    *l = (struct wait_link){.call = w, .list = list, .sibling = w->links};
    w->links = l;
    struct wait_link **tail = &list->head;
    while (*tail)
        tail = &(*tail)->next;
    *tail = l;
    return UNIX_BLOCKED;
}

static void unlink_from(struct waitlist *list, struct wait_link *l)
{
    for (struct wait_link **p = &list->head; *p; p = &(*p)->next)
        if (*p == l) {
            *p = l->next;
            return;
        }
}

/* Take w off every list and the timer, and free its links. */
static void detach(struct ucall_wait *w)
{
    for (struct wait_link *l = w->links, *next; l; l = next) {
        next = l->sibling;
        unlink_from(l->list, l);
        unix_free(l);
    }
    w->links = NULL;
    if (w->deadline_ns != UNIX_NO_DEADLINE)
        timer_remove(w);
}

static void wake(struct ucall_wait *w)
{
    if (w->woken)
        return;
    detach(w);
    w->woken = true;
    unix_step_pending = true;
    w->next = NULL;
    if (woken_tail)
        woken_tail->next = w;
    else
        woken_head = w;
    woken_tail = w;
}

void waitlist_wake(struct waitlist *list)
{
    while (list->head)
        wake(list->head->call);
}

static struct ucall_wait *next_woken(void)
{
    struct ucall_wait *w = woken_head;
    if (w && !(woken_head = w->next))
        woken_tail = NULL;
    return w;
}

/* Finish a call's run: the result, unless it blocked again or needs no answer. */
static void finish(struct ucall *c, long result)
{
    if (result != UNIX_BLOCKED && result != UNIX_NOREPLY)
        unix_answer(c, result);
}

void unix_run_woken(void)
{
    struct ucall_wait *w;
    while ((w = next_woken())) {
        struct ucall c = w->call;
        if (c.thread && c.thread->wait == w)
            c.thread->wait = NULL;
        unix_free(w);
        finish(&c, unix_dispatch_again(&c));
    }
}

/* ---- the server's own timers (alarm, setitimer): a second sorted list ---- */
static struct unix_timer *armed;

void unix_timer_disarm(struct unix_timer *t)
{
    if (!t->armed)
        return;
    for (struct unix_timer **p = &armed; *p; p = &(*p)->next)
        if (*p == t) {
            *p = t->next;
            break;
        }
    t->armed = false;
}

void unix_timer_arm(struct unix_timer *t, uint64_t deadline_ns)
{
    unix_timer_disarm(t);
    struct unix_timer **p = &armed;
    while (*p && (*p)->deadline_ns <= deadline_ns)
        p = &(*p)->next;
    t->deadline_ns = deadline_ns;
    t->armed = true;
    unix_step_pending = true;
    t->next = *p;
    *p = t;
}

uint64_t unix_next_deadline(void)
{
    uint64_t calls = timers ? timers->deadline_ns : UNIX_NO_DEADLINE;
    uint64_t own = armed ? armed->deadline_ns : UNIX_NO_DEADLINE;
    return calls < own ? calls : own;
}

/* A fired timer is off the list before fire() runs, so fire() may arm it again. */
void unix_timers_expire(uint64_t now_ns)
{
    while (timers && timers->deadline_ns <= now_ns)
        wake(timers);
    while (armed && armed->deadline_ns <= now_ns) {
        struct unix_timer *t = armed;
        unix_timer_disarm(t);
        t->fire(t);
    }
}

/* Remove t's waiting call from everything; the record, or NULL if t waits for nothing. */
static struct ucall_wait *take_wait(struct uthread *t)
{
    struct ucall_wait *w = t->wait;
    if (!w)
        return NULL;
    t->wait = NULL;
    if (w->woken) {                         /* already queued to run again */
        for (struct ucall_wait **p = &woken_head, *prev = NULL; *p; prev = *p, p = &(*p)->next)
            if (*p == w) {
                *p = w->next;
                if (woken_tail == w)
                    woken_tail = prev;
                break;
            }
    } else {
        detach(w);
    }
    return w;
}

bool unix_wait_end(struct uthread *t, long result)
{
    struct ucall_wait *w = take_wait(t);
    if (!w)
        return false;
    unix_answer(&w->call, result);
    unix_free(w);
    return true;
}

void unix_wait_drop(struct uthread *t)
{
    unix_free(take_wait(t));
}

const struct ucall *unix_wait_call(const struct uthread *t)
{
    return t->wait ? &t->wait->call : NULL;
}
