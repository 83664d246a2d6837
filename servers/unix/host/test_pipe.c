/* Pipes (pipe.c), mirroring the pipe cases of tests/linux/files_fd.c and adding what a
 * program there cannot see: blocking, wake-ups, PIPE_BUF atomicity, partial progress of
 * large writes, and that every pipe is freed (LeakSanitizer). */
#include <string.h>
#include "fake.h"

#define MEM (256 * 1024)
#define FDS 0                     /* user offset of the int[2] pipe2 writes */
#define BUF 4096                  /* user offset of the data buffer */

static struct proc *p;

static long pipe_of(int fds[2], unsigned flags)
{
    struct ucall c = fake_call(p, 293, fake_user(p, FDS), flags, 0, 0);
    long r = lx_pipe2(&c);
    memcpy(fds, fake_host(p, fake_user(p, FDS)), 2 * sizeof(int));
    return r;
}

/* read/write through the file's ops, as the VFS's read(2)/write(2) will */
static long xfer(struct ucall *c, int fd, bool write, size_t n)
{
    struct file *f = fd_file(p, fd);
    uint64_t off = 0;
    if (!f)
        return -EBADF;
    return write ? f->ops->write(f, c, fake_user(p, BUF), n, &off)
                 : f->ops->read(f, c, fake_user(p, BUF), n, &off);
}

static long rd(int fd, size_t n)
{
    struct ucall c = fake_call(p, 0, (uint64_t)fd, 0, n, 0);
    return xfer(&c, fd, false, n);
}

static long wr(int fd, const char *data, size_t n)
{
    struct ucall c = fake_call(p, 1, (uint64_t)fd, 0, n, 0);
    if (data)
        memcpy(fake_host(p, fake_user(p, BUF)), data, n);
    return xfer(&c, fd, true, n);
}

static long ioctl_int(int fd, unsigned long cmd, int *out)
{
    struct ucall c = fake_call(p, 16, (uint64_t)fd, cmd, fake_user(p, 64), 0);
    long r = lx_ioctl(&c);
    memcpy(out, fake_host(p, fake_user(p, 64)), sizeof *out);
    return r;
}

static unsigned poll_bits(int fd)
{
    struct file *f = fd_file(p, fd);
    return f->ops->poll(f, NULL);
}

static void test_basics(void)
{
    int fds[2], n = -1;
    CHECK_EQ(pipe_of(fds, 0), 0);
    CHECK_EQ(fds[0], 0);
    CHECK_EQ(fds[1], 1);
    CHECK_EQ(wr(fds[1], "ping", 4), 4);
    CHECK_EQ(ioctl_int(fds[0], FIONREAD, &n), 0);
    CHECK_EQ(n, 4);
    memset(fake_host(p, fake_user(p, BUF)), 0, 16);
    CHECK_EQ(rd(fds[0], 16), 4);
    CHECK(!memcmp(fake_host(p, fake_user(p, BUF)), "ping", 5));
    CHECK_EQ(wr(fds[0], "x", 1), -EBADF);          /* write to the read end */
    CHECK_EQ(rd(fds[1], 1), -EBADF);               /* read from the write end */
    CHECK_EQ(rd(fds[0], 0), 0);
    CHECK_EQ(wr(fds[1], "x", 0), 0);
    fd_file(p, fds[0])->flags |= O_NONBLOCK;
    CHECK_EQ(rd(fds[0], 1), -EAGAIN);
    fd_close(p, fds[1]);
    CHECK_EQ(rd(fds[0], 1), 0);                    /* EOF: no writer left */
    CHECK_EQ(poll_bits(fds[0]), POLLHUP);
    fd_close(p, fds[0]);
}

static void test_epipe(void)
{
    int fds[2];
    pipe_of(fds, 0);
    fd_close(p, fds[0]);
    int before = fake_sigpipes;
    CHECK_EQ(wr(fds[1], "x", 1), -EPIPE);
    CHECK_EQ(fake_sigpipes, before + 1);
    CHECK_EQ(poll_bits(fds[1]), POLLERR | POLLOUT | POLLWRNORM);
    fd_close(p, fds[1]);
}

static void test_pipe2_flags(void)
{
    int fds[2];
    CHECK_EQ(pipe_of(fds, O_CLOEXEC), 0);
    CHECK(p->fds->cloexec[0] & (1ull << fds[1]));
    CHECK(p->fds->cloexec[0] & (1ull << fds[0]));
    fd_close(p, fds[0]);
    fd_close(p, fds[1]);
    CHECK_EQ(pipe_of(fds, O_NONBLOCK), 0);
    CHECK(fd_file(p, fds[0])->flags & O_NONBLOCK);
    CHECK(fd_file(p, fds[1])->flags & O_NONBLOCK);
    CHECK_EQ(fd_file(p, fds[1])->flags & O_ACCMODE, O_WRONLY);
    CHECK(!(p->fds->cloexec[0] & (1ull << fds[1])));
    fd_close(p, fds[0]);
    fd_close(p, fds[1]);
    CHECK_EQ(pipe_of(fds, 0x1), -EINVAL);
    struct ucall c = fake_call(p, 22, 8, 0, 0, 0);              /* a bad pointer */
    CHECK_EQ(lx_pipe(&c), -EFAULT);
    CHECK(fd_file(p, 0) == NULL);                                /* nothing installed */
    c = fake_call(p, 22, fake_user(p, MEM - 4), 0, 0, 0);        /* half of it is bad */
    CHECK_EQ(lx_pipe(&c), -EFAULT);
    CHECK(fd_file(p, 0) == NULL);
}

