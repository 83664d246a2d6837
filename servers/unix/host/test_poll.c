/* poll, ppoll, select, pselect6 (poll.c), mirroring test_poll and test_select of
 * tests/linux/files_fd.c, plus waiting: the deadline stays fixed across re-runs, nothing
 * is written before the call decides not to wait, and a wake-up makes the re-run see the
 * change. */
#include <string.h>
#include "fake.h"

#define MEM 65536
#define PFDS 1024                 /* user offset of the pollfd array */
#define SETS 8192                 /* read, write, except fd_sets, 128 bytes apart */
#define TIME 9000                 /* timespec / timeval */
#define SIG 9100                  /* pselect6's {sigset pointer, size} */
#define MS 1000000ull

static struct proc *p;
static int rfd, wfd;              /* a pipe */

static struct linux_pollfd *pfd(int i)
{
    return fake_host(p, fake_user(p, PFDS + 8 * (size_t)i));
}

static void set_pfd(int i, int fd, int16_t events)
{
    *pfd(i) = (struct linux_pollfd){fd, events, 0x7777};
}

static long call(long (*fn)(struct ucall *), uint64_t start, uint64_t a0, uint64_t a1,
                 uint64_t a2, uint64_t a3, uint64_t a4, uint64_t a5)
{
    static struct uthread thread;        /* ppoll/pselect6 set its mask for the call */
    struct ucall c = fake_call(p, 0, a0, a1, a2, a3);
    c.thread = &thread;
    c.a[4] = a4;
    c.a[5] = a5;
    c.started_ns = start;
    return fn(&c);
}

static long do_poll(int n, int timeout_ms)
{
    return call(lx_poll, fake_now_ns, fake_user(p, PFDS), (uint64_t)n,
                (uint64_t)(int64_t)timeout_ms, 0, 0, 0);
}

static void put_timespec(int64_t sec, int64_t nsec)
{
    struct linux_timespec ts = {sec, nsec};
    memcpy(fake_host(p, fake_user(p, TIME)), &ts, sizeof ts);
}

static struct linux_timespec get_timespec(void)
{
    struct linux_timespec ts;
    memcpy(&ts, fake_host(p, fake_user(p, TIME)), sizeof ts);
    return ts;
}

static void write_byte(void)
{
    struct file *f = fd_file(p, wfd);
    struct ucall c = fake_call(p, 1, (uint64_t)wfd, 0, 1, 0);
    uint64_t off = 0;
    CHECK_EQ(f->ops->write(f, &c, fake_user(p, 0), 1, &off), 1);
}

static void new_pipe(void)
{
    struct file *r, *w;
    CHECK_EQ(pipe_create(0, &r, &w), 0);
    rfd = (int)fd_install(p, r, 0, false);
    wfd = (int)fd_install(p, w, 0, false);
}

static void close_pipe(void)
{
    fd_close(p, rfd);
    fd_close(p, wfd);
}

static void test_poll_cases(void)
{
    new_pipe();
    set_pfd(0, rfd, POLLIN);
    set_pfd(1, wfd, POLLOUT);
    CHECK_EQ(do_poll(1, 0), 0);
    CHECK_EQ(pfd(0)->revents, 0);
    CHECK_EQ(do_poll(1, 0), 0);
    set_pfd(0, wfd, POLLOUT);
    CHECK_EQ(do_poll(1, 0), 1);
    CHECK_EQ(pfd(0)->revents, POLLOUT);          /* only what was asked for */
    set_pfd(0, rfd, POLLIN);
    write_byte();
    CHECK_EQ(do_poll(2, 0), 2);
    CHECK_EQ(pfd(0)->revents, POLLIN);
    set_pfd(2, 999, POLLIN);
    set_pfd(3, -1, POLLIN);                      /* negative fds are skipped */
    CHECK_EQ(do_poll(4, 0), 3);
    CHECK_EQ(pfd(2)->revents, POLLNVAL);
    CHECK_EQ(pfd(3)->revents, 0);
    put_timespec(0, 0);
    CHECK_EQ(call(lx_ppoll, 0, fake_user(p, PFDS), 1, fake_user(p, TIME), 0, 0, 0), 1);
    CHECK_EQ(call(lx_poll, 0, 16, 1, 0, 0, 0, 0), -EFAULT);
    CHECK_EQ(call(lx_poll, 0, fake_user(p, MEM - 4), 1, 0, 0, 0, 0), -EFAULT);
    put_timespec(0, 2000000000);
    CHECK_EQ(call(lx_ppoll, 0, fake_user(p, PFDS), 1, fake_user(p, TIME), 0, 0, 0), -EINVAL);
    put_timespec(-1, 0);
    CHECK_EQ(call(lx_ppoll, 0, fake_user(p, PFDS), 1, fake_user(p, TIME), 0, 0, 0), -EINVAL);
    CHECK_EQ(call(lx_ppoll, 0, fake_user(p, PFDS), 1, 16, 0, 0, 0), -EFAULT);
    put_timespec(0, 0);
    CHECK_EQ(call(lx_ppoll, 0, fake_user(p, PFDS), 1, fake_user(p, TIME), fake_user(p, SIG),
                  4, 0), -EINVAL);               /* a sigset must be 8 bytes */
    CHECK_EQ(call(lx_ppoll, 0, fake_user(p, PFDS), 1, fake_user(p, TIME), fake_user(p, SIG),
                  8, 0), 1);
    CHECK_EQ(call(lx_poll, 0, fake_user(p, PFDS), 1025, 0, 0, 0, 0), -EINVAL);
    fd_close(p, wfd);
    CHECK_EQ(do_poll(1, 0), 1);
    CHECK_EQ(pfd(0)->revents, POLLIN | POLLHUP);  /* data left, and no writer */
    fd_close(p, rfd);
}

