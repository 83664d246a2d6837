/*
 * ioctl(2): the requests every descriptor answers (FIOCLEX, FIONCLEX, FIONBIO), then the
 * file's own (file_ops->ioctl: the tty's termios and job-control requests, FIONREAD on a
 * pipe). A file without ioctls gives -ENOTTY, as Linux does for /dev/null and regular
 * files' unknown requests. FIONREAD on a regular file (tmpfs or /proc) is its size minus
 * the file position, cut to an int as Linux's do_vfs_ioctl does (negative past the end).
 */
#include "devices.h"

static void set_cloexec(struct proc *p, long fd, bool on)
{
    uint64_t bit = 1ull << (fd % 64);
    if (on)
        p->fds->cloexec[fd / 64] |= bit;
    else
        p->fds->cloexec[fd / 64] &= ~bit;
}

static long set_nonblock(struct file *f, struct ucall *c, uint64_t arg)
{
    int32_t on;
    if (copy_in(c->proc, &on, arg, sizeof on))
        return -EFAULT;
    if (on)
        f->flags |= O_NONBLOCK;
    else
        f->flags &= ~(unsigned)O_NONBLOCK;
    return 0;
}

static long regular_fionread(struct file *f, struct ucall *c, uint64_t arg)
{
    int32_t left = (int32_t)(f->inode->size - f->off);
    return copy_out(c->proc, arg, &left, sizeof left) ? -EFAULT : 0;
}

/* ioctl(fd, request, arg); the request is a 32-bit number, as in Linux. */
long lx_ioctl(struct ucall *c)
{
    long fd = (int32_t)c->a[0];
    unsigned cmd = (uint32_t)c->a[1];
    struct file *f = fd_file(c->proc, fd);
    if (!f)
        return -EBADF;
    switch (cmd) {
    case FIOCLEX:
    case FIONCLEX:
        set_cloexec(c->proc, fd, cmd == FIOCLEX);
        return 0;
    case FIONBIO:
        return set_nonblock(f, c, c->a[2]);
    case FIONREAD:
        if (f->inode && inode_is(f->inode, S_IFREG))
            return regular_fionread(f, c, c->a[2]);
        __attribute__((fallthrough));   /* the file's own: pipes, the tty */
    default:
        return f->ops && f->ops->ioctl ? f->ops->ioctl(f, c, cmd, c->a[2]) : -ENOTTY;
    }
}
