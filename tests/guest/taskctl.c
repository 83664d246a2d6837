/*
 * taskctl MODE: the task-control calls on native threads (docs/memory.md, "Task control
 * for servers"): SYS_THREAD_CTL's stop, resume, registers with the FS and GS bases, end.
 *
 *   regs     a clone spins; stopped, it makes no progress; its registers are read, then
 *            rewritten (rip, rdi, rsp, FS and GS base) and it resumes there: it finds
 *            the argument and reads its two variables through %fs and %gs
 *   sleep    a thread stopped while it sleeps in the kernel finishes its sleep (result 0
 *            in rax, not yet stored) first, then stops; resume cancels a stop that has
 *            not happened yet
 *   end      THREAD_CTL_END ends a stopped native thread, and its task with it
 *   errors   rights and arguments
 *   handover SYS_TASK_HANDOVER: a spinning clone C is handed to another clone B; B may
 *            then stop it, copy from it, kill it and wait for it, and we no longer may;
 *            the errors (not controlled, no such task, a cycle)
 * Prints "taskctl ok" when every check passed.
 */
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <ondol/ipc.h>
#include <ondol/sys.h>
#include <ondol/thread.h>

#define STACK_SIZE (64 * 1024ul)

static int failures;

#define CHECK(cond, what)                                                          \
    do {                                                                           \
        if (!(cond)) {                                                             \
            printf("taskctl: FAIL %s (line %d)\n", what, __LINE__);                \
            failures++;                                                            \
        }                                                                          \
    } while (0)

static uint8_t *child_stack;          /* each clone runs on its copy of this region */
static volatile uint64_t counter;     /* the clone's progress, read with SYS_TASK_COPY */
static volatile long sleep_result = 99;
static uint64_t fs_var[2] = {0x1111, 0}, gs_var[2] = {0x2222, 0};

static void spinner(void *arg)
{
    (void)arg;
    for (;;)
        counter++;
}

/* Where the rewritten registers send the clone: checks rdi and the two bases. */
static void resumed_here(uint64_t arg)
{
    uint64_t fs, gs;
    __asm__ volatile("movq %%fs:0, %0" : "=r"(fs));
    __asm__ volatile("movq %%gs:0, %0" : "=r"(gs));
    sys_exit(arg == 42 && fs == 0x1111 && gs == 0x2222 ? 0 : 1);
}

static void sleeper(void *arg)
{
    (void)arg;
    sleep_result = sys_sleep(5);
    for (;;)
        counter++;
}

/* A clone of this task whose one thread runs fn: its task id, and its thread id in *tid. */
static long clone_thread(void (*fn)(void *), long *tid)
{
    long t = sys_task_create("ctlchild");
    if (t < 0 || sys_vm_clone((int)t, 0) != 0)
        return -1;
    *tid = sys_task_thread((int)t, fn, child_stack + STACK_SIZE - 8, NULL, PRIO_INHERIT);
    return *tid > 0 ? t : -1;
}

static uint64_t remote_counter(long task)
{
    uint64_t v = 0;
    sys_task_copy((int)task, TASK_COPY_FROM, (void *)&counter, &v, sizeof(v));
    return v;
}

/* Stop tid and wait (sleeping a tick at a time) until it is stopped. */
static int stop_wait(long tid)
{
    for (int i = 0; i < 100; i++) {
        long r = sys_thread_ctl((int)tid, THREAD_CTL_STOP, NULL);
        if (r != 0)
            return r == 1;
        sys_sleep(1);
    }
    return 0;
}

static int wait_status(long task)
{
    int status = -1;
    return task > 0 && sys_task_wait((int)task, &status) == task ? status : -1;
}

static void regs(void)
{
    long tid, t = clone_thread(spinner, &tid);
    CHECK(t > 0, "clone");
    sys_sleep(2);
    CHECK(stop_wait(tid), "the spinning thread stops");
    uint64_t c1 = remote_counter(t);
    sys_sleep(3);
    CHECK(c1 > 0 && remote_counter(t) == c1, "a stopped thread makes no progress");
    struct user_regs r;
    CHECK(sys_thread_ctl((int)tid, THREAD_CTL_GET_REGS, &r) == 0, "get registers");
    CHECK(r.rip >= (uint64_t)(uintptr_t)spinner && r.rip < (uint64_t)(uintptr_t)spinner + 64,
          "rip in the spin loop");
    CHECK(r.fs_base == 0 && r.gs_base == 0, "a native thread starts with zero bases");
    r.rip = (uint64_t)(uintptr_t)resumed_here;
    r.rdi = 42;
    r.rsp = (uint64_t)(uintptr_t)(child_stack + STACK_SIZE - 8);
    r.fs_base = (uint64_t)(uintptr_t)fs_var;
    r.gs_base = (uint64_t)(uintptr_t)gs_var;
    r.rflags = ~0ull;
    CHECK(sys_thread_ctl((int)tid, THREAD_CTL_SET_REGS, &r) == 0, "set registers");
    struct user_regs back;
    CHECK(sys_thread_ctl((int)tid, THREAD_CTL_GET_REGS, &back) == 0, "get them back");
    CHECK(back.rip == r.rip && back.rdi == 42 && back.rsp == r.rsp && back.fs_base == r.fs_base &&
          back.gs_base == r.gs_base, "the registers as set");
    CHECK(back.rflags == (USER_RFLAGS_MASK | 0x202), "rflags: arithmetic flags and DF, IF on");
    CHECK(sys_thread_ctl((int)tid, THREAD_CTL_RESUME, NULL) == 0, "resume");
    CHECK(wait_status(t) == 0, "resumed at the new rip with the argument and both bases");
}

