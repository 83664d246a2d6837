/* unix-dev's calls under random arguments from a fixed seed (the hosted counterpart of
 * tests/linux/fuzz.c): poll, ppoll, select, pselect6, ioctl, pipe, pipe2, and reads,
 * writes and typed input on pipes, the tty and the devices, with random termios settings.
 * ASan and UBSan stop the run on any bad access; each result must be a value, an errno
 * or UNIX_BLOCKED, and the tty's queue must stay within its size. */
#include <string.h>
#include "fake.h"

#define MEM 65536
#define CALLS 200000

static struct proc *p;
static uint64_t rng = 0x2545f4914f6cdd1dull;

static uint64_t next(void)
{
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return rng;
}

/* An argument: small numbers, -1, a pointer into the process's memory (sometimes at its
 * very end), a bad pointer, or noise. */
static uint64_t arg(void)
{
    switch (next() % 7) {
    case 0: return next() % 8;
    case 1: return (uint64_t)-1;
    case 2: return fake_user(p, next() % MEM);
    case 3: return fake_user(p, MEM - next() % 64);
    case 4: return next() % 4096;
    case 5: return 0;
    default: return next();
    }
}

static unsigned long ioctl_cmd(void)
{
    static const unsigned long cmds[] = {
        TCGETS, TCSETS, TCSETSW, TCSETSF, TCFLSH, TIOCSCTTY, TIOCGPGRP, TIOCSPGRP,
        TIOCOUTQ, TIOCGWINSZ, TIOCSWINSZ, FIONREAD, FIONBIO, TIOCNOTTY, TIOCGSID,
        FIONCLEX, FIOCLEX, 0x5499,
    };
    return next() % 8 ? cmds[next() % (sizeof cmds / sizeof cmds[0])] : next();
}

static void check_result(long r)
{
    if (r != UNIX_BLOCKED && r < -4095)
        CHECK_EQ(r, 0);                           /* prints the bad value */
}

static long (*const calls[])(struct ucall *) = {
    lx_poll, lx_ppoll, lx_select, lx_pselect6, lx_ioctl, lx_pipe, lx_pipe2,
};

static void random_call(void)
{
    static struct uthread thread;        /* ppoll/pselect6 set its mask for the call */
    struct ucall c = fake_call(p, 0, arg(), arg(), arg(), arg());
    c.thread = &thread;
    c.a[4] = arg();
    c.a[5] = arg();
    size_t which = next() % (sizeof calls / sizeof calls[0]);
    if (calls[which] == lx_ioctl) {
        c.a[0] = next() % 12;
        c.a[1] = ioctl_cmd();
    }
    if (calls[which] == lx_poll || calls[which] == lx_ppoll)
        c.a[1] %= 64;                             /* keep most of them in range */
    check_result(calls[which](&c));
}

static void random_transfer(void)
{
    long fd = (long)(next() % 12);
    struct file *f = fd_file(p, fd);
    if (!f)
        return;
    struct ucall c = fake_call(p, 0, (uint64_t)fd, 0, 0, 0);
    uint64_t off = 0, uaddr = arg();
    size_t n = next() % 3 ? next() % 9000 : next() % 200000;
    long r = next() % 2 ? (f->ops->read ? f->ops->read(f, &c, uaddr, n, &off) : 0)
                        : (f->ops->write ? f->ops->write(f, &c, uaddr, n, &off) : 0);
    check_result(r);
}

static void random_input(void)
{
    char bytes[16];
    size_t n = next() % sizeof bytes;
    for (size_t i = 0; i < n; i++)
        bytes[i] = (char)(next() % 4 ? next() % 32 : next());   /* mostly control bytes */
    tty_input(bytes, n);
    fake_console_len = 0;
}

/* Close everything above the first three so that new pipes keep finding room. */
static void tidy(void)
{
    for (long fd = 3; fd < UNIX_MAX_FDS; fd++)
        fd_close(p, fd);
}

int main(void)
{
    p = fake_proc(MEM);
    p->pid = p->pgid = p->sid = 9;
    fake_fds(p);
    struct proc *member = proc_create(NULL);     /* group 9 exists: TIOCSPGRP can succeed */
    member->pgid = member->sid = 9;
    const struct chardev *cons = chardev_lookup(5, 1), *null = chardev_lookup(1, 3);
    struct ucall open = fake_call(p, 2, 0, 0, 0, 0);
    struct file *f = file_new(cons->ops, NULL, O_RDWR);
    cons->open(f, &open);
    fd_install(p, f, 0, false);
    fd_install(p, file_new(null->ops, NULL, O_RDWR), 0, false);
    fd_install(p, file_get(f), 0, false);
    for (int i = 0; i < CALLS; i++) {
        unsigned k = next() % 8;
        if (k < 4)
            random_call();
        else if (k < 6)
            random_transfer();
        else
            random_input();
        fake_now_ns += next() % 1000000;
        if (i % 64 == 63)
            tidy();
        int32_t queued = -1;
        struct ucall q = fake_call(p, 16, 0, FIONREAD, fake_user(p, 0), 0);
        if (lx_ioctl(&q) == 0) {
            memcpy(&queued, fake_host(p, fake_user(p, 0)), sizeof queued);
            if (queued < 0 || queued > 4096)
                CHECK_EQ(queued, 4096);
        }
    }
    CHECK(fake_blocked > 0);                      /* the run reached the waiting paths */
    p->ctty = NULL;
    fake_fds_free(p);
    fake_proc_free(p);
    proc_free(member);
    return fake_done();
}
