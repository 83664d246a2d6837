/* The console tty (tty.c): the line discipline byte by byte (echo, editing, signals,
 * ICRNL/ONLCR, raw mode with VMIN/VTIME) and the ioctls, including the tty cases of
 * tests/linux/dev.c. Input is typed with tty_input; echo and output are read back from
 * the fake console. */
#include <string.h>
#include "fake.h"

#define MEM 16384
#define BUF 1024
#define ARG 64

static struct proc *p;
static long fd;
static struct linux_termios defaults;

static unsigned char *mem(size_t off)
{
    return fake_host(p, fake_user(p, off));
}

static void type(const char *s)
{
    tty_input(s, strlen(s));
}

/* The console output since the last call, as a string. */
static const char *console(void)
{
    static char text[sizeof fake_console + 1];
    memcpy(text, fake_console, fake_console_len);
    text[fake_console_len] = 0;
    fake_console_len = 0;
    return text;
}

static long ioctl_p(struct proc *who, unsigned long cmd, uint64_t arg)
{
    struct ucall c = fake_call(who, 16, (uint64_t)fd, cmd, arg, 0);
    return lx_ioctl(&c);
}

static long ioctl3(unsigned long cmd, uint64_t arg)
{
    return ioctl_p(p, cmd, arg);
}

static int32_t int_at(size_t off)
{
    int32_t v;
    memcpy(&v, mem(off), sizeof v);
    return v;
}

static void put_int(size_t off, int32_t v)
{
    memcpy(mem(off), &v, sizeof v);
}

/* A read of up to n bytes, started at time start (for VTIME); the bytes read are a
 * NUL-terminated string at BUF. */
static long tread_at(size_t n, uint64_t start)
{
    struct file *f = fd_file(p, fd);
    struct ucall c = fake_call(p, 0, (uint64_t)fd, fake_user(p, BUF), n, 0);
    c.started_ns = start;
    uint64_t off = 0;
    memset(mem(BUF), 0, n + 1);
    return f->ops->read(f, &c, fake_user(p, BUF), n, &off);
}

static long tread(size_t n)
{
    return tread_at(n, 0);
}

static const char *got(void)
{
    return (const char *)mem(BUF);
}

static struct linux_termios getattr(void)
{
    struct linux_termios t;
    ioctl3(TCGETS, fake_user(p, ARG));
    memcpy(&t, mem(ARG), sizeof t);
    return t;
}

static long setattr(unsigned long cmd, const struct linux_termios *t)
{
    memcpy(mem(ARG), t, sizeof *t);
    return ioctl3(cmd, fake_user(p, ARG));
}

/* Back to the boot settings with the input flushed and the console output forgotten. */
static void reset(void)
{
    setattr(TCSETSF, &defaults);
    console();
}

static void test_defaults(void)
{
    memset(mem(ARG), 0xaa, 64);
    CHECK_EQ(ioctl3(TCGETS, fake_user(p, ARG)), 0);
    CHECK_EQ(mem(ARG)[36], 0xaa);                 /* the kernel's 36-byte termios */
    memcpy(&defaults, mem(ARG), sizeof defaults);
    CHECK_EQ(defaults.c_iflag, ICRNL | IXON);
    CHECK_EQ(defaults.c_oflag, OPOST | ONLCR);
    CHECK_EQ(defaults.c_lflag, 0x8a3b);           /* Linux's tty_std_termios */
    CHECK_EQ(defaults.c_cc[VINTR], 3);
    CHECK_EQ(defaults.c_cc[VERASE], 0177);
    CHECK_EQ(defaults.c_cc[VKILL], 025);
    CHECK_EQ(defaults.c_cc[VEOF], 4);
    CHECK_EQ(defaults.c_cc[VMIN], 1);
    CHECK_EQ(defaults.c_cc[VSUSP], 032);
    CHECK_EQ(defaults.c_cc[VWERASE], 027);
}

