/*
 * The fd-table calls: dup, dup2, dup3, fcntl (F_DUPFD, F_DUPFD_CLOEXEC, F_GETFD, F_SETFD,
 * F_GETFL, F_SETFL). A new fd shares the open file (its offset and status flags); the
 * close-on-exec flag belongs to the fd.
 */
#include "vfs.h"

/* What F_SETFL may change (Linux's SETFL_MASK); the rest of the flags stay. */
#define SETFL_MASK (O_APPEND | O_NONBLOCK | O_ASYNC | O_DIRECT | O_NOATIME)

/* Make newfd refer to oldfd's file (closing what newfd had): newfd or -EBADF. */
static long dup_to(struct proc *p, long oldfd, long newfd, bool cloexec)
{
    struct file *f = fd_file(p, oldfd);
    if (!f || newfd < 0 || newfd >= UNIX_MAX_FDS)
        return -EBADF;
    struct file *prev = p->fds->fd[newfd];
    p->fds->fd[newfd] = file_get(f);
    fd_set_cloexec(p, newfd, cloexec);
    file_put(prev);
    return newfd;
}

long lx_dup(struct ucall *c)
{
    struct file *f = fd_file(c->proc, arg_fd(c->a[0]));
    if (!f)
        return -EBADF;
    return fd_install(c->proc, file_get(f), 0, false);
}

long lx_dup2(struct ucall *c)
{
    long oldfd = arg_fd(c->a[0]), newfd = arg_fd(c->a[1]);
    if (oldfd == newfd)
        return fd_file(c->proc, oldfd) ? newfd : -EBADF;
    return dup_to(c->proc, oldfd, newfd, false);
}

long lx_dup3(struct ucall *c)
{
    long oldfd = arg_fd(c->a[0]), newfd = arg_fd(c->a[1]);
    if (c->a[2] & ~(uint64_t)O_CLOEXEC)
        return -EINVAL;
    if (oldfd == newfd)
        return -EINVAL;
    return dup_to(c->proc, oldfd, newfd, c->a[2] & O_CLOEXEC);
}

/* F_DUPFD(_CLOEXEC): the lowest free fd >= min; a min beyond the table is -EINVAL. */
static long dup_from(struct proc *p, struct file *f, uint64_t arg, bool cloexec)
{
    uint32_t min = (uint32_t)arg;
    if (min >= UNIX_MAX_FDS)
        return -EINVAL;
    return fd_install(p, file_get(f), min, cloexec);
}

long lx_fcntl(struct ucall *c)
{
    struct proc *p = c->proc;
    long fd = arg_fd(c->a[0]);
    struct file *f = fd_file(p, fd);
    if (!f)
        return -EBADF;
    uint64_t arg = c->a[2];
    switch ((unsigned)c->a[1]) {
    case F_DUPFD:
        return dup_from(p, f, arg, false);
    case F_DUPFD_CLOEXEC:
        return dup_from(p, f, arg, true);
    case F_GETFD:
        return fd_cloexec(p, fd) ? FD_CLOEXEC : 0;
    case F_SETFD:
        fd_set_cloexec(p, fd, arg & FD_CLOEXEC);
        return 0;
    case F_GETFL:
        return f->flags;
    case F_SETFL:
        f->flags = (f->flags & ~SETFL_MASK) | ((unsigned)arg & SETFL_MASK);
        return 0;
    default:
        return -EINVAL;
    }
}
