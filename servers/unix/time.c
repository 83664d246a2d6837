/*
 * Clocks and sleeps (docs/unix.md). CLOCK_MONOTONIC (and BOOTTIME, RAW, COARSE) is the
 * runtime's time since boot (unix_now_ns: under icount it repeats exactly); REALTIME is
 * a fixed epoch plus that, so runs stay identical (ondol has no battery clock yet). The
 * CPU-time clocks report the same monotonic time. A sleep blocks the call with a deadline
 * counted from when the call first ran (ucall.started_ns), so running it again on wake-up
 * never extends it.
 */
#include "unix.h"

#define NS_PER_SEC 1000000000ull
#define REALTIME_EPOCH_SEC 1704067200ull     /* 2024-01-01T00:00:00Z, the rootfs mtime */

/* The REALTIME second the system booted at (/proc/stat's btime). */
uint64_t unix_boot_time_s(void) { return REALTIME_EPOCH_SEC; }

/* What a clock adds to the monotonic time: REALTIME's epoch, or 0. */
static uint64_t clock_offset(uint64_t clock)
{
    bool real = clock == CLOCK_REALTIME || clock == CLOCK_REALTIME_COARSE;
    return real ? REALTIME_EPOCH_SEC * NS_PER_SEC : 0;
}

/* The clock's time in ns, or -EINVAL for an unknown clock. */
static long clock_ns(uint64_t clock, uint64_t *ns)
{
    if (clock > CLOCK_BOOTTIME)
        return -EINVAL;
    *ns = unix_now_ns() + clock_offset(clock);
    return 0;
}

long lx_clock_gettime(struct ucall *c)
{
    uint64_t ns;
    long err = clock_ns(c->a[0], &ns);
    if (err)
        return err;
    struct linux_timespec ts = {(int64_t)(ns / NS_PER_SEC), (int64_t)(ns % NS_PER_SEC)};
    return copy_out(c->proc, c->a[1], &ts, sizeof(ts));
}

long lx_gettimeofday(struct ucall *c)
{
    uint64_t ns = unix_now_ns() + REALTIME_EPOCH_SEC * NS_PER_SEC;
    struct linux_timeval tv = {(int64_t)(ns / NS_PER_SEC), (int64_t)(ns % NS_PER_SEC / 1000)};
    return c->a[0] ? copy_out(c->proc, c->a[0], &tv, sizeof(tv)) : 0;   /* tz: ignored */
}

long lx_time(struct ucall *c)
{
    int64_t sec = (int64_t)((unix_now_ns() / NS_PER_SEC) + REALTIME_EPOCH_SEC);
    if (c->a[0]) {
        long err = copy_out(c->proc, c->a[0], &sec, sizeof(sec));
        if (err)
            return err;
    }
    return sec;
}

/* A valid timespec at uaddr, in ns: 0, -EFAULT or -EINVAL. */
static long read_timespec(struct ucall *c, uint64_t uaddr, uint64_t *ns)
{
    struct linux_timespec ts;
    long err = copy_in(c->proc, &ts, uaddr, sizeof(ts));
    if (err)
        return err;
    if (ts.tv_sec < 0 || ts.tv_nsec < 0 || ts.tv_nsec >= (int64_t)NS_PER_SEC)
        return -EINVAL;
    uint64_t sec = (uint64_t)ts.tv_sec;
    *ns = sec >= UINT64_MAX / NS_PER_SEC ? UINT64_MAX - 1 : sec * NS_PER_SEC + (uint64_t)ts.tv_nsec;
    return 0;
}

/* Sleep until the monotonic time `deadline`: 0 once it has passed, else blocked. */
static long sleep_until(struct ucall *c, uint64_t deadline)
{
    return unix_now_ns() >= deadline ? 0 : ucall_block(c, NULL, deadline);
}

static uint64_t after(uint64_t start, uint64_t ns)
{
    return ns > UNIX_NO_DEADLINE - 1 - start ? UNIX_NO_DEADLINE - 1 : start + ns;
}

long lx_nanosleep(struct ucall *c)
{
    uint64_t ns;
    long err = read_timespec(c, c->a[0], &ns);
    return err ? err : sleep_until(c, after(ucall_start_ns(c), ns));
}

long lx_clock_nanosleep(struct ucall *c)
{
    uint64_t ns, now;
    long err = clock_ns(c->a[0], &now);       /* validates the clock */
    if (!err && (c->a[0] == CLOCK_THREAD_CPUTIME_ID || c->a[0] == CLOCK_PROCESS_CPUTIME_ID))
        err = -EINVAL;                    /* as Linux: no sleeping on a CPU-time clock */
    if (!err)
        err = read_timespec(c, c->a[2], &ns);
    if (err)
        return err;
    if (!(c->a[1] & TIMER_ABSTIME))
        return sleep_until(c, after(ucall_start_ns(c), ns));
    uint64_t offset = clock_offset(c->a[0]);
    return sleep_until(c, ns >= offset ? ns - offset : 0);
}
