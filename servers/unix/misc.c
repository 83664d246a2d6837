/*
 * Identity calls (docs/unix.md): process ids from the process table, one id per process
 * for user and group (0, root, unless setuid/setgid changed it; getresuid/getresgid give
 * it three times), supplementary groups (none until setgroups), and uname.
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

/* getresuid/getresgid: real, effective and saved are the one id. */
static long put_three(struct ucall *c, uint32_t id)
{
    for (int i = 0; i < 3; i++)
        if (copy_out(c->proc, c->a[i], &id, 4) < 0)
            return -EFAULT;
    return 0;
}

long lx_getresuid(struct ucall *c) { return put_three(c, c->proc->uid); }
long lx_getresgid(struct ucall *c) { return put_three(c, c->proc->gid); }

/* ---- supplementary groups ----------------------------------------------------------- */
#define NGROUPS_MAX 65536

/* getgroups(size, list): the count; with size > 0 also the list (EINVAL when it does not
 * fit, as Linux); a negative size is EINVAL. */
long lx_getgroups(struct ucall *c)
{
    int size = (int)c->a[0], n = c->proc->groups ? c->proc->groups->n : 0;
    if (size < 0)
        return -EINVAL;
    if (size && n > size)
        return -EINVAL;
    if (size && n && copy_out(c->proc, c->a[1], c->proc->groups->gid, (size_t)n * 4) < 0)
        return -EFAULT;
    return n;
}

/* Heapsort (n may be 65,536: no quadratic sort), ascending. */
static void sift_down(uint32_t *v, int root, int n)
{
    for (int child; (child = 2 * root + 1) < n; root = child) {
        if (child + 1 < n && v[child + 1] > v[child])
            child++;
        if (v[root] >= v[child])
            return;
        uint32_t t = v[root];
        v[root] = v[child];
        v[child] = t;
    }
}

static void sort_ids(uint32_t *v, int n)
{
    for (int i = n / 2 - 1; i >= 0; i--)
        sift_down(v, i, n);
    for (int end = n - 1; end > 0; end--) {
        uint32_t t = v[0];
        v[0] = v[end];
        v[end] = t;
        sift_down(v, 0, end);
    }
}

/* setgroups(size, list), Linux's order: EPERM unless root, EINVAL beyond NGROUPS_MAX,
 * EFAULT for an unreadable list; the list is kept sorted (getgroups returns it so). */
long lx_setgroups(struct ucall *c)
{
    uint32_t size = (uint32_t)c->a[0];
    if (c->proc->uid != 0)
        return -EPERM;
    if (size > NGROUPS_MAX)
        return -EINVAL;
    struct unix_groups *g = unix_alloc(sizeof(*g) + size * 4);
    if (!g)
        return -ENOMEM;
    g->refs = 1;
    g->n = (int)size;
    if (size && copy_in(c->proc, g->gid, c->a[1], size * 4) < 0) {
        unix_free(g);
        return -EFAULT;
    }
    sort_ids(g->gid, g->n);
    groups_put(c->proc->groups);
    c->proc->groups = g;
    return 0;
}

long lx_uname(struct ucall *c)
{
    static const struct linux_utsname u = {
        .sysname = "Linux", .nodename = "ondol", .release = "6.1.0-ondol",
        .version = "#1 ondol UNIX server", .machine = "x86_64", .domainname = "(none)",
    };
    return copy_out(c->proc, c->a[0], &u, sizeof(u));
}
