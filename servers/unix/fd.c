/*
 * Open files, fd tables and fs contexts (vfs.h). An open file description is shared by
 * the fds that dup or fork made from one open; it holds a reference on its inode and is
 * released (ops->release, then freed) when its last reference goes. The fd table is a
 * fixed array of UNIX_MAX_FDS slots with one close-on-exec bit each.
 */
#include "vfs.h"

struct file *file_new(const struct file_ops *ops, struct inode *inode, unsigned flags)
{
    struct file *f = unix_alloc(sizeof(*f));
    if (!f)
        return NULL;
    vfs_memset(f, 0, sizeof(*f));
    f->ops = ops;
    f->refs = 1;
    f->flags = flags;
    f->inode = inode ? inode_get(inode) : NULL;
    return f;
}

struct file *file_get(struct file *f)
{
    f->refs++;
    return f;
}

void file_put(struct file *f)
{
    if (!f || --f->refs > 0)
        return;
    if (f->ops && f->ops->release)
        f->ops->release(f);
    inode_put(f->inode);
    unix_free(f);
}

struct file *fd_file(struct proc *p, long fd)
{
    if (fd < 0 || fd >= UNIX_MAX_FDS)
        return NULL;
    return p->fds->fd[fd];
}

struct file *fd_file_io(struct proc *p, long fd)
{
    struct file *f = fd_file(p, fd);
    return f && !(f->flags & O_PATH) ? f : NULL;
}

bool fd_cloexec(struct proc *p, long fd)
{
    return (p->fds->cloexec[fd / 64] >> (fd % 64)) & 1;
}

void fd_set_cloexec(struct proc *p, long fd, bool on)
{
    uint64_t bit = 1ull << (fd % 64);
    if (on)
        p->fds->cloexec[fd / 64] |= bit;
    else
        p->fds->cloexec[fd / 64] &= ~bit;
}

long fd_lowest_free(struct proc *p, long min)
{
    for (long fd = min < 0 ? 0 : min; fd < UNIX_MAX_FDS; fd++)
        if (!p->fds->fd[fd])
            return fd;
    return -EMFILE;
}

long fd_install(struct proc *p, struct file *f, long min, bool cloexec)
{
    long fd = fd_lowest_free(p, min);
    if (fd < 0) {
        file_put(f);
        return fd;
    }
    p->fds->fd[fd] = f;
    fd_set_cloexec(p, fd, cloexec);
    return fd;
}

long fd_close(struct proc *p, long fd)
{
    struct file *f = fd_file(p, fd);
    if (!f)
        return -EBADF;
    p->fds->fd[fd] = NULL;
    fd_set_cloexec(p, fd, false);
    file_put(f);
    return 0;
}

struct fdtable *fdtable_new(void)
{
    struct fdtable *t = unix_alloc(sizeof(*t));
    if (t) {
        vfs_memset(t, 0, sizeof(*t));
        t->refs = 1;
    }
    return t;
}

struct fdtable *fdtable_copy(const struct fdtable *t)
{
    struct fdtable *n = fdtable_new();
    if (!n)
        return NULL;
    for (int fd = 0; fd < UNIX_MAX_FDS; fd++)
        n->fd[fd] = t->fd[fd] ? file_get(t->fd[fd]) : NULL;
    vfs_memcpy(n->cloexec, t->cloexec, sizeof(n->cloexec));
    return n;
}

void fdtable_exec(struct fdtable *t)
{
    for (int fd = 0; fd < UNIX_MAX_FDS; fd++) {
        if ((t->cloexec[fd / 64] >> (fd % 64)) & 1) {
            file_put(t->fd[fd]);
            t->fd[fd] = NULL;
        }
    }
    vfs_memset(t->cloexec, 0, sizeof(t->cloexec));
}

void fdtable_put(struct fdtable *t)
{
    if (!t || --t->refs > 0)
        return;
    for (int fd = 0; fd < UNIX_MAX_FDS; fd++)
        file_put(t->fd[fd]);
    unix_free(t);
}

struct fs_context *fs_context_new(void)
{
    struct inode *root = vfs_root();
    struct fs_context *fs = root ? unix_alloc(sizeof(*fs)) : NULL;
    if (!fs)
        return NULL;
    fs->refs = 1;
    fs->root = inode_get(root);
    fs->cwd = inode_get(root);
    fs->umask = 022;
    return fs;
}

struct fs_context *fs_context_copy(const struct fs_context *from)
{
    struct fs_context *fs = unix_alloc(sizeof(*fs));
    if (!fs)
        return NULL;
    fs->refs = 1;
    fs->root = inode_get(from->root);
    fs->cwd = inode_get(from->cwd);
    fs->umask = from->umask;
    return fs;
}

void fs_context_put(struct fs_context *fs)
{
    if (!fs || --fs->refs > 0)
        return;
    inode_put(fs->cwd);
    inode_put(fs->root);
    unix_free(fs);
}
