/*
 * Metadata: the stat family (stat, fstat, lstat, newfstatat, statx), chmod, chown, umask,
 * access, truncate and utimensat. Every file has one root owner's full rights: access
 * only refuses X_OK on a file without an execute bit, as Linux does for root.
 */
#include "vfs.h"

#define PIPE_DEV 0xc                /* st_dev of a pipe (Linux's pipefs is anonymous too) */

/* The inode a path call means, following the final symlink or not. An empty path with
 * AT_EMPTY_PATH means dirfd's file: then *f is set instead when it has no inode (pipe). */
static long meta_target(struct ucall *c, long dirfd, uint64_t upath, bool follow,
                        bool empty_ok, struct inode **i, struct file **f)
{
    char first;
    *f = NULL;
    if (empty_ok && dirfd != AT_FDCWD && copy_in(c->proc, &first, upath, 1) == 0 && !first) {
        *f = fd_file(c->proc, dirfd);
        if (!*f)
            return -EBADF;
        if ((*f)->inode) {
            *i = inode_get((*f)->inode);
            *f = NULL;
        }
        return 0;
    }
    return vfs_at_inode(c, (int)dirfd, upath, follow, empty_ok, i);
}

static uint64_t encode_dev(unsigned major, unsigned minor)
{
    return ((uint64_t)(major & 0xfffff000u) << 32) | ((uint64_t)(major & 0xfffu) << 8) |
           ((uint64_t)(minor & 0xffffff00u) << 12) | (minor & 0xffu);
}

static int64_t blocks_of(const struct inode *i)
{
    return inode_is(i, S_IFREG) ? (int64_t)((i->size + 4095) / 4096 * 8) : 0;
}

static void fill_stat(const struct inode *i, struct linux_stat *st)
{
    vfs_memset(st, 0, sizeof(*st));
    st->st_dev = TMPFS_DEV;
    st->st_ino = i->ino;
    st->st_nlink = i->nlink;
    st->st_mode = i->mode;
    st->st_uid = i->uid;
    st->st_gid = i->gid;
    st->st_rdev = encode_dev(i->rdev_major, i->rdev_minor);
    st->st_size = inode_is(i, S_IFCHR) ? 0 : (int64_t)i->size;
    st->st_blksize = 4096;
    st->st_blocks = blocks_of(i);
    st->st_atim = i->atime;
    st->st_mtim = i->mtime;
    st->st_ctim = i->ctime;
}

/* A file without an inode (a pipe end): a FIFO of its own. */
static void fill_stat_pipe(const struct file *f, struct linux_stat *st)
{
    vfs_memset(st, 0, sizeof(*st));
    st->st_dev = PIPE_DEV;
    st->st_ino = (uint64_t)(uintptr_t)f >> 4;
    st->st_nlink = 1;
    st->st_mode = (sock_file(f) ? S_IFSOCK | 0777 : S_IFIFO | 0600);
    st->st_blksize = 4096;
}

static long stat_out(struct ucall *c, struct inode *i, struct file *f, uint64_t ubuf)
{
    struct linux_stat st;
    if (i)
        fill_stat(i, &st);
    else
        fill_stat_pipe(f, &st);
    inode_put(i);
    return copy_out(c->proc, ubuf, &st, sizeof(st)) < 0 ? -EFAULT : 0;
}

static long do_stat(struct ucall *c, long dirfd, uint64_t upath, uint64_t ubuf,
                    uint64_t flags)
{
    if (flags & ~(uint64_t)(AT_SYMLINK_NOFOLLOW | AT_NO_AUTOMOUNT | AT_EMPTY_PATH))
        return -EINVAL;
    struct inode *i = NULL;
    struct file *f;
    long r = meta_target(c, dirfd, upath, !(flags & AT_SYMLINK_NOFOLLOW),
                         flags & AT_EMPTY_PATH, &i, &f);
    return r < 0 ? r : stat_out(c, i, f, ubuf);
}

long lx_stat(struct ucall *c)
{
    return do_stat(c, AT_FDCWD, c->a[0], c->a[1], 0);
}

long lx_lstat(struct ucall *c)
{
    return do_stat(c, AT_FDCWD, c->a[0], c->a[1], AT_SYMLINK_NOFOLLOW);
}

