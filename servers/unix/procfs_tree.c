/*
 * /proc as a file system (procfs.h): tmpfs inodes with a proc_kind, kept up to date on
 * demand. The walk calls procfs_lookup before it looks a name up in a /proc directory,
 * getdents64 calls procfs_list before a listing starts; both only add, remove or retarget
 * entries of that directory (never the directory itself, which the walk may be standing
 * in without a reference). Opening a regular file formats its whole text once (procfs.c)
 * into the open file, so reads at any offset and lseek see one consistent copy.
 */
#include "procfs.h"

struct proc_entry {
    const char *name;
    uint8_t kind;
    unsigned mode;
};

static const struct proc_entry root_entries[] = {
    {"meminfo", PK_MEMINFO, S_IFREG | 0444},   {"uptime", PK_UPTIME, S_IFREG | 0444},
    {"stat", PK_STAT, S_IFREG | 0444},         {"loadavg", PK_LOADAVG, S_IFREG | 0444},
    {"version", PK_VERSION, S_IFREG | 0444},   {"mounts", PK_MOUNTS, S_IFREG | 0444},
    {"filesystems", PK_FILESYSTEMS, S_IFREG | 0444},
    {"cpuinfo", PK_CPUINFO, S_IFREG | 0444},   {"ondol", PK_ONDOL_DIR, S_IFDIR | 0555},
    {"net", PK_NET_DIR, S_IFDIR | 0555},
};
static const struct proc_entry ondol_entries[] = {
    {"syscalls", PK_SYSCALLS, S_IFREG | 0444}, {"kernel", PK_KERNEL, S_IFREG | 0444},
    {"vmcheck", PK_VMCHECK, S_IFREG | 0444},
};
static const struct proc_entry net_entries[] = {
    {"dev", PK_NET_DEV, S_IFREG | 0444},       {"route", PK_NET_ROUTE, S_IFREG | 0444},
    {"arp", PK_NET_ARP, S_IFREG | 0444},
};
static const struct proc_entry pid_entries[] = {
    {"stat", PK_PID_STAT, S_IFREG | 0444},     {"status", PK_PID_STATUS, S_IFREG | 0444},
    {"cmdline", PK_PID_CMDLINE, S_IFREG | 0444}, {"fd", PK_FD_DIR, S_IFDIR | 0500},
};
#define LINK_MODE (S_IFLNK | 0777)
#define N(a) (sizeof(a) / sizeof((a)[0]))

/* ---- entries ---- */

/* A new entry name of kind in dir, about process pid and fd: its inode (borrowed: the
 * name holds it), or NULL when out of memory. */
static struct inode *add_entry(struct inode *dir, const char *name, uint8_t kind,
                               unsigned mode, int pid, int fd)
{
    struct inode *i = inode_new(mode);
    if (!i)
        return NULL;
    i->proc_kind = kind;
    i->proc_pid = pid;
    i->proc_fd = fd;
    long r = dir_link(dir, name, vfs_strlen(name), i);
    inode_put(i);
    return r == 0 ? i : NULL;
}

static bool add_entries(struct inode *dir, const struct proc_entry *e, size_t n, int pid)
{
    for (size_t k = 0; k < n; k++) {
        struct inode *i = add_entry(dir, e[k].name, e[k].kind, e[k].mode, pid, -1);
        if (!i)
            return false;
        if (e[k].kind == PK_ONDOL_DIR && !add_entries(i, ondol_entries, N(ondol_entries), 0))
            return false;
        if (e[k].kind == PK_NET_DIR && !add_entries(i, net_entries, N(net_entries), 0))
            return false;
    }
    return true;
}

/* Remove entry d of dir and everything below it. */
static void remove_entry(struct inode *dir, struct dentry *d)
{
    if (inode_is(d->inode, S_IFDIR))
        dir_clear(d->inode);
    dir_unlink(dir, d);
}

static struct dentry *find(struct inode *dir, const char *name)
{
    return dir_find(dir, name, vfs_strlen(name));
}

/* "123" as a number; -1 for anything else (Linux takes no sign or leading zero). */
static int parse_number(const char *name, size_t len)
{
    if (len == 0 || len > 9 || (name[0] == '0' && len > 1))
        return -1;
    int v = 0;
    for (size_t k = 0; k < len; k++) {
        if (name[k] < '0' || name[k] > '9')
            return -1;
        v = v * 10 + (name[k] - '0');
    }
    return v;
}