static void sleep_mode(void)
{
    long tid, t = clone_thread(sleeper, &tid);
    CHECK(t > 0, "clone");
    sys_sleep(1);
    CHECK(sys_thread_ctl((int)tid, THREAD_CTL_STOP, NULL) == 0, "stop is pending while it sleeps");
    CHECK(sys_thread_ctl((int)tid, THREAD_CTL_GET_REGS, &(struct user_regs){0}) == E_INVAL,
          "no registers before it stopped");
    CHECK(stop_wait(tid), "it stops after its sleep");
    struct user_regs r;
    long res = 0;
    sys_task_copy((int)t, TASK_COPY_FROM, (void *)&sleep_result, &res, sizeof(res));
    CHECK(sys_thread_ctl((int)tid, THREAD_CTL_GET_REGS, &r) == 0 && r.rax == 0 && res == 99,
          "it stopped on its way out of the sleep, which returned 0");
    CHECK(sys_thread_ctl((int)tid, THREAD_CTL_RESUME, NULL) == 0, "resume");
    sys_sleep(2);
    uint64_t c1 = remote_counter(t);
    sys_sleep(2);
    CHECK(remote_counter(t) > c1, "it runs again");
    CHECK(sys_thread_ctl((int)tid, THREAD_CTL_STOP, NULL) == 0, "stop again");
    CHECK(sys_thread_ctl((int)tid, THREAD_CTL_RESUME, NULL) == 0, "cancel the pending stop");
    sys_sleep(2);
    c1 = remote_counter(t);
    sys_sleep(2);
    CHECK(remote_counter(t) > c1, "a cancelled stop never happens");
    CHECK(sys_task_kill((int)t) == 0 && wait_status(t) == KILLED_STATUS, "kill it");
}

static void end(void)
{
    long tid, t = clone_thread(spinner, &tid);
    CHECK(stop_wait(tid), "stopped");
    CHECK(sys_thread_ctl((int)tid, THREAD_CTL_END, NULL) == 0, "end the stopped thread");
    CHECK(wait_status(t) >= 0, "its task ended with it");
}

static void errors(void)
{
    struct user_regs r = {0};
    long tid, t = clone_thread(spinner, &tid);
    CHECK(sys_thread_ctl(thread_self(), THREAD_CTL_STOP, NULL) == E_PERM, "our own task");
    CHECK(sys_thread_ctl(0, THREAD_CTL_STOP, NULL) == E_SRCH, "no thread 0");
    CHECK(sys_thread_ctl(0x7fffffff, THREAD_CTL_STOP, NULL) == E_SRCH, "no such thread");
    CHECK(sys_thread_ctl((int)tid, THREAD_CTL_GET_REGS, &r) == E_INVAL, "running: no registers");
    CHECK(sys_thread_ctl((int)tid, THREAD_CTL_INTERRUPT, NULL) == E_INVAL, "interrupt: Linux only");
    CHECK(sys_thread_ctl((int)tid, 99, NULL) == E_INVAL, "unknown op");
    CHECK(stop_wait(tid), "stopped");
    CHECK(sys_thread_ctl((int)tid, THREAD_CTL_STOP, NULL) == 1, "stopping a stopped thread");
    CHECK(sys_thread_ctl((int)tid, THREAD_CTL_GET_REGS, (void *)0xffffffff80000000ull) == E_FAULT,
          "kernel pointer");
    CHECK(sys_thread_ctl((int)tid, THREAD_CTL_GET_REGS, &r) == 0, "registers");
    static const uint64_t bad[] = {0x0000800000000000ull, 0xffffffff80000000ull};
    for (int i = 0; i < 2; i++) {
        struct user_regs w = r;
        w.rip = bad[i];
        CHECK(sys_thread_ctl((int)tid, THREAD_CTL_SET_REGS, &w) == E_INVAL, "rip");
        w = r;
        w.rsp = bad[i];
        CHECK(sys_thread_ctl((int)tid, THREAD_CTL_SET_REGS, &w) == E_INVAL, "rsp");
        w = r;
        w.fs_base = bad[i];
        CHECK(sys_thread_ctl((int)tid, THREAD_CTL_SET_REGS, &w) == E_INVAL, "fs base");
        w = r;
        w.gs_base = bad[i];
        CHECK(sys_thread_ctl((int)tid, THREAD_CTL_SET_REGS, &w) == E_INVAL, "gs base");
    }
    CHECK(sys_thread_ctl((int)tid, THREAD_CTL_SET_REGS, NULL) == E_FAULT, "NULL registers");
    CHECK(sys_task_kill((int)t) == 0 && wait_status(t) == KILLED_STATUS, "a stopped thread is killed");
}

