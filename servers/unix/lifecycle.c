/*
 * Process lifecycle (docs/unix.md, "Processes"): fork, vfork and clone with fork-style
 * flags (a new task whose memory is a copy-on-write copy of the parent's, or with
 * CLONE_VM the parent's task itself; one thread with the parent's registers and rax 0;
 * CLONE_VFORK holds the parent until the child execs or exits), exit and exit_group,
 * wait4 and waitid, and proc_exit, the end of a process for every cause (exit, a fatal
 * signal).
 */
#include "devices.h"
#include "runtime.h"
#include "signal.h"

#define CLONE_VM 0x100ull
#define CLONE_FS 0x200ull
#define CLONE_FILES 0x400ull
#define CLONE_SIGHAND 0x800ull
#define CLONE_VFORK 0x4000ull
#define CLONE_PARENT 0x8000ull
#define CLONE_THREAD 0x10000ull
#define CLONE_SETTLS 0x80000ull
#define CLONE_PARENT_SETTID 0x100000ull
#define CLONE_CHILD_CLEARTID 0x200000ull
#define CLONE_CHILD_SETTID 0x1000000ull
#define SIGNAL_MASK 0xffull
/* clone3 only (the upper 32 bits; legacy clone ignores them, as Linux's) */
#define CLONE_CLEAR_SIGHAND 0x100000000ull
#define CLONE_INTO_CGROUP 0x200000000ull
/* clone3 refuses these (Linux reuses their bits); CLONE_NEWTIME is a CSIGNAL bit it keeps */
#define CLONE_DETACHED 0x400000ull
#define CLONE_NEWTIME 0x80ull
#define CLONE_PIDFD 0x1000ull

#define WNOHANG 1
#define WUNTRACED 2
#define WEXITED 4
#define WCONTINUED 8
#define WNOWAIT 0x01000000
#define WNOTHREAD 0x20000000
#define WALL 0x40000000
#define WCLONE 0x80000000u

/* ---- fork ----------------------------------------------------------------------------- */
/* The child's files and cwd: shared (CLONE_FILES, CLONE_FS) or copied. */
static long share_or_copy(struct proc *child, const struct proc *parent, uint64_t flags)
{
    if (flags & CLONE_FILES) {
        child->fds = parent->fds;
        child->fds->refs++;
    } else {
        child->fds = fdtable_copy(parent->fds);
    }
    if (flags & CLONE_FS) {
        child->fs = parent->fs;
        child->fs->refs++;
    } else {
        child->fs = fs_context_copy(parent->fs);
    }
    return child->fds && child->fs ? 0 : -ENOMEM;
}

/* Undo a fork that failed before the child's thread was known: its thread (tid > 0)
 * ends, and its task unless it shares the parent's (proc_end_task). */
static void fork_undo(struct proc *child, long tid)
{
    if (tid > 0)
        rt_thread_end((int)tid);
    proc_end_task(child);
    if (child->fds)
        fdtable_put(child->fds);
    if (child->fs)
        fs_context_put(child->fs);
    proc_free(child);
}

/* The child's task: the parent's own (CLONE_VM: the memory is shared), or a new one with
 * a COW copy of the parent's memory. */
static long child_task(struct proc *child, const struct proc *parent, uint64_t flags)
{
    if (flags & CLONE_VM) {
        child->task = parent->task;
        return 0;
    }
    long task = rt_task_create(parent->comm[0] ? parent->comm : "linux");
    if (task == E_NOMEM)
        return -EAGAIN;     /* the kernel's task table or memory is full: POSIX's "lacked
                             * the resources to create another process", as for threads */
    if (task < 0)
        return rt_errno(task);
    child->task = (int)task;
    long r = rt_task_linux((int)task);
    if (r == 0)
        r = rt_vm_clone((int)task, parent->task);
    return r < 0 ? rt_errno(r) : 0;
}

