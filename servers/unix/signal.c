/*
 * Signals: state, sending, default actions and the process lifecycle hooks (signal.h;
 * docs/unix.md, "Signals"). Delivery and rt_sigreturn are in signal_frame.c, the system
 * calls in signal_calls.c, alarm and the itimers in signal_timer.c.
 *
 * A signal is sent to a process (kill: p->sig_pending) or to one thread (tgkill, faults:
 * t->sig_pending). Sending does what Linux's prepare_signal and complete_signal do: a stop
 * signal cancels a pending SIGCONT and SIGCONT cancels pending stops and continues a
 * stopped process; an ignored signal is dropped unless blocked; SIGKILL ends the process
 * at once. Otherwise the signal becomes pending and one thread that does not block it is
 * told: a thread waiting in a call has its wait ended (the call's restart code, or the
 * progress made: signal_deliver then decides between -EINTR and a restart), a thread
 * running in user mode is interrupted (rt_thread_interrupt), and a thread whose call is
 * being handled finds it when that call is answered. Delivery happens in signal_deliver.
 *
 * Everything here runs in the server, one call at a time; nothing blocks.
 */
#include "signal.h"
#include "runtime.h"
#include "signal_impl.h"

/* ---- classification ---- */

enum sig_default sig_default_action(int sig)
{
    switch (sig) {
    case SIGQUIT: case SIGILL: case SIGTRAP: case SIGABRT: case SIGBUS: case SIGFPE:
    case SIGSEGV: case SIGXCPU: case SIGXFSZ: case SIGSYS:
        return SIG_DO_CORE;
    case SIGSTOP: case SIGTSTP: case SIGTTIN: case SIGTTOU:
        return SIG_DO_STOP;
    case SIGCONT:
        return SIG_DO_CONT;
    case SIGCHLD: case SIGURG: case SIGWINCH:
        return SIG_DO_IGNORE;
    default:
        return SIG_DO_TERM;
    }
}

/* Linux's sig_handler_ignored: the disposition discards the signal. */
bool sig_discarded_by(const struct proc *p, int sig)
{
    uint64_t h = p->sig_hand->act[sig - 1].handler;
    return h == SIG_IGN || (h == SIG_DFL && (sig_default_action(sig) == SIG_DO_IGNORE ||
                                             sig_default_action(sig) == SIG_DO_CONT));
}

/* ---- pending sets ---- */

/* Make info->signo pending in q. A standard signal already pending keeps its first info;
 * a real-time one queues another (up to SIG_QUEUE_MAX; beyond, or without memory, the
 * bit alone records it). */
void pending_add(struct sig_pending *q, const struct sig_info *info)
{
    int sig = info->signo;
    if (sig < SIGRTMIN && (q->set & SIG_BIT(sig)))
        return;
    q->set |= SIG_BIT(sig);
    struct sig_queued *e = q->queued < SIG_QUEUE_MAX ? unix_alloc(sizeof(*e)) : NULL;
    if (!e)
        return;
    e->info = *info;
    struct sig_queued **tail = &q->queue;
    while (*tail)
        tail = &(*tail)->next;
    *tail = e;
    q->queued++;
}

/* Take sig out of q: its first queued info (or SI_USER's when none was kept); the bit
 * stays while more of a real-time signal are queued. */
void pending_take(struct sig_pending *q, int sig, struct sig_info *info)
{
    *info = (struct sig_info){.signo = sig, .code = SI_USER};
    bool more = false, found = false;
    for (struct sig_queued **e = &q->queue; *e;) {
        if ((*e)->info.signo != sig) {
            e = &(*e)->next;
        } else if (!found) {
            struct sig_queued *gone = *e;
            *info = gone->info;
            *e = gone->next;
            unix_free(gone);
            q->queued--;
            found = true;
        } else {
            more = true;
            break;
        }
    }
    if (!more)
        q->set &= ~SIG_BIT(sig);
}

/* Drop every signal of mask from q. */
void pending_flush(struct sig_pending *q, uint64_t mask)
{
    for (struct sig_queued **e = &q->queue; *e;) {
        if (mask & SIG_BIT((*e)->info.signo)) {
            struct sig_queued *gone = *e;
            *e = gone->next;
            unix_free(gone);
            q->queued--;
        } else {
            e = &(*e)->next;
        }
    }
    q->set &= ~mask;
}

