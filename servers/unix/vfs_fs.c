/*
 * Calls about a file system as a whole or about what tmpfs does not keep: statfs,
 * fstatfs, sync, syncfs, fsync, fdatasync, flock and the extended-attribute family.
 * tmpfs lives in memory, so there is nothing to write back (the syncs check their fd
 * and succeed); one process tree of one user takes no locks (flock checks and accepts);
 * no extended attribute is stored (get/set/remove: -EOPNOTSUPP after Linux's checks of
 * the path and the name; list: empty).
 */
#include "procfs.h"

/* ---- statfs ---- */

static void statfs_of(const struct inode *i, struct linux_statfs *s)
{
    vfs_memset(s, 0, sizeof(*s));
    s->f_bsize = s->f_frsize = 4096;
    s->f_namelen = NAME_MAX;
    s->f_flags = ST_VALID | ST_RELATIME;
    if (!i) {                                       /* a pipe */
        s->f_type = PIPEFS_MAGIC;
        return;
    }
    if (i->proc_kind) {
        s->f_type = PROC_SUPER_MAGIC;
        s->f_flags |= ST_NOSUID | ST_NODEV | ST_NOEXEC;
        return;
    }
    static struct proc_system_view v;               /* tmpfs: half of memory, as Linux */
    vfs_memset(&v, 0, sizeof(v));
    proc_system_view(&v);
    int64_t blocks = (int64_t)(v.mem.total_kib / 8), free = (int64_t)(v.mem.free_kib / 4);
    s->f_type = TMPFS_MAGIC;
    s->f_blocks = blocks;
    s->f_bfree = s->f_bavail = free < blocks ? free : blocks;
    s->f_files = blocks;
    s->f_ffree = blocks > (int64_t)inode_count() ? blocks - (int64_t)inode_count() : 0;
    s->f_fsid[0] = TMPFS_DEV;
}

static long statfs_out(struct ucall *c, const struct inode *i, uint64_t ubuf)
{
    struct linux_statfs s;
    statfs_of(i, &s);
    return copy_out(c->proc, ubuf, &s, sizeof(s)) < 0 ? -EFAULT : 0;
}

long lx_statfs(struct ucall *c)
{
    struct inode *i;
    long r = vfs_at_inode(c, AT_FDCWD, c->a[0], true, false, &i);
    if (r < 0)
        return r;
    r = statfs_out(c, i, c->a[1]);
    inode_put(i);
    return r;
}

long lx_fstatfs(struct ucall *c)                    /* O_PATH files too, as Linux */
{
    struct file *f = fd_file(c->proc, arg_fd(c->a[0]));
    return f ? statfs_out(c, f->inode, c->a[1]) : -EBADF;
}

/* ---- syncs and locks ---- */

long lx_sync(struct ucall *c)
{
    (void)c;
    return 0;
}

long lx_syncfs(struct ucall *c)
{
    return fd_file_io(c->proc, arg_fd(c->a[0])) ? 0 : -EBADF;
}

/* fsync, fdatasync: tmpfs files and directories have nothing to write back; pipes,
 * devices and /proc files cannot be synced (-EINVAL, as they have no fsync in Linux). */
static long do_fsync(struct ucall *c)
{
    struct file *f = fd_file_io(c->proc, arg_fd(c->a[0]));
    if (!f)
        return -EBADF;
    const struct inode *i = f->inode;
    return i && !i->proc_kind && (inode_is(i, S_IFREG) || inode_is(i, S_IFDIR)) ? 0 : -EINVAL;
}

long lx_fsync(struct ucall *c)
{
    return do_fsync(c);
}

long lx_fdatasync(struct ucall *c)
{
    return do_fsync(c);
}

/* flock(fd, op): checked and accepted; no lock is kept (one user, cooperating tools). */
long lx_flock(struct ucall *c)
{
    if (!fd_file_io(c->proc, arg_fd(c->a[0])))
        return -EBADF;
    unsigned cmd = (unsigned)c->a[1] & ~(unsigned)LOCK_NB;
    return cmd == LOCK_SH || cmd == LOCK_EX || cmd == LOCK_UN ? 0 : -EINVAL;
}