long lx_newfstatat(struct ucall *c)
{
    return do_stat(c, arg_fd(c->a[0]), c->a[1], c->a[2], c->a[3]);
}

long lx_fstat(struct ucall *c)
{
    struct file *f = fd_file(c->proc, arg_fd(c->a[0]));
    if (!f)
        return -EBADF;
    return stat_out(c, f->inode ? inode_get(f->inode) : NULL, f, c->a[1]);
}

/* ---- statx ---- */

static struct linux_statx_timestamp sx_time(struct linux_timespec t)
{
    return (struct linux_statx_timestamp){t.tv_sec, (uint32_t)t.tv_nsec, 0};
}

/* statx from the stat fields: every basic field is known, plus the mount id. */
static void fill_statx(const struct linux_stat *st, struct linux_statx *sx)
{
    vfs_memset(sx, 0, sizeof(*sx));
    sx->stx_mask = STATX_BASIC_STATS | STATX_MNT_ID;
    sx->stx_blksize = (uint32_t)st->st_blksize;
    sx->stx_nlink = (uint32_t)st->st_nlink;
    sx->stx_uid = st->st_uid;
    sx->stx_gid = st->st_gid;
    sx->stx_mode = (uint16_t)st->st_mode;
    sx->stx_ino = st->st_ino;
    sx->stx_size = (uint64_t)st->st_size;
    sx->stx_blocks = (uint64_t)st->st_blocks;
    sx->stx_atime = sx_time(st->st_atim);
    sx->stx_mtime = sx_time(st->st_mtim);
    sx->stx_ctime = sx_time(st->st_ctim);
    sx->stx_rdev_major = (uint32_t)((st->st_rdev >> 8) & 0xfff);
    sx->stx_rdev_minor = (uint32_t)((st->st_rdev & 0xff) | ((st->st_rdev >> 12) & ~0xffu));
    sx->stx_dev_minor = (uint32_t)st->st_dev;
    sx->stx_mnt_id = 1;
}

/* statx(dirfd, path, flags, mask, buf) */
long lx_statx(struct ucall *c)
{
    uint64_t flags = c->a[2];
    if ((flags & ~(uint64_t)(AT_SYMLINK_NOFOLLOW | AT_NO_AUTOMOUNT | AT_EMPTY_PATH |
                             AT_STATX_SYNC_TYPE)) ||
        (flags & AT_STATX_SYNC_TYPE) == AT_STATX_SYNC_TYPE || (c->a[3] & STATX__RESERVED))
        return -EINVAL;
    struct inode *i = NULL;
    struct file *f;
    long r = meta_target(c, arg_fd(c->a[0]), c->a[1], !(flags & AT_SYMLINK_NOFOLLOW),
                         flags & AT_EMPTY_PATH, &i, &f);
    if (r < 0)
        return r;
    struct linux_stat st;
    static struct linux_statx sx;   /* one call at a time; keeps the kernel stack small */
    if (i)
        fill_stat(i, &st);
    else
        fill_stat_pipe(f, &st);
    inode_put(i);
    fill_statx(&st, &sx);
    return copy_out(c->proc, c->a[4], &sx, sizeof(sx)) < 0 ? -EFAULT : 0;
}

/* ---- chmod, chown ---- */

static long path_inode(struct ucall *c, long dirfd, uint64_t upath, bool follow,
                       bool empty_ok, struct inode **i)
{
    struct file *f;
    long r = meta_target(c, dirfd, upath, follow, empty_ok, i, &f);
    return r == 0 && f ? -EINVAL : r;   /* a pipe has no metadata to change here */
}

static void set_mode(struct inode *i, uint64_t mode)
{
    i->mode = (i->mode & S_IFMT) | ((unsigned)mode & 07777);
    inode_touch(i, false, false, true);
}

long lx_chmod(struct ucall *c)
{
    struct inode *i;
    long r = path_inode(c, AT_FDCWD, c->a[0], true, false, &i);
    if (r == 0) {
        set_mode(i, c->a[1]);
        inode_put(i);
    }
    return r;
}