static void test_canonical_lines(void)
{
    reset();
    type("hel");
    int blocked = fake_blocked;
    CHECK_EQ(tread(100), UNIX_BLOCKED);
    CHECK_EQ(fake_blocked, blocked + 1);
    struct waitlist *w = NULL;
    struct file *f = fd_file(p, fd);
    CHECK_EQ(f->ops->poll(f, &w), POLLOUT | POLLWRNORM);
    CHECK(w == fake_blocked_on);
    CHECK_EQ(ioctl3(FIONREAD, fake_user(p, ARG)), 0);
    CHECK_EQ(int_at(ARG), 0);
    type("lo\r");                                 /* ICRNL: CR ends the line */
    CHECK_EQ(f->ops->poll(f, NULL), POLLIN | POLLRDNORM | POLLOUT | POLLWRNORM);
    CHECK_EQ(ioctl3(FIONREAD, fake_user(p, ARG)), 0);
    CHECK_EQ(int_at(ARG), 6);
    CHECK_EQ(strcmp(console(), "hello\r\n"), 0);  /* echo, ONLCR */
    CHECK_EQ(tread(100), 6);
    CHECK_EQ(strcmp(got(), "hello\n"), 0);
    type("abcdef\nx\n");
    CHECK_EQ(tread(2), 2);
    CHECK_EQ(strcmp(got(), "ab"), 0);
    CHECK_EQ(tread(100), 5);                      /* the rest of the line, no more */
    CHECK_EQ(strcmp(got(), "cdef\n"), 0);
    CHECK_EQ(tread(100), 2);
    CHECK_EQ(tread(0), 0);
    fd_file(p, fd)->flags |= O_NONBLOCK;
    CHECK_EQ(tread(10), -EAGAIN);
    fd_file(p, fd)->flags &= ~(unsigned)O_NONBLOCK;
    type("zz\n");
    struct ucall c = fake_call(p, 0, (uint64_t)fd, 0, 0, 0);
    uint64_t off = 0;
    CHECK_EQ(f->ops->read(f, &c, 16, 3, &off), -EFAULT);
    CHECK_EQ(tread(10), 3);                       /* the failed read took nothing */
}

static void test_editing(void)
{
    reset();
    type("ab\177c\bd\n");                         /* DEL and ^H both erase */
    CHECK_EQ(tread(100), 3);
    CHECK_EQ(strcmp(got(), "ad\n"), 0);
    CHECK_EQ(strcmp(console(), "ab\b \bc\b \bd\r\n"), 0);
    type("\001\177\n");                           /* ^A is echoed and erased as two columns */
    CHECK_EQ(tread(100), 1);
    CHECK_EQ(strcmp(console(), "^A\b \b\b \b\r\n"), 0);
    type("abc\025xy\n");                          /* ^U kills the line */
    CHECK_EQ(tread(100), 3);
    CHECK_EQ(strcmp(got(), "xy\n"), 0);
    CHECK_EQ(strcmp(console(), "abc\b \b\b \b\b \bxy\r\n"), 0);
    type("foo bar  \027baz\n");                   /* ^W: the blanks, then the word */
    CHECK_EQ(tread(100), 8);
    CHECK_EQ(strcmp(got(), "foo baz\n"), 0);
    type("\021a\023\n");                          /* IXON: ^Q and ^S are not input */
    CHECK_EQ(tread(100), 2);
    CHECK_EQ(strcmp(got(), "a\n"), 0);
    type("\177\177x\n");                          /* erasing an empty line does nothing */
    CHECK_EQ(tread(100), 2);
    type("a\026\025b\n");                         /* ^V quotes ^U */
    CHECK_EQ(tread(100), 4);
    CHECK_EQ(strcmp(got(), "a\025b\n"), 0);
    console();
    type("abc\004");                              /* ^D ends a line without itself */
    CHECK_EQ(tread(100), 3);
    CHECK_EQ(strcmp(got(), "abc"), 0);
    CHECK_EQ(strcmp(console(), "abc"), 0);        /* and is not echoed */
    type("\004");                                 /* alone: end of file */
    CHECK_EQ(tread(100), 0);
    CHECK_EQ(tread(100), UNIX_BLOCKED);           /* once */
}