/* More pollfds than one chunk of the scan. */
static void test_poll_many(void)
{
    new_pipe();
    for (int i = 0; i < 100; i++)
        set_pfd(i, i % 2 ? wfd : rfd, POLLIN | POLLOUT);
    CHECK_EQ(do_poll(100, 0), 50);
    CHECK_EQ(pfd(99)->revents, POLLOUT);
    CHECK_EQ(pfd(98)->revents, 0);
    close_pipe();
}

static void test_poll_waits(void)
{
    new_pipe();
    set_pfd(0, rfd, POLLIN);
    fake_now_ns = 5000;
    int blocked = fake_blocked;
    CHECK_EQ(do_poll(1, 100), UNIX_BLOCKED);
    CHECK_EQ(fake_blocked, blocked + 1);
    CHECK(fake_blocked_on == &poll_waiters);
    CHECK_EQ(fake_blocked_deadline, 5000 + 100 * MS);
    CHECK_EQ(pfd(0)->revents, 0x7777);           /* nothing written before waiting */
    fake_now_ns = 5000 + 99 * MS;                /* a re-run before the deadline */
    CHECK_EQ(call(lx_poll, 5000, fake_user(p, PFDS), 1, 100, 0, 0, 0), UNIX_BLOCKED);
    CHECK_EQ(fake_blocked_deadline, 5000 + 100 * MS);   /* the same deadline */
    fake_now_ns = 5000 + 100 * MS;
    CHECK_EQ(call(lx_poll, 5000, fake_user(p, PFDS), 1, 100, 0, 0, 0), 0);
    CHECK_EQ(pfd(0)->revents, 0);
    CHECK_EQ(do_poll(1, -1), UNIX_BLOCKED);
    CHECK_EQ(fake_blocked_deadline, UNIX_NO_DEADLINE);
    int wakes = fake_wakes;
    write_byte();
    CHECK(fake_wakes >= wakes + 2);              /* the pipe's readers and the polls */
    CHECK_EQ(do_poll(1, -1), 1);
    /* ppoll writes back the time left */
    set_pfd(0, rfd, POLLIN);
    put_timespec(1, 0);
    fake_now_ns = 5000 + 300 * MS;
    CHECK_EQ(call(lx_ppoll, 5000, fake_user(p, PFDS), 1, fake_user(p, TIME), 0, 0, 0), 1);
    CHECK_EQ(get_timespec().tv_sec, 0);
    CHECK_EQ(get_timespec().tv_nsec, 700 * MS);
    fake_now_ns = 0;
    close_pipe();
}

/* ---- select ---- */

static uint64_t *set(int k)
{
    return fake_host(p, fake_user(p, SETS + 128 * (size_t)k));
}

static void clear_sets(void)
{
    memset(set(0), 0, 3 * 128);
}

static void fd_set_bit(int k, int fd)
{
    set(k)[fd / 64] |= 1ull << (fd % 64);
}

static bool fd_isset(int k, int fd)
{
    return set(k)[fd / 64] & (1ull << (fd % 64));
}

static void put_timeval(int64_t sec, int64_t usec)
{
    struct linux_timeval tv = {sec, usec};
    memcpy(fake_host(p, fake_user(p, TIME)), &tv, sizeof tv);
}

static long do_select(int n, uint64_t start, bool timeout)
{
    return call(lx_select, start, (uint64_t)(int64_t)n, fake_user(p, SETS),
                fake_user(p, SETS + 128), fake_user(p, SETS + 256),
                timeout ? fake_user(p, TIME) : 0, 0);
}

