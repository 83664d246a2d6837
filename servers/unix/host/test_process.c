/* The process table and the group and session calls (process.c), against what
 * tests/linux/proc.c expects of Linux. */
#include "fake.h"

static long call(struct proc *p, long nr, uint64_t a0, uint64_t a1)
{
    struct ucall c = fake_call(p, nr, a0, a1, 0, 0);
    return unix_dispatch(&c);
}

enum { SETPGID = 109, GETPGRP = 111, SETSID = 112, GETPGID = 121, GETSID = 124 };

int main(void)
{
    struct proc *init = proc_create(NULL);
    CHECK_EQ(init->pid, 1);
    CHECK(init->sid == 1 && init->pgid == 1 && init->ppid == 0);
    struct proc *sh = proc_create(init), *child = proc_create(sh);
    CHECK(sh->pid == 2 && child->pid == 3 && child->ppid == 2);
    CHECK(child->pgid == 1 && child->sid == 1);
    CHECK(proc_find(3) == child && proc_find(4) == NULL);

    CHECK_EQ(call(sh, SETSID, 0, 0), 2);                 /* a new session */
    CHECK(sh->sid == 2 && sh->pgid == 2);
    CHECK_EQ(call(sh, SETSID, 0, 0), -EPERM);            /* leads group 2 */
    CHECK_EQ(call(sh, SETPGID, 0, 0), -EPERM);           /* a session leader */
    CHECK_EQ(call(child, SETPGID, 0, 0), 0);             /* leads a group in init's session */
    CHECK_EQ(child->pgid, 3);
    struct proc *c2 = proc_create(sh);                   /* in sh's session and group */
    CHECK_EQ(call(c2, SETPGID, 0, 0), 0);
    CHECK_EQ(call(c2, GETPGID, 0, 0), c2->pid);
    CHECK_EQ(call(c2, GETPGRP, 0, 0), c2->pid);
    CHECK_EQ(call(c2, SETSID, 0, 0), -EPERM);            /* a group leader */
    struct proc *c3 = proc_create(sh);
    CHECK_EQ(call(sh, SETPGID, (uint64_t)c3->pid, (uint64_t)c2->pid), 0);   /* parent moves child */
    CHECK_EQ(c3->pgid, c2->pid);
    CHECK_EQ(call(sh, SETPGID, (uint64_t)c3->pid, 999), -EPERM);           /* no such group */
    CHECK_EQ(call(sh, SETPGID, (uint64_t)child->pid, 0), -EPERM);          /* another session */
    CHECK_EQ(call(sh, SETPGID, 1, 0), -ESRCH);                             /* not its child */
    CHECK_EQ(call(c2, SETPGID, 0, (uint64_t)-1), -EINVAL);
    CHECK_EQ(call(c2, GETPGID, 999999, 0), -ESRCH);
    CHECK_EQ(call(c2, GETSID, 999999, 0), -ESRCH);
    CHECK_EQ(call(c2, GETSID, 0, 0), 2);
    CHECK_EQ(call(c2, GETSID, 1, 0), 1);

    /* pids wrap and skip numbers still used as a group or session */
    struct proc *last = NULL;
    for (int i = 0; i < 3; i++)
        last = proc_create(sh);
    CHECK_EQ(last->pid, c3->pid + 3);
    proc_orphan_children(sh);
    CHECK_EQ(c2->ppid, 1);
    proc_free(sh);                     /* pid 2 stays taken: it is still a session */
    CHECK(proc_find(2) == NULL);
    int prev = 0, wrapped = 0;
    for (int i = 0; i < UNIX_PID_MAX && !wrapped; i++) {   /* until the pids wrap */
        struct proc *t = proc_create(init);
        wrapped = t->pid < prev;
        CHECK(t->pid != 2 && t->pid != c2->pid && t->pid > 1);
        prev = t->pid;
        proc_free(t);
    }
    CHECK(wrapped);
    static struct proc *all[UNIX_MAX_PROCS];
    int n = 0;
    while (n < UNIX_MAX_PROCS && (all[n] = proc_create(init)))
        n++;
    CHECK_EQ(n, UNIX_MAX_PROCS - 7);  /* the limit counts the 7 that exist */
    while (n > 0)
        proc_free(all[--n]);
    proc_free(last);
    for (int pid = 3; pid < 12; pid++)
        if (proc_find(pid))
            proc_free(proc_find(pid));
    proc_free(init);
    return fake_done();
}
