/*
 * The signal system calls (docs/unix.md, "Signals"), with Linux 6.1's argument checks in
 * Linux's order: rt_sigaction, rt_sigprocmask, rt_sigpending, rt_sigsuspend, pause,
 * rt_sigtimedwait, sigaltstack, kill, tkill, tgkill, rt_sigqueueinfo. A set is 8 bytes (sigsetsize must
 * be 8, except rt_sigpending's, which may be smaller). Signals made deliverable by a call
 * (an unblock, a kill of oneself) are delivered when the call is answered.
 */
#include <ondol/srv.h>
#include "signal_impl.h"
#include "runtime.h"

#define SIGSET_SIZE 8
#define KNOWN_SA_FLAGS (SA_NOCLDSTOP | SA_NOCLDWAIT | SA_SIGINFO | SA_ONSTACK | SA_RESTART | \
                        SA_NODEFER | SA_RESETHAND | SA_RESTORER)

static bool valid_signal(int64_t sig) { return sig >= 1 && sig <= LINUX_NSIG; }

/* ---- dispositions and masks ---- */

/* Setting SIG_IGN (or a default that ignores) drops what is pending, as POSIX asks. */
long lx_rt_sigaction(struct ucall *c)
{
    int64_t sig = (int32_t)c->a[0];
    struct linux_sigaction act;
    if (c->a[3] != SIGSET_SIZE)
        return -EINVAL;
    if (c->a[1] && copy_in(c->proc, &act, c->a[1], sizeof(act)))
        return -EFAULT;
    if (!valid_signal(sig) || (c->a[1] && (SIG_BIT(sig) & SIG_UNBLOCKABLE)))
        return -EINVAL;
    struct linux_sigaction *k = &c->proc->sig_hand->act[sig - 1], old = *k;
    old.flags &= KNOWN_SA_FLAGS;
    if (c->a[1]) {
        act.flags &= KNOWN_SA_FLAGS;
        act.mask &= ~SIG_UNBLOCKABLE;
        *k = act;
        if (sig_discarded_by(c->proc, (int)sig))
            flush_everywhere(c->proc, SIG_BIT(sig));
    }
    if (c->a[2] && copy_out(c->proc, c->a[2], &old, sizeof(old)))
        return -EFAULT;
    return 0;
}

long lx_rt_sigprocmask(struct ucall *c)
{
    struct uthread *t = c->thread;
    uint64_t old = t->sig_blocked, set;
    if (c->a[3] != SIGSET_SIZE)
        return -EINVAL;
    if (c->a[1]) {
        if (copy_in(c->proc, &set, c->a[1], sizeof(set)))
            return -EFAULT;
        set &= ~SIG_UNBLOCKABLE;
        if (c->a[0] == SIG_BLOCK)
            t->sig_blocked |= set;
        else if (c->a[0] == SIG_UNBLOCK)
            t->sig_blocked &= ~set;
        else if (c->a[0] == SIG_SETMASK)
            t->sig_blocked = set;
        else
            return -EINVAL;
    }
    if (c->a[2] && copy_out(c->proc, c->a[2], &old, sizeof(old)))
        return -EFAULT;
    return 0;
}

long lx_rt_sigpending(struct ucall *c)
{
    struct uthread *t = c->thread;
    if (c->a[1] > SIGSET_SIZE)
        return -EINVAL;
    uint64_t pending = (t->sig_pending.set | c->proc->sig_pending.set) & t->sig_blocked;
    return copy_out(c->proc, c->a[0], &pending, c->a[1]) ? -EFAULT : 0;
}

/* ---- waiting for a signal ---- */

/* pause and sigsuspend wait on no list: only a signal (unix_wait_end) ends them. */
static long wait_for_signal(struct ucall *c)
{
    if (sig_deliverable(c->thread))
        return -ERESTARTNOHAND;
    return ucall_block(c, NULL, UNIX_NO_DEADLINE);
}

long lx_pause(struct ucall *c) { return wait_for_signal(c); }

/* The mask is set on the first run only (a re-run must not save the temporary mask);
 * signal_deliver restores the saved one after the handler's frame (or at once). */
long lx_rt_sigsuspend(struct ucall *c)
{
    struct uthread *t = c->thread;
    uint64_t set;
    if (c->a[1] != SIGSET_SIZE)
        return -EINVAL;
    if (copy_in(c->proc, &set, c->a[0], sizeof(set)))
        return -EFAULT;
    if (!t->sig_restore_mask) {
        t->sig_saved_mask = t->sig_blocked;
        t->sig_restore_mask = true;
    }
    t->sig_blocked = set & ~SIG_UNBLOCKABLE;
    return wait_for_signal(c);
}

