/*
 * Names: mkdir(at), mknod(at), rmdir, unlink(at), rename(at), renameat2. Each resolves its paths
 * without following a final symlink (a name is what they act on), then makes Linux's
 * checks in Linux's order, then changes the tree (tmpfs.c).
 */
#include "procfs.h"

static char path_a[PATH_MAX], path_b[PATH_MAX];

static bool is_dot(const struct walk *w)
{
    return w->name[0] == '.' && (w->len == 1 || (w->len == 2 && w->name[1] == '.'));
}

/* Resolve the user path at upath under dirfd into w (buf holds the path). */
static long walk_user(struct ucall *c, long dirfd, uint64_t upath, char *buf,
                      unsigned flags, struct walk *w)
{
    long r = vfs_path_in(c, upath, buf);
    if (r < 0)
        return r;
    return vfs_walk(c->proc, (int)dirfd, buf, flags, w);
}

/* ---- mkdir ---- */

static long make_dir(struct ucall *c, struct walk *w, unsigned mode)
{
    if (w->inode)
        return -EEXIST;
    if (w->dir->nlink == 0 || procfs_dir_fixed(w->dir))
        return -ENOENT;                 /* removed; or /proc, which makes its own names */
    struct inode *i = inode_new(S_IFDIR | (mode & 01777 & ~c->proc->fs->umask));
    if (!i)
        return -ENOSPC;
    i->uid = c->proc->uid[ID_FS];
    i->gid = c->proc->gid[ID_FS];
    long r = dir_link(w->dir, w->name, w->len, i);
    inode_put(i);                   /* the name holds it now (or it is freed) */
    return r;
}

static long do_mkdir(struct ucall *c, long dirfd, uint64_t upath, unsigned mode)
{
    struct walk w;
    long r = walk_user(c, dirfd, upath, path_a, WALK_MAY_BE_MISSING, &w);
    if (r < 0)
        return r;
    r = make_dir(c, &w, mode);
    walk_done(&w);
    return r;
}

long lx_mkdir(struct ucall *c)
{
    return do_mkdir(c, AT_FDCWD, c->a[0], (unsigned)c->a[1]);
}

long lx_mkdirat(struct ucall *c)
{
    return do_mkdir(c, arg_fd(c->a[0]), c->a[1], (unsigned)c->a[2]);
}

/* ---- mknod ---- */

/* The type mknod makes of mode (0: a regular file), or -EPERM for a directory and
 * -EINVAL for anything else, checked before the path as Linux's may_mknod. */
static long node_type(unsigned mode)
{
    switch (mode & S_IFMT) {
    case 0: return S_IFREG;
    case S_IFREG: case S_IFCHR: case S_IFBLK: case S_IFIFO: case S_IFSOCK:
        return mode & S_IFMT;
    case S_IFDIR: return -EPERM;
    default: return -EINVAL;
    }
}

static long make_node(struct ucall *c, struct walk *w, unsigned type, unsigned mode,
                      uint64_t dev)
{
    if (w->inode)
        return -EEXIST;
    if (w->slash || w->dir->nlink == 0 || procfs_dir_fixed(w->dir))
        return -ENOENT;
    struct inode *i = inode_new(type | (mode & 07777 & ~c->proc->fs->umask));
    if (!i)
        return -ENOSPC;
    i->uid = c->proc->uid[ID_FS];
    i->gid = c->proc->gid[ID_FS];
    if (type == S_IFCHR || type == S_IFBLK) {     /* Linux's new_decode_dev */
        i->rdev_major = (unsigned)((dev & 0xfff00) >> 8);
        i->rdev_minor = (unsigned)((dev & 0xff) | ((dev >> 12) & 0xfff00));
    }
    long r = dir_link(w->dir, w->name, w->len, i);
    inode_put(i);
    return r;
}

static long do_mknod(struct ucall *c, long dirfd, uint64_t upath, unsigned mode, uint64_t dev)
{
    long type = node_type(mode);
    if (type < 0)
        return type;
    struct walk w;
    long r = walk_user(c, dirfd, upath, path_a, WALK_MAY_BE_MISSING, &w);
    if (r < 0)
        return r;
    r = make_node(c, &w, (unsigned)type, mode, (uint32_t)dev);
    walk_done(&w);
    return r;
}

/* mknod(path, mode, dev); mknodat(dirfd, path, mode, dev). dev is 32 bits (unsigned). */
long lx_mknod(struct ucall *c)
{
    return do_mknod(c, AT_FDCWD, c->a[0], (unsigned)c->a[1], c->a[2]);
}

long lx_mknodat(struct ucall *c)
{
    return do_mknod(c, arg_fd(c->a[0]), c->a[1], (unsigned)c->a[2], c->a[3]);
}

/* ---- rmdir, unlink ---- */

static long remove_dir(struct ucall *c, struct walk *w)
{
    if (w->len == 1 && w->name[0] == '.')
        return -EINVAL;
    if (is_dot(w))
        return -ENOTEMPTY;
    if (w->inode == c->proc->fs->root || w->inode->parent == w->inode)
        return -EBUSY;
    if (!inode_is(w->inode, S_IFDIR))
        return -ENOTDIR;
    if (!dir_is_empty(w->inode))
        return -ENOTEMPTY;
    dir_unlink(w->dir, dir_find(w->dir, w->name, w->len));
    return 0;
}

