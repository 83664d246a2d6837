/*
 * Moving data: tmpfs's file operations and the calls that go through any file's
 * operations (read, write, pread64, pwrite64, readv, writev, lseek, sendfile). The call
 * checks the fd and the access mode; the file's ops move the bytes and may block
 * (unix.h), in which case nothing has changed yet.
 */
#include "procfs.h"
#include "vfs.h"

/* ---- tmpfs regular files ---- */

static long tmpfs_read(struct file *f, struct ucall *c, uint64_t uaddr, size_t n,
                       uint64_t *off)
{
    struct inode *i = f->inode;
    if (*off >= i->size || n == 0)
        return 0;
    size_t k = i->size - *off < n ? (size_t)(i->size - *off) : n;
    if (copy_out(c->proc, uaddr, i->data + *off, k) < 0)
        return -EFAULT;
    *off += k;
    return (long)k;
}

/* Where a write of n bytes at *off goes and how much of it fits: -EFBIG when none. */
static long write_room(struct file *f, uint64_t *off, size_t *n)
{
    struct inode *i = f->inode;
    if (f->flags & O_APPEND)
        *off = i->size;
    if (*off >= TMPFS_MAX_FILE)
        return -EFBIG;
    if (*n > TMPFS_MAX_FILE - *off)
        *n = (size_t)(TMPFS_MAX_FILE - *off);
    return inode_reserve(i, *off + *n);
}

static void write_done(struct inode *i, uint64_t *off, size_t n)
{
    *off += n;
    if (*off > i->size)
        inode_set_size(i, *off);
    inode_touch(i, false, true, true);
}

static long tmpfs_write(struct file *f, struct ucall *c, uint64_t uaddr, size_t n,
                        uint64_t *off)
{
    struct inode *i = f->inode;
    if (n == 0)
        return 0;
    long r = write_room(f, off, &n);
    if (r < 0)
        return r;
    if (copy_in(c->proc, i->data + *off, uaddr, n) < 0) {
        vfs_memset(i->data + i->size, 0, i->cap - i->size);     /* keep zeros beyond size */
        return -EFAULT;
    }
    write_done(i, off, n);
    return (long)n;
}

/* buf may lie inside this very file's data (sendfile from a file to itself): it is
 * found again after the data may have moved, and copied with memmove. */
static long tmpfs_write_buf(struct file *f, struct ucall *c, const void *buf, size_t n,
                            uint64_t *off)
{
    (void)c;
    struct inode *i = f->inode;
    const unsigned char *src = buf;
    bool inside = i->data && src >= i->data && src < i->data + i->cap;
    size_t src_off = inside ? (size_t)(src - i->data) : 0;
    if (n == 0)
        return 0;
    long r = write_room(f, off, &n);
    if (r < 0)
        return r;
    vfs_memmove(i->data + *off, inside ? i->data + src_off : src, n);
    write_done(i, off, n);
    return (long)n;
}

const struct file_ops tmpfs_file_ops = {
    .read = tmpfs_read,
    .write = tmpfs_write,
    .write_buf = tmpfs_write_buf,
};
/* A directory is read with getdents64 (vfs_dir.c); read and write do not apply. */
const struct file_ops tmpfs_dir_ops = {0};

/* ---- checks shared by the calls ---- */

static bool readable(const struct file *f)
{
    unsigned a = f->flags & O_ACCMODE;
    return !(f->flags & O_PATH) && (a == O_RDONLY || a == O_RDWR);
}

static bool writable(const struct file *f)
{
    unsigned a = f->flags & O_ACCMODE;
    return !(f->flags & O_PATH) && (a == O_WRONLY || a == O_RDWR);
}

/* Has an offset of its own (pread, lseek): tmpfs files and directories, and the memory
 * devices (major 1: /dev/null, zero, urandom), whose offset does not matter. */
static bool seekable(const struct file *f)
{
    if (!f->inode || inode_is(f->inode, S_IFIFO))
        return false;
    return !inode_is(f->inode, S_IFCHR) || f->inode->rdev_major == 1;
}