static void test_emfile(void)
{
    int fds[2];
    struct file *spare = file_new(NULL, NULL, 0);
    for (int fd = 0; fd < UNIX_MAX_FDS - 1; fd++)
        fd_install(p, file_get(spare), 0, false);
    CHECK_EQ(pipe_of(fds, 0), -EMFILE);          /* one slot: the second end fails */
    CHECK(fd_file(p, UNIX_MAX_FDS - 1) == NULL); /* and the first is closed again */
    for (int fd = 0; fd < UNIX_MAX_FDS - 1; fd++)
        fd_close(p, fd);
    file_put(spare);
}

static void test_blocking(void)
{
    int fds[2];
    pipe_of(fds, 0);
    struct file *r = fd_file(p, fds[0]);
    int blocked = fake_blocked, wakes = fake_wakes;
    CHECK_EQ(rd(fds[0], 1), UNIX_BLOCKED);
    CHECK_EQ(fake_blocked, blocked + 1);
    CHECK_EQ(fake_blocked_deadline, UNIX_NO_DEADLINE);
    struct waitlist *readers = fake_blocked_on;
    struct waitlist *w = NULL;
    r->ops->poll(r, &w);
    CHECK(w == readers);
    CHECK_EQ(wr(fds[1], "a", 1), 1);
    CHECK(fake_wakes > wakes);                    /* the reader and the polls */
    CHECK_EQ(rd(fds[0], 1), 1);                   /* the re-run finds the byte */
    fd_close(p, fds[0]);
    fd_close(p, fds[1]);
}

/* 64 KiB fit; then a write of PIPE_BUF bytes goes in whole or not at all. */
static void test_capacity_and_atomicity(void)
{
    int fds[2];
    pipe_of(fds, 0);
    for (int i = 0; i < 16; i++)
        CHECK_EQ(wr(fds[1], NULL, 4096), 4096);
    CHECK_EQ(poll_bits(fds[1]), 0);
    CHECK_EQ(wr(fds[1], "x", 1), UNIX_BLOCKED);
    CHECK_EQ(rd(fds[0], 4095), 4095);
    CHECK_EQ(wr(fds[1], NULL, 4096), UNIX_BLOCKED);   /* 4095 bytes of room: not split */
    fd_file(p, fds[1])->flags |= O_NONBLOCK;
    CHECK_EQ(wr(fds[1], NULL, 4096), -EAGAIN);
    CHECK_EQ(wr(fds[1], NULL, 4095), 4095);
    int n;
    ioctl_int(fds[0], FIONREAD, &n);
    CHECK_EQ(n, 65536);
    fd_close(p, fds[0]);
    fd_close(p, fds[1]);
}

/* A write larger than PIPE_BUF goes in as room appears; c->done carries its progress
 * across re-runs, and the bytes arrive in order, once. */
static void test_large_write(void)
{
    int fds[2];
    pipe_of(fds, 0);
    unsigned char *src = fake_host(p, fake_user(p, BUF));
    for (int i = 0; i < 100000; i++)
        src[i] = (unsigned char)(i * 7);
    struct ucall w = fake_call(p, 1, (uint64_t)fds[1], 0, 100000, 0);
    CHECK_EQ(xfer(&w, fds[1], true, 100000), UNIX_BLOCKED);
    CHECK_EQ(w.done, 65536);
    unsigned char got[65536];
    struct ucall r = fake_call(p, 0, (uint64_t)fds[0], 0, 0, 0);
    struct file *rf = fd_file(p, fds[0]);
    uint64_t off = 0;
    uint64_t out = fake_user(p, BUF + 100000);
    CHECK_EQ(rf->ops->read(rf, &r, out, 65536, &off), 65536);
    memcpy(got, fake_host(p, out), 65536);
    CHECK_EQ(xfer(&w, fds[1], true, 100000), 100000);      /* the re-run finishes */
    CHECK_EQ(rf->ops->read(rf, &r, out, 65536, &off), 100000 - 65536);
    CHECK(!memcmp(got, src, 65536));
    CHECK(!memcmp(fake_host(p, out), src + 65536, 100000 - 65536));
    fd_close(p, fds[0]);
    /* no reader left: a write that already made progress returns it */
    w = fake_call(p, 1, (uint64_t)fds[1], 0, 100000, 0);
    w.done = 10;
    CHECK_EQ(xfer(&w, fds[1], true, 100000), 10);
    fd_close(p, fds[1]);
}

static void test_efault(void)
{
    int fds[2];
    pipe_of(fds, 0);
    struct file *wf = fd_file(p, fds[1]), *rf = fd_file(p, fds[0]);
    struct ucall c = fake_call(p, 1, 0, 0, 0, 0);
    uint64_t off = 0;
    CHECK_EQ(wf->ops->write(wf, &c, 16, 4, &off), -EFAULT);
    CHECK_EQ(poll_bits(fds[0]), 0);                 /* nothing went in */
    wr(fds[1], "abcd", 4);
    CHECK_EQ(rf->ops->read(rf, &c, fake_user(p, MEM - 2), 4, &off), -EFAULT);
    CHECK_EQ(rd(fds[0], 4), 4);                     /* nothing was taken out */
    fd_close(p, fds[0]);
    fd_close(p, fds[1]);
}

int main(void)
{
    p = fake_proc(MEM);
    fake_fds(p);
    test_basics();
    test_epipe();
    test_pipe2_flags();
    test_emfile();
    test_blocking();
    test_capacity_and_atomicity();
    test_large_write();
    test_efault();
    fake_fds_free(p);
    fake_proc_free(p);
    return fake_done();
}
