/*
 * Directories as places and as lists: chdir, fchdir, getcwd, getdents64.
 */
#include "procfs.h"

static void set_cwd(struct proc *p, struct inode *dir)
{
    struct inode *old = p->fs->cwd;
    p->fs->cwd = inode_get(dir);
    inode_put(old);
}

long lx_chdir(struct ucall *c)
{
    struct inode *i;
    long r = vfs_at_inode(c, AT_FDCWD, c->a[0], true, false, &i);
    if (r < 0)
        return r;
    if (inode_is(i, S_IFDIR))
        set_cwd(c->proc, i);
    else
        r = -ENOTDIR;
    inode_put(i);
    return r;
}

long lx_fchdir(struct ucall *c)
{
    struct file *f = fd_file(c->proc, arg_fd(c->a[0]));
    if (!f)
        return -EBADF;
    if (!f->inode || !inode_is(f->inode, S_IFDIR))
        return -ENOTDIR;
    set_cwd(c->proc, f->inode);
    return 0;
}

/* ---- getcwd ---- */

static char cwd_buf[PATH_MAX];

/* The name of directory d in its parent. */
static const struct dentry *name_in_parent(const struct inode *d)
{
    for (const struct dentry *e = d->parent->entries; e; e = e->next)
        if (e->inode == d)
            return e;
    return NULL;
}

/* Build the path of dir (up to root) at the end of cwd_buf: its start, or NULL when it
 * is longer than PATH_MAX. */
const char *vfs_dir_path(const struct inode *dir, const struct inode *rootdir)
{
    char *p = cwd_buf + sizeof(cwd_buf) - 1;
    *p = 0;
    for (const struct inode *d = dir; d != rootdir && d->parent != d; d = d->parent) {
        const struct dentry *e = name_in_parent(d);
        if (!e || (size_t)(p - cwd_buf) < (size_t)e->len + 1)
            return NULL;
        p -= e->len;
        vfs_memcpy(p, e->name, e->len);
        *--p = '/';
    }
    if (!*p)
        *--p = '/';
    return p;
}

/* getcwd(buf, size): the length including the NUL; ERANGE when size is too small,
 * ENOENT when the working directory was removed. */
long lx_getcwd(struct ucall *c)
{
    struct inode *cwd = c->proc->fs->cwd;
    if (cwd->nlink == 0)
        return -ENOENT;
    const char *path = vfs_dir_path(cwd, c->proc->fs->root);
    if (!path)
        return -ENAMETOOLONG;
    size_t len = vfs_strlen(path) + 1;
    if (len > c->a[1])
        return -ERANGE;
    return copy_out(c->proc, c->a[0], path, len) < 0 ? -EFAULT : (long)len;
}

/* ---- getdents64 ---- */

/* struct linux_dirent64: d_ino 8, d_off 8, d_reclen 2, d_type 1, name, padded to 8. */
#define DIRENT_HEAD 19

static unsigned dirent_type(const struct inode *i)
{
    switch (i->mode & S_IFMT) {
    case S_IFDIR: return DT_DIR;
    case S_IFREG: return DT_REG;
    case S_IFLNK: return DT_LNK;
    case S_IFCHR: return DT_CHR;
    case S_IFIFO: return DT_FIFO;
    default: return 0;
    }
}

/* Copy one record out at *used if it fits in count: 1 written, 0 no room, -EFAULT. */
static long put_dirent(struct ucall *c, uint64_t ubuf, size_t count, size_t *used,
                       const struct inode *i, const char *name, size_t len, uint64_t next)
{
    unsigned char rec[DIRENT_HEAD + NAME_MAX + 1 + 8];
    size_t reclen = (DIRENT_HEAD + len + 1 + 7) & ~(size_t)7;
    if (*used + reclen > count)
        return 0;
    vfs_memset(rec, 0, reclen);
    uint64_t ino = i->ino;
    int64_t off = (int64_t)next;
    uint16_t rl = (uint16_t)reclen;
    vfs_memcpy(rec, &ino, 8);
    vfs_memcpy(rec + 8, &off, 8);
    vfs_memcpy(rec + 16, &rl, 2);
    rec[18] = (unsigned char)dirent_type(i);
    vfs_memcpy(rec + DIRENT_HEAD, name, len);
    if (copy_out(c->proc, ubuf + *used, rec, reclen) < 0)
        return -EFAULT;
    *used += reclen;
    return 1;
}

/* The entry at position pos of dir: "." (0), ".." (1), then the names whose cookie is
 * at least pos. Returns false at the end. */
static bool entry_at(struct inode *dir, struct inode *rootdir, uint64_t pos,
                     struct inode **i, const char **name, size_t *len, uint64_t *cookie)
{
    if (pos < 2) {
        *i = pos == 0 || dir == rootdir ? dir : dir->parent;
        *name = pos == 0 ? "." : "..";
        *len = pos + 1;
        *cookie = pos;
        return true;
    }
    for (struct dentry *d = dir->entries; d; d = d->next) {
        if (d->cookie >= pos) {
            *i = d->inode;
            *name = d->name;
            *len = d->len;
            *cookie = d->cookie;
            return true;
        }
    }
    return false;
}

long lx_getdents64(struct ucall *c)
{
    struct file *f = fd_file_io(c->proc, arg_fd(c->a[0]));
    if (!f)
        return -EBADF;
    if (!f->inode || !inode_is(f->inode, S_IFDIR))
        return -ENOTDIR;
    if (f->inode->proc_kind && f->off == 0)
        procfs_list(c->proc, f->inode);     /* a listing starts: /proc as it is now */
    size_t count = c->a[2] > VFS_MAX_RW ? VFS_MAX_RW : (size_t)c->a[2], used = 0;
    struct inode *i;
    const char *name;
    size_t len;
    uint64_t cookie;
    while (entry_at(f->inode, c->proc->fs->root, f->off, &i, &name, &len, &cookie)) {
        long r = put_dirent(c, c->a[1], count, &used, i, name, len, cookie + 1);
        if (r < 0)
            return used ? (long)used : r;
        if (r == 0)
            return used ? (long)used : -EINVAL;
        f->off = cookie + 1;
    }
    return (long)used;
}
