/*
 * Identity calls (docs/unix.md): process ids from the process table, one id per process
 * for user and group (0, root, unless setuid/setgid changed it), and uname.
 */
#include "unix.h"

long lx_getpid(struct ucall *c) { return c->proc->pid; }
long lx_getppid(struct ucall *c) { return c->proc->ppid; }
long lx_getuid(struct ucall *c) { return c->proc->uid; }
long lx_geteuid(struct ucall *c) { return c->proc->uid; }
long lx_getgid(struct ucall *c) { return c->proc->gid; }
long lx_getegid(struct ucall *c) { return c->proc->gid; }

/* setuid/setgid with one id per process (real = effective = saved): root may take any
 * id, anyone else only its own (EPERM); -1 is EINVAL, as Linux. A non-root uid makes
 * RLIMIT_NPROC count (fork_process). */
static long set_id(struct ucall *c, unsigned *id)
{
    uint32_t want = (uint32_t)c->a[0];
    if (want == UINT32_MAX)
        return -EINVAL;
    if (c->proc->uid != 0 && want != *id)
        return -EPERM;
    *id = want;
    return 0;
}

long lx_setuid(struct ucall *c) { return set_id(c, &c->proc->uid); }
long lx_setgid(struct ucall *c) { return set_id(c, &c->proc->gid); }

long lx_uname(struct ucall *c)
{
    static const struct linux_utsname u = {
        .sysname = "Linux", .nodename = "ondol", .release = "6.1.0-ondol",
        .version = "#1 ondol UNIX server", .machine = "x86_64", .domainname = "(none)",
    };
    return copy_out(c->proc, c->a[0], &u, sizeof(u));
}
