/*
 * The process table and the process-group and session calls (docs/unix.md). A process is
 * created as a copy of its parent's identity (process group, session, uid, gid); init
 * (the first process, pid 1) has no parent and adopts orphans. Pids count up and wrap,
 * never reusing a number that is still a pid, a process group or a session, as Linux.
 * At most UNIX_MAX_PROCS processes exist (a fork bomb stops there); the lookups are
 * linear scans over at most that many.
 */
#include "unix.h"
#include "vfs.h"

static struct proc *table;          /* every process, live or zombie */
static uint64_t forks;               /* processes created since boot (/proc/stat) */
static int nprocs, last_pid;

struct proc *proc_find(int pid)
{
    for (struct proc *p = table; p; p = p->next)
        if (p->pid == pid)
            return p;
    return NULL;
}

/* The table in order (newest first), for /proc's listing (procfs.h). */
struct proc *proc_next(const struct proc *after)
{
    return after ? after->next : table;
}

static bool pid_in_use(int pid)
{
    for (struct proc *p = table; p; p = p->next)
        if (p->pid == pid || p->pgid == pid || p->sid == pid)
            return true;
    return false;
}

/* The next free pid after last_pid, or 0 when every one is taken. */
static int next_pid(void)
{
    for (int tries = 0; tries < UNIX_PID_MAX; tries++) {
        last_pid = last_pid >= UNIX_PID_MAX ? 2 : last_pid + 1;
        if (!pid_in_use(last_pid))
            return last_pid;
    }
    return 0;
}

struct proc *proc_create(struct proc *parent)
{
    int pid = nprocs < UNIX_MAX_PROCS ? next_pid() : 0;
    struct proc *p = pid ? unix_alloc(sizeof(*p)) : NULL;
    struct sig_handlers *hand = p ? unix_alloc(sizeof(*hand)) : NULL;
    if (!hand) {
        unix_free(p);
        return NULL;
    }
    hand->refs = 1;
    p->sig_hand = hand;
    p->pid = pid;
    p->pgid = parent ? parent->pgid : pid;
    p->sid = parent ? parent->sid : pid;
    p->ppid = parent ? parent->pid : 0;
    for (int k = 0; k < ID_KINDS; k++) {
        p->uid[k] = parent ? parent->uid[k] : 0;
        p->gid[k] = parent ? parent->gid[k] : 0;
    }
    p->groups = parent ? parent->groups : NULL;
    if (p->groups)
        p->groups->refs++;
    p->next = table;
    table = p;
    nprocs++;
    forks++;
    return p;
}

uint64_t proc_forks(void) { return forks; }

void proc_orphan_children(struct proc *p)
{
    for (struct proc *c = table; c; c = c->next)
        if (c->ppid == p->pid && c != p)
            c->ppid = 1;
}

/* Here rather than in exec.c, misc.c and signal.c, which make them: freeing a process needs no
 * more than the process table (hosted tests link process.c without the rest). */
void proc_image_put(struct proc_image *img)
{
    if (!img || --img->refs > 0)
        return;
    inode_put(img->exe);
    unix_free(img);
}

void groups_put(struct unix_groups *g)
{
    if (g && --g->refs == 0)
        unix_free(g);
}

void sig_handlers_put(struct sig_handlers *h)
{
    if (h && --h->refs == 0)
        unix_free(h);
}

void proc_free(struct proc *p)
{
    for (struct proc **q = &table; *q; q = &(*q)->next)
        if (*q == p) {
            *q = p->next;
            nprocs--;
            break;
        }
    proc_image_put(p->image);
    groups_put(p->groups);
    sig_handlers_put(p->sig_hand);
    unix_free(p);
}

/* The process a pid argument names: 0 is the caller; a zombie counts (as in Linux). */
static struct proc *target(struct ucall *c, uint64_t pid)
{
    if (pid == 0)
        return c->proc;
    return (int64_t)pid > 0 && pid < UNIX_PID_MAX + 1 ? proc_find((int)pid) : NULL;
}

long lx_getpgid(struct ucall *c)
{
    struct proc *p = target(c, c->a[0]);
    return p ? p->pgid : -ESRCH;
}

long lx_getpgrp(struct ucall *c) { return c->proc->pgid; }

long lx_getsid(struct ucall *c)
{
    struct proc *p = target(c, c->a[0]);
    return p ? p->sid : -ESRCH;
}

/* A process group with this id in session sid. */
static bool group_in_session(int pgid, int sid)
{
    for (struct proc *p = table; p; p = p->next)
        if (p->pgid == pgid && p->sid == sid && !p->zombie)
            return true;
    return false;
}

long lx_setpgid(struct ucall *c)
{
    int64_t pgid = (int32_t)c->a[1];
    if (pgid < 0)
        return -EINVAL;
    struct proc *self = c->proc, *p = target(c, (uint64_t)(int64_t)(int32_t)c->a[0]);
    if (!p || (p != self && p->ppid != self->pid))
        return -ESRCH;
    if (pgid == 0)
        pgid = p->pid;
    if (p->sid == p->pid || p->sid != self->sid)
        return -EPERM;                 /* a session leader, or another session */
    if (pgid != p->pid && !group_in_session((int)pgid, self->sid))
        return -EPERM;
    p->pgid = (int)pgid;
    return 0;
}

long lx_setsid(struct ucall *c)
{
    struct proc *self = c->proc;
    for (struct proc *p = table; p; p = p->next)
        if (p->pgid == self->pid)
            return -EPERM;             /* it leads a process group */
    self->sid = self->pgid = self->pid;
    self->ctty = NULL;
    return self->sid;
}

void proc_for_each(void (*fn)(struct proc *p, void *arg), void *arg)
{
    for (struct proc *p = table; p; p = p->next)
        fn(p, arg);
}

long proc_pgrp_session(int pgid)
{
    for (struct proc *p = table; p; p = p->next)
        if (p->pgid == pgid && !p->zombie)
            return p->sid;
    return -ESRCH;
}
