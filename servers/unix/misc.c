/*
 * Identity calls (docs/unix.md): process ids from the process table, one root user
 * (every uid and gid is the process's stored uid/gid, 0), and uname.
 */
#include "unix.h"

long lx_getpid(struct ucall *c) { return c->proc->pid; }
long lx_getppid(struct ucall *c) { return c->proc->ppid; }
long lx_getuid(struct ucall *c) { return c->proc->uid; }
long lx_geteuid(struct ucall *c) { return c->proc->uid; }
long lx_getgid(struct ucall *c) { return c->proc->gid; }
long lx_getegid(struct ucall *c) { return c->proc->gid; }

long lx_uname(struct ucall *c)
{
    static const struct linux_utsname u = {
        .sysname = "Linux", .nodename = "ondol", .release = "6.1.0-ondol",
        .version = "#1 ondol UNIX server", .machine = "x86_64", .domainname = "(none)",
    };
    return copy_out(c->proc, c->a[0], &u, sizeof(u));
}