static void copy_identity(struct proc *child, const struct proc *parent)
{
    child->ctty = parent->ctty;
    vfs_memcpy(child->comm, parent->comm, sizeof(child->comm));
    child->image = parent->image;
    if (child->image)
        child->image->refs++;
    child->brk_start = parent->brk_start;
    child->brk_end = parent->brk_end;
    child->brk_mapped = parent->brk_mapped;
    vfs_memcpy(child->rlim, parent->rlim, sizeof(child->rlim));
    child->rlim_set = parent->rlim_set;
}

static void count_uid(struct proc *p, void *arg)
{
    unsigned *want_and_count = arg;
    if (p->uid[ID_REAL] == want_and_count[0])
        want_and_count[1]++;
}

/* RLIMIT_NPROC, as Linux: a non-root user's processes (zombies too, until reaped) may
 * not reach the caller's soft limit. */
static bool over_nproc(const struct proc *p)
{
    if (p->uid[ID_EFFECTIVE] == 0)
        return false;
    unsigned want_and_count[2] = {p->uid[ID_REAL], 0};
    proc_for_each(count_uid, want_and_count);
    return want_and_count[1] >= proc_rlimit_cur(p, LINUX_RLIMIT_NPROC);
}

/* fork-style clone: the child's pid, or -errno (EAGAIN at the process limits). */
static long fork_process(struct ucall *c, uint64_t flags, uint64_t stack, uint64_t ptid,
                         uint64_t ctid, uint64_t tls)
{
    struct proc *parent = c->proc;
    struct user_regs regs;
    if (rt_regs_get(c->thread->tid, &regs) < 0)
        return -EINVAL;
    struct proc *child = over_nproc(parent) ? NULL : proc_create(parent);
    if (!child)
        return -EAGAIN;
    long r = share_or_copy(child, parent, flags);
    if (r == 0)
        r = child_task(child, parent, flags);
    copy_identity(child, parent);
    if (r == 0 && (flags & CLONE_CHILD_SETTID))
        r = copy_out(child, ctid, &child->pid, 4);
    regs.rax = 0;
    regs.rsp = stack ? stack : regs.rsp;
    regs.fs_base = (flags & CLONE_SETTLS) ? tls : regs.fs_base;
    long tid = r == 0 ? rt_thread_start(child->task, &regs) : r;
    struct uthread *t = tid > 0 ? uthread_new(child, (int)tid, child->pid) : NULL;
    if (!t) {
        fork_undo(child, tid);
        return tid < 0 ? (r < 0 ? r : rt_errno(tid)) : -ENOMEM;
    }
    t->clear_child_tid = (flags & CLONE_CHILD_CLEARTID) ? ctid : 0;
    if (flags & CLONE_PARENT_SETTID)
        copy_out(parent, ptid, &child->pid, 4);
    signal_fork(child, parent, flags & CLONE_SIGHAND, t, c->thread);
    thread_inherit_affinity(t, c->thread);
    if (flags & CLONE_CLEAR_SIGHAND)
        signal_reset_handlers(child);
    return child->pid;
}

long lx_fork(struct ucall *c) { return fork_process(c, SIGCHLD, 0, 0, 0, 0); }

bool proc_vfork_call(const struct ucall *c)
{
    /* clone3's flags are in user memory; its c->done is set only while it waits so */
    return c->nr == 58 || (c->nr == 56 && (c->a[0] & CLONE_VFORK)) || (c->nr == 435 && c->done);
}

/* The parent's half of CLONE_VFORK: the first run starts the child (its pid kept in
 * c->done) and waits on the parent's child_exit list; each re-run (the child left the
 * shared task: proc_end_task wakes the parent; or it exited) returns the pid once the
 * child no longer runs in the parent's memory. Signals wait until then (signal.c). */
static long vfork_wait(struct ucall *c)
{
    struct proc *child = proc_find((int)c->done);
    if (child && !child->zombie && child->task == c->proc->task)
        return ucall_block(c, &c->proc->child_exit, UNIX_NO_DEADLINE);
    return (long)c->done;
}

/* fork_process, then (CLONE_VFORK) the wait above. */
static long clone_process(struct ucall *c, uint64_t flags, uint64_t stack, uint64_t ptid,
                          uint64_t ctid, uint64_t tls)
{
    if (c->done)
        return vfork_wait(c);
    long pid = fork_process(c, flags, stack, ptid, ctid, tls);
    if (pid < 0 || !(flags & CLONE_VFORK))
        return pid;
    c->done = (uint64_t)pid;
    return vfork_wait(c);
}