long lx_fchmodat(struct ucall *c)
{
    struct inode *i;
    long r = path_inode(c, arg_fd(c->a[0]), c->a[1], true, false, &i);
    if (r == 0) {
        set_mode(i, c->a[2]);
        inode_put(i);
    }
    return r;
}

long lx_fchmod(struct ucall *c)
{
    struct file *f = fd_file_io(c->proc, arg_fd(c->a[0]));
    if (!f)
        return -EBADF;
    if (!f->inode)
        return -EINVAL;
    set_mode(f->inode, c->a[1]);
    return 0;
}

/* Store the owner (-1 keeps a field); like Linux, a change of owner of a non-directory
 * clears set-user-ID, and set-group-ID when the group may execute. */
static void set_owner(struct inode *i, uint64_t uid, uint64_t gid)
{
    if ((uint32_t)uid != UINT32_MAX)
        i->uid = (uint32_t)uid;
    if ((uint32_t)gid != UINT32_MAX)
        i->gid = (uint32_t)gid;
    if (!inode_is(i, S_IFDIR)) {
        i->mode &= ~(unsigned)S_ISUID;
        if (i->mode & 010)
            i->mode &= ~(unsigned)S_ISGID;
    }
    inode_touch(i, false, false, true);
}

static long do_chown(struct ucall *c, long dirfd, uint64_t upath, uint64_t uid, uint64_t gid,
                     uint64_t flags)
{
    if (flags & ~(uint64_t)(AT_SYMLINK_NOFOLLOW | AT_EMPTY_PATH))
        return -EINVAL;
    struct inode *i;
    long r = path_inode(c, dirfd, upath, !(flags & AT_SYMLINK_NOFOLLOW),
                        flags & AT_EMPTY_PATH, &i);
    if (r == 0) {
        set_owner(i, uid, gid);
        inode_put(i);
    }
    return r;
}

long lx_chown(struct ucall *c)
{
    return do_chown(c, AT_FDCWD, c->a[0], c->a[1], c->a[2], 0);
}

long lx_lchown(struct ucall *c)
{
    return do_chown(c, AT_FDCWD, c->a[0], c->a[1], c->a[2], AT_SYMLINK_NOFOLLOW);
}

long lx_fchownat(struct ucall *c)
{
    return do_chown(c, arg_fd(c->a[0]), c->a[1], c->a[2], c->a[3], c->a[4]);
}

long lx_fchown(struct ucall *c)
{
    struct file *f = fd_file_io(c->proc, arg_fd(c->a[0]));
    if (!f)
        return -EBADF;
    if (!f->inode)
        return -EINVAL;
    set_owner(f->inode, c->a[1], c->a[2]);
    return 0;
}

long lx_umask(struct ucall *c)
{
    unsigned old = c->proc->fs->umask;
    c->proc->fs->umask = (unsigned)c->a[0] & 0777;
    return old;
}

/* ---- access ---- */

static bool in_groups(const struct proc *p, unsigned gid, enum id_kind ids)
{
    if (p->gid[ids] == gid)
        return true;
    for (int k = 0; p->groups && k < p->groups->n; k++)
        if (p->groups->gid[k] == gid)
            return true;
    return false;
}

bool vfs_permitted(const struct proc *p, const struct inode *i, unsigned mask,
                   enum id_kind ids)
{
    unsigned uid = p->uid[ids];
    if (uid == 0)
        return !(mask & X_OK) || inode_is(i, S_IFDIR) || (i->mode & 0111);
    unsigned bits = uid == i->uid ? i->mode >> 6 : in_groups(p, i->gid, ids) ? i->mode >> 3
                                                                             : i->mode;
    return (bits & mask & 7) == (mask & 7);
}

static long do_access(struct ucall *c, long dirfd, uint64_t upath, uint64_t mode,
                      uint64_t flags)
{
    if (mode & ~(uint64_t)(R_OK | W_OK | X_OK))
        return -EINVAL;
    if (flags & ~(uint64_t)(AT_EACCESS | AT_SYMLINK_NOFOLLOW | AT_EMPTY_PATH))
        return -EINVAL;
    struct inode *i = NULL;
    struct file *f;
    long r = meta_target(c, dirfd, upath, !(flags & AT_SYMLINK_NOFOLLOW),
                         flags & AT_EMPTY_PATH, &i, &f);
    if (r < 0 || !i)
        return r;
    if (!vfs_permitted(c->proc, i, (unsigned)mode, flags & AT_EACCESS ? ID_FS : ID_REAL))
        r = -EACCES;                  /* access(2) answers for the real ids, as Linux */
    inode_put(i);
    return r;
}

