/*
 * poll(2), ppoll, select(2), pselect6: which of a set of open files are ready.
 *
 * Each file answers through file_ops->poll (a file without one, such as a regular file,
 * is always readable and writable, as on Linux). When nothing is ready and the timeout
 * has not passed, the call waits on poll_waiters, which every poll_wake() wakes, and runs
 * again from the start; the timeout is an absolute deadline counted from the call's start (ucall_start_ns), so
 * it is the same on every re-run. Nothing is written to the caller before the call
 * decides not to wait. A negative or NULL timeout waits for ever; a zero one never waits.
 *
 * The signal masks of ppoll and pselect6 are checked (size 8) and applied while the call
 * runs and waits (signal_mask_begin/end, signal.h).
 */
#include "devices.h"
#include "signal.h"

#define NS_PER_S 1000000000ull
#define POLL_NFDS_MAX 1024       /* RLIMIT_NOFILE's default: more pollfds is EINVAL */
#define POLL_CHUNK 32            /* pollfds copied in at a time (a small stack frame) */
#define FDSET_WORDS (UNIX_MAX_FDS / 64)
#define DEFAULT_POLLMASK (POLLIN | POLLOUT | POLLRDNORM | POLLWRNORM)
#define POLLIN_SET (POLLIN | POLLRDNORM | POLLRDBAND | POLLHUP | POLLERR)
#define POLLOUT_SET (POLLOUT | POLLWRNORM | POLLWRBAND | POLLERR)
#define POLLEX_SET POLLPRI

struct waitlist poll_waiters;

void poll_wake(struct waitlist *w)
{
    if (w)
        waitlist_wake(w);
    waitlist_wake(&poll_waiters);
}

static unsigned file_ready(struct file *f)
{
    return f->ops && f->ops->poll ? f->ops->poll(f, NULL) : DEFAULT_POLLMASK;
}

/* ---- timeouts ---- */

/* The deadline timeout_ns after the call's start (UNIX_NO_DEADLINE if it overflows). */
static uint64_t deadline_after(struct ucall *c, uint64_t timeout_ns)
{
    uint64_t start = ucall_start_ns(c);
    uint64_t d = start + timeout_ns;
    return d < start ? UNIX_NO_DEADLINE : d;
}

static bool deadline_passed(uint64_t deadline)
{
    return deadline != UNIX_NO_DEADLINE && unix_now_ns() >= deadline;
}

/* A timespec or timeval (sub = its second field, unit = its nanoseconds) as nanoseconds:
 * -EINVAL when negative or sub out of range, UINT64_MAX when too large to matter. */
static int64_t timeout_ns(int64_t sec, int64_t sub, int64_t unit, int64_t sub_max,
                          uint64_t *ns)
{
    if (sec < 0 || sub < 0 || sub >= sub_max)
        return -EINVAL;
    if ((uint64_t)sec >= UINT64_MAX / NS_PER_S - 1)
        *ns = UNIX_NO_DEADLINE;
    else
        *ns = (uint64_t)sec * NS_PER_S + (uint64_t)(sub * unit);
    return 0;
}

/* Read a user timespec (uaddr 0: none, wait for ever) into a deadline. */
static long timespec_deadline(struct ucall *c, uint64_t uaddr, uint64_t *deadline)
{
    struct linux_timespec ts;
    uint64_t ns;
    *deadline = UNIX_NO_DEADLINE;
    if (!uaddr)
        return 0;
    if (copy_in(c->proc, &ts, uaddr, sizeof ts))
        return -EFAULT;
    long err = timeout_ns(ts.tv_sec, ts.tv_nsec, 1, (int64_t)NS_PER_S, &ns);
    if (!err && ns != UNIX_NO_DEADLINE)
        *deadline = deadline_after(c, ns);
    return err;
}

static uint64_t time_left(uint64_t deadline)
{
    uint64_t now = unix_now_ns();
    return deadline > now ? deadline - now : 0;
}

/* Linux writes the time left back to a timeout that was neither NULL nor zero; a
 * failure to write it is ignored. */
static bool should_write_back(const struct ucall *c, uint64_t uaddr, uint64_t deadline)
{
    return uaddr && deadline != UNIX_NO_DEADLINE && deadline != c->started_ns;
}