/* fadvise64(fd, offset, len, advice): tmpfs keeps every page in memory, so there is
 * nothing to read ahead or drop, and the advice is checked and ignored, as Linux does for
 * a file system without a backing device (tmpfs, /proc, devices, sockets). Linux's order:
 * -EBADF (not open, or O_PATH), -ESPIPE (a pipe or FIFO), -EINVAL (len < 0, or an advice
 * other than POSIX_FADV_NORMAL .. POSIX_FADV_NOREUSE); else 0. */
long lx_fadvise64(struct ucall *c)
{
    struct file *f = fd_file_io(c->proc, arg_fd(c->a[0]));
    if (!f)
        return -EBADF;
    if (f->inode ? inode_is(f->inode, S_IFIFO) : !sock_file(f))
        return -ESPIPE;
    int64_t len = (int64_t)c->a[2];
    unsigned advice = (unsigned)c->a[3];
    return len < 0 || advice > POSIX_FADV_NOREUSE ? -EINVAL : 0;
}

/* ---- extended attributes ---- */

/* The attribute name at uname: 0, -EFAULT, or -ERANGE (empty or longer than 255). */
static long xattr_name(struct ucall *c, uint64_t uname)
{
    char name[XATTR_NAME_MAX + 1];
    long n = copy_in_str(c->proc, name, uname, sizeof(name));
    if (n == -ENAMETOOLONG || n == 0)
        return -ERANGE;
    return n < 0 ? n : 0;
}

/* The file an xattr call is about: a path (following the last link or not) or an fd. */
enum xattr_target { XA_PATH, XA_LPATH, XA_FD };

static long xattr_file(struct ucall *c, enum xattr_target how, uint64_t arg)
{
    if (how == XA_FD)
        return fd_file_io(c->proc, arg_fd(arg)) ? 0 : -EBADF;
    struct inode *i;
    long r = vfs_at_inode(c, AT_FDCWD, arg, how == XA_PATH, false, &i);
    if (r == 0)
        inode_put(i);
    return r;
}

/* getxattr(file, name, value, size): the file, the name, then no such support. */
static long get_xattr(struct ucall *c, enum xattr_target how)
{
    long r = xattr_file(c, how, c->a[0]);
    if (r == 0)
        r = xattr_name(c, c->a[1]);
    return r < 0 ? r : -EOPNOTSUPP;
}

/* setxattr(file, name, value, size, flags): Linux checks the flags, the name and the
 * size before the file. */
static long set_xattr(struct ucall *c, enum xattr_target how)
{
    if (c->a[4] & ~(uint64_t)(XATTR_CREATE | XATTR_REPLACE))
        return -EINVAL;
    long r = xattr_name(c, c->a[1]);
    if (r == 0 && c->a[3] > XATTR_SIZE_MAX)
        r = -E2BIG;
    if (r == 0)
        r = xattr_file(c, how, c->a[0]);
    return r < 0 ? r : -EOPNOTSUPP;
}

static long list_xattr(struct ucall *c, enum xattr_target how)
{
    return xattr_file(c, how, c->a[0]);        /* 0: an empty list */
}

static long remove_xattr(struct ucall *c, enum xattr_target how)
{
    long r = xattr_name(c, c->a[1]);
    if (r == 0)
        r = xattr_file(c, how, c->a[0]);
    return r < 0 ? r : -EOPNOTSUPP;
}

long lx_setxattr(struct ucall *c) { return set_xattr(c, XA_PATH); }
long lx_lsetxattr(struct ucall *c) { return set_xattr(c, XA_LPATH); }
long lx_fsetxattr(struct ucall *c) { return set_xattr(c, XA_FD); }
long lx_getxattr(struct ucall *c) { return get_xattr(c, XA_PATH); }
long lx_lgetxattr(struct ucall *c) { return get_xattr(c, XA_LPATH); }
long lx_fgetxattr(struct ucall *c) { return get_xattr(c, XA_FD); }
long lx_listxattr(struct ucall *c) { return list_xattr(c, XA_PATH); }
long lx_llistxattr(struct ucall *c) { return list_xattr(c, XA_LPATH); }
long lx_flistxattr(struct ucall *c) { return list_xattr(c, XA_FD); }
long lx_removexattr(struct ucall *c) { return remove_xattr(c, XA_PATH); }
long lx_lremovexattr(struct ucall *c) { return remove_xattr(c, XA_LPATH); }
long lx_fremovexattr(struct ucall *c) { return remove_xattr(c, XA_FD); }