/* vfork: the child runs in the parent's memory (CLONE_VM) while the parent waits for its
 * exec or exit (CLONE_VFORK), as Linux's. */
long lx_vfork(struct ucall *c)
{
    return clone_process(c, CLONE_VM | CLONE_VFORK | SIGCHLD, 0, 0, 0, 0);
}

/* A new thread of the caller's process (CLONE_THREAD): the caller's registers with rax 0,
 * the new stack and TLS; its Linux tid, or -errno. */
static long new_thread(struct ucall *c, uint64_t flags, uint64_t stack, uint64_t ptid,
                       uint64_t ctid, uint64_t tls)
{
    struct user_regs regs;
    if (rt_regs_get(c->thread->tid, &regs) < 0)
        return -EINVAL;
    regs.rax = 0;
    regs.rsp = stack ? stack : regs.rsp;
    regs.fs_base = (flags & CLONE_SETTLS) ? tls : regs.fs_base;
    long tid = rt_thread_start(c->proc->task, &regs);
    if (tid < 0)
        return tid == E_NOMEM ? -EAGAIN : rt_errno(tid);
    struct uthread *t = uthread_new(c->proc, (int)tid, UNIX_TID_BASE + (int)tid);
    if (!t) {
        rt_thread_end((int)tid);
        return -EAGAIN;
    }
    t->clear_child_tid = (flags & CLONE_CHILD_CLEARTID) ? ctid : 0;
    if (flags & CLONE_PARENT_SETTID)
        copy_out(c->proc, ptid, &t->ltid, 4);
    if (flags & CLONE_CHILD_SETTID)
        copy_out(c->proc, ctid, &t->ltid, 4);
    signal_thread_new(t, c->thread);
    thread_inherit_affinity(t, c->thread);
    return t->ltid;
}

/* clone and clone3 after their own checks: copy_process's flag rules, then a thread or
 * a process. stack is the child's stack pointer (0: the caller's). */
static long clone_flags(struct ucall *c, uint64_t flags, uint64_t stack, uint64_t ptid,
                        uint64_t ctid, uint64_t tls)
{
    if ((flags & CLONE_THREAD) && !(flags & CLONE_SIGHAND))
        return -EINVAL;
    if ((flags & CLONE_SIGHAND) && !(flags & CLONE_VM))
        return -EINVAL;
    if (flags & CLONE_THREAD)
        return new_thread(c, flags, stack, ptid, ctid, tls);
    return clone_process(c, flags, stack, ptid, ctid, tls);
}

/* clone(flags, stack, ptid, ctid, tls): only the low 32 bits of flags count (Linux's
 * lower_32_bits), the low byte the exit signal. */
long lx_clone(struct ucall *c)
{
    return clone_flags(c, (uint32_t)c->a[0], c->a[1], c->a[2], c->a[3], c->a[4]);
}

/* ---- clone3 ----------------------------------------------------------------------------- */
/* struct clone_args as Linux 6.1 knows it (88 bytes); a caller's may be shorter (64 bytes
 * at least: up to tls) or longer (a newer libc's). */
struct clone_args {
    uint64_t flags, pidfd, child_tid, parent_tid, exit_signal, stack, stack_size, tls,
        set_tid, set_tid_size, cgroup;
};
#define CLONE_ARGS_SIZE_VER0 64
#define CLONE_ARGS_MAX 4096            /* Linux: a page */
#define MAX_PID_NS_LEVEL 32

/* The bytes [uaddr, uaddr + n) of a newer caller's struct that this server does not know:
 * 0 when all are zero, -E2BIG when one is not, -EFAULT (copy_struct_from_user). */