static void test_echo_flags(void)
{
    reset();
    struct linux_termios t = defaults;
    t.c_lflag &= ~(unsigned)ECHO;
    setattr(TCSETS, &t);
    type("secret\n");
    CHECK_EQ(strcmp(console(), ""), 0);
    t.c_lflag |= ECHONL;
    setattr(TCSETS, &t);
    type("pw\n");
    CHECK_EQ(strcmp(console(), "\r\n"), 0);
    CHECK_EQ(tread(100), 7);
    CHECK_EQ(tread(100), 3);
    t = defaults;
    t.c_iflag &= ~(unsigned)ICRNL;
    t.c_oflag &= ~(unsigned)OPOST;
    setattr(TCSETS, &t);
    type("a\rb\n");                               /* without ICRNL a CR is data */
    CHECK_EQ(tread(100), 4);
    CHECK_EQ(strcmp(got(), "a\rb\n"), 0);
    CHECK_EQ(strcmp(console(), "a^Mb\n"), 0);     /* ECHOCTL shows the CR; no OPOST */
}

static void test_output(void)
{
    reset();
    struct file *f = fd_file(p, fd);
    struct ucall c = fake_call(p, 1, (uint64_t)fd, 0, 0, 0);
    uint64_t off = 0;
    memcpy(mem(BUF), "one\ntwo\n", 8);
    CHECK_EQ(f->ops->write(f, &c, fake_user(p, BUF), 8, &off), 8);
    CHECK_EQ(strcmp(console(), "one\r\ntwo\r\n"), 0);
    memset(mem(BUF), 'x', 1000);
    CHECK_EQ(f->ops->write(f, &c, fake_user(p, BUF), 1000, &off), 1000);
    CHECK_EQ(strlen(console()), 1000);
    memset(mem(MEM - 200), 'y', 200);
    CHECK_EQ(f->ops->write(f, &c, fake_user(p, MEM - 200), 300, &off), 128);
    CHECK_EQ(strlen(console()), 128);             /* the chunk before the bad address */
    CHECK_EQ(f->ops->write(f, &c, 16, 3, &off), -EFAULT);
}

static void set_raw(unsigned vmin, unsigned vtime)
{
    struct linux_termios t = defaults;
    t.c_lflag &= ~(unsigned)(ICANON | ECHO);
    t.c_cc[VMIN] = (uint8_t)vmin;
    t.c_cc[VTIME] = (uint8_t)vtime;
    setattr(TCSETS, &t);
}

static void test_raw(void)
{
    reset();
    set_raw(1, 0);
    type("q");
    CHECK_EQ(strcmp(console(), ""), 0);
    CHECK_EQ(tread(10), 1);
    CHECK_EQ(strcmp(got(), "q"), 0);
    CHECK_EQ(tread(10), UNIX_BLOCKED);
    CHECK_EQ(fake_blocked_deadline, UNIX_NO_DEADLINE);
    type("\177\025x\n");                          /* no editing in raw mode */
    CHECK_EQ(tread(10), 4);
    fd_file(p, fd)->flags |= O_NONBLOCK;
    CHECK_EQ(tread(10), -EAGAIN);
    fd_file(p, fd)->flags &= ~(unsigned)O_NONBLOCK;
    set_raw(0, 0);                                /* polling read */
    CHECK_EQ(tread(10), 0);
    set_raw(0, 5);                                /* 0.5 s timeout from the call's start */
    fake_now_ns = 1000;
    CHECK_EQ(tread_at(10, 1000), UNIX_BLOCKED);
    CHECK_EQ(fake_blocked_deadline, 1000 + 500000000ull);
    fake_now_ns = 1000 + 500000000ull;
    CHECK_EQ(tread_at(10, 1000), 0);
    set_raw(3, 0);                                /* at least 3 bytes */
    type("ab");
    CHECK_EQ(tread(10), UNIX_BLOCKED);
    CHECK_EQ(tread(2), 2);                        /* asked for fewer: VMIN is capped */
    type("abc");
    CHECK_EQ(tread(10), 3);
    set_raw(3, 1);                                /* 3 bytes or 0.1 s after data came */
    type("ab");
    fake_now_ns = 2000;
    CHECK_EQ(tread_at(10, 2000), UNIX_BLOCKED);
    CHECK_EQ(fake_blocked_deadline, 2000 + 100000000ull);
    fake_now_ns = 2000 + 100000000ull;
    CHECK_EQ(tread_at(10, 2000), 2);
    CHECK_EQ(tread_at(10, 2000), UNIX_BLOCKED);   /* no data: no timer */
    CHECK_EQ(fake_blocked_deadline, UNIX_NO_DEADLINE);
    fake_now_ns = 0;
}

