/*
 * Pipes (pipe(2), pipe2(2), pipe(7)): a 64 KiB ring shared by a read end and a write end.
 *
 * Contract, as Linux: a read returns what is there (up to n), 0 once no writer is left,
 * or waits (-EAGAIN with O_NONBLOCK). A write of at most PIPE_BUF bytes goes in whole or
 * waits, so it is never interleaved with another; a larger one goes in piece by piece as
 * room appears (its progress is c->done, kept across the re-runs). A write with no reader
 * left sends SIGPIPE and fails with -EPIPE. Blocked calls wait on the pipe's own lists; every
 * change wakes the other side and the waiting polls (poll_wake).
 */
#include "devices.h"

#define PIPE_SIZE 65536u

struct pipe {
    unsigned char *buf;
    size_t head, len;            /* the bytes [head, head + len) modulo PIPE_SIZE */
    int readers, writers;        /* open ends */
    struct waitlist readable;    /* readers waiting for data or EOF */
    struct waitlist writable;    /* writers waiting for room or EPIPE */
    /* FIFOs (named pipes): the pipe lives as long as its inode; opens wait here for the
     * other side (open(2) of a FIFO blocks until it has a reader and a writer) */
    bool fifo;
    struct waitlist open_readers, open_writers;
};

/* A pipe(2) end is read-only or write-only; a FIFO opened O_RDWR is both. */
static bool can_read(const struct file *f)
{
    return (f->flags & O_ACCMODE) != O_WRONLY;
}

static bool can_write(const struct file *f)
{
    return (f->flags & O_ACCMODE) != O_RDONLY;
}

/* Copy k bytes at the ring's start to user memory (two pieces when it wraps). */
static long ring_copy_out(struct pipe *pp, struct proc *p, uint64_t uaddr, size_t k)
{
    size_t first = PIPE_SIZE - pp->head < k ? PIPE_SIZE - pp->head : k;
    long err = copy_out(p, uaddr, pp->buf + pp->head, first);
    if (!err && k > first)
        err = copy_out(p, uaddr + first, pp->buf, k - first);
    return err;
}

/* Where a write's bytes come from: process p's memory at uaddr (write), or the server's
 * own memory at buf (sendfile's write_buf). */
struct source {
    struct proc *p;
    uint64_t uaddr;
    const unsigned char *buf;
};

static long source_copy(const struct source *s, void *dst, size_t at, size_t k)
{
    if (s->buf) {
        memcpy(dst, s->buf + at, k);
        return 0;
    }
    return copy_in(s->p, dst, s->uaddr + at, k);
}

/* Copy k bytes from s at offset at to the ring's end; they count only when it succeeds. */
static long ring_copy_in(struct pipe *pp, const struct source *s, size_t at, size_t k)
{
    size_t tail = (pp->head + pp->len) % PIPE_SIZE;
    size_t first = PIPE_SIZE - tail < k ? PIPE_SIZE - tail : k;
    long err = source_copy(s, pp->buf + tail, at, first);
    if (!err && k > first)
        err = source_copy(s, pp->buf, at + first, k - first);
    if (!err)
        pp->len += k;
    return err;
}

static long pipe_read(struct file *f, struct ucall *c, uint64_t uaddr, size_t n,
                      uint64_t *off)
{
    (void)off;
    struct pipe *pp = f->priv;
    if (!can_read(f))
        return -EBADF;
    if (n == 0)
        return 0;
    if (pp->len == 0) {
        if (pp->writers == 0)
            return 0;
        if (f->flags & O_NONBLOCK)
            return -EAGAIN;
        return ucall_block(c, &pp->readable, UNIX_NO_DEADLINE);
    }
    size_t k = n < pp->len ? n : pp->len;
    if (ring_copy_out(pp, c->proc, uaddr, k))
        return -EFAULT;
    pp->head = (pp->head + k) % PIPE_SIZE;
    pp->len -= k;
    poll_wake(&pp->writable);
    return (long)k;
}

/* What a write that cannot finish now returns: its progress if any, else it waits. */
static long write_stalled(struct file *f, struct ucall *c, struct pipe *pp, size_t done)
{
    if (f->flags & O_NONBLOCK)
        return done ? (long)done : -EAGAIN;
    c->done = done;
    return ucall_block(c, &pp->writable, UNIX_NO_DEADLINE);
}