static long clone3_tail_zero(struct ucall *c, uint64_t uaddr, uint64_t n)
{
    uint64_t chunk[8];
    for (uint64_t at = 0; at < n; at += sizeof(chunk)) {
        uint64_t len = n - at < sizeof(chunk) ? n - at : sizeof(chunk);
        __builtin_memset(chunk, 0, sizeof(chunk));
        if (copy_in(c->proc, chunk, uaddr + at, len) < 0)
            return -EFAULT;
        for (unsigned i = 0; i < 8; i++)
            if (chunk[i])
                return -E2BIG;
    }
    return 0;
}

/* clone3's arguments read and checked in Linux's order (copy_clone_args_from_user, then
 * clone3_args_valid): 0, -E2BIG, -EINVAL or -EFAULT. */
static long clone3_args(struct ucall *c, struct clone_args *a)
{
    uint64_t uargs = c->a[0], size = c->a[1];
    if (size > CLONE_ARGS_MAX)
        return -E2BIG;
    if (size < CLONE_ARGS_SIZE_VER0)
        return -EINVAL;
    uint64_t known = size < sizeof(*a) ? size : sizeof(*a);
    long r = clone3_tail_zero(c, uargs + known, size - known);
    *a = (struct clone_args){0};
    if (r == 0 && copy_in(c->proc, a, uargs, known) < 0)
        r = -EFAULT;
    if (r < 0)
        return r;
    bool bad = a->set_tid_size > MAX_PID_NS_LEVEL || !a->set_tid != !a->set_tid_size ||
               a->exit_signal > LINUX_NSIG ||
               (a->flags & ~(0xffffffffull | CLONE_CLEAR_SIGHAND | CLONE_INTO_CGROUP)) ||
               (a->flags & (CLONE_DETACHED | (SIGNAL_MASK & ~CLONE_NEWTIME))) ||
               ((a->flags & CLONE_SIGHAND) && (a->flags & CLONE_CLEAR_SIGHAND)) ||
               ((a->flags & (CLONE_THREAD | CLONE_PARENT)) && a->exit_signal) ||
               (!a->stack && a->stack_size) ||
               (a->stack && (!a->stack_size || !user_range_ok(a->stack, a->stack_size)));
    return bad ? -EINVAL : 0;
}

/* clone3(args, size): clone's work with the arguments in a struct, the child's stack
 * given as its lowest address and size (sp = stack + stack_size), and CLONE_CLEAR_SIGHAND
 * (the child's caught signals back to SIG_DFL: glibc's posix_spawn asks for it). Not
 * kept: a pid chosen by the caller (set_tid: -EPERM, as for a caller without
 * CAP_CHECKPOINT_RESTORE), pidfds (CLONE_PIDFD) and cgroups (CLONE_INTO_CGROUP): -EINVAL.
 * A CLONE_VFORK call runs again while its child runs in its memory (vfork_wait). */
long lx_clone3(struct ucall *c)
{
    if (c->done)
        return vfork_wait(c);
    struct clone_args a;
    long r = clone3_args(c, &a);
    if (r < 0)
        return r;
    if (a.flags & (CLONE_PIDFD | CLONE_INTO_CGROUP))
        return -EINVAL;
    if (a.set_tid)
        return -EPERM;
    return clone_flags(c, a.flags | a.exit_signal, a.stack ? a.stack + a.stack_size : 0,
                       a.parent_tid, a.child_tid, a.tls);
}

/* ---- exit ----------------------------------------------------------------------------- */
static void wake_init(void)
{
    struct proc *init = proc_find(1);
    if (init)
        waitlist_wake(&init->child_exit);
}

static void say_init_exit(int status)
{
    char line[48] = "unix: init exited, status ";
    size_t n = vfs_strlen(line);
    char digits[12];
    int k = 0;
    unsigned v = (unsigned)status;
    do
        digits[k++] = (char)('0' + v % 10);
    while ((v /= 10) && k < 11);
    while (k)
        line[n++] = digits[--k];
    line[n] = 0;
    unix_log(line);
}