long lx_access(struct ucall *c)
{
    return do_access(c, AT_FDCWD, c->a[0], c->a[1], 0);
}

long lx_faccessat(struct ucall *c)
{
    return do_access(c, arg_fd(c->a[0]), c->a[1], c->a[2], 0);
}

long lx_faccessat2(struct ucall *c)
{
    return do_access(c, arg_fd(c->a[0]), c->a[1], c->a[2], c->a[3]);
}

/* ---- truncate ---- */

static long resize(struct inode *i, int64_t len)
{
    long r = inode_resize(i, (uint64_t)len);
    if (r == 0)
        inode_touch(i, false, true, true);
    return r;
}

long lx_truncate(struct ucall *c)
{
    if ((int64_t)c->a[1] < 0)
        return -EINVAL;
    struct inode *i;
    long r = path_inode(c, AT_FDCWD, c->a[0], true, false, &i);
    if (r < 0)
        return r;
    if (inode_is(i, S_IFDIR))
        r = -EISDIR;
    else if (!inode_is(i, S_IFREG))
        r = -EINVAL;
    else
        r = resize(i, (int64_t)c->a[1]);
    inode_put(i);
    return r;
}

long lx_ftruncate(struct ucall *c)
{
    if ((int64_t)c->a[1] < 0)
        return -EINVAL;
    struct file *f = fd_file_io(c->proc, arg_fd(c->a[0]));
    if (!f)
        return -EBADF;
    unsigned acc = f->flags & O_ACCMODE;
    if (!f->inode || !inode_is(f->inode, S_IFREG) || (f->flags & O_PATH) ||
        (acc != O_WRONLY && acc != O_RDWR))
        return -EINVAL;
    return resize(f->inode, (int64_t)c->a[1]);
}

/* ---- utimensat ---- */

static bool nsec_ok(int64_t ns)
{
    return (ns >= 0 && ns < 1000000000) || ns == UTIME_NOW || ns == UTIME_OMIT;
}

static void set_time(struct linux_timespec *t, struct linux_timespec v,
                     struct linux_timespec now)
{
    if (v.tv_nsec == UTIME_NOW)
        *t = now;
    else if (v.tv_nsec != UTIME_OMIT)
        *t = v;
}

/* utimensat(dirfd, path, times[2], flags): times NULL sets both to now; a NULL path
 * means dirfd's file. */
long lx_utimensat(struct ucall *c)
{
    struct linux_timespec t[2] = {{0, UTIME_NOW}, {0, UTIME_NOW}};
    if (c->a[2] && copy_in(c->proc, t, c->a[2], sizeof(t)) < 0)
        return -EFAULT;
    if (!nsec_ok(t[0].tv_nsec) || !nsec_ok(t[1].tv_nsec))
        return -EINVAL;
    if (c->a[3] & ~(uint64_t)(AT_SYMLINK_NOFOLLOW | AT_EMPTY_PATH))
        return -EINVAL;
    struct inode *i;
    long r;
    if (!c->a[1] && arg_fd(c->a[0]) != AT_FDCWD) {
        struct file *f = fd_file_io(c->proc, arg_fd(c->a[0]));
        r = !f ? -EBADF : !f->inode ? -EINVAL : 0;
        i = r == 0 ? inode_get(f->inode) : NULL;
    } else {
        r = path_inode(c, arg_fd(c->a[0]), c->a[1], !(c->a[3] & AT_SYMLINK_NOFOLLOW),
                       c->a[3] & AT_EMPTY_PATH, &i);
    }
    if (r < 0)
        return r;
    if (t[0].tv_nsec != UTIME_OMIT || t[1].tv_nsec != UTIME_OMIT) {
        struct linux_timespec now = vfs_now();
        set_time(&i->atime, t[0], now);
        set_time(&i->mtime, t[1], now);
        i->ctime = now;
    }
    inode_put(i);
    return 0;
}