static long pipe_put(struct file *f, struct ucall *c, const struct source *s, size_t n)
{
    struct pipe *pp = f->priv;
    size_t done = c->done;
    if (!can_write(f))
        return -EBADF;
    if (n == 0)
        return 0;
    if (pp->readers == 0) {
        signal_send_pipe(c->proc);
        return done ? (long)done : -EPIPE;
    }
    size_t room = PIPE_SIZE - pp->len;
    size_t want = n - done;
    if (room == 0 || (n <= PIPE_BUF && room < n))
        return write_stalled(f, c, pp, done);
    size_t k = want < room ? want : room;
    if (ring_copy_in(pp, s, done, k))
        return done ? (long)done : -EFAULT;
    done += k;
    poll_wake(&pp->readable);
    return done < n ? write_stalled(f, c, pp, done) : (long)done;
}

static long pipe_write(struct file *f, struct ucall *c, uint64_t uaddr, size_t n,
                       uint64_t *off)
{
    (void)off;
    struct source s = {c->proc, uaddr, NULL};
    return pipe_put(f, c, &s, n);
}

/* sendfile into a pipe: the same rules as write (whole up to PIPE_BUF, waits for room). */
static long pipe_write_buf(struct file *f, struct ucall *c, const void *buf, size_t n,
                           uint64_t *off)
{
    (void)off;
    struct source s = {c->proc, 0, buf};
    return pipe_put(f, c, &s, n);
}

static unsigned pipe_poll(struct file *f, struct waitlist **w)
{
    struct pipe *pp = f->priv;
    unsigned mask = 0;
    if (can_read(f)) {
        if (pp->len)
            mask |= POLLIN | POLLRDNORM;
        if (pp->writers == 0)
            mask |= POLLHUP;
    }
    if (can_write(f)) {
        if (PIPE_SIZE - pp->len >= PIPE_BUF)
            mask |= POLLOUT | POLLWRNORM;
        if (pp->readers == 0)
            mask |= POLLERR;
    }
    if (w)
        *w = can_read(f) ? &pp->readable : &pp->writable;
    return mask;
}

static long pipe_ioctl(struct file *f, struct ucall *c, unsigned long cmd, uint64_t arg)
{
    struct pipe *pp = f->priv;
    if (cmd != FIONREAD)
        return -ENOTTY;
    int32_t queued = (int32_t)pp->len;
    return copy_out(c->proc, arg, &queued, sizeof queued);
}

static void pipe_free(struct pipe *pp)
{
    unix_free(pp->buf);
    unix_free(pp);
}

/* The last close of an end. A pipe(2) pipe goes with its last end; a FIFO's stays with
 * its inode, but its data goes (as Linux discards a FIFO's data at its last close). */
static void pipe_release(struct file *f)
{
    struct pipe *pp = f->priv;
    if (can_read(f))
        pp->readers--;
    if (can_write(f))
        pp->writers--;
    poll_wake(&pp->writable);
    poll_wake(&pp->readable);
    if (pp->readers || pp->writers)
        return;
    if (!pp->fifo)
        pipe_free(pp);
    else
        pp->head = pp->len = 0;
}

static const struct file_ops pipe_ops = {
    .read = pipe_read,
    .write = pipe_write,
    .write_buf = pipe_write_buf,
    .poll = pipe_poll,
    .ioctl = pipe_ioctl,
    .release = pipe_release,
};

/* One end of pipe pp: a file with no inode (fstat reports a FIFO). */
static struct file *pipe_end(unsigned flags, struct pipe *pp)
{
    struct file *f = file_new(&pipe_ops, NULL, flags);
    if (f)
        f->priv = pp;
    return f;
}

long pipe_create(unsigned flags, struct file **read_end, struct file **write_end)
{
    struct pipe *pp = unix_alloc(sizeof *pp);
    unsigned char *buf = unix_alloc_big(PIPE_SIZE);
    if (!pp || !buf) {
        unix_free(pp);
        unix_free(buf);
        return -ENOMEM;
    }
    *pp = (struct pipe){.buf = buf, .readers = 1, .writers = 1};
    unsigned nonblock = flags & O_NONBLOCK;
    *read_end = pipe_end(O_RDONLY | nonblock, pp);
    *write_end = *read_end ? pipe_end(O_WRONLY | nonblock, pp) : NULL;
    if (*write_end)
        return 0;
    if (*read_end) {             /* its release frees the pipe once the writer is gone */
        pp->writers = 0;
        file_put(*read_end);
    } else {
        unix_free(buf);
        unix_free(pp);
    }
    return -ENOMEM;
}