/* The file at fd, open for reading (write: for writing), the user range [uaddr,
 * uaddr + n) plausible, and the file with the operation: or -EBADF, -EFAULT, -EISDIR (a
 * directory), -EINVAL (the kind cannot), in Linux's order. */
static long io_file(struct ucall *c, long fd, bool write, uint64_t uaddr, uint64_t n,
                    struct file **out)
{
    struct file *f = fd_file(c->proc, fd);
    if (!f || !(write ? writable(f) : readable(f)))
        return -EBADF;
    if (!user_range_ok(uaddr, n))
        return -EFAULT;
    if (!(write ? (void *)f->ops->write : (void *)f->ops->read))
        return f->inode && inode_is(f->inode, S_IFDIR) ? -EISDIR : -EINVAL;
    *out = f;
    return 0;
}

static long transfer(struct file *f, struct ucall *c, bool write, uint64_t uaddr, size_t n,
                     uint64_t *off)
{
    if (n > VFS_MAX_RW)
        n = VFS_MAX_RW;
    return write ? f->ops->write(f, c, uaddr, n, off) : f->ops->read(f, c, uaddr, n, off);
}

static long rw(struct ucall *c, bool write)
{
    struct file *f;
    long r = io_file(c, arg_fd(c->a[0]), write, c->a[1], c->a[2], &f);
    return r < 0 ? r : transfer(f, c, write, c->a[1], c->a[2], &f->off);
}

long lx_read(struct ucall *c)
{
    return rw(c, false);
}

long lx_write(struct ucall *c)
{
    return rw(c, true);
}

static long prw(struct ucall *c, bool write)
{
    struct file *f;
    long r = io_file(c, arg_fd(c->a[0]), write, c->a[1], c->a[2], &f);
    if (r < 0)
        return r;
    if (!seekable(f))
        return -ESPIPE;
    if ((int64_t)c->a[3] < 0)
        return -EINVAL;
    uint64_t off = c->a[3];         /* on an O_APPEND file pwrite appends, as on Linux */
    return transfer(f, c, write, c->a[1], c->a[2], &off);
}

long lx_pread64(struct ucall *c)
{
    return prw(c, false);
}

long lx_pwrite64(struct ucall *c)
{
    return prw(c, true);
}

/* ---- readv, writev ---- */

/* Check the whole vector first, as Linux does: -EINVAL for a count above IOV_MAX or a
 * negative length, -EFAULT for an unreadable vector or a range outside user space. Also
 * sendmsg/recvmsg's vectors (socket.c). */
long vfs_check_iov(struct ucall *c, uint64_t uiov, uint64_t cnt)
{
    if (cnt > IOV_MAX)
        return -EINVAL;
    for (uint64_t i = 0; i < cnt; i++) {
        struct linux_iovec v;
        if (copy_in(c->proc, &v, uiov + i * sizeof(v), sizeof(v)) < 0)
            return -EFAULT;
        if ((int64_t)v.iov_len < 0)
            return -EINVAL;
        if (!user_range_ok(v.iov_base, v.iov_len))
            return -EFAULT;
    }
    return 0;
}

/* Move the vectors in order until one comes short. Only the first may block: the later
 * ones run with O_NONBLOCK, so a call that moved bytes returns them instead of waiting
 * (and never blocks after it changed something). */
static long rwv(struct ucall *c, bool write)
{
    struct file *f;
    long r = io_file(c, arg_fd(c->a[0]), write, 0, 0, &f);
    if (r == 0)
        r = vfs_check_iov(c, c->a[1], c->a[2]);
    if (r < 0)
        return r;
    long done = 0;
    unsigned flags = f->flags;
    for (uint64_t i = 0; i < c->a[2]; i++) {
        struct linux_iovec v;
        copy_in(c->proc, &v, c->a[1] + i * sizeof(v), sizeof(v));
        r = transfer(f, c, write, v.iov_base, v.iov_len, &f->off);
        if (r < 0)
            break;
        done += r;
        if ((size_t)r < v.iov_len || done >= (long)VFS_MAX_RW)
            break;
        if (done)
            f->flags |= O_NONBLOCK;
    }
    f->flags = flags;
    return r < 0 && !done ? r : done;
}

