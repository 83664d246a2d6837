/* The core's waiting calls (wait.c) and dispatch (dispatch.c), with the clock and identity
 * calls (time.c, misc.c) as the handlers that run again. */
#include <string.h>
#include "fake.h"

#define MS 1000000ull

static struct uthread thread = {.tid = 77};

static long run(struct ucall *c)
{
    c->thread = &thread;
    return unix_dispatch(c);
}

static void sleeps_until_its_deadline(struct proc *p)
{
    struct linux_timespec nap = {0, (int64_t)MS};
    memcpy(fake_host(p, fake_user(p, 0)), &nap, sizeof(nap));
    fake_now_ns = 5 * MS;
    struct ucall c = fake_call(p, 35, fake_user(p, 0), 0, 0, 0);
    CHECK_EQ(run(&c), UNIX_BLOCKED);
    CHECK_EQ(unix_next_deadline(), 6 * MS);
    CHECK(thread.wait != NULL);
    fake_now_ns = 6 * MS - 1;
    unix_timers_expire(fake_now_ns);
    unix_run_woken();
    CHECK_EQ(fake_answers, 0);
    fake_now_ns = 6 * MS;                 /* runs again from the start: the same deadline */
    unix_timers_expire(fake_now_ns);
    unix_run_woken();
    CHECK_EQ(fake_answers, 1);
    CHECK_EQ(fake_answer, 0);
    CHECK_EQ(fake_answer_tid, 77);
    CHECK(thread.wait == NULL);
    CHECK_EQ(unix_next_deadline(), UNIX_NO_DEADLINE);
    struct linux_timespec bad = {0, 1000000000};
    memcpy(fake_host(p, fake_user(p, 0)), &bad, sizeof(bad));
    CHECK_EQ(run(&c), -EINVAL);
    c = fake_call(p, 35, 8, 0, 0, 0);
    CHECK_EQ(run(&c), -EFAULT);
}

/* A call blocked on two lists and a deadline is woken once, by the first of them. */
static void woken_once_from_several_lists(struct proc *p)
{
    struct waitlist a = {0}, b = {0};
    struct ucall c = fake_call(p, 39, 0, 0, 0, 0);       /* getpid: answers at once */
    c.thread = &thread;
    fake_answers = 0;
    ucall_run_begin();
    CHECK_EQ(ucall_block(&c, &a, UNIX_NO_DEADLINE), UNIX_BLOCKED);
    CHECK_EQ(ucall_block(&c, &b, 100 * MS), UNIX_BLOCKED);
    CHECK_EQ(unix_next_deadline(), 100 * MS);
    waitlist_wake(&b);
    CHECK(a.head == NULL && b.head == NULL);
    CHECK_EQ(unix_next_deadline(), UNIX_NO_DEADLINE);
    CHECK_EQ(fake_answers, 0);            /* later, not from inside waitlist_wake */
    unix_run_woken();
    CHECK_EQ(fake_answers, 1);
    CHECK_EQ(fake_answer, p->pid);
    waitlist_wake(&a);
    unix_run_woken();
    CHECK_EQ(fake_answers, 1);
}

/* A signal ends a wait: answered with its result, off every list; drop answers nothing. */
static void ended_and_dropped(struct proc *p)
{
    struct waitlist a = {0};
    struct ucall c = fake_call(p, 39, 0, 0, 0, 0);
    c.thread = &thread;
    fake_answers = 0;
    ucall_run_begin();
    ucall_block(&c, &a, 50 * MS);
    CHECK(unix_wait_end(&thread, -EINTR));
    CHECK_EQ(fake_answers, 1);
    CHECK_EQ(fake_answer, -EINTR);
    CHECK(a.head == NULL);
    CHECK_EQ(unix_next_deadline(), UNIX_NO_DEADLINE);
    CHECK(!unix_wait_end(&thread, -EINTR));
    ucall_run_begin();
    ucall_block(&c, &a, UNIX_NO_DEADLINE);
    waitlist_wake(&a);                    /* woken, then the thread goes away */
    unix_wait_drop(&thread);
    unix_run_woken();
    CHECK_EQ(fake_answers, 1);
    CHECK(thread.wait == NULL);
}