static void test_mode_switch(void)
{
    reset();
    type("par");                                  /* a line being edited ... */
    set_raw(1, 0);
    CHECK_EQ(tread(10), 3);                       /* ... is readable in raw mode */
    CHECK_EQ(strcmp(got(), "par"), 0);
    type("xy");
    setattr(TCSETS, &defaults);                   /* pending raw bytes become a line */
    CHECK_EQ(tread(10), 2);
    type("gone\n");
    setattr(TCSETSF, &defaults);                  /* TCSETSF flushes the input */
    CHECK_EQ(tread(10), UNIX_BLOCKED);
    type("kept\n");
    CHECK_EQ(setattr(TCSETSW, &defaults), 0);
    CHECK_EQ(tread(10), 5);
    type("gone\n");
    CHECK_EQ(ioctl3(TCFLSH, TCIFLUSH), 0);
    CHECK_EQ(tread(10), UNIX_BLOCKED);
    CHECK_EQ(ioctl3(TCFLSH, 3), -EINVAL);
}

/* The tty cases of tests/linux/dev.c, on a process without a controlling tty. */
static void test_dev_c_cases(void)
{
    reset();
    struct linux_termios t = getattr(), t2 = t;
    t2.c_lflag &= ~(unsigned)(ICANON | ECHO);
    CHECK_EQ(setattr(TCSETS, &t2), 0);
    CHECK_EQ(getattr().c_lflag & (ICANON | ECHO), 0);
    CHECK_EQ(setattr(TCSETSW, &t), 0);
    CHECK_EQ(getattr().c_lflag & ICANON, ICANON);
    CHECK_EQ(ioctl3(TIOCGWINSZ, fake_user(p, ARG)), 0);
    CHECK_EQ(ioctl3(FIONREAD, fake_user(p, ARG)), 0);
    CHECK_EQ(ioctl3(TIOCGPGRP, fake_user(p, ARG)), -ENOTTY);
    put_int(ARG, p->pgid);
    CHECK_EQ(ioctl3(TIOCSPGRP, fake_user(p, ARG)), -ENOTTY);
    CHECK_EQ(ioctl3(TIOCGSID, fake_user(p, ARG)), -ENOTTY);
    CHECK_EQ(ioctl3(TIOCNOTTY, 0), -ENOTTY);
    CHECK_EQ(ioctl3(TCGETS, 8), -EFAULT);
    CHECK_EQ(ioctl3(TCSETS, 8), -EFAULT);
    CHECK_EQ(ioctl3(0x5499, 0), -ENOTTY);
    CHECK_EQ(tty_devnum_of(p), 0);
    CHECK_EQ(tty_fg_pgrp_of(p), -1);
}

static void test_winsize(void)
{
    struct linux_winsize ws = {24, 80, 0, 0};
    memcpy(mem(ARG), &ws, sizeof ws);
    int sigs = fake_pgrp_signals;
    CHECK_EQ(ioctl3(TIOCSWINSZ, fake_user(p, ARG)), 0);
    CHECK_EQ(fake_last_sig, SIGWINCH);
    CHECK_EQ(fake_last_pgrp, 200);             /* the foreground group */
    CHECK_EQ(ioctl3(TIOCSWINSZ, fake_user(p, ARG)), 0);   /* unchanged: no signal */
    CHECK_EQ(fake_pgrp_signals, sigs + 1);
    memset(mem(ARG), 0, 8);
    CHECK_EQ(ioctl3(TIOCGWINSZ, fake_user(p, ARG)), 0);
    CHECK(!memcmp(mem(ARG), &ws, sizeof ws));
    CHECK_EQ(ioctl3(TIOCSWINSZ, 8), -EFAULT);
}