static void timespec_write_back(const struct ucall *c, uint64_t uaddr, uint64_t deadline)
{
    if (!should_write_back(c, uaddr, deadline))
        return;
    uint64_t left = time_left(deadline);
    struct linux_timespec ts = {(int64_t)(left / NS_PER_S), (int64_t)(left % NS_PER_S)};
    copy_out(c->proc, uaddr, &ts, sizeof ts);
}

/* ppoll's and pselect6's signal mask: when given, its size must be 8 bytes. */
static long check_sigset_size(uint64_t mask, uint64_t size)
{
    return mask && size != 8 ? -EINVAL : 0;
}

/* ---- poll ---- */

static int16_t pollfd_revents(struct proc *p, const struct linux_pollfd *pf)
{
    if (pf->fd < 0)
        return 0;
    struct file *f = fd_file(p, pf->fd);
    if (!f)
        return POLLNVAL;
    unsigned wanted = (uint16_t)pf->events | POLLERR | POLLHUP;
    return (int16_t)(file_ready(f) & wanted);
}

/* The number of ready pollfds; with store, also writes each revents. -EFAULT if the
 * array is not the caller's. */
static long poll_scan(struct ucall *c, uint64_t ufds, size_t nfds, bool store)
{
    struct linux_pollfd chunk[POLL_CHUNK];
    long ready = 0;
    for (size_t base = 0; base < nfds; base += POLL_CHUNK) {
        size_t k = nfds - base < POLL_CHUNK ? nfds - base : POLL_CHUNK;
        uint64_t at = ufds + base * sizeof chunk[0];
        if (copy_in(c->proc, chunk, at, k * sizeof chunk[0]))
            return -EFAULT;
        for (size_t i = 0; i < k; i++) {
            chunk[i].revents = pollfd_revents(c->proc, &chunk[i]);
            ready += chunk[i].revents != 0;
        }
        if (store && copy_out(c->proc, at, chunk, k * sizeof chunk[0]))
            return -EFAULT;
    }
    return ready;
}

static long do_poll(struct ucall *c, uint64_t ufds, uint64_t nfds, uint64_t deadline)
{
    if (nfds > POLL_NFDS_MAX)
        return -EINVAL;
    long ready = poll_scan(c, ufds, nfds, false);
    if (ready == 0 && !deadline_passed(deadline))
        return ucall_block(c, &poll_waiters, deadline);
    return ready < 0 ? ready : poll_scan(c, ufds, nfds, true);
}

/* poll(fds, nfds, timeout_ms) */
long lx_poll(struct ucall *c)
{
    int32_t ms = (int32_t)c->a[2];
    uint64_t deadline = ms < 0 ? UNIX_NO_DEADLINE : deadline_after(c, (uint64_t)ms * 1000000);
    return do_poll(c, c->a[0], (uint32_t)c->a[1], deadline);
}

/* ppoll(fds, nfds, timeout timespec or NULL, sigmask, sigsetsize) */
long lx_ppoll(struct ucall *c)
{
    uint64_t deadline;
    long err = timespec_deadline(c, c->a[2], &deadline);
    if (!err)
        err = check_sigset_size(c->a[3], c->a[4]);
    if (!err)
        err = signal_mask_begin(c, c->a[3]);
    if (err)
        return err;
    long r = do_poll(c, c->a[0], (uint32_t)c->a[1], deadline);
    if (r != UNIX_BLOCKED)
        timespec_write_back(c, c->a[2], deadline);
    return signal_mask_end(c, r);
}

/* ---- select ---- */

struct fdsets {
    uint64_t ufds[3];                    /* read, write, except sets (0: none) */
    uint64_t in[3][FDSET_WORDS], out[3][FDSET_WORDS];
    int n;                               /* descriptors 0..n-1 */
};

static long fdsets_read(struct ucall *c, struct fdsets *s)
{
    size_t bytes = (size_t)(s->n + 63) / 64 * 8;
    for (int k = 0; k < 3; k++) {
        memset(s->in[k], 0, sizeof s->in[k]);
        if (s->ufds[k] && copy_in(c->proc, s->in[k], s->ufds[k], bytes))
            return -EFAULT;
    }
    return 0;
}

