/*
 * Opening and reading /proc's regular files (procfs.h): the whole text is formatted at
 * open (procfs.c's formatters, fed by the providers) into a buffer the open file owns,
 * like a seq_file's first read on Linux; read and pread serve any offset from it and
 * lseek moves within it (SEEK_END is -EINVAL, as seq_lseek says). Root may open them for
 * writing, as on Linux, but no /proc file here takes a write.
 */
#include "procfs.h"
#include "runtime.h"

struct proc_text {
    size_t len;
    char bytes[];
};

static long text_read(struct file *f, struct ucall *c, uint64_t uaddr, size_t n,
                      uint64_t *off)
{
    struct proc_text *t = f->priv;
    if (*off >= t->len || n == 0)
        return 0;
    size_t k = t->len - *off < n ? (size_t)(t->len - *off) : n;
    if (copy_out(c->proc, uaddr, t->bytes + *off, k) < 0)
        return -EFAULT;
    *off += k;
    return (long)k;
}

static long text_write(struct file *f, struct ucall *c, uint64_t uaddr, size_t n,
                       uint64_t *off)
{
    (void)c, (void)uaddr, (void)n, (void)off;
    return f->inode->proc_kind >= PK_PID_STAT ? -EINVAL : -EIO;
}

static void text_release(struct file *f)
{
    unix_free(f->priv);
}

static const struct file_ops procfs_file_ops = {
    .read = text_read,
    .write = text_write,
    .release = text_release,
};

/* The text of a system-wide file into buf (cap bytes): its full length. */
static size_t system_text(uint8_t kind, char *buf, size_t cap)
{
    static struct proc_system_view v;
    vfs_memset(&v, 0, sizeof(v));
    proc_system_view(&v);
    unsigned total = 0, running = 0;
    for (struct proc *p = proc_next(NULL); p; p = proc_next(p)) {
        total++;
        running += !p->zombie;
    }
    struct proc *newest = proc_next(NULL);
    struct procfs_calls k = {0, 0, 0};
    uint64_t check[3];
    switch (kind) {
    case PK_MEMINFO: return procfs_meminfo(buf, cap, &v.mem);
    case PK_UPTIME: return procfs_uptime(buf, cap, v.uptime_ns, v.idle_ns);
    case PK_STAT: return procfs_stat(buf, cap, &v.stat);
    case PK_LOADAVG:
        return procfs_loadavg(buf, cap, running ? 1 : 0, total, newest ? newest->pid : 0);
    case PK_VERSION: return procfs_version(buf, cap);
    case PK_MOUNTS: return procfs_mounts(buf, cap);
    case PK_FILESYSTEMS: return procfs_filesystems(buf, cap);
    case PK_CPUINFO: return procfs_cpuinfo(buf, cap, v.stat.ncpu ? v.stat.ncpu : 1);
    case PK_VMCHECK:
        rt_vm_check(check);
        return procfs_vmcheck(buf, cap, check);
    case PK_NET_DEV:
    case PK_NET_ROUTE: {
        struct procfs_netif n;
        netif_view(&n);
        return kind == PK_NET_DEV ? procfs_net_dev(buf, cap, &n) : procfs_net_route(buf, cap, &n);
    }
    case PK_NET_ARP: {
        static struct netif_neigh nb[NETIF_NEIGH_MAX];
        return procfs_net_arp(buf, cap, nb, netif_neighbours(nb, NETIF_NEIGH_MAX));
    }
    case PK_KERNEL: {
        static struct meminfo m;
        rt_kernel_counters(&m);
        return procfs_kernel(buf, cap, &m);
    }
    default:
        unix_switch_counts(&k.thread_switches, &k.as_switches);
        k.idle_ns = unix_idle_ns();
        return procfs_syscalls(buf, cap, &k);
    }
}

/* What /proc shows of p: the ids the server keeps, then the provider's part. */
static void view_of(struct proc *p, struct proc_view *v)
{
    vfs_memset(v, 0, sizeof(*v));
    struct procfs_task *t = &v->task;
    t->pid = p->pid;
    t->ppid = p->ppid;
    t->pgid = p->pgid;
    t->sid = p->sid;
    t->tty_nr = tty_devnum_of(p);
    t->tpgid = tty_fg_pgrp_of(p);
    t->umask = p->fs ? p->fs->umask : 0;
    for (int k = 0; k < ID_KINDS; k++) {
        t->uid[k] = p->uid[k];
        t->gid[k] = p->gid[k];
    }
    t->fd_slots = p->fds ? UNIX_MAX_FDS : 0;
    t->state = p->zombie ? 'Z' : 'R';
    t->threads = 1;
    t->comm = "";
    proc_view_of(p, v);
}

static size_t process_text(uint8_t kind, struct proc *p, char *buf, size_t cap)
{
    static struct proc_view v;
    view_of(p, &v);
    switch (kind) {
    case PK_PID_STAT: return procfs_pid_stat(buf, cap, &v.task);
    case PK_PID_STATUS: return procfs_pid_status(buf, cap, &v.task);
    default: return procfs_pid_cmdline(buf, cap, v.args, v.args ? v.args_len : 0);
    }
}

static size_t text_of(const struct inode *i, struct proc *p, char *buf, size_t cap)
{
    return p ? process_text(i->proc_kind, p, buf, cap) : system_text(i->proc_kind, buf, cap);
}

bool procfs_file_text(const struct file *f, const unsigned char **bytes, uint64_t *len)
{
    if (f->ops != &procfs_file_ops)
        return false;
    const struct proc_text *t = f->priv;
    *bytes = (const unsigned char *)t->bytes;
    *len = t->len;
    return true;
}

long procfs_open(struct ucall *c, struct inode *inode, unsigned flags, struct file **out)
{
    (void)c;
    struct proc *p = NULL;
    if (inode->proc_kind >= PK_PID_STAT) {
        p = proc_find(inode->proc_pid);
        if (!p)
            return -ENOENT;
    }
    size_t len = text_of(inode, p, NULL, 0);
    struct proc_text *t = unix_alloc(sizeof(*t) + len + 1);
    if (!t)
        return -ENOMEM;
    text_of(inode, p, t->bytes, len);   /* the same text: nothing runs in between */
    t->len = len;
    struct file *f = file_new(&procfs_file_ops, inode, flags);
    if (!f) {
        unix_free(t);
        return -ENOMEM;
    }
    f->priv = t;
    *out = f;
    return 0;
}