/* Signals from the keyboard go to the foreground group; the input is flushed. */
static void test_signal_chars(void)
{
    reset();
    type("abc\003");
    CHECK_EQ(fake_last_sig, SIGINT);
    CHECK_EQ(fake_last_pgrp, 200);
    CHECK_EQ(strcmp(console(), "abc^C"), 0);
    type("x\n");
    CHECK_EQ(tread(100), 2);                      /* "abc" is gone */
    type("\032");
    CHECK_EQ(fake_last_sig, SIGTSTP);
    type("\034");
    CHECK_EQ(fake_last_sig, SIGQUIT);
    struct linux_termios t = defaults;
    t.c_lflag &= ~(unsigned)ISIG;
    setattr(TCSETS, &t);
    int sigs = fake_pgrp_signals;
    type("\003\n");                               /* without ISIG ^C is data */
    CHECK_EQ(fake_pgrp_signals, sigs);
    CHECK_EQ(tread(100), 2);
    t = defaults;
    t.c_lflag |= NOFLSH;
    setattr(TCSETS, &t);
    type("keep\n\003");
    CHECK_EQ(tread(100), 5);                      /* NOFLSH: the line survives */
}

/* p (group 100) is in the background of its controlling tty (foreground group 200). */
static void test_job_control(void)
{
    reset();
    int calls = fake_tty_background_calls;
    fake_tty_background_result = -EINTR;         /* as if the group was stopped */
    type("data\n");
    CHECK_EQ(tread(10), -EINTR);
    CHECK_EQ(fake_tty_background_sig, SIGTTIN);
    struct file *f = fd_file(p, fd);
    struct ucall c = fake_call(p, 1, (uint64_t)fd, 0, 0, 0);
    uint64_t off = 0;
    memcpy(mem(BUF), "out", 3);
    CHECK_EQ(f->ops->write(f, &c, fake_user(p, BUF), 3, &off), 3);   /* no TOSTOP */
    CHECK_EQ(fake_tty_background_calls, calls + 1);
    struct linux_termios t = defaults;
    t.c_lflag |= TOSTOP;
    CHECK_EQ(setattr(TCSETS, &t), -EINTR);       /* changing settings: SIGTTOU */
    CHECK_EQ(fake_tty_background_sig, SIGTTOU);
    CHECK_EQ(ioctl3(TCFLSH, TCIFLUSH), -EINTR);
    fake_tty_background_result = 0;              /* SIGTTOU ignored: go on */
    CHECK_EQ(setattr(TCSETS, &t), 0);
    fake_tty_background_result = -EINTR;
    CHECK_EQ(f->ops->write(f, &c, fake_user(p, BUF), 3, &off), -EINTR);   /* TOSTOP */
    fake_tty_background_result = -EIO;           /* an orphaned group */
    put_int(ARG, 100);
    CHECK_EQ(ioctl3(TIOCSPGRP, fake_user(p, ARG)), -ENOTTY);
    CHECK_EQ(tread(10), -EIO);
    fake_tty_background_result = 0;
    calls = fake_tty_background_calls;
    struct proc *fg = fake_proc(MEM);            /* the foreground group is never asked */
    *fg = (struct proc){.pid = 201, .pgid = 200, .sid = 100, .ctty = p->ctty, .fds = p->fds};
    struct ucall r = fake_call(fg, 0, (uint64_t)fd, 0, 0, 0);
    CHECK_EQ(f->ops->read(f, &r, fake_user(fg, BUF), 10, &off), 5);
    CHECK_EQ(fake_tty_background_calls, calls);
    fg->fds = NULL;
    fake_proc_free(fg);
    reset();
}

