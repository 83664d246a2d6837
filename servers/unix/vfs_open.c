/*
 * Opening and closing: open, openat, creat, close (open(2)'s checks in Linux's order:
 * the path, a free fd, the walk, creation or the checks of an existing file, O_TRUNC).
 */
#include "procfs.h"

/* Flags open does not keep in the open file (F_GETFL shows the rest); O_LARGEFILE is
 * always on, as Linux sets it for every 64-bit open. O_NOCTTY is dropped only after a
 * device's open has seen it (a tty decides on the controlling terminal by it). */
#define OPEN_ONLY_FLAGS (O_CREAT | O_EXCL | O_TRUNC | O_CLOEXEC)

static long open_device(struct ucall *c, struct inode *inode, unsigned flags,
                        struct file **out)
{
    const struct chardev *dev = chardev_lookup(inode->rdev_major, inode->rdev_minor);
    if (!dev)
        return -ENXIO;
    struct file *f = file_new(dev->ops, inode, flags);
    if (!f)
        return -ENOMEM;
    long r = dev->open ? dev->open(f, c) : 0;
    if (r < 0) {
        f->ops = NULL;                  /* not opened: nothing to release */
        file_put(f);
        return r;
    }
    f->flags &= ~(unsigned)O_NOCTTY;
    *out = f;
    return 0;
}

long vfs_open_inode(struct ucall *c, struct inode *inode, unsigned flags, struct file **out)
{
    const struct file_ops *ops;
    if ((flags & O_PATH) || inode_is(inode, S_IFDIR) || inode_is(inode, S_IFLNK))
        ops = &tmpfs_dir_ops;           /* no read or write */
    else if (inode->proc_kind)
        return procfs_open(c, inode, flags, out);
    else if (inode_is(inode, S_IFREG))
        ops = &tmpfs_file_ops;
    else if (inode_is(inode, S_IFCHR))
        return open_device(c, inode, flags, out);
    else if (inode_is(inode, S_IFIFO))
        return fifo_open(c, inode, flags & ~(unsigned)O_NOCTTY, out);
    else
        return -ENXIO;                  /* sockets and block devices: no such device */
    *out = file_new(ops, inode, flags & ~(unsigned)O_NOCTTY);
    return *out ? 0 : -ENOMEM;
}

/* Create the missing last component of w as a regular file: its inode (a reference). */
static long create_file(struct ucall *c, struct walk *w, unsigned mode, struct inode **out)
{
    if (w->slash)
        return -EISDIR;
    if (w->dir->nlink == 0)
        return -ENOENT;                 /* the directory was removed */
    if (procfs_dir_fixed(w->dir))
        return -ENOENT;                 /* /proc has no name it did not make */
    if (!vfs_permitted(c->proc, w->dir, W_OK | X_OK, ID_FS))
        return -EACCES;
    struct inode *i = inode_new(S_IFREG | (mode & 07777 & ~c->proc->fs->umask));
    if (!i)
        return -ENOSPC;
    i->uid = c->proc->uid[ID_FS];
    i->gid = c->proc->gid[ID_FS];
    long r = dir_link(w->dir, w->name, w->len, i);
    if (r < 0) {
        inode_put(i);
        return r;
    }
    *out = i;
    return 0;
}

/* What opening with flags asks of the file: read, write (O_TRUNC too), or nothing for
 * O_PATH; /proc's files keep their own rules (procfs_open). */
static unsigned open_access(const struct inode *i, unsigned flags)
{
    if ((flags & O_PATH) || i->proc_kind)
        return 0;
    unsigned acc = flags & O_ACCMODE;
    unsigned mask = acc == O_WRONLY ? W_OK : acc == O_RDWR ? R_OK | W_OK : R_OK;
    return mask | (flags & O_TRUNC ? W_OK : 0);
}

/* An existing file against the flags: -EEXIST, -ELOOP (a symlink not followed),
 * -ENOTDIR, -EISDIR (a directory opened for writing or with O_CREAT), -EACCES (the fs
 * ids may not read or write it: vfs_permitted). */