static void number_text(char *buf, long v)
{
    char digits[24];
    int n = 0;
    do {
        digits[n++] = (char)('0' + v % 10);
        v /= 10;
    } while (v);
    while (n)
        *buf++ = digits[--n];
    *buf = 0;
}

/* Make symlink name of dir point to target (NULL: no such link now). */
static void sync_link(struct inode *dir, const char *name, uint8_t kind, int fd,
                      const char *target)
{
    struct dentry *d = find(dir, name);
    if (!target) {
        if (d)
            remove_entry(dir, d);
        return;
    }
    struct inode *i = d ? d->inode : add_entry(dir, name, kind, LINK_MODE, dir->proc_pid, fd);
    size_t len = vfs_strlen(target);
    if (!i || (i->data && i->size == len && !vfs_memcmp(i->data, target, len)))
        return;
    if (inode_set_target(i, target, len) < 0)
        remove_entry(dir, find(dir, name));     /* no stale or empty target: ENOENT */
}

/* ---- link targets ---- */

static char target_buf[PATH_MAX + 32];

/* The dentry of child in dir (child is a directory, so it has one name). */
static struct dentry *name_of_dir(struct inode *dir, const struct inode *child)
{
    for (struct dentry *e = dir->entries; e; e = e->next)
        if (e->inode == child)
            return e;
    return NULL;
}

/* A name of inode target under top, depth first without recursion (into /proc only for
 * a /proc inode): the dentry, with its directory in *in, or NULL. */
static struct dentry *find_name(struct inode *top, const struct inode *target,
                                struct inode **in)
{
    struct inode *dir = top;
    struct dentry *d = dir->entries;
    for (;;) {
        for (; d; d = d->next) {
            if (d->inode == target) {
                *in = dir;
                return d;
            }
            if (inode_is(d->inode, S_IFDIR) && d->inode->entries &&
                (!d->inode->proc_kind || target->proc_kind))
                break;
        }
        if (d) {                            /* descend */
            dir = d->inode;
            d = dir->entries;
            continue;
        }
        if (dir == top || dir->parent == dir)
            return NULL;
        struct inode *child = dir;          /* climb to the next sibling */
        dir = dir->parent;
        d = name_of_dir(dir, child);
        d = d ? d->next : NULL;
    }
}

static void copy_text(char *buf, size_t cap, const char *a, const char *b, const char *c)
{
    size_t n = 0;
    for (const char *s = a; s && *s && n + 1 < cap; s++)
        buf[n++] = *s;
    for (const char *s = b; s && *s && n + 1 < cap; s++)
        buf[n++] = *s;
    for (const char *s = c; s && *s && n + 1 < cap; s++)
        buf[n++] = *s;
    buf[n] = 0;
}

void procfs_file_path(struct proc *p, const struct file *f, char *buf, size_t cap)
{
    char num[24];
    struct inode *root = p->fs->root;
    if (!f->inode) {
        number_text(num, (long)((uintptr_t)f >> 4));     /* fstat's inode number */
        copy_text(buf, cap, "pipe:[", num, "]");
        return;
    }
    if (inode_is(f->inode, S_IFDIR)) {
        const char *path = f->inode->nlink ? vfs_dir_path(f->inode, root) : NULL;
        copy_text(buf, cap, path ? path : "(deleted)", NULL, NULL);
        return;
    }
    procfs_inode_path(p, f->inode, buf, cap);
}

void procfs_inode_path(struct proc *p, struct inode *ino, char *buf, size_t cap)
{
    struct inode *root = p->fs->root, *dir;
    struct dentry *d = ino->nlink ? find_name(root, ino, &dir) : NULL;
    const char *path = d ? vfs_dir_path(dir, root) : NULL;
    if (!path)
        copy_text(buf, cap, "(deleted)", NULL, NULL);
    else
        copy_text(buf, cap, path, path[1] ? "/" : "", d->name);
}

/* ---- keeping directories current ---- */

/* The directory of pid in /proc: created when the process exists, removed when it does
 * not. */
static void sync_pid_dir(struct inode *root, int pid)
{
    char name[24];
    number_text(name, pid);
    struct dentry *d = find(root, name);
    bool alive = proc_find(pid) != NULL;
    if (d && !alive)
        remove_entry(root, d);
    if (d || !alive)
        return;
    struct inode *i = add_entry(root, name, PK_PID_DIR, S_IFDIR | 0555, pid, -1);
    if (i && !add_entries(i, pid_entries, N(pid_entries), pid))
        remove_entry(root, find(root, name));
}