/* A signal of set pending for t (the thread's first): its number, 0 when none. */
static int take_from(struct uthread *t, uint64_t set, struct sig_info *info)
{
    struct sig_pending *qs[2] = {&t->sig_pending, &t->proc->sig_pending};
    for (int i = 0; i < 2; i++) {
        uint64_t ready = qs[i]->set & set;
        if (ready) {
            int sig = __builtin_ctzll(ready) + 1;
            pending_take(qs[i], sig, info);
            return sig;
        }
    }
    return 0;
}

static long write_siginfo(struct ucall *c, uint64_t uaddr, const struct sig_info *info)
{
    struct linux_siginfo si;
    __builtin_memset(&si, 0, sizeof(si));
    si.si_signo = info->signo;
    si.si_code = info->code;
    si.u.kill.pid = info->pid;
    si.u.kill.uid = info->uid;
    si.u.kill.value = info->value;
    if (info->signo == SIGCHLD && info->code > 0)
        si.u.chld.status = info->status;
    return copy_out(c->proc, uaddr, &si, sizeof(si));
}

/* rt_sigtimedwait(set, info, timeout, sigsetsize): waits on the thread's own list, which
 * a signal of set wakes (signal.c's notify); another signal ends it with -EINTR. */
long lx_rt_sigtimedwait(struct ucall *c)
{
    struct uthread *t = c->thread;
    uint64_t set;
    struct linux_timespec ts = {0, 0};
    if (c->a[3] != SIGSET_SIZE)
        return -EINVAL;
    if (copy_in(c->proc, &set, c->a[0], sizeof(set)))
        return -EFAULT;
    if (c->a[2] && copy_in(c->proc, &ts, c->a[2], sizeof(ts)))
        return -EFAULT;
    if (c->a[2] && (ts.tv_sec < 0 || ts.tv_nsec < 0 || ts.tv_nsec >= 1000000000))
        return -EINVAL;
    set &= ~SIG_UNBLOCKABLE;
    struct sig_info info;
    int sig = take_from(t, set, &info);
    if (sig) {
        t->sig_wait_set = 0;
        return c->a[1] && write_siginfo(c, c->a[1], &info) ? -EFAULT : sig;
    }
    uint64_t deadline = UNIX_NO_DEADLINE;
    if (c->a[2]) {
        uint64_t ns = (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
        deadline = ucall_start_ns(c) + ns;
        if (deadline <= unix_now_ns())
            return -EAGAIN;
    }
    t->sig_wait_set = set;
    return ucall_block(c, &t->sig_waiters, deadline);
}

/* ---- the alternate stack ---- */

long lx_sigaltstack(struct ucall *c)
{
    struct uthread *t = c->thread;
    struct user_regs r;
    struct linux_stack ss, old;
    if (c->a[0] && copy_in(c->proc, &ss, c->a[0], sizeof(ss)))
        return -EFAULT;
    if (rt_regs_get(t->tid, &r) < 0)
        return -EFAULT;
    bool on = !(t->ss_flags & SS_AUTODISARM) && t->ss_size && r.rsp > t->ss_sp &&
              r.rsp - t->ss_sp <= t->ss_size;
    old = (struct linux_stack){.ss_sp = t->ss_sp, .ss_size = t->ss_size,
                               .ss_flags = (int32_t)((!t->ss_size ? SS_DISABLE : on ? SS_ONSTACK : 0) |
                                                     (t->ss_flags & SS_AUTODISARM))};
    if (c->a[0]) {
        uint32_t flags = (uint32_t)ss.ss_flags, mode = flags & ~SS_AUTODISARM;
        if (on)
            return -EPERM;
        if (mode != SS_DISABLE && mode != SS_ONSTACK && mode != 0)
            return -EINVAL;
        if (mode != SS_DISABLE && ss.ss_size < MINSIGSTKSZ)
            return -ENOMEM;
        t->ss_sp = mode == SS_DISABLE ? 0 : ss.ss_sp;
        t->ss_size = mode == SS_DISABLE ? 0 : ss.ss_size;
        t->ss_flags = flags;
    }
    if (c->a[1] && copy_out(c->proc, c->a[1], &old, sizeof(old)))
        return -EFAULT;
    return 0;
}

/* ---- sending ---- */

static struct sig_info user_info(struct ucall *c, int sig, int code)
{
    return (struct sig_info){.signo = sig, .code = code, .pid = c->proc->pid,
                             .uid = c->proc->uid[ID_REAL]};
}

/* Send to every process `match` accepts: 0 when at least one took it, -ESRCH when none
 * matched, -EINVAL for a bad signal (checked only once a target exists, as Linux). */
static long kill_matching(struct ucall *c, int64_t sig, bool (*match)(struct ucall *,
                                                                      struct proc *, int))
{
    bool any = false;
    int pgid = (int32_t)c->a[0] < 0 ? -(int32_t)c->a[0] : c->proc->pgid;
    struct sig_info info = user_info(c, (int)sig, SI_USER);
    for (struct proc *p = proc_next(NULL), *next; p; p = next) {
        next = proc_next(p);
        if (p->zombie || !match(c, p, pgid))
            continue;
        if (sig != 0 && !valid_signal(sig))
            return -EINVAL;
        any = true;
        if (sig)
            send_info(p, NULL, &info);
    }
    return any ? 0 : -ESRCH;
}

/* kill(-1): every process but init and the caller. */
static bool all_but_init_and_self(struct ucall *c, struct proc *p, int pgid)
{
    (void)pgid;
    return p->pid != 1 && p != c->proc;
}

static bool in_group(struct ucall *c, struct proc *p, int pgid)
{
    (void)c;
    return p->pgid == pgid;
}

long lx_kill(struct ucall *c)
{
    int64_t pid = (int32_t)c->a[0], sig = (int32_t)c->a[1];
    if (pid == -1)
        return kill_matching(c, sig, all_but_init_and_self);
    if (pid <= 0)
        return pid == INT32_MIN ? -ESRCH : kill_matching(c, sig, in_group);
    struct proc *p = pid <= UNIX_PID_MAX ? proc_find((int)pid) : NULL;
    if (!p)
        return -ESRCH;
    if (sig != 0 && !valid_signal(sig))
        return -EINVAL;
    if (sig && !p->zombie) {
        struct sig_info info = user_info(c, (int)sig, SI_USER);
        send_info(p, NULL, &info);
    }
    return 0;
}

struct uthread *thread_find_linux(int64_t tgid, int64_t tid)
{
    for (struct proc *p = proc_next(NULL); p; p = proc_next(p)) {
        if (p->zombie || (tgid > 0 && p->pid != tgid))
            continue;
        for (struct uthread *t = p->sig_threads; t; t = t->sig_next)
            if (thread_linux_tid(t) == tid)
                return t;
    }
    return NULL;
}

static long thread_kill(struct ucall *c, int64_t tgid, int64_t tid, int64_t sig)
{
    if (tid <= 0)
        return -EINVAL;
    struct uthread *t = thread_find_linux(tgid, tid);
    if (!t)
        return -ESRCH;
    if (sig != 0 && !valid_signal(sig))
        return -EINVAL;
    if (sig) {
        struct sig_info info = user_info(c, (int)sig, SI_TKILL);
        send_info(t->proc, t, &info);
    }
    return 0;
}

long lx_tkill(struct ucall *c)
{
    return thread_kill(c, 0, (int32_t)c->a[0], (int32_t)c->a[1]);
}

long lx_tgkill(struct ucall *c)
{
    int64_t tgid = (int32_t)c->a[0];
    if (tgid <= 0)
        return -EINVAL;
    return thread_kill(c, tgid, (int32_t)c->a[1], (int32_t)c->a[2]);
}

/* rt_sigqueueinfo(tgid, sig, info): the caller's siginfo (si_code and the union's pid,
 * uid and value) goes with the signal; only to itself may a process claim a kernel or
 * kill/tkill si_code (EPERM), as Linux. */
long lx_rt_sigqueueinfo(struct ucall *c)
{
    int64_t pid = (int32_t)c->a[0], sig = (int32_t)c->a[1];
    struct linux_siginfo si;
    if (copy_in(c->proc, &si, c->a[2], sizeof(si)))
        return -EFAULT;
    if ((si.si_code >= 0 || si.si_code == SI_TKILL) && pid != c->proc->pid)
        return -EPERM;
    struct proc *p = pid > 0 && pid <= UNIX_PID_MAX ? proc_find((int)pid) : NULL;
    if (!p)
        return -ESRCH;
    if (sig != 0 && !valid_signal(sig))
        return -EINVAL;
    if (sig && !p->zombie)
        send_info(p, NULL, &(struct sig_info){.signo = (int)sig, .code = si.si_code,
                                              .pid = si.u.kill.pid, .uid = si.u.kill.uid,
                                              .value = si.u.kill.value});
    return 0;
}