static long remove_file(struct walk *w)
{
    if (is_dot(w) || inode_is(w->inode, S_IFDIR))
        return -EISDIR;
    dir_unlink(w->dir, dir_find(w->dir, w->name, w->len));
    return 0;
}

static long do_remove(struct ucall *c, long dirfd, uint64_t upath, bool dir)
{
    struct walk w;
    long r = walk_user(c, dirfd, upath, path_a, 0, &w);
    if (r < 0)
        return r;
    if (w.inode->proc_kind == PK_ROOT)
        r = -EBUSY;                     /* a mount point */
    else if (procfs_dir_fixed(w.dir))
        r = -EPERM;                     /* /proc removes nothing (no unlink or rmdir) */
    else
        r = dir ? remove_dir(c, &w) : remove_file(&w);
    walk_done(&w);
    return r;
}

long lx_rmdir(struct ucall *c)
{
    return do_remove(c, AT_FDCWD, c->a[0], true);
}

long lx_unlink(struct ucall *c)
{
    return do_remove(c, AT_FDCWD, c->a[0], false);
}

long lx_unlinkat(struct ucall *c)
{
    if (c->a[2] & ~(uint64_t)AT_REMOVEDIR)
        return -EINVAL;
    return do_remove(c, arg_fd(c->a[0]), c->a[1], c->a[2] & AT_REMOVEDIR);
}

/* ---- rename ---- */

/* Is dir the directory d or below it? */
static bool is_below(const struct inode *dir, const struct inode *d)
{
    for (;;) {
        if (dir == d)
            return true;
        if (dir->parent == dir)
            return false;
        dir = dir->parent;
    }
}

/* Linux's checks of rename(old, new) when both names resolved. */
static long rename_check(const struct walk *o, const struct walk *n, unsigned flags)
{
    bool odir = inode_is(o->inode, S_IFDIR);
    bool ndir = n->inode && inode_is(n->inode, S_IFDIR);
    if (is_dot(o) || is_dot(n) || o->inode->parent == o->inode ||
        (n->inode && n->inode->parent == n->inode))
        return -EBUSY;                  /* ".", ".." or the root */
    if ((flags & RENAME_EXCHANGE) && !n->inode)
        return -ENOENT;
    if ((flags & RENAME_NOREPLACE) && n->inode)
        return -EEXIST;
    if (o->inode == n->inode)
        return 0;                   /* two names of one inode: nothing to do */
    if (odir && is_below(n->dir, o->inode))
        return -EINVAL;
    if (ndir && is_below(o->dir, n->inode))
        return (flags & RENAME_EXCHANGE) ? -EINVAL : -ENOTEMPTY;
    if (!odir && n->slash && !(flags & RENAME_EXCHANGE))
        return -ENOTDIR;
    if (flags & RENAME_EXCHANGE)
        return 0;
    if (odir && n->inode && !ndir)
        return -ENOTDIR;
    if (!odir && ndir)
        return -EISDIR;
    if (ndir && !dir_is_empty(n->inode))
        return -ENOTEMPTY;
    if (n->dir->nlink == 0)
        return -ENOENT;
    return 0;
}

static long rename_names(struct walk *o, struct walk *n, unsigned flags)
{
    if (procfs_dir_fixed(o->dir) || procfs_dir_fixed(n->dir) || o->inode->proc_kind)
        return -EXDEV;                  /* /proc is another file system */
    long r = rename_check(o, n, flags);
    if (r < 0 || o->inode == n->inode)
        return r;
    struct dentry *od = dir_find(o->dir, o->name, o->len);
    struct dentry *nd = n->inode ? dir_find(n->dir, n->name, n->len) : NULL;
    if (flags & RENAME_EXCHANGE) {
        dir_exchange(o->dir, od, n->dir, nd);
        return 0;
    }
    return dir_rename(o->dir, od, n->dir, n->name, n->len, nd);
}

static long do_rename(struct ucall *c, long olddfd, uint64_t uold, long newdfd,
                      uint64_t unew, uint64_t flags)
{
    if ((flags & ~(uint64_t)(RENAME_NOREPLACE | RENAME_EXCHANGE | RENAME_WHITEOUT)) ||
        (flags & RENAME_WHITEOUT) ||
        (flags & (RENAME_NOREPLACE | RENAME_EXCHANGE)) == (RENAME_NOREPLACE | RENAME_EXCHANGE))
        return -EINVAL;
    static struct walk o, n;        /* one call at a time; keeps the kernel stack small */
    long r = walk_user(c, olddfd, uold, path_a, 0, &o);
    if (r < 0)
        return r;
    r = walk_user(c, newdfd, unew, path_b, WALK_MAY_BE_MISSING, &n);
    if (r == 0) {
        r = rename_names(&o, &n, (unsigned)flags);
        walk_done(&n);
    }
    walk_done(&o);
    return r;
}

long lx_rename(struct ucall *c)
{
    return do_rename(c, AT_FDCWD, c->a[0], AT_FDCWD, c->a[1], 0);
}

long lx_renameat(struct ucall *c)
{
    return do_rename(c, arg_fd(c->a[0]), c->a[1], arg_fd(c->a[2]), c->a[3], 0);
}

long lx_renameat2(struct ucall *c)
{
    return do_rename(c, arg_fd(c->a[0]), c->a[1], arg_fd(c->a[2]), c->a[3], c->a[4]);
}