/* Drop mask from the process's and every thread's pending sets. */
void flush_everywhere(struct proc *p, uint64_t mask)
{
    pending_flush(&p->sig_pending, mask);
    for (struct uthread *t = p->sig_threads; t; t = t->sig_next)
        pending_flush(&t->sig_pending, mask);
}

/* ---- telling a thread ---- */

/* The result that ends a wait in call c when a signal comes: the progress made, or the
 * restart code Linux's version of the call returns (signal_deliver resolves it). */
static long interrupted_result(const struct ucall *c)
{
    if (c->done > 0)
        return (long)c->done;
    switch (c->nr) {
    case 35: case 230:                         /* nanosleep, clock_nanosleep */
        return -ERESTART_RESTARTBLOCK;
    case 7: case 23: case 270: case 271:       /* poll, select, pselect6, ppoll */
    case 34: case 130:                         /* pause, rt_sigsuspend */
        return -ERESTARTNOHAND;
    case 128:                                  /* rt_sigtimedwait */
        return -EINTR;
    default:
        return -ERESTARTSYS;
    }
}

/* sig is pending for t: make t notice. */
static void notify(struct uthread *t, int sig)
{
    const struct ucall *c = unix_wait_call(t);
    if (c && c->nr == 128 && (t->sig_wait_set & SIG_BIT(sig))) {
        waitlist_wake(&t->sig_waiters);        /* rt_sigtimedwait runs again and takes it */
    } else if (c && !proc_vfork_call(c)) {
        unix_wait_end(t, interrupted_result(c));
    } else if (!t->in_call && !t->sig_interrupting && !t->sig_held) {
        t->sig_interrupting = true;
        rt_thread_interrupt(t->tid);
    }
}

/* t takes sig now: it does not block it, or waits for it in rt_sigtimedwait (which
 * unblocks its set while it waits, as Linux's). */
static bool wants(struct uthread *t, int sig)
{
    const struct ucall *c;
    return !(t->sig_blocked & SIG_BIT(sig)) ||
           ((t->sig_wait_set & SIG_BIT(sig)) && (c = unix_wait_call(t)) && c->nr == 128);
}

/* A thread of p that wants sig: one waiting in a call first (it is the one a signal can
 * free), else the first; NULL when none does. */
static struct uthread *wanting_thread(struct proc *p, int sig)
{
    struct uthread *first = NULL;
    for (struct uthread *t = p->sig_threads; t; t = t->sig_next) {
        if (!wants(t, sig))
            continue;
        if (unix_wait_call(t))
            return t;
        if (!first)
            first = t;
    }
    return first;
}

/* ---- stop, continue, terminate ---- */

unsigned sig_terminations;

void sig_terminate(struct proc *p, int status)
{
    sig_terminations++;
    proc_exit(p, status);
}

static void tell_parent(struct proc *p, int code, int status)
{
    struct proc *parent = proc_find(p->ppid);
    if (!parent || parent->zombie)
        return;
    if (!(parent->sig_hand->act[SIGCHLD - 1].flags & SA_NOCLDSTOP))
        send_info(parent, NULL, &(struct sig_info){.signo = SIGCHLD, .code = code,
                                                   .pid = p->pid, .status = status});
    proc_wake_parent(p);
}

/* p stops (a stop signal's default action): every thread keeps or gets held. */
void stop_process(struct proc *p, int sig)
{
    if (p->sig_stopped)
        return;
    p->sig_stopped = true;
    p->sig_wait_report = sig << 8 | 0x7f;
    for (struct uthread *t = p->sig_threads; t; t = t->sig_next)
        if (!unix_wait_call(t) && !t->in_call && !t->sig_held && !t->sig_interrupting) {
            t->sig_interrupting = true;
            rt_thread_interrupt(t->tid);
        }
    tell_parent(p, CLD_STOPPED, sig);
}