/* Both ends of a new pipe at the two lowest free descriptors, their numbers written to
 * ufds. The user array is checked before anything is installed, so EFAULT leaves the fd
 * table as it was. */
static long make_pipe(struct ucall *c, uint64_t ufds, unsigned flags)
{
    if (flags & ~(unsigned)(O_CLOEXEC | O_NONBLOCK | O_DIRECT))
        return -EINVAL;
    int32_t fds[2] = {-1, -1};
    if (copy_out(c->proc, ufds, fds, sizeof fds))
        return -EFAULT;
    struct file *rd, *wr;
    long err = pipe_create(flags, &rd, &wr);
    if (err)
        return err;
    bool cloexec = flags & O_CLOEXEC;
    long fd0 = fd_install(c->proc, rd, 0, cloexec);    /* releases rd when it fails */
    if (fd0 < 0) {
        file_put(wr);
        return fd0;
    }
    long fd1 = fd_install(c->proc, wr, 0, cloexec);
    if (fd1 < 0) {
        fd_close(c->proc, fd0);
        return fd1;
    }
    fds[0] = (int32_t)fd0;
    fds[1] = (int32_t)fd1;
    if (copy_out(c->proc, ufds, fds, sizeof fds)) {
        fd_close(c->proc, fd0);
        fd_close(c->proc, fd1);
        return -EFAULT;
    }
    return 0;
}

long lx_pipe2(struct ucall *c)
{
    return make_pipe(c, c->a[0], (unsigned)c->a[1]);
}

long lx_pipe(struct ucall *c)
{
    return make_pipe(c, c->a[0], 0);
}

/* ---- FIFOs ---- */

static struct pipe *fifo_of(struct inode *i)
{
    if (i->fifo)
        return i->fifo;
    struct pipe *pp = unix_alloc(sizeof *pp);
    unsigned char *buf = unix_alloc_big(PIPE_SIZE);
    if (!pp || !buf) {
        unix_free(pp);
        unix_free(buf);
        return NULL;
    }
    *pp = (struct pipe){.buf = buf, .fifo = true};
    i->fifo = pp;
    return pp;
}

/* Does an open with accmode acc wait for the other side? A reader waits for a writer
 * (one that is open or waiting to open), a writer for a reader; O_RDWR never waits. */
static bool open_must_wait(const struct pipe *pp, unsigned acc)
{
    if (acc == O_RDONLY)
        return !pp->writers && !pp->open_writers.head;
    if (acc == O_WRONLY)
        return !pp->readers && !pp->open_readers.head;
    return false;
}

long fifo_open(struct ucall *c, struct inode *i, unsigned flags, struct file **out)
{
    struct pipe *pp = fifo_of(i);
    if (!pp)
        return -ENOMEM;
    unsigned acc = flags & O_ACCMODE;
    if (open_must_wait(pp, acc)) {
        if (acc == O_WRONLY && (flags & O_NONBLOCK))
            return -ENXIO;
        if (!(flags & O_NONBLOCK))
            return ucall_block(c, acc == O_RDONLY ? &pp->open_readers : &pp->open_writers,
                               UNIX_NO_DEADLINE);
    }
    struct file *f = file_new(&pipe_ops, i, flags);
    if (!f)
        return -ENOMEM;
    f->priv = pp;
    if (can_read(f)) {
        pp->readers++;
        waitlist_wake(&pp->open_writers);
    }
    if (can_write(f)) {
        pp->writers++;
        waitlist_wake(&pp->open_readers);
    }
    poll_wake(&pp->readable);
    poll_wake(&pp->writable);
    *out = f;
    return 0;
}

void fifo_free(struct inode *i)
{
    struct pipe *pp = i->fifo;
    if (!pp)
        return;
    waitlist_wake(&pp->open_readers);       /* they run again and find no FIFO */
    waitlist_wake(&pp->open_writers);
    pipe_free(pp);
    i->fifo = NULL;
}