void proc_exit(struct proc *p, int wait_status)
{
    if (p->zombie)
        return;
    signal_exit(p);
    proc_end_task(p);
    proc_image_put(p->image);          /* a zombie has no program: cmdline is empty */
    p->image = NULL;
    if (p->fds)
        fdtable_put(p->fds);
    if (p->fs)
        fs_context_put(p->fs);
    p->fds = NULL;
    p->fs = NULL;
    p->zombie = true;
    p->exit_status = wait_status;
    proc_orphan_children(p);
    wake_init();
    if (p->pid == 1) {                 /* Linux panics; the machine powers off here */
        say_init_exit(wait_status);
        unix_stats_write();
        rt_poweroff();
        return;
    }
    struct proc *parent = proc_find(p->ppid);
    if (!parent)
        return;
    waitlist_wake(&parent->child_exit);
    if (signal_child_exited(parent, p))
        proc_free(p);
}

long lx_exit_group(struct ucall *c)
{
    proc_exit(c->proc, (int)(c->a[0] & 0xff) << 8);
    return UNIX_NOREPLY;
}

/* exit: the whole process when this is its last thread; else the thread ends, its
 * clear_child_tid word is cleared and a joiner woken. */
long lx_exit(struct ucall *c)
{
    struct uthread *t = c->thread;
    if (t->proc->threads == t && !t->next_in_proc)
        return lx_exit_group(c);
    futex_clear_child_tid(t);
    signal_thread_exit(t);
    rt_thread_end(t->tid);
    uthread_free(t);
    return UNIX_NOREPLY;
}

long lx_set_tid_address(struct ucall *c)
{
    c->thread->clear_child_tid = c->a[0];
    return c->thread->ltid;
}

long lx_gettid(struct ucall *c) { return c->thread->ltid; }

/* ---- wait ----------------------------------------------------------------------------- */
/* Does child match wait4's pid argument for the caller? */
static bool matches(const struct proc *self, const struct proc *child, long pid)
{
    if (child->ppid != self->pid || child == self)
        return false;
    if (pid > 0)
        return child->pid == pid;
    if (pid == 0)
        return child->pgid == self->pgid;
    if (pid == -1)
        return true;
    return child->pgid == -pid;
}

struct wait_scan {
    const struct proc *self;
    long pid;
    uint64_t options;              /* WUNTRACED, WCONTINUED: which reports count */
    struct proc *zombie;           /* the first matching zombie */
    struct proc *changed;          /* the first matching child with a report to give */
    bool any;                      /* some child matches */
};

/* A stop or continue of p that options ask for (signal.c sets p->sig_wait_report). */
static bool has_report(const struct proc *p, uint64_t options)
{
    int r = p->sig_wait_report;
    if (!r || p->zombie)
        return false;
    return r == 0xffff ? (options & WCONTINUED) != 0 : (options & WUNTRACED) != 0;
}

static void scan_one(struct proc *p, void *arg)
{
    struct wait_scan *s = arg;
    if (!matches(s->self, p, s->pid))
        return;
    s->any = true;
    if (p->zombie && !s->zombie)
        s->zombie = p;
    if (!s->changed && has_report(p, s->options))
        s->changed = p;
}

static struct wait_scan scan_children(const struct proc *self, long pid, uint64_t options)
{
    struct wait_scan s = {.self = self, .pid = pid, .options = options};
    proc_for_each(scan_one, &s);
    return s;
}

/* wait4 on a child that stopped or continued: its report (read and cleared) as the
 * status, no resource usage; the child's pid or -EFAULT. */
static long report_change(struct ucall *c, struct proc *child)
{
    int status = child->sig_wait_report;
    static const uint8_t no_usage[144];
    if ((c->a[1] && copy_out(c->proc, c->a[1], &status, 4) < 0) ||
        (c->a[3] && copy_out(c->proc, c->a[3], no_usage, sizeof(no_usage)) < 0))
        return -EFAULT;
    child->sig_wait_report = 0;
    return child->pid;
}