/* A held thread resumes: what is deliverable now is delivered, then it is answered. */
static void release(struct uthread *t)
{
    t->sig_held = false;
    long result = t->sig_held_result;
    bool set = signal_deliver(t, result);
    if (t->sig_held)
        return;
    struct ucall c = {.proc = t->proc, .thread = t};
    unix_answer(&c, set || result == SIGNAL_INTERRUPTED ? 0 : result);
}

static void continue_process(struct proc *p)
{
    p->sig_stopped = false;
    p->sig_wait_report = 0xffff;
    unsigned terminations = sig_terminations;
    for (struct uthread *t = p->sig_threads, *next; t; t = next) {
        next = t->sig_next;
        if (t->sig_held)
            release(t);
        if (sig_terminations != terminations || p->sig_stopped)
            return;                    /* it ended (and may be freed), or stopped again */
    }
    tell_parent(p, CLD_CONTINUED, SIGCONT);
}

/* ---- sending ---- */

/* Linux's prepare_signal: a stop signal cancels a pending SIGCONT, SIGCONT cancels
 * pending stops. */
static void cancel_opposites(struct proc *p, int sig)
{
    if (sig_default_action(sig) == SIG_DO_STOP)
        flush_everywhere(p, SIG_BIT(SIGCONT));
    else if (sig == SIGCONT)
        flush_everywhere(p, SIG_BIT(SIGSTOP) | SIG_BIT(SIGTSTP) | SIG_BIT(SIGTTIN) |
                                SIG_BIT(SIGTTOU));
}

/* The signals target t blocks, or (t NULL) every thread of p blocks (none without
 * threads). */
static uint64_t blocked_by_all(struct proc *p, struct uthread *t)
{
    if (t)
        return t->sig_blocked;
    uint64_t blocked = p->sig_threads ? ~0ull : 0;
    for (struct uthread *u = p->sig_threads; u; u = u->sig_next)
        blocked &= u->sig_blocked;
    return blocked;
}

/* Linux's sig_ignored: dropped at once when discarded and not blocked by the target
 * (a thread, or every thread of the process). */
static bool dropped(struct proc *p, struct uthread *t, int sig)
{
    return sig_discarded_by(p, sig) && !(blocked_by_all(p, t) & SIG_BIT(sig));
}

void send_info(struct proc *p, struct uthread *t, const struct sig_info *info)
{
    int sig = info->signo;
    if (p->zombie)
        return;
    if (sig == SIGKILL) {
        sig_terminate(p, SIGKILL);
        return;
    }
    cancel_opposites(p, sig);
    bool keep = !dropped(p, t, sig);
    if (keep)
        pending_add(t ? &t->sig_pending : &p->sig_pending, info);
    if (sig == SIGCONT && p->sig_stopped) {
        continue_process(p);           /* its threads take what is pending as they resume */
        return;
    }
    if (!keep || p->sig_stopped)
        return;                        /* a stopped process takes it when continued */
    struct uthread *to = t ? (wants(t, sig) ? t : NULL) : wanting_thread(p, sig);
    if (to)
        notify(to, sig);
}

void signal_send(struct proc *p, int sig)
{
    if (sig > 0 && sig <= LINUX_NSIG)
        send_info(p, NULL, &(struct sig_info){.signo = sig, .code = SI_KERNEL});
}

void signal_send_to_thread(struct uthread *t, int sig)
{
    if (sig > 0 && sig <= LINUX_NSIG)
        send_info(t->proc, t, &(struct sig_info){.signo = sig, .code = SI_KERNEL});
}

/* Linux: SIGPIPE comes from the writer itself (SI_USER, its own pid). */
void signal_send_pipe(struct proc *p)
{
    send_info(p, NULL, &(struct sig_info){.signo = SIGPIPE, .code = SI_USER, .pid = p->pid});
}

void signal_send_pgrp(int pgid, int sig)
{
    for (struct proc *p = proc_next(NULL), *next; p; p = next) {
        next = proc_next(p);
        if (p->pgid == pgid)
            signal_send(p, sig);
    }
}

/* Linux's is_current_pgrp_orphaned: no member has a parent in another group of the
 * same session (init's children do not count as such parents). */
bool pgrp_orphaned(int pgid)
{
    for (struct proc *p = proc_next(NULL); p; p = proc_next(p)) {
        if (p->pgid != pgid || p->zombie)
            continue;
        struct proc *parent = proc_find(p->ppid);
        if (parent && parent->pid != 1 && parent->pgid != pgid && parent->sid == p->sid)
            return false;
    }
    return true;
}

