/*
 * alarm, getitimer and setitimer (docs/unix.md, "Signals"). ITIMER_REAL is a unix_timer
 * of the process (wait.c): when it fires, SIGALRM goes to the process (SI_KERNEL, as
 * Linux's it_real_fn) and a periodic timer is armed again one interval after its
 * previous deadline. ITIMER_VIRTUAL and ITIMER_PROF are kept and read back but never
 * expire: the server does not measure a process's CPU time. A fork's child has no
 * timers; execve keeps them.
 */
#include "signal_impl.h"

#define NS_PER_US 1000ull
#define NS_PER_S 1000000000ull

static struct proc *proc_of_alarm(struct unix_timer *t)
{
    return (struct proc *)((char *)t - __builtin_offsetof(struct proc, sig_alarm));
}

static void alarm_fired(struct unix_timer *timer)
{
    struct proc *p = proc_of_alarm(timer);
    if (p->sig_alarm_interval_ns)
        unix_timer_arm(timer, timer->deadline_ns + p->sig_alarm_interval_ns);
    send_info(p, NULL, &(struct sig_info){.signo = SIGALRM, .code = SI_KERNEL});
}

/* Time left on the real timer in ns (0: disarmed; at least 1 µs while armed, as Linux). */
static uint64_t alarm_left_ns(struct proc *p)
{
    if (!p->sig_alarm.armed)
        return 0;
    uint64_t now = unix_now_ns();
    uint64_t left = p->sig_alarm.deadline_ns > now ? p->sig_alarm.deadline_ns - now : 0;
    return left < NS_PER_US ? NS_PER_US : left;
}

static struct linux_timeval to_timeval(uint64_t ns)
{
    return (struct linux_timeval){(int64_t)(ns / NS_PER_S), (int64_t)(ns % NS_PER_S / NS_PER_US)};
}

static bool timeval_valid(const struct linux_timeval *tv)
{
    return tv->tv_sec >= 0 && tv->tv_usec >= 0 && tv->tv_usec < 1000000;
}

/* Capped at 2^32 seconds (136 years), so that no deadline overflows. */
static uint64_t to_ns(const struct linux_timeval *tv)
{
    uint64_t s = tv->tv_sec < (1ll << 32) ? (uint64_t)tv->tv_sec : 1ull << 32;
    return s * NS_PER_S + (uint64_t)tv->tv_usec * NS_PER_US;
}

static struct linux_itimerval real_timer(struct proc *p)
{
    return (struct linux_itimerval){.it_interval = to_timeval(p->sig_alarm_interval_ns),
                                    .it_value = to_timeval(alarm_left_ns(p))};
}

static void set_real_timer(struct proc *p, uint64_t value_ns, uint64_t interval_ns)
{
    p->sig_alarm.fire = alarm_fired;
    p->sig_alarm_interval_ns = interval_ns;
    if (value_ns)
        unix_timer_arm(&p->sig_alarm, unix_now_ns() + value_ns);
    else
        unix_timer_disarm(&p->sig_alarm);
}

long lx_getitimer(struct ucall *c)
{
    struct linux_itimerval v;
    if (c->a[0] == ITIMER_REAL)
        v = real_timer(c->proc);
    else if (c->a[0] == ITIMER_VIRTUAL || c->a[0] == ITIMER_PROF)
        v = c->proc->sig_itimer[c->a[0] - 1];
    else
        return -EINVAL;
    return copy_out(c->proc, c->a[1], &v, sizeof(v)) ? -EFAULT : 0;
}

/* setitimer(which, new, old): a NULL new disarms (Linux accepts it with a warning). */
long lx_setitimer(struct ucall *c)
{
    struct linux_itimerval v = {{0, 0}, {0, 0}}, old;
    if (c->a[1] && copy_in(c->proc, &v, c->a[1], sizeof(v)))
        return -EFAULT;
    if (c->a[0] > ITIMER_PROF)
        return -EINVAL;
    if (!timeval_valid(&v.it_value) || !timeval_valid(&v.it_interval))
        return -EINVAL;
    if (c->a[0] == ITIMER_REAL) {
        old = real_timer(c->proc);
        set_real_timer(c->proc, to_ns(&v.it_value), to_ns(&v.it_interval));
    } else {
        old = c->proc->sig_itimer[c->a[0] - 1];
        c->proc->sig_itimer[c->a[0] - 1] = v;
    }
    if (c->a[2] && copy_out(c->proc, c->a[2], &old, sizeof(old)))
        return -EFAULT;
    return 0;
}

/* alarm(seconds): the seconds left on the previous one, rounded to the nearest and at
 * least 1 while one was armed (Linux's alarm_setitimer). */
long lx_alarm(struct ucall *c)
{
    uint64_t left = alarm_left_ns(c->proc);
    set_real_timer(c->proc, (uint64_t)(uint32_t)c->a[0] * NS_PER_S, 0);
    uint64_t secs = left / NS_PER_S, rest = left % NS_PER_S;
    if ((secs == 0 && rest) || rest >= NS_PER_S / 2)
        secs++;
    return (long)secs;
}