static void unknown_calls(struct proc *p)
{
    unix_report_unknown = true;
    struct ucall c = fake_call(p, 499, 0, 0, 0, 0);
    CHECK_EQ(run(&c), -ENOSYS);
    uint64_t total = unix_total_count(), mine = p->calls;
    CHECK_EQ(run(&c), -ENOSYS);           /* a new call */
    CHECK_EQ(unix_call_count(499), 2);
    CHECK_EQ(unix_total_count(), total + 1);
    CHECK_EQ(p->calls, mine + 1);
    CHECK_EQ(unix_dispatch_again(&c), -ENOSYS);   /* the same call run again: not counted */
    CHECK_EQ(unix_call_count(499), 2);
    CHECK_EQ(unix_total_count(), total + 1);
    CHECK_EQ(p->calls, mine + 1);
    CHECK_EQ(fake_logs, 1);
    CHECK(strcmp(fake_log, "unix: unknown system call 499") == 0);
    c.nr = -1;
    CHECK_EQ(run(&c), -ENOSYS);
    c.nr = 100000;
    CHECK_EQ(run(&c), -ENOSYS);
    CHECK_EQ(fake_logs, 2);
    CHECK(strcmp(fake_log, "unix: unknown system call out of range") == 0);
    CHECK_EQ(unix_unknown_count(), 5);
    unix_report_unknown = false;
}

static void clocks_and_identity(struct proc *p)
{
    fake_now_ns = 1500 * MS;
    struct ucall c = fake_call(p, 228, CLOCK_MONOTONIC, fake_user(p, 0), 0, 0);
    CHECK_EQ(run(&c), 0);
    struct linux_timespec ts;
    memcpy(&ts, fake_host(p, fake_user(p, 0)), sizeof(ts));
    CHECK(ts.tv_sec == 1 && ts.tv_nsec == 500000000);
    c.a[0] = CLOCK_REALTIME;
    CHECK_EQ(run(&c), 0);
    memcpy(&ts, fake_host(p, fake_user(p, 0)), sizeof(ts));
    CHECK_EQ(ts.tv_sec, 1704067201);
    c.a[0] = 12345;
    CHECK_EQ(run(&c), -EINVAL);
    c = fake_call(p, 228, CLOCK_MONOTONIC, 8, 0, 0);
    CHECK_EQ(run(&c), -EFAULT);
    c = fake_call(p, 201, 0, 0, 0, 0);
    CHECK_EQ(run(&c), 1704067201);
    c = fake_call(p, 230, CLOCK_THREAD_CPUTIME_ID, 0, fake_user(p, 0), 0);
    CHECK_EQ(run(&c), -EINVAL);
    ts = (struct linux_timespec){1704067201, 0};          /* absolute, in the past */
    memcpy(fake_host(p, fake_user(p, 0)), &ts, sizeof(ts));
    c = fake_call(p, 230, CLOCK_REALTIME, TIMER_ABSTIME, fake_user(p, 0), 0);
    CHECK_EQ(run(&c), 0);
    p->pid = 5;
    p->ppid = 1;
    c = fake_call(p, 110, 0, 0, 0, 0);
    CHECK_EQ(run(&c), 1);
    c = fake_call(p, 63, fake_user(p, 0), 0, 0, 0);
    CHECK_EQ(run(&c), 0);
    struct linux_utsname *u = fake_host(p, fake_user(p, 0));
    CHECK(strcmp(u->machine, "x86_64") == 0 && strcmp(u->sysname, "Linux") == 0);
    c.a[0] = fake_user(p, 1);             /* runs past the end */
    CHECK_EQ(run(&c), -EFAULT);
}

int main(void)
{
    struct proc *p = fake_proc(sizeof(struct linux_utsname));
    sleeps_until_its_deadline(p);
    woken_once_from_several_lists(p);
    ended_and_dropped(p);
    unknown_calls(p);
    clocks_and_identity(p);
    fake_proc_free(p);
    return fake_done();
}