long lx_readv(struct ucall *c)
{
    return rwv(c, false);
}

long lx_writev(struct ucall *c)
{
    return rwv(c, true);
}

/* ---- lseek ---- */

/* SEEK_DATA/SEEK_HOLE: tmpfs keeps no holes, so data runs to the end. */
#define SEEK_DATA 3
#define SEEK_HOLE 4

static long seek_base(struct file *f, int whence, int64_t off, int64_t *base)
{
    struct inode *i = f->inode;
    bool reg = inode_is(i, S_IFREG) && !i->proc_kind;   /* /proc: no end to seek from */
    switch (whence) {
    case SEEK_SET: *base = 0; return 0;
    case SEEK_CUR: *base = (int64_t)f->off; return 0;
    case SEEK_END:
        if (!reg)
            return -EINVAL;
        *base = (int64_t)i->size;
        return 0;
    case SEEK_DATA:
    case SEEK_HOLE:
        if (!reg)
            return -EINVAL;
        if (off < 0 || (uint64_t)off >= i->size)
            return -ENXIO;
        *base = whence == SEEK_DATA ? 0 : (int64_t)i->size - off;
        return 0;
    default:
        return -EINVAL;
    }
}

long lx_lseek(struct ucall *c)
{
    struct file *f = fd_file_io(c->proc, arg_fd(c->a[0]));
    if (!f)
        return -EBADF;
    if (!seekable(f))
        return -ESPIPE;
    if (inode_is(f->inode, S_IFCHR))
        return 0;
    int64_t off = (int64_t)c->a[1], base;
    long r = seek_base(f, (int)c->a[2], off, &base);
    if (r < 0)
        return r;
    if ((off > 0 && base > INT64_MAX - off) || base + off < 0)
        return -EINVAL;
    f->off = (uint64_t)(base + off);
    return (long)f->off;
}

/* ---- sendfile ---- */

/* sendfile(out_fd, in_fd, offset *, count): from a tmpfs file to any file that has
 * write_buf. With an offset pointer, in_fd's own offset does not move. */
long lx_sendfile(struct ucall *c)
{
    struct file *out = fd_file(c->proc, arg_fd(c->a[0]));
    struct file *in = fd_file(c->proc, arg_fd(c->a[1]));
    if (!in || !readable(in) || !out || !writable(out))
        return -EBADF;
    if (!in->inode || !inode_is(in->inode, S_IFREG) || (out->flags & O_APPEND) ||
        !out->ops->write_buf || in->inode->proc_kind >= PK_PID_STAT)
        return -EINVAL;                /* Linux 6.1 cannot splice a process's /proc files */
    int64_t pos = (int64_t)in->off;
    if (c->a[2] && copy_in(c->proc, &pos, c->a[2], sizeof(pos)) < 0)
        return -EFAULT;
    if (pos < 0)
        return -EINVAL;
    const unsigned char *data = in->inode->data;
    uint64_t size = in->inode->size;
    procfs_file_text(in, &data, &size);       /* a /proc file: the text formatted at open */
    size_t n = c->a[3] > VFS_MAX_RW ? VFS_MAX_RW : (size_t)c->a[3];
    if ((uint64_t)pos >= size)
        n = 0;
    else if (n > size - (uint64_t)pos)
        n = (size_t)(size - (uint64_t)pos);
    long r = n ? out->ops->write_buf(out, c, data + pos, n, &out->off) : 0;
    if (r < 0)
        return r;
    pos += r;
    if (c->a[2]) {
        if (copy_out(c->proc, c->a[2], &pos, sizeof(pos)) < 0)
            return -EFAULT;
    } else {
        in->off = (uint64_t)pos;
    }
    return r;
}