static void test_select_cases(void)
{
    new_pipe();
    clear_sets();
    fd_set_bit(0, rfd);
    put_timeval(0, 0);
    CHECK_EQ(do_select(rfd + 1, 0, true), 0);
    CHECK(!fd_isset(0, rfd));
    write_byte();
    fd_set_bit(0, rfd);
    CHECK_EQ(do_select(rfd + 1, 0, true), 1);
    CHECK(fd_isset(0, rfd));                      /* the set is kept */
    put_timespec(0, 0);
    CHECK_EQ(call(lx_pselect6, 0, (uint64_t)rfd + 1, fake_user(p, SETS), 0, 0,
                  fake_user(p, TIME), 0), 1);
    CHECK_EQ(do_select(-1, 0, true), -EINVAL);
    int closed = 10;
    clear_sets();
    fd_set_bit(0, closed);
    CHECK_EQ(do_select(closed + 1, 0, true), -EBADF);
    CHECK_EQ(do_select(closed, 0, true), 0);      /* beyond nfds: not looked at */
    clear_sets();
    fd_set_bit(0, rfd);
    fd_set_bit(1, wfd);
    fd_set_bit(2, rfd);
    CHECK_EQ(do_select(100000, 0, true), 2);      /* nfds beyond the table: clamped */
    CHECK(fd_isset(0, rfd) && fd_isset(1, wfd) && !fd_isset(2, rfd));
    CHECK_EQ(call(lx_select, 0, 4, 16, 0, 0, 0, 0), -EFAULT);
    CHECK_EQ(call(lx_select, 0, 4, 0, 0, 0, 16, 0), -EFAULT);
    put_timeval(0, -1);
    CHECK_EQ(do_select(4, 0, true), -EINVAL);
    put_timeval(-1, 0);
    CHECK_EQ(do_select(4, 0, true), -EINVAL);
    put_timespec(0, 1000000000);
    CHECK_EQ(call(lx_pselect6, 0, 4, 0, 0, 0, fake_user(p, TIME), 0), -EINVAL);
    put_timespec(0, 0);
    uint64_t sig[2] = {fake_user(p, SIG + 16), 4};
    memcpy(fake_host(p, fake_user(p, SIG)), sig, sizeof sig);
    CHECK_EQ(call(lx_pselect6, 0, 4, 0, 0, 0, fake_user(p, TIME), fake_user(p, SIG)), -EINVAL);
    CHECK_EQ(call(lx_pselect6, 0, 4, 0, 0, 0, fake_user(p, TIME), 16), -EFAULT);
    sig[1] = 8;
    memcpy(fake_host(p, fake_user(p, SIG)), sig, sizeof sig);
    CHECK_EQ(call(lx_pselect6, 0, 4, 0, 0, 0, fake_user(p, TIME), fake_user(p, SIG)), 0);
    close_pipe();
}

static void test_select_waits(void)
{
    new_pipe();
    clear_sets();
    fd_set_bit(0, rfd);
    put_timeval(0, 1500000);                      /* 1.5 s: microseconds carry over */
    fake_now_ns = 7000;
    CHECK_EQ(do_select(rfd + 1, 7000, true), UNIX_BLOCKED);
    CHECK_EQ(fake_blocked_deadline, 7000 + 1500 * MS);
    CHECK(fd_isset(0, rfd));                      /* nothing written before waiting */
    fake_now_ns = 7000 + 1500 * MS;
    CHECK_EQ(do_select(rfd + 1, 7000, true), 0);
    CHECK(!fd_isset(0, rfd));
    fd_set_bit(0, rfd);
    CHECK_EQ(do_select(rfd + 1, 7000, false), UNIX_BLOCKED);
    CHECK_EQ(fake_blocked_deadline, UNIX_NO_DEADLINE);
    write_byte();
    put_timeval(2, 0);
    fake_now_ns = 7000 + 500 * MS;
    CHECK_EQ(do_select(rfd + 1, 7000, true), 1);
    struct linux_timeval tv;
    memcpy(&tv, fake_host(p, fake_user(p, TIME)), sizeof tv);
    CHECK_EQ(tv.tv_sec, 1);                       /* the time left is written back */
    CHECK_EQ(tv.tv_usec, 500000);
    fake_now_ns = 0;
    close_pipe();
}

int main(void)
{
    p = fake_proc(MEM);
    fake_fds(p);
    test_poll_cases();
    test_poll_many();
    test_poll_waits();
    test_select_cases();
    test_select_waits();
    fake_fds_free(p);
    fake_proc_free(p);
    return fake_done();
}