long signal_tty_background(struct proc *p, int sig)
{
    if (p->sig_hand->act[sig - 1].handler == SIG_IGN || (blocked_by_all(p, NULL) & SIG_BIT(sig)))
        return sig == SIGTTIN ? -EIO : 0;
    if (pgrp_orphaned(p->pgid))
        return -EIO;
    signal_send_pgrp(p->pgid, sig);
    return -ERESTARTSYS;
}

/* ---- process lifecycle ---- */

bool signal_child_exited(struct proc *parent, struct proc *child)
{
    const struct linux_sigaction *a = &parent->sig_hand->act[SIGCHLD - 1];
    int st = child->exit_status;
    bool signaled = (st & 0x7f) != 0;
    struct sig_info info = {.signo = SIGCHLD, .pid = child->pid,
                            .code = !signaled ? CLD_EXITED : st & 0x80 ? CLD_DUMPED : CLD_KILLED,
                            .status = signaled ? st & 0x7f : (st >> 8) & 0xff};
    if (a->handler != SIG_IGN)
        send_info(parent, NULL, &info);
    return a->handler == SIG_IGN || (a->flags & SA_NOCLDWAIT);
}

static void thread_link(struct uthread *t)
{
    struct uthread **tail = &t->proc->sig_threads;
    while (*tail)
        tail = &(*tail)->sig_next;
    t->sig_next = NULL;
    *tail = t;
}

void signal_thread_new(struct uthread *t, const struct uthread *creator)
{
    t->sig_blocked = creator ? creator->sig_blocked : 0;
    thread_link(t);
    if (sig_deliverable(t)) {          /* sent to the process before (an exec's new image) */
        t->sig_interrupting = true;
        rt_thread_interrupt(t->tid);
    }
}

void signal_fork(struct proc *child, const struct proc *parent, bool share,
                 struct uthread *child_thread, const struct uthread *parent_thread)
{
    if (share) {
        sig_handlers_put(child->sig_hand);
        child->sig_hand = parent->sig_hand;
        child->sig_hand->refs++;
    } else {
        __builtin_memcpy(child->sig_hand->act, parent->sig_hand->act, sizeof(child->sig_hand->act));
    }
    child_thread->sig_blocked = parent_thread->sig_blocked;
    child_thread->ss_sp = parent_thread->ss_sp;
    child_thread->ss_size = parent_thread->ss_size;
    child_thread->ss_flags = parent_thread->ss_flags;
    thread_link(child_thread);
}

void signal_reset_handlers(struct proc *p)
{
    for (int i = 0; i < LINUX_NSIG; i++) {
        struct linux_sigaction *a = &p->sig_hand->act[i];
        *a = (struct linux_sigaction){.handler = a->handler == SIG_IGN ? SIG_IGN : SIG_DFL};
    }
}

/* Linux's unshare_sighand, flush_signal_handlers and the exec reset of the alternate
 * stack: -ENOMEM when a shared table cannot be copied. */
long signal_exec(struct proc *p)
{
    if (p->sig_hand->refs > 1) {
        struct sig_handlers *own = unix_alloc(sizeof(*own));
        if (!own)
            return -ENOMEM;
        __builtin_memcpy(own->act, p->sig_hand->act, sizeof(own->act));
        own->refs = 1;
        sig_handlers_put(p->sig_hand);
        p->sig_hand = own;
    }
    signal_reset_handlers(p);
    for (struct uthread *t = p->sig_threads; t; t = t->sig_next)
        t->ss_sp = t->ss_size = t->ss_flags = 0;
    return 0;
}

void signal_exit(struct proc *p)
{
    unix_timer_disarm(&p->sig_alarm);
    pending_flush(&p->sig_pending, ~0ull);
}

void signal_thread_exit(struct uthread *t)
{
    for (struct uthread **q = &t->proc->sig_threads; *q; q = &(*q)->sig_next)
        if (*q == t) {
            *q = t->sig_next;
            break;
        }
    pending_flush(&t->sig_pending, ~0ull);
}