long lx_wait4(struct ucall *c)
{
    long pid = (long)(int32_t)c->a[0];
    uint64_t options = (uint32_t)c->a[2];
    if (options & ~(uint64_t)(WNOHANG | WUNTRACED | WCONTINUED | WNOTHREAD | WALL | WCLONE))
        return -EINVAL;
    if (pid == -2147483648L)
        return -ESRCH;
    struct wait_scan s = scan_children(c->proc, pid, options);
    if (!s.zombie && s.changed)
        return report_change(c, s.changed);
    if (s.zombie) {
        int status = s.zombie->exit_status, found = s.zombie->pid;
        if (c->a[1] && copy_out(c->proc, c->a[1], &status, 4) < 0)
            return -EFAULT;
        static const uint8_t no_usage[144];
        if (c->a[3] && copy_out(c->proc, c->a[3], no_usage, sizeof(no_usage)) < 0)
            return -EFAULT;
        stats_reaped(s.zombie);
        proc_free(s.zombie);
        return found;
    }
    if (!s.any)
        return -ECHILD;
    if (options & WNOHANG)
        return 0;
    return ucall_block(c, &c->proc->child_exit, UNIX_NO_DEADLINE);
}

/* waitid's siginfo about child: SIGCHLD, si_code (CLD_*), its pid, uid and status. */
static void chld_siginfo(uint8_t info[128], const struct proc *child, int code, int status)
{
    int32_t words[7] = {SIGCHLD, 0, code, 0, child->pid, (int32_t)child->uid[ID_REAL], status};
    vfs_memset(info, 0, 128);
    vfs_memcpy(info, words, 12);
    vfs_memcpy(info + 16, &words[4], 12);
}

/* ...for a child that ended: exited with its code, or killed (dumped) by its signal. */
static void child_siginfo(uint8_t info[128], const struct proc *child)
{
    int st = child->exit_status, sig = st & 0x7f;
    chld_siginfo(info, child, sig ? ((st & 0x80) ? 3 : 2) : 1, sig ? sig : (st >> 8) & 0xff);
}

/* waitid on a child that stopped (CLD_STOPPED, the signal) or continued (CLD_CONTINUED,
 * SIGCONT); the report is cleared unless WNOWAIT. */
static long waitid_report_change(struct ucall *c, struct proc *child, uint64_t options)
{
    int r = child->sig_wait_report;
    bool cont = r == 0xffff;
    uint8_t info[128];
    chld_siginfo(info, child, cont ? CLD_CONTINUED : CLD_STOPPED,
                 cont ? SIGCONT : (r >> 8) & 0xff);
    if (c->a[2] && copy_out(c->proc, c->a[2], info, sizeof(info)) < 0)
        return -EFAULT;
    if (!(options & WNOWAIT))
        child->sig_wait_report = 0;
    return 0;
}

long lx_waitid(struct ucall *c)
{
    uint64_t type = (uint32_t)c->a[0], options = (uint32_t)c->a[3];
    long id = (long)(int32_t)c->a[1];
    if (options & ~(uint64_t)(WNOHANG | WEXITED | WUNTRACED | WCONTINUED | WNOWAIT |
                              WNOTHREAD | WALL | WCLONE) ||
        !(options & (WEXITED | WUNTRACED | WCONTINUED)) || type > 3)
        return -EINVAL;
    long pid = type == 0 ? -1 : type == 1 ? id : type == 2 ? (id ? -id : 0) : -1;
    if ((type == 1 && id <= 0) || type == 3)
        return -EINVAL;
    struct wait_scan s = scan_children(c->proc, pid, options);
    uint8_t info[128] = {0};
    if (!(s.zombie && (options & WEXITED)) && s.changed)
        return waitid_report_change(c, s.changed, options);
    if (s.zombie && (options & WEXITED)) {
        child_siginfo(info, s.zombie);
        if (c->a[2] && copy_out(c->proc, c->a[2], info, sizeof(info)) < 0)
            return -EFAULT;
        if (!(options & WNOWAIT)) {
            stats_reaped(s.zombie);
            proc_free(s.zombie);
        }
        return 0;
    }
    if (!s.any)
        return -ECHILD;
    if (options & WNOHANG)
        return c->a[2] && copy_out(c->proc, c->a[2], info, sizeof(info)) < 0 ? -EFAULT : 0;
    return ucall_block(c, &c->proc->child_exit, UNIX_NO_DEADLINE);
}