static long fdsets_write(struct ucall *c, const struct fdsets *s)
{
    size_t bytes = (size_t)(s->n + 63) / 64 * 8;
    for (int k = 0; k < 3; k++)
        if (s->ufds[k] && copy_out(c->proc, s->ufds[k], s->out[k], bytes))
            return -EFAULT;
    return 0;
}

/* Fill s->out with the ready descriptors: their count, or -EBADF when a set names a
 * descriptor that is not open. */
static long select_scan(struct proc *p, struct fdsets *s)
{
    static const unsigned sets[3] = {POLLIN_SET, POLLOUT_SET, POLLEX_SET};
    long ready = 0;
    memset(s->out, 0, sizeof s->out);
    for (int fd = 0; fd < s->n; fd++) {
        uint64_t bit = 1ull << (fd % 64);
        int w = fd / 64;
        if (!((s->in[0][w] | s->in[1][w] | s->in[2][w]) & bit))
            continue;
        struct file *f = fd_file(p, fd);
        if (!f)
            return -EBADF;
        unsigned mask = file_ready(f);
        for (int k = 0; k < 3; k++)
            if ((s->in[k][w] & bit) && (mask & sets[k])) {
                s->out[k][w] |= bit;
                ready++;
            }
    }
    return ready;
}

static long do_select(struct ucall *c, struct fdsets *s, uint64_t deadline)
{
    if (s->n < 0)
        return -EINVAL;
    if (s->n > UNIX_MAX_FDS)             /* Linux too stops at the fd table's size */
        s->n = UNIX_MAX_FDS;
    long ready = fdsets_read(c, s);
    if (!ready)
        ready = select_scan(c->proc, s);
    if (ready == 0 && !deadline_passed(deadline))
        return ucall_block(c, &poll_waiters, deadline);
    if (ready >= 0 && fdsets_write(c, s))
        return -EFAULT;
    return ready;
}

static void fdsets_init(struct fdsets *s, const struct ucall *c)
{
    s->n = (int32_t)c->a[0];
    s->ufds[0] = c->a[1];
    s->ufds[1] = c->a[2];
    s->ufds[2] = c->a[3];
}

/* select(nfds, readfds, writefds, exceptfds, timeout timeval or NULL) */
long lx_select(struct ucall *c)
{
    uint64_t deadline = UNIX_NO_DEADLINE, ns;
    struct linux_timeval tv;
    if (c->a[4]) {
        if (copy_in(c->proc, &tv, c->a[4], sizeof tv))
            return -EFAULT;
        /* microseconds beyond a second carry over, as in Linux */
        int64_t sec = tv.tv_usec >= 0 ? tv.tv_sec + tv.tv_usec / 1000000 : tv.tv_sec;
        if (timeout_ns(sec, tv.tv_usec % 1000000, 1000, 1000000, &ns))
            return -EINVAL;
        if (ns != UNIX_NO_DEADLINE)
            deadline = deadline_after(c, ns);
    }
    struct fdsets s;
    fdsets_init(&s, c);
    long r = do_select(c, &s, deadline);
    if (r != UNIX_BLOCKED && should_write_back(c, c->a[4], deadline)) {
        uint64_t left = time_left(deadline);
        tv = (struct linux_timeval){(int64_t)(left / NS_PER_S),
                                    (int64_t)(left % NS_PER_S / 1000)};
        copy_out(c->proc, c->a[4], &tv, sizeof tv);
    }
    return r;
}

/* pselect6(nfds, readfds, writefds, exceptfds, timeout timespec or NULL,
 *          {sigmask pointer, sigmask size} or NULL) */
long lx_pselect6(struct ucall *c)
{
    uint64_t deadline;
    long err = timespec_deadline(c, c->a[4], &deadline);
    if (err)
        return err;
    if (c->a[5]) {
        uint64_t sig[2];
        if (copy_in(c->proc, sig, c->a[5], sizeof sig))
            return -EFAULT;
        if ((err = check_sigset_size(sig[0], sig[1])) || (err = signal_mask_begin(c, sig[0])))
            return err;
    }
    struct fdsets s;
    fdsets_init(&s, c);
    long r = do_select(c, &s, deadline);
    if (r != UNIX_BLOCKED)
        timespec_write_back(c, c->a[4], deadline);
    return signal_mask_end(c, r);
}