static long check_existing(const struct proc *p, const struct inode *i, unsigned flags)
{
    bool dir = inode_is(i, S_IFDIR);
    if ((flags & (O_CREAT | O_EXCL)) == (O_CREAT | O_EXCL))
        return -EEXIST;
    if (inode_is(i, S_IFLNK) && !(flags & O_PATH))
        return -ELOOP;
    if ((flags & O_DIRECTORY) && !dir)
        return -ENOTDIR;
    if (dir && !(flags & O_PATH) &&
        ((flags & O_ACCMODE) != O_RDONLY || (flags & (O_CREAT | O_TRUNC))))
        return -EISDIR;
    if (!inode_is(i, S_IFLNK) && !vfs_permitted(p, i, open_access(i, flags), ID_FS))
        return -EACCES;
    return 0;
}

static char open_path[PATH_MAX];

/* The inode open means, created if asked: a reference, or -errno. */
static long open_target(struct ucall *c, long dirfd, unsigned flags, unsigned mode,
                        struct inode **out)
{
    unsigned wflags = (flags & O_CREAT) ? WALK_MAY_BE_MISSING : 0;
    if (!(flags & O_NOFOLLOW) && (flags & (O_CREAT | O_EXCL)) != (O_CREAT | O_EXCL))
        wflags |= WALK_FOLLOW;
    struct walk w;
    long r = vfs_walk(c->proc, (int)dirfd, open_path, wflags, &w);
    if (r < 0)
        return r;
    if (!w.inode) {
        r = (flags & O_DIRECTORY) ? -EINVAL : create_file(c, &w, mode, out);
    } else {
        r = check_existing(c->proc, w.inode, flags);
        if (r == 0 && (flags & O_TRUNC) && inode_is(w.inode, S_IFREG) && w.inode->size) {
            inode_resize(w.inode, 0);
            inode_touch(w.inode, false, true, true);
        }
        if (r == 0)
            *out = inode_get(w.inode);
    }
    walk_done(&w);
    return r;
}

static long do_open(struct ucall *c, long dirfd, uint64_t upath, unsigned flags,
                    unsigned mode)
{
    long r = vfs_path_in(c, upath, open_path);
    if (r < 0)
        return r;
    if ((flags & O_TMPFILE) == O_TMPFILE)
        return -EOPNOTSUPP;
    r = fd_lowest_free(c->proc, 0);
    if (r < 0)
        return r;
    struct inode *i;
    r = open_target(c, dirfd, flags, mode, &i);
    if (r < 0)
        return r;
    struct file *f;
    r = vfs_open_inode(c, i, (flags & ~OPEN_ONLY_FLAGS) | O_LARGEFILE, &f);
    inode_put(i);
    if (r < 0)
        return r;
    return fd_install(c->proc, f, 0, flags & O_CLOEXEC);
}

long lx_open(struct ucall *c)
{
    return do_open(c, AT_FDCWD, c->a[0], (unsigned)c->a[1], (unsigned)c->a[2]);
}

long lx_openat(struct ucall *c)
{
    return do_open(c, arg_fd(c->a[0]), c->a[1], (unsigned)c->a[2], (unsigned)c->a[3]);
}

long lx_creat(struct ucall *c)
{
    return do_open(c, AT_FDCWD, c->a[0], O_CREAT | O_WRONLY | O_TRUNC, (unsigned)c->a[1]);
}

long lx_close(struct ucall *c)
{
    return fd_close(c->proc, arg_fd(c->a[0]));
}

long vfs_exec_inode(struct proc *p, const char *path, struct inode **out)
{
    if (!path[0])
        return -ENOENT;
    struct walk w;
    long r = vfs_walk(p, AT_FDCWD, path, WALK_FOLLOW, &w);
    if (r < 0)
        return r;
    if (!inode_is(w.inode, S_IFREG) || !vfs_permitted(p, w.inode, X_OK, ID_FS))
        r = -EACCES;
    else
        *out = inode_get(w.inode);
    walk_done(&w);
    return r;
}
