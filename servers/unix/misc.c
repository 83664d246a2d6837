/*
 * Identity calls (docs/unix.md): process ids from the process table; real, effective,
 * saved and fs user and group ids (all 0, root, at boot) with Linux's rules for changing
 * them; supplementary groups (none until setgroups); and uname.
 */
#include "unix.h"

long lx_getpid(struct ucall *c) { return c->proc->pid; }
long lx_getppid(struct ucall *c) { return c->proc->ppid; }
long lx_getuid(struct ucall *c) { return c->proc->uid[ID_REAL]; }
long lx_geteuid(struct ucall *c) { return c->proc->uid[ID_EFFECTIVE]; }
long lx_getgid(struct ucall *c) { return c->proc->gid[ID_REAL]; }
long lx_getegid(struct ucall *c) { return c->proc->gid[ID_EFFECTIVE]; }

/* ---- changing ids: Linux's rules (setresuid(2), setreuid(2), setuid(2), setfsuid(2)) -- */
#define ID_KEEP UINT32_MAX            /* -1: leave this id as it is */

/* Root (effective uid 0) holds CAP_SETUID and CAP_SETGID; nobody else does. */
static bool may_set_any(const struct proc *p) { return p->uid[ID_EFFECTIVE] == 0; }

/* An unprivileged process may take only an id it already has as real, effective or saved. */
static bool held(const unsigned ids[ID_KINDS], uint32_t id)
{
    return id == ids[ID_REAL] || id == ids[ID_EFFECTIVE] || id == ids[ID_SAVED];
}

/* setresuid/setresgid(real, effective, saved): each -1 or, unless privileged, held. */
static long set_res(struct ucall *c, unsigned ids[ID_KINDS])
{
    uint32_t want[3] = {(uint32_t)c->a[0], (uint32_t)c->a[1], (uint32_t)c->a[2]};
    for (int k = 0; k < 3; k++)
        if (want[k] != ID_KEEP && !may_set_any(c->proc) && !held(ids, want[k]))
            return -EPERM;
    for (int k = 0; k < 3; k++)
        if (want[k] != ID_KEEP)
            ids[k] = want[k];
    ids[ID_FS] = ids[ID_EFFECTIVE];
    return 0;
}

/* setreuid/setregid(real, effective): unprivileged, the real id may become the real or
 * effective one and the effective id any held one; the saved id follows the new effective
 * one when the real id is set or the effective one moves off the old real id. */
static long set_re(struct ucall *c, unsigned ids[ID_KINDS])
{
    uint32_t real = (uint32_t)c->a[0], eff = (uint32_t)c->a[1];
    unsigned old_real = ids[ID_REAL];
    if (!may_set_any(c->proc)) {
        if (real != ID_KEEP && real != ids[ID_REAL] && real != ids[ID_EFFECTIVE])
            return -EPERM;
        if (eff != ID_KEEP && !held(ids, eff))
            return -EPERM;
    }
    if (real != ID_KEEP)
        ids[ID_REAL] = real;
    if (eff != ID_KEEP)
        ids[ID_EFFECTIVE] = eff;
    if (real != ID_KEEP || (eff != ID_KEEP && eff != old_real))
        ids[ID_SAVED] = ids[ID_EFFECTIVE];
    ids[ID_FS] = ids[ID_EFFECTIVE];
    return 0;
}

/* setuid/setgid(id): privileged, all four ids; otherwise only the effective (and fs) one,
 * to the real or saved id (EPERM). -1 is EINVAL. A non-root uid makes RLIMIT_NPROC count
 * (fork_process). */
static long set_one(struct ucall *c, unsigned ids[ID_KINDS])
{
    uint32_t want = (uint32_t)c->a[0];
    if (want == ID_KEEP)
        return -EINVAL;
    if (may_set_any(c->proc)) {
        for (int k = 0; k < ID_KINDS; k++)
            ids[k] = want;
        return 0;
    }
    if (want != ids[ID_REAL] && want != ids[ID_SAVED])
        return -EPERM;
    ids[ID_EFFECTIVE] = ids[ID_FS] = want;
    return 0;
}

/* setfsuid/setfsgid(id): the old fs id, always; the new one is taken if privileged or
 * held (or already the fs id), silently ignored otherwise, as Linux. */
static long set_fs(struct ucall *c, unsigned ids[ID_KINDS])
{
    uint32_t want = (uint32_t)c->a[0];
    unsigned old = ids[ID_FS];
    if (want != ID_KEEP && (may_set_any(c->proc) || held(ids, want) || want == old))
        ids[ID_FS] = want;
    return old;
}

long lx_setuid(struct ucall *c) { return set_one(c, c->proc->uid); }
long lx_setgid(struct ucall *c) { return set_one(c, c->proc->gid); }
long lx_setreuid(struct ucall *c) { return set_re(c, c->proc->uid); }
long lx_setregid(struct ucall *c) { return set_re(c, c->proc->gid); }
long lx_setresuid(struct ucall *c) { return set_res(c, c->proc->uid); }
long lx_setresgid(struct ucall *c) { return set_res(c, c->proc->gid); }
long lx_setfsuid(struct ucall *c) { return set_fs(c, c->proc->uid); }
long lx_setfsgid(struct ucall *c) { return set_fs(c, c->proc->gid); }

/* getresuid/getresgid(&real, &effective, &saved). */
static long put_three(struct ucall *c, const unsigned ids[ID_KINDS])
{
    for (int k = 0; k < 3; k++) {
        uint32_t id = ids[k];
        if (copy_out(c->proc, c->a[k], &id, 4) < 0)
            return -EFAULT;
    }
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
    if (!may_set_any(c->proc))
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