static void test_controlling_tty(void)
{
    struct proc *other = fake_proc(MEM);
    *other = (struct proc){.pid = 300, .ppid = 1, .pgid = 300, .sid = 300, .fds = p->fds};
    struct proc *member = fake_proc(MEM);        /* same session, not its leader */
    *member = (struct proc){.pid = 101, .ppid = 100, .pgid = 100, .sid = 100, .fds = p->fds};
    CHECK_EQ(ioctl_p(member, TIOCSCTTY, 0), -EPERM);
    CHECK_EQ(ioctl3(TIOCSCTTY, 0), 0);
    CHECK(p->ctty == tty_console());
    CHECK_EQ(ioctl3(TIOCSCTTY, 0), 0);            /* already ours */
    CHECK_EQ(ioctl_p(other, TIOCSCTTY, 0), -EPERM);   /* another session's tty */
    CHECK_EQ(ioctl3(TIOCGPGRP, fake_user(p, ARG)), 0);
    CHECK_EQ(int_at(ARG), 100);
    CHECK_EQ(ioctl3(TIOCGSID, fake_user(p, ARG)), 0);
    CHECK_EQ(int_at(ARG), 100);
    CHECK_EQ(tty_devnum_of(p), 0x501);            /* 5,1 */
    CHECK_EQ(tty_fg_pgrp_of(p), 100);
    /* TIOCSPGRP asks the real process table: group 200 in p's session, group 300 in
     * another one, and no group 400 */
    struct proc *job = proc_create(NULL), *stranger = proc_create(NULL);
    job->pgid = 200;
    job->sid = 100;
    stranger->pgid = stranger->sid = 300;
    put_int(ARG, 200);
    CHECK_EQ(ioctl3(TIOCSPGRP, fake_user(p, ARG)), 0);
    CHECK_EQ(tty_fg_pgrp_of(p), 200);
    CHECK_EQ(ioctl3(TIOCSPGRP, 8), -EFAULT);
    put_int(ARG, -1);
    CHECK_EQ(ioctl3(TIOCSPGRP, fake_user(p, ARG)), -EINVAL);
    put_int(ARG, 300);
    CHECK_EQ(ioctl3(TIOCSPGRP, fake_user(p, ARG)), -EPERM);   /* another session */
    put_int(ARG, 400);
    CHECK_EQ(ioctl3(TIOCSPGRP, fake_user(p, ARG)), -ESRCH);   /* no such group */
    proc_free(stranger);
    proc_free(job);
    member->ctty = p->ctty;                       /* inherited by fork */
    CHECK_EQ(ioctl_p(member, TIOCGPGRP, fake_user(p, ARG)), 0);
    member->fds = NULL;
    fake_proc_free(member);

    test_winsize();
    test_signal_chars();

    test_job_control();

    CHECK_EQ(ioctl_p(other, TIOCGPGRP, fake_user(p, ARG)), -ENOTTY);
    CHECK_EQ(ioctl_p(other, TIOCSCTTY, 1), 0);    /* root steals it with arg 1 */
    CHECK_EQ(tty_fg_pgrp_of(p), -1);              /* p's session lost it */
    CHECK_EQ(ioctl3(TIOCGPGRP, fake_user(p, ARG)), -ENOTTY);
    int sigs = fake_pgrp_signals;
    CHECK_EQ(ioctl_p(other, TIOCNOTTY, 0), 0);    /* the leader lets go: SIGHUP, SIGCONT */
    CHECK_EQ(fake_pgrp_signals, sigs + 2);
    CHECK_EQ(fake_last_pgrp, 300);
    CHECK_EQ(fake_last_sig, SIGCONT);
    CHECK(other->ctty == NULL);
    CHECK_EQ(ioctl_p(other, TIOCNOTTY, 0), -ENOTTY);
    p->ctty = NULL;
    other->fds = NULL;
    fake_proc_free(other);
}

int main(void)
{
    p = fake_proc(MEM);
    p->pid = p->pgid = p->sid = 100;
    fake_fds(p);
    const struct chardev *d = chardev_lookup(5, 1);
    struct file *f = file_new(d->ops, NULL, O_RDWR);
    struct ucall c = fake_call(p, 2, 0, 0, 0, 0);
    CHECK_EQ(d->open(f, &c), 0);
    fd = fd_install(p, f, 0, false);
    test_defaults();
    test_canonical_lines();
    test_editing();
    test_echo_flags();
    test_output();
    test_raw();
    test_mode_switch();
    test_dev_c_cases();
    test_controlling_tty();
    fake_fds_free(p);
    fake_proc_free(p);
    return fake_done();
}
