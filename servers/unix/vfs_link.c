/*
 * Links: link(at), symlink(at), readlink(at). A hard link is one more name of an inode
 * (never of a directory: EPERM); a symlink is an inode whose data is its target, followed
 * by path resolution (vfs_walk.c).
 */
#include "procfs.h"

static char path_new[PATH_MAX], target[PATH_MAX];

/* Resolve the new name of link or symlink: it must not exist (EEXIST), must not end
 * with '/' (ENOENT, as Linux says for a missing name with a trailing slash), and its
 * directory must still exist. */
static long walk_new_name(struct ucall *c, long dirfd, uint64_t upath, struct walk *w)
{
    long r = vfs_path_in(c, upath, path_new);
    if (r < 0)
        return r;
    r = vfs_walk(c->proc, (int)dirfd, path_new, WALK_MAY_BE_MISSING, w);
    if (r < 0)
        return r;
    if (w->inode)
        r = -EEXIST;
    else if (w->slash || w->dir->nlink == 0 || procfs_dir_fixed(w->dir))
        r = -ENOENT;                    /* /proc makes its own names only */
    if (r < 0)
        walk_done(w);
    return r;
}

static long do_link(struct ucall *c, long olddfd, uint64_t uold, long newdfd, uint64_t unew,
                    uint64_t flags)
{
    if (flags & ~(uint64_t)(AT_SYMLINK_FOLLOW | AT_EMPTY_PATH))
        return -EINVAL;
    struct inode *i;
    long r = vfs_at_inode(c, (int)olddfd, uold, flags & AT_SYMLINK_FOLLOW,
                          flags & AT_EMPTY_PATH, &i);
    if (r < 0)
        return r;
    struct walk w;
    r = walk_new_name(c, newdfd, unew, &w);
    if (r == 0) {
        if (i->proc_kind || procfs_dir_fixed(w.dir))
            r = -EXDEV;                 /* /proc is another file system */
        else if (inode_is(i, S_IFDIR))
            r = -EPERM;
        else if (i->nlink == 0)
            r = -ENOENT;
        else
            r = dir_link(w.dir, w.name, w.len, i);
        walk_done(&w);
    }
    inode_put(i);
    return r;
}

long lx_link(struct ucall *c)
{
    return do_link(c, AT_FDCWD, c->a[0], AT_FDCWD, c->a[1], 0);
}

long lx_linkat(struct ucall *c)
{
    return do_link(c, arg_fd(c->a[0]), c->a[1], arg_fd(c->a[2]), c->a[3], c->a[4]);
}

static long make_symlink(struct ucall *c, struct walk *w, size_t len)
{
    struct inode *i = inode_new(S_IFLNK | 0777);
    if (!i)
        return -ENOSPC;
    i->uid = c->proc->uid[ID_FS];
    i->gid = c->proc->gid[ID_FS];
    long r = inode_set_target(i, target, len);
    if (r == 0)
        r = dir_link(w->dir, w->name, w->len, i);
    inode_put(i);
    return r;
}

static long do_symlink(struct ucall *c, uint64_t utarget, long newdfd, uint64_t unew)
{
    long len = vfs_path_in(c, utarget, target);
    if (len < 0)
        return len;
    struct walk w;
    long r = walk_new_name(c, newdfd, unew, &w);
    if (r < 0)
        return r;
    r = make_symlink(c, &w, (size_t)len);
    walk_done(&w);
    return r;
}

long lx_symlink(struct ucall *c)
{
    return do_symlink(c, c->a[0], AT_FDCWD, c->a[1]);
}

long lx_symlinkat(struct ucall *c)
{
    return do_symlink(c, c->a[0], arg_fd(c->a[1]), c->a[2]);
}

/* readlink: the target, truncated to size bytes, without a NUL. An empty path means
 * dirfd's own file (a symlink opened with O_PATH|O_NOFOLLOW), else ENOENT. */
static long do_readlink(struct ucall *c, long dirfd, uint64_t upath, uint64_t ubuf,
                        uint64_t size)
{
    if ((int)size <= 0)
        return -EINVAL;
    long n = copy_in_str(c->proc, path_new, upath, PATH_MAX);
    if (n < 0)
        return n;
    struct inode *i;
    long r = vfs_at_inode(c, (int)dirfd, upath, false, true, &i);
    if (r < 0)
        return r;
    if (!inode_is(i, S_IFLNK)) {
        inode_put(i);
        return n == 0 ? -ENOENT : -EINVAL;
    }
    size_t k = i->size < (uint32_t)size ? (size_t)i->size : (size_t)(uint32_t)size;
    r = copy_out(c->proc, ubuf, i->data, k) < 0 ? -EFAULT : (long)k;
    inode_put(i);
    return r;
}

long lx_readlink(struct ucall *c)
{
    return do_readlink(c, AT_FDCWD, c->a[0], c->a[1], c->a[2]);
}

long lx_readlinkat(struct ucall *c)
{
    return do_readlink(c, arg_fd(c->a[0]), c->a[1], c->a[2], c->a[3]);
}