static void sync_self(struct inode *root, struct proc *caller)
{
    char name[24];
    if (!caller)
        return;
    number_text(name, caller->pid);
    sync_link(root, "self", PK_SELF, -1, name);
}

static void sync_exe_cwd(struct inode *dir, struct proc *p)
{
    static struct proc_view v;
    vfs_memset(&v, 0, sizeof(v));
    proc_view_of(p, &v);
    sync_link(dir, "exe", PK_EXE, -1, v.exe);
    const char *cwd = p->fs && p->fs->cwd->nlink ? vfs_dir_path(p->fs->cwd, p->fs->root)
                                                 : NULL;
    sync_link(dir, "cwd", PK_CWD, -1, cwd);
}

static void sync_fd(struct inode *dir, struct proc *p, int fd)
{
    char name[24];
    number_text(name, fd);
    struct file *f = p && p->fds ? fd_file(p, fd) : NULL;
    if (f)
        procfs_file_path(p, f, target_buf, sizeof(target_buf));
    sync_link(dir, name, PK_FD_LINK, fd, f ? target_buf : NULL);
}

void procfs_lookup(struct proc *caller, struct inode *dir, const char *name, size_t len)
{
    struct proc *p = proc_find(dir->proc_pid);
    int n = parse_number(name, len);
    switch (dir->proc_kind) {
    case PK_ROOT:
        if (len == 4 && vfs_memcmp(name, "self", 4) == 0)
            sync_self(dir, caller);
        else if (n > 0)
            sync_pid_dir(dir, n);
        return;
    case PK_PID_DIR:
        if (!p)
            dir_clear(dir);                 /* the process is gone: no names */
        else if ((len == 3 && !vfs_memcmp(name, "exe", 3)) ||
                 (len == 3 && !vfs_memcmp(name, "cwd", 3)))
            sync_exe_cwd(dir, p);
        return;
    case PK_FD_DIR:
        if (!p || !p->fds)
            dir_clear(dir);
        else if (n >= 0 && n < UNIX_MAX_FDS)
            sync_fd(dir, p, n);
        return;
    default:
        return;
    }
}

/* /proc: drop the directories of processes that are gone, add the new ones. */
static void list_root(struct inode *root, struct proc *caller)
{
    for (struct dentry *d = root->entries, *next; d; d = next) {
        next = d->next;
        if (d->inode->proc_kind == PK_PID_DIR && !proc_find(d->inode->proc_pid))
            remove_entry(root, d);
    }
    for (struct proc *p = proc_next(NULL); p; p = proc_next(p))
        sync_pid_dir(root, p->pid);
    sync_self(root, caller);
}

static void list_fds(struct inode *dir, struct proc *p)
{
    for (struct dentry *d = dir->entries, *next; d; d = next) {
        next = d->next;
        if (!fd_file(p, d->inode->proc_fd))
            remove_entry(dir, d);
    }
    for (int fd = 0; fd < UNIX_MAX_FDS; fd++)
        if (fd_file(p, fd))
            sync_fd(dir, p, fd);
}

void procfs_list(struct proc *caller, struct inode *dir)
{
    struct proc *p = proc_find(dir->proc_pid);
    switch (dir->proc_kind) {
    case PK_ROOT:
        list_root(dir, caller);
        return;
    case PK_PID_DIR:
        if (p)
            sync_exe_cwd(dir, p);
        else
            dir_clear(dir);
        return;
    case PK_FD_DIR:
        if (p && p->fds)
            list_fds(dir, p);
        else
            dir_clear(dir);
        return;
    default:
        return;
    }
}

long procfs_mount(void)
{
    struct inode *root = vfs_root();
    if (!root)
        return -ENOMEM;
    struct dentry *d = find(root, "proc");
    struct inode *dir = d ? d->inode : add_entry(root, "proc", PK_NONE, S_IFDIR | 0555, 0, -1);
    if (!dir)
        return -ENOMEM;
    if (!inode_is(dir, S_IFDIR))
        return -ENOTDIR;
    if (dir->proc_kind == PK_ROOT)
        return 0;
    dir->proc_kind = PK_ROOT;
    dir->mode = S_IFDIR | 0555;
    return add_entries(dir, root_entries, N(root_entries), 0) ? 0 : -ENOMEM;
}
