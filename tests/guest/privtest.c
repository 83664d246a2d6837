/*
 * privtest: checks of privileged calls, run as the first task (`init=privtest`, so it is
 * privileged); prints "FAIL ..." for every broken expectation, then "privtest ok" or
 * "privtest failed", and powers off.
 *
 * idle     SYS_SET_PRIORITY on the idle thread (priority -1, READY while anything else
 *          runs, never queued) must be refused with E_SRCH. It once removed idle from
 *          the ready queue of priority -1: a write before the queue array and the ready
 *          bit of priority 63 cleared, so a ready priority-63 thread never ran again.
 *          A thread at 63 is made ready first and must still run.
 * pcnt     a privileged task may switch the probes and reset the facility; after the
 *          reset the probes are off.
 */
#include <stdio.h>
#include <string.h>

#include <ondol/sys.h>
#include <ondol/thread.h>

static int failures;

#define CHECK(cond, ...)                                                                 \
    do {                                                                                 \
        if (!(cond)) {                                                                   \
            failures++;                                                                  \
            printf("FAIL " __VA_ARGS__);                                                 \
            printf("\n");                                                                \
        }                                                                                \
    } while (0)

static volatile int ran63;

static int at63(void *arg)
{
    (void)arg;
    ran63 = 1;
    return 0;
}

/* The idle thread's tid from SYS_PS (task 0, priority -1), or 0. */
static int idle_tid(void)
{
    static struct ps_entry e[64];
    long n = sys_ps(e, 64);
    for (long i = 0; i < n; i++)
        if (e[i].task == 0 && e[i].prio == -1)
            return e[i].tid;
    return 0;
}

static void idle(void)
{
    int idle = idle_tid();
    CHECK(idle > 0, "no idle thread in ps");
    struct thread t;
    int tid = thread_start(&t, at63, NULL, 63, 0);      /* ready, below us: queued at 63 */
    CHECK(tid > 0, "thread at 63: %d", tid);
    long r = sys_set_priority(idle, 5);
    CHECK(r == E_SRCH, "set_priority(idle) = %ld, want E_SRCH", r);
    CHECK(idle_tid() == idle, "idle's priority changed");
    sys_sleep(3);                                       /* now the thread at 63 must run */
    CHECK(ran63, "the ready thread at priority 63 never ran");
    if (tid > 0 && ran63)
        thread_join(&t, NULL);
}

static long pcnt(unsigned cmd, long a) { return SC4(SYS_PCNT, cmd, a, 0, 0); }

static void pcnt_switches(void)
{
    struct pcnt_events ev;
    CHECK(pcnt(PCNT_PROBES, 1) == 0, "privileged PCNT_PROBES refused");
    pcnt(PCNT_GET_EVENT, (long)&ev);
    CHECK(ev.probes == 1, "probes not reported on");
    CHECK(pcnt(PCNT_RESET, 0) == 0, "privileged PCNT_RESET refused");
    pcnt(PCNT_GET_EVENT, (long)&ev);
    CHECK(ev.probes == 0, "probes still on after PCNT_RESET");
}

int main(void)
{
    idle();
    pcnt_switches();
    printf("privtest %s\n", failures ? "failed" : "ok");
    fflush(stdout);
    sys_poweroff();
    return 1;
}
