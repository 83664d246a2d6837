/*
 * futextest MODE — exercises SYS_FUTEX_WAIT / SYS_FUTEX_WAKE for tests/test_futex.py.
 *   errors   the documented results without another thread: changed value, timeout 0 and
 *            2 ticks, misaligned, kernel and unmapped addresses, negative n, nobody to wake
 *   wake     three threads wait on one word; once all three are blocked (SYS_PS), a wake of
 *            1 wakes exactly one, then a wake of 10 the other two; each wait returns 0;
 *            a wait on another word is not woken by them
 *   kill     a child task blocks forever on a word; the parent kills it and collects
 *            KILLED_STATUS (the child's own mode is `sleeper`)
 * Prints "name=value" lines.
 */
#include <stdio.h>
#include <string.h>

#include <ondol/sys.h>
#include <ondol/thread.h>

#define WAITERS 3

static uint32_t word, other_word;
static volatile int results[WAITERS + 1];

static long fwait(const void *addr, uint32_t expected, uint64_t timeout)
{
    return sys_futex_wait((const uint32_t *)addr, expected, timeout);
}

static void errors(void)
{
    struct time_info t0, t1;
    word = 5;
    printf("changed=%ld\n", fwait(&word, 4, SLEEP_FOREVER));
    printf("timeout0=%ld\n", fwait(&word, 5, 0));
    sys_time(&t0);
    long r = fwait(&word, 5, 2);
    sys_time(&t1);
    printf("timeout2=%ld waited=%d\n", r, t1.ticks - t0.ticks >= 2);
    printf("misaligned=%ld\n", fwait((char *)&word + 1, 0, 1));
    printf("kernel=%ld\n", fwait((void *)0xffffffff80100000ull, 0, 1));
    printf("unmapped=%ld\n", fwait((void *)0x10000000, 0, 1));
    printf("wake_misaligned=%ld\n", sys_futex_wake((const uint32_t *)((char *)&word + 2), 1));
    printf("wake_kernel=%ld\n", sys_futex_wake((const uint32_t *)0xffff800000000000ull, 1));
    printf("wake_negative=%ld\n", sys_futex_wake(&word, -1));
    printf("wake_nobody=%ld\n", sys_futex_wake(&word, 1));
}

static int waiter(void *arg)
{
    int i = (int)(long)arg;
    results[i] = (int)fwait(i == WAITERS ? &other_word : &word, 0, SLEEP_FOREVER);
    return 0;
}

/* Yields until `want` of the threads are blocked (in the futex: nothing else blocks them). */
static void until_blocked(const struct thread *t, int n, int want)
{
    static struct ps_entry ps[64];
    for (;;) {
        int count = (int)sys_ps(ps, 64), blocked = 0;
        for (int i = 0; i < count; i++)
            for (int k = 0; k < n; k++)
                blocked += ps[i].tid == t[k].tid && ps[i].state == TS_BLOCKED;
        if (blocked == want)
            return;
        sys_yield();
    }
}

static void wake(void)
{
    struct thread t[WAITERS + 1];
    word = other_word = 0;
    for (int i = 0; i <= WAITERS; i++) {
        results[i] = -100;
        thread_start(&t[i], waiter, (void *)(long)i, PRIO_INHERIT, THREAD_STACK_DEFAULT);
    }
    until_blocked(t, WAITERS + 1, WAITERS + 1);
    printf("wake1=%ld\n", sys_futex_wake(&word, 1));
    until_blocked(t, WAITERS + 1, WAITERS);
    printf("wake10=%ld\n", sys_futex_wake(&word, 10));
    until_blocked(t, WAITERS + 1, 1);
    printf("wake_again=%ld\n", sys_futex_wake(&word, 10));
    printf("other_waiting=%d\n", results[WAITERS] == -100);
    printf("wake_other=%ld\n", sys_futex_wake(&other_word, 1));
    for (int i = 0; i <= WAITERS; i++)
        thread_join(&t[i], NULL);
    printf("results=%d,%d,%d,%d\n", results[0], results[1], results[2], results[3]);
}

static void kill_sleeper(void)
{
    const char *argv[] = {"futextest", "sleeper"};
    long child = sys_spawn("futextest", argv, 2, 0);
    static struct ps_entry ps[64];
    for (int blocked = 0; !blocked; ) {
        sys_yield();
        int count = (int)sys_ps(ps, 64);
        for (int i = 0; i < count; i++)
            blocked |= ps[i].task == child && ps[i].state == TS_BLOCKED;
    }
    printf("kill=%ld\n", sys_task_kill((int)child));
    int status = 0;
    sys_task_wait((int)child, &status);
    printf("status=%#x\n", status);
}

int main(int argc, char **argv)
{
    const char *mode = argc > 1 ? argv[1] : "";
    if (!strcmp(mode, "errors"))
        errors();
    else if (!strcmp(mode, "wake"))
        wake();
    else if (!strcmp(mode, "kill"))
        kill_sleeper();
    else if (!strcmp(mode, "sleeper"))
        fwait(&word, 0, SLEEP_FOREVER);
    else {
        printf("usage: futextest errors|wake|kill\n");
        return 2;
    }
    return 0;
}