static long handed_task, handed_tid;  /* C, in B's copy of our memory */
static int parent_tid;

/* B: no control of C before the handover; all of it after. Exits 0 when so. */
static void new_controller(void *arg)
{
    (void)arg;
    uint64_t v;
    struct ipc_msg m = {{0}};
    int ok = sys_task_copy((int)handed_task, TASK_COPY_FROM, (void *)&counter, &v, sizeof(v)) == E_PERM;
    ok = ok && ipc_recv(parent_tid, &m, IPC_FOREVER) == parent_tid;   /* "I will hand it over" */
    ok = ok && ipc_recv(parent_tid, &m, IPC_FOREVER) == parent_tid;   /* "done" */
    ok = ok && stop_wait(handed_tid);
    ok = ok && sys_task_copy((int)handed_task, TASK_COPY_FROM, (void *)&counter, &v, sizeof(v)) == sizeof(v);
    ok = ok && sys_task_kill((int)handed_task) == 0 && wait_status(handed_task) == KILLED_STATUS;
    sys_exit(ok ? 0 : 1);
}

static void handover(void)
{
    parent_tid = thread_self();
    long c_tid, c = clone_thread(spinner, &c_tid);
    handed_task = c;
    handed_tid = c_tid;
    long b_tid, b = clone_thread(new_controller, &b_tid);
    CHECK(c > 0 && b > 0, "clones");
    struct ipc_msg m = {{0}};
    CHECK(ipc_send((int)b_tid, &m, IPC_FOREVER) == 0, "B checked it has no control yet");
    CHECK(sys_task_handover((int)c, (int)b) == 0, "hand C over to B");
    uint64_t v;
    CHECK(sys_task_copy((int)c, TASK_COPY_FROM, (void *)&counter, &v, sizeof(v)) == E_PERM,
          "we lost control of C");
    CHECK(sys_thread_ctl((int)c_tid, THREAD_CTL_STOP, NULL) == E_PERM, "and of its threads");
    CHECK(sys_task_handover((int)c, (int)b) == E_PERM, "it is not ours to give again");
    CHECK(sys_task_wait((int)c, NULL) == E_SRCH, "nor to wait for");
    CHECK(ipc_send((int)b_tid, &m, IPC_FOREVER) == 0, "tell B");
    CHECK(wait_status(b) == 0, "B controlled, killed and collected C");

    long x_tid, x = clone_thread(spinner, &x_tid);
    long y_tid, y = clone_thread(spinner, &y_tid);
    struct self_info me;
    sys_self(&me);
    CHECK(sys_task_handover(me.task, (int)x) == E_PERM, "our own task is not ours to give");
    CHECK(sys_task_handover((int)x, 0) == E_SRCH && sys_task_handover((int)x, 0x7fffffff) == E_SRCH,
          "no such receiver");
    CHECK(sys_task_handover((int)x, (int)x) == E_INVAL, "to itself");
    long empty = sys_task_create("ctlempty");
    CHECK(sys_task_handover((int)x, (int)empty) == E_INVAL, "to a task with no threads");
    CHECK(sys_task_handover((int)y, (int)x) == 0, "Y to X");
    CHECK(sys_task_handover((int)x, (int)y) == E_INVAL, "X to its own child: a cycle");
    CHECK(sys_task_handover((int)x, me.task) == 0, "to ourselves: nothing changes");
    CHECK(sys_task_kill((int)x) == 0 && wait_status(x) == KILLED_STATUS, "X and Y end");
}

int main(int argc, char **argv)
{
    static const struct { const char *name; void (*run)(void); } modes[] = {
        {"regs", regs}, {"sleep", sleep_mode}, {"end", end}, {"errors", errors},
        {"handover", handover},
    };
    child_stack = (uint8_t *)sys_vm_map(STACK_SIZE, PROT_READ | PROT_WRITE);
    for (size_t i = 0; argc == 2 && i < sizeof(modes) / sizeof(modes[0]); i++) {
        if (strcmp(argv[1], modes[i].name) == 0) {
            modes[i].run();
            printf(failures ? "taskctl: %d failures\n" : "taskctl ok\n", failures);
            return failures != 0;
        }
    }
    printf("usage: taskctl regs|sleep|end|errors|handover\n");
    return 2;
}
