/*
 * fwdtest MODE: Linux forwarding (kernel/ipc/fwd.c, docs/unix.md "Forwarding"). This
 * program is a tiny UNIX server: it clones itself into a task marked with SYS_TASK_LINUX
 * and runs a function there whose `syscall`s and faults come back to it as IPC calls.
 *
 *   basic   any rax is forwarded (ondol's own numbers too), with the six arguments and
 *           the caller's thread id; the answer is rax and every other register survives
 *   defer   three Linux tasks wait at once; answered in reverse order, each exactly once
 *           (a second answer is E_SRCH)
 *   fault   a #PF is forwarded; the server moves the thread to a handler (SET_REGS); a
 *           #UD answered with an error kills the task with status 128 + 6
 *   regs    GET_REGS of a thread in a call, an FS base set by the server (arch_prctl's
 *           job), a thread started with given registers (SYS_TASK_THREAD_REGS), END
 *   intr    a thread spinning in user mode is interrupted (THREAD_CTL_INTERRUPT): it
 *           makes an "interrupted" call and the server moves it to a handler
 *   nosrv   the server thread exits while a Linux task waits for it: the task is killed
 *   errors  rights and arguments of the three calls
 *   diff SEED STEPS  the forwarding fastpath's differential test (below)
 * Prints "fwdtest ok" when every check passed.
 */
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <stdlib.h>

#include <ondol/ipc.h>
#include <ondol/sys.h>
#include <ondol/thread.h>

#define STACK_SIZE (64 * 1024ul)
#define WAIT 500u              /* ticks: no check waits forever */

/* Linux-side numbers the tests use (Linux x86-64 numbers, as the server sees them) */
#define LX_REPORT 1000         /* rdi = a value the server checks */
#define LX_EXIT   60

static uint8_t stacks[3][STACK_SIZE];   /* cloned: each Linux thread runs on its copy */
static int failures;

#define CHECK(cond, what)                                                          \
    do {                                                                           \
        if (!(cond)) {                                                             \
            printf("fwdtest: FAIL %s (line %d)\n", what, __LINE__);                \
            failures++;                                                            \
        }                                                                          \
    } while (0)

/* ---- the Linux side: raw system calls only (every one is forwarded) ------------------ */
static long lx(long nr, long a, long b, long c, long d, long e, long f)
{
    register long r10 __asm__("r10") = d;
    register long r8 __asm__("r8") = e;
    register long r9 __asm__("r9") = f;
    long ret;
    __asm__ volatile("syscall"
                     : "=a"(ret)
                     : "a"(nr), "D"(a), "S"(b), "d"(c), "r"(r10), "r"(r8), "r"(r9)
                     : "rcx", "r11", "memory");
    return ret;
}

static __attribute__((noreturn)) void lx_exit(long status)
{
    lx(LX_EXIT, status, 0, 0, 0, 0, 0);
    for (;;)
        ;
}

/* Sets every register but rsp, rcx, r11 to a pattern, makes call `nr`, and counts the
 * registers that changed; *rax gets the result. */
static __attribute__((used)) uint64_t probe_regs[16];
static __attribute__((used)) uint64_t saved_rbp;
static long regs_kept_across(long nr, long *rax)
{
    __asm__ volatile(
        "movq %%rbp, saved_rbp(%%rip)\n"
        "movabs $0x1111111111111111, %%rbx\n"
        "movabs $0x2222222222222222, %%rdx\n"
        "movabs $0x3333333333333333, %%rsi\n"
        "movabs $0x4444444444444444, %%rdi\n"
        "movabs $0x5555555555555555, %%rbp\n"
        "movabs $0x8888888888888888, %%r8\n"
        "movabs $0x9999999999999999, %%r9\n"
        "movabs $0xaaaaaaaaaaaaaaaa, %%r10\n"
        "movabs $0xcccccccccccccccc, %%r12\n"
        "movabs $0xdddddddddddddddd, %%r13\n"
        "movabs $0xeeeeeeeeeeeeeeee, %%r14\n"
        "movabs $0xffffffffffffffff, %%r15\n"
        "syscall\n"
        "movq %%rax, probe_regs+0(%%rip)\n"
        "movq %%rbx, probe_regs+8(%%rip)\n"
        "movq %%rdx, probe_regs+16(%%rip)\n"
        "movq %%rsi, probe_regs+24(%%rip)\n"
        "movq %%rdi, probe_regs+32(%%rip)\n"
        "movq %%rbp, probe_regs+40(%%rip)\n"
        "movq %%r8, probe_regs+48(%%rip)\n"
        "movq %%r9, probe_regs+56(%%rip)\n"
        "movq %%r10, probe_regs+64(%%rip)\n"
        "movq %%r12, probe_regs+72(%%rip)\n"
        "movq %%r13, probe_regs+80(%%rip)\n"
        "movq %%r14, probe_regs+88(%%rip)\n"
        "movq %%r15, probe_regs+96(%%rip)\n"
        "movq saved_rbp(%%rip), %%rbp\n"
        : "+a"(nr)
        :
        : "rbx", "rcx", "rdx", "rsi", "rdi", "r8", "r9", "r10", "r11", "r12", "r13", "r14",
          "r15", "memory");
    static const uint64_t want[12] = {
        0x1111111111111111, 0x2222222222222222, 0x3333333333333333, 0x4444444444444444,
        0x5555555555555555, 0x8888888888888888, 0x9999999999999999, 0xaaaaaaaaaaaaaaaa,
        0xcccccccccccccccc, 0xdddddddddddddddd, 0xeeeeeeeeeeeeeeee, 0xffffffffffffffff};
    long changed = 0;
    for (int i = 0; i < 12; i++)
        changed += probe_regs[i + 1] != want[i];
    *rax = (long)probe_regs[0];
    return changed;
}

/* basic: ondol's own numbers (0 = SYS_NULL, 23/24 = the IPC fastpath's) and Linux's */
static void linux_basic(void *arg)
{
    (void)arg;
    long r = lx(39, 1, 2, 3, 4, 5, 6);
    lx(LX_REPORT, r == 4242, 0, 0, 0, 0, 0);
    long changed = regs_kept_across(0, &r);
    lx(LX_REPORT, changed == 0 && r == -38, 0, 0, 0, 0, 0);
    changed = regs_kept_across(23, &r);
    lx(LX_REPORT, changed == 0 && r == 23, 0, 0, 0, 0, 0);
    changed = regs_kept_across(24, &r);
    lx(LX_REPORT, changed == 0 && r == 24, 0, 0, 0, 0, 0);
    lx_exit(0);
}

/* ---- the server side --------------------------------------------------------------- */
static int self_tid(void) { return (int)sys_self(NULL); }

/* A Linux task: a clone of this one, served by thread `server`, running fn(arg) on
 * stacks[slot]. Its task id, or E_*. *tid gets its thread. */
static long linux_task(int server, void (*fn)(void *), long arg, int slot, long *tid)
{
    long t = sys_task_create("lxchild");
    if (t < 0)
        return t;
    long r = sys_vm_clone((int)t, 0);
    if (r == 0)
        r = sys_task_linux((int)t, server);
    if (r == 0)
        r = sys_task_thread((int)t, fn, stacks[slot] + STACK_SIZE - 8, (void *)arg, PRIO_INHERIT);
    if (r < 0)
        return r;
    *tid = r;
    return t;
}

/* Receive one forwarded call: its sender, or E_*. */
static long next_call(struct ipc_msg *m) { return ipc_recv(IPC_ANY, m, WAIT); }

static bool is_syscall(const struct ipc_msg *m, long nr)
{
    return m->w[0] == FWD_LABEL(FWD_OP_SYSCALL) && (long)m->w[1] == nr;
}

/* Answer `to` with rax = value, receiving nothing: the receive half polls `to` itself,
 * which has just been answered and cannot have sent, so no other call is taken (and
 * lost) here. 0, or the reply's error. */
static long answer(long to, long value)
{
    struct ipc_msg m = {{(uint64_t)value}};
    long r = ipc_reply_recv((int)to, (int)to, &m, IPC_POLL);
    return r == E_TIMEOUT ? 0 : r;
}

/* The next call must be REPORT with rdi = 1 from `from`; answered 0. */
static void expect_report(long from, const char *what)
{
    struct ipc_msg m;
    long s = next_call(&m);
    CHECK(s == from && is_syscall(&m, LX_REPORT) && m.w[2] == 1, what);
    if (s > 0)
        answer(s, 0);
}

/* The next call must be exit from `from`: end the task and reap it. */
static void expect_exit(long task, long from)
{
    struct ipc_msg m;
    long s = next_call(&m);
    CHECK(s == from && is_syscall(&m, LX_EXIT), "exit forwarded");
    sys_task_kill((int)task);
    int status = -1;
    CHECK(sys_task_wait((int)task, &status) == task, "reaped");
}

static void basic(void)
{
    long tid, task = linux_task(self_tid(), linux_basic, 0, 0, &tid);
    CHECK(task > 0, "linux task");
    struct ipc_msg m;
    long s = next_call(&m);
    CHECK(s == tid, "sender is the calling thread");
    CHECK(is_syscall(&m, 39), "label and number");
    for (int i = 0; i < 6; i++)
        CHECK(m.w[2 + i] == (uint64_t)i + 1, "arguments in words 2-7");
    answer(s, 4242);
    expect_report(tid, "the answer is rax");
    for (long nr = 0; nr <= 24; nr += nr ? 1 : 23) {
        s = next_call(&m);
        CHECK(s == tid && is_syscall(&m, nr), "ondol numbers are forwarded too");
        CHECK(m.w[2] == 0x4444444444444444 && m.w[7] == 0x9999999999999999, "probe arguments");
        answer(s, nr ? nr : -38);
        expect_report(tid, "registers preserved, rax answered");
    }
    expect_exit(task, tid);
}

/* defer: each task asks once and checks its own answer */
static void linux_defer(void *arg)
{
    long i = (long)arg;
    long r = lx(100 + i, i, 0, 0, 0, 0, 0);
    lx(LX_REPORT, r == 1000 + i, 0, 0, 0, 0, 0);
    lx_exit(0);
}

static void defer(void)
{
    long task[3], tid[3], caller[3];
    struct ipc_msg m;
    for (int i = 0; i < 3; i++)
        CHECK((task[i] = linux_task(self_tid(), linux_defer, i, i, &tid[i])) > 0, "task");
    for (int i = 0; i < 3; i++) {
        caller[i] = next_call(&m);
        CHECK(caller[i] > 0 && m.w[1] == 100 + m.w[2], "three calls pending at once");
        caller[i] = m.w[2] < 3 && caller[i] == tid[m.w[2]] ? caller[i] : -1;
    }
    for (int i = 2; i >= 0; i--) {
        long who = tid[i];
        CHECK(answer(who, 1000 + i) == 0, "a pending call is answered later");
        CHECK(answer(who, 1) == E_SRCH, "a second answer fails");
    }
    int reports = 0, exits = 0;
    for (int n = 0; n < 6; n++) {             /* in the order they run */
        long s = next_call(&m);
        int i = 0;
        while (i < 3 && tid[i] != s)
            i++;
        if (i < 3 && is_syscall(&m, LX_REPORT)) {
            reports += m.w[2] == 1;
            answer(s, 0);
        } else if (i < 3 && is_syscall(&m, LX_EXIT)) {
            sys_task_kill((int)task[i]);
            exits += sys_task_wait((int)task[i], NULL) == task[i];
        }
    }
    CHECK(reports == 3, "each got its own answer");
    CHECK(exits == 3, "each exited");
}

/* fault: a read of address 16 faults; the server resumes the thread in fault_resumed */
static void fault_resumed(long code)
{
    lx(LX_REPORT, code == 77, 0, 0, 0, 0, 0);
    __asm__ volatile("ud2");
    lx_exit(1);            /* not reached: the #UD is answered with an error */
}

static void linux_fault(void *arg)
{
    (void)arg;
    long v;
    __asm__ volatile("movq 16, %0" : "=r"(v));       /* a read of address 16 */
    (void)v;
    lx_exit(2);
}

static void fault(void)
{
    long tid, task = linux_task(self_tid(), linux_fault, 0, 0, &tid);
    struct ipc_msg m;
    long s = next_call(&m);
    CHECK(s == tid && m.w[0] == FWD_LABEL(FWD_OP_FAULT), "a fault is forwarded");
    CHECK(m.w[1] == 14 && m.w[3] == 16 && (m.w[2] & 4), "vector, address, user error code");
    struct user_regs r;
    CHECK(sys_thread_ctl((int)tid, THREAD_CTL_GET_REGS, &r) == 0 && r.rip == m.w[4], "rip");
    r.rip = (uint64_t)fault_resumed;
    r.rdi = 77;
    r.rsp = (r.rsp & ~15ull) - 8;       /* as after a call */
    CHECK(sys_thread_ctl((int)tid, THREAD_CTL_SET_REGS, &r) == 0, "set registers");
    answer(s, 0);
    expect_report(tid, "resumed where the server said");
    s = next_call(&m);
    CHECK(s == tid && m.w[0] == FWD_LABEL(FWD_OP_FAULT) && m.w[1] == 6, "#UD forwarded");
    answer(s, -1);
    int status = -1;
    CHECK(sys_task_wait((int)task, &status) == task && status == KILLED_STATUS_BASE + 6,
          "an unhandled fault ends the task with 128 + vector");
}

/* regs: the FS base the server sets; a thread started with registers */
static uint64_t tls_word = 0x5151;

static long fs_word(void)
{
    long v;
    __asm__ volatile("movq %%fs:0, %0" : "=r"(v));
    return v;
}

static void linux_second(long a, long b)
{
    lx(LX_REPORT, a == 5 && b == 6 && fs_word() == 0x5151, 0, 0, 0, 0, 0);
    lx(LX_EXIT, 0, 0, 0, 0, 0, 0);
    for (;;)
        lx(24, 0, 0, 0, 0, 0, 0);      /* until the server ends this thread */
}

static void linux_regs(void *arg)
{
    (void)arg;
    long r = lx(158, 0x1002, (long)&tls_word, 0, 0, 0, 0);   /* arch_prctl(SET_FS) */
    lx(LX_REPORT, r == 0 && fs_word() == 0x5151, 0, 0, 0, 0, 0);
    lx(24, 0, 0, 0, 0, 0, 0);                                 /* yield to the preemption */
    lx(LX_REPORT, fs_word() == 0x5151, 0, 0, 0, 0, 0);
    lx_exit(0);
}

static void regs(void)
{
    long tid, task = linux_task(self_tid(), linux_regs, 0, 0, &tid);
    struct ipc_msg m;
    long s = next_call(&m);
    CHECK(s == tid && is_syscall(&m, 158), "arch_prctl forwarded");
    struct user_regs r;
    CHECK(sys_thread_ctl((int)tid, THREAD_CTL_GET_REGS, &r) == 0, "get");
    CHECK(r.rax == 158 && r.rdi == 0x1002 && r.rcx == r.rip && r.r11 == r.rflags, "frame view");
    r.fs_base = m.w[3];
    r.rax = 0;
    CHECK(sys_thread_ctl((int)tid, THREAD_CTL_SET_REGS, &r) == 0, "set fs");
    answer(s, 999);                       /* ignored: the registers were set */
    expect_report(tid, "FS base in place");
    s = next_call(&m);
    CHECK(s == tid && is_syscall(&m, 24), "yield");
    sys_yield();                          /* let other threads run before the answer */
    answer(s, 0);
    expect_report(tid, "FS base survives switches");
    /* a second thread, started with registers: fork's child, clone's thread */
    struct user_regs n = {.rip = (uint64_t)linux_second, .rsp = (uint64_t)stacks[1] + STACK_SIZE - 8,
                          .rdi = 5, .rsi = 6, .fs_base = r.fs_base};
    long t2 = sys_task_thread_regs((int)task, &n, PRIO_INHERIT);
    CHECK(t2 > 0, "thread with registers");
    long first = 0;
    for (int i = 0; i < 3; i++) {                   /* tid's exit, t2's report and exit */
        s = next_call(&m);
        if (s == t2 && is_syscall(&m, LX_REPORT)) {
            CHECK(m.w[2] == 1, "the new thread's registers and FS base");
            answer(s, 0);
        } else if (s > 0 && is_syscall(&m, LX_EXIT)) {
            CHECK(sys_thread_ctl((int)s, THREAD_CTL_GET_REGS, &r) == 0, "get in exit");
            CHECK(sys_thread_ctl((int)s, THREAD_CTL_END, NULL) == 0, "end a thread");
            first = first ? first : s;
        } else {
            CHECK(0, "unexpected call");
        }
    }
    int status = -1;
    CHECK(sys_task_wait((int)task, &status) == task, "both ended: the task is gone");
    CHECK(sys_thread_ctl((int)first, THREAD_CTL_GET_REGS, &r) == E_SRCH, "ended thread");
}

/* intr: a thread that spins in user mode is interrupted and moved to a handler */
static volatile uint64_t spins;

static void interrupted(long code)
{
    lx(LX_REPORT, code == 88 && spins > 0, 0, 0, 0, 0, 0);
    lx_exit(0);
}

static void linux_spins(void *arg)
{
    (void)arg;
    lx(LX_REPORT, 1, 0, 0, 0, 0, 0);
    for (;;)
        spins++;
}

static void intr(void)
{
    long tid, task = linux_task(self_tid(), linux_spins, 0, 0, &tid);
    expect_report(tid, "started");
    sys_sleep(3);                         /* it spins, never entering the kernel itself */
    CHECK(sys_thread_ctl((int)tid, THREAD_CTL_INTERRUPT, NULL) == 0, "interrupt");
    struct ipc_msg m;
    long s = next_call(&m);
    CHECK(s == tid && m.w[0] == FWD_LABEL(FWD_OP_INTERRUPT), "an interrupted call");
    struct user_regs r;
    CHECK(sys_thread_ctl((int)tid, THREAD_CTL_GET_REGS, &r) == 0, "get");
    CHECK(r.rip > (uint64_t)linux_spins && r.rip < (uint64_t)linux_spins + 256, "in the loop");
    r.rip = (uint64_t)interrupted;
    r.rdi = 88;
    r.rsp = (r.rsp & ~15ull) - 8;
    CHECK(sys_thread_ctl((int)tid, THREAD_CTL_SET_REGS, &r) == 0, "set");
    answer(s, 0);
    expect_report(tid, "resumed in the handler");
    expect_exit(task, tid);
}

/* nosrv: a helper thread serves, takes the call and exits without answering */
static volatile long helper_tid;
static int helper_server(void *arg)
{
    (void)arg;
    helper_tid = self_tid();
    struct ipc_msg m;
    ipc_recv(IPC_ANY, &m, WAIT);
    return 0;                  /* exits without answering */
}

static void linux_waits(void *arg)
{
    (void)arg;
    lx(LX_REPORT, 1, 0, 0, 0, 0, 0);
    lx_exit(3);
}

static void nosrv(void)
{
    static struct thread helper;
    CHECK(thread_start(&helper, helper_server, NULL, PRIO_INHERIT, STACK_SIZE) > 0, "helper");
    while (!helper_tid)
        sys_yield();
    long tid, task = linux_task((int)helper_tid, linux_waits, 0, 0, &tid);
    CHECK(task > 0, "task served by the helper");
    int status = -1;
    CHECK(sys_task_wait((int)task, &status) == task && status == KILLED_STATUS,
          "killed when its server exits");
    thread_join(&helper, NULL);
}

static void errors(void)
{
    long t = sys_task_create("lxerr");
    CHECK(sys_task_linux((int)t, 1) == E_SRCH, "server must be our thread");
    CHECK(sys_task_linux(1, self_tid()) == E_PERM || sys_task_linux(1, self_tid()) == E_SRCH,
          "only a controlled task");
    CHECK(sys_thread_ctl(self_tid(), THREAD_CTL_GET_REGS, NULL) == E_PERM ||
          sys_thread_ctl(self_tid(), THREAD_CTL_GET_REGS, NULL) == E_SRCH, "not our own thread");
    struct user_regs r = {.rip = 1ull << 63, .rsp = 0x1000};
    CHECK(sys_task_thread_regs((int)t, &r, PRIO_INHERIT) == E_INVAL, "kernel rip");
    r.rip = 0x400000;
    r.fs_base = 0x0000800000000000ull;
    CHECK(sys_task_thread_regs((int)t, &r, PRIO_INHERIT) == E_INVAL, "non-canonical fs");
    CHECK(sys_task_thread_regs((int)t, (void *)8, PRIO_INHERIT) == E_FAULT, "bad pointer");
    CHECK(sys_task_thread_regs((int)t, &r, 256) == E_INVAL, "priority");
    r.fs_base = 0;
    CHECK(sys_vm_clone((int)t, 0) == 0, "clone");
    CHECK(sys_task_linux((int)t, self_tid()) == 0, "mark");
    r.rip = (uint64_t)linux_waits;
    r.rsp = (uint64_t)stacks[0] + STACK_SIZE - 8;
    long tid = sys_task_thread_regs((int)t, &r, PRIO_INHERIT);
    CHECK(tid > 0, "started");
    CHECK(sys_task_linux((int)t, self_tid()) == E_INVAL, "not once it runs");
    struct ipc_msg m;
    long s = next_call(&m);
    CHECK(s == tid && is_syscall(&m, LX_REPORT), "call");
    CHECK(sys_thread_ctl((int)tid, 99, &r) == E_INVAL, "unknown op");
    CHECK(sys_thread_ctl((int)tid, THREAD_CTL_GET_REGS, (void *)8) == E_FAULT, "bad buffer");
    r.rip = 1ull << 47;
    CHECK(sys_thread_ctl((int)tid, THREAD_CTL_SET_REGS, &r) == E_INVAL, "non-canonical rip");
    answer(s, 0);
    s = next_call(&m);
    CHECK(s == tid && is_syscall(&m, LX_EXIT), "exit");
    sys_task_kill((int)t);
    CHECK(sys_task_wait((int)t, NULL) == t, "reaped");
}

/* ---- diff SEED STEPS ------------------------------------------------------------------
 * The differential test of the forwarding fastpath (tests/test_unix_fwd.py boots it with
 * ipc_fastpath=on, =off and with probes, under icount, and requires the same "FD" lines;
 * docs/unix.md "Forwarding"). A server thread serves DIFF_TASKS Linux tasks, one thread
 * each, whose every call fills all registers with patterns (regs_call) and reports, in
 * its next call, the answer it got and how many registers changed. Each step the server
 * acts on one held call at random: answers it with reply_recv from anyone (the fastpath's
 * case both ways: the answer, then the thread's next call to the waiting server; with a
 * forever or a 5000-tick receive), answers it deferred (reply_recv(to, to, poll)), reads
 * or rewrites the thread's registers, interrupts, ends or kills it (a new task takes the
 * slot). At most one Linux thread runs at a time and the server takes its next call
 * before the next step, so every result depends only on the seed. At the end the server
 * exits with every call held: the tasks are killed (fwd_server_gone). */
#define DIFF_TASKS 3
#define DIFF_NR 2000                   /* call i of a thread has number DIFF_NR + i */
#define DIFF_REGS 13                   /* rbx rdx rdi rsi rbp r8 r9 r10 r12-r15 */

static const uint64_t diff_pattern[DIFF_REGS] = {
    0x1111111111111111, 0x2222222222222222, 0, 0, 0x5555555555555555, 0x8888888888888888,
    0x9999999999999999, 0xaaaaaaaaaaaaaaaa, 0xcccccccccccccccc, 0xdddddddddddddddd,
    0xeeeeeeeeeeeeeeee, 0xffffffffffffffff, 0};
static __attribute__((used)) uint64_t diff_regs[DIFF_REGS + 1];
static __attribute__((used)) uint64_t diff_saved_rbp;

/* Call nr with rdi = a, rsi = b and every other register but rsp, rcx, r11 set to a
 * pattern; *rax gets the result; returns how many registers differ afterwards. */
static long regs_call(long nr, long a, long b, long *rax)
{
    __asm__ volatile(
        "movq %%rbp, diff_saved_rbp(%%rip)\n"
        "movabs $0x1111111111111111, %%rbx\n"
        "movabs $0x2222222222222222, %%rdx\n"
        "movabs $0x5555555555555555, %%rbp\n"
        "movabs $0x8888888888888888, %%r8\n"
        "movabs $0x9999999999999999, %%r9\n"
        "movabs $0xaaaaaaaaaaaaaaaa, %%r10\n"
        "movabs $0xcccccccccccccccc, %%r12\n"
        "movabs $0xdddddddddddddddd, %%r13\n"
        "movabs $0xeeeeeeeeeeeeeeee, %%r14\n"
        "movabs $0xffffffffffffffff, %%r15\n"
        "syscall\n"
        "movq %%rbx, diff_regs+0(%%rip)\n"
        "movq %%rdx, diff_regs+8(%%rip)\n"
        "movq %%rdi, diff_regs+16(%%rip)\n"
        "movq %%rsi, diff_regs+24(%%rip)\n"
        "movq %%rbp, diff_regs+32(%%rip)\n"
        "movq %%r8, diff_regs+40(%%rip)\n"
        "movq %%r9, diff_regs+48(%%rip)\n"
        "movq %%r10, diff_regs+56(%%rip)\n"
        "movq %%r12, diff_regs+64(%%rip)\n"
        "movq %%r13, diff_regs+72(%%rip)\n"
        "movq %%r14, diff_regs+80(%%rip)\n"
        "movq %%r15, diff_regs+88(%%rip)\n"
        "movq %%rax, diff_regs+96(%%rip)\n"
        "movq diff_saved_rbp(%%rip), %%rbp\n"
        : "+a"(nr), "+D"(a), "+S"(b)
        :
        : "rbx", "rcx", "rdx", "r8", "r9", "r10", "r11", "r12", "r13", "r14", "r15", "memory");
    long changed = 0;
    for (int i = 0; i < DIFF_REGS - 1; i++)
        changed += diff_regs[i] != (i == 2 ? (uint64_t)a : i == 3 ? (uint64_t)b : diff_pattern[i]);
    *rax = (long)diff_regs[DIFF_REGS - 1];
    return changed;
}

/* A Linux thread of the differential test: calls forever, each reporting the last. */
static void linux_diff(void *arg)
{
    (void)arg;
    long answer = 0, changed = 0;
    for (long i = 0;; i++)
        changed = regs_call(DIFF_NR + i, answer, changed, &answer);
}

struct diff_slot {
    long task, tid;
    int gen;
    long expect;               /* the answer its next report must carry */
    long expect_changed;       /* registers the server changed (SET_REGS) */
    bool intr;                 /* its held call is an "interrupted" call */
    bool regs_set;             /* its registers were set: the answer is ignored */
};

static struct diff_slot slots[DIFF_TASKS];
static uint64_t diff_rng;
static int diff_server_tid;

static unsigned diff_rnd(unsigned n)
{
    diff_rng ^= diff_rng << 13;
    diff_rng ^= diff_rng >> 7;
    diff_rng ^= diff_rng << 17;
    return (unsigned)(diff_rng % n);
}

static uint64_t words_hash(const struct ipc_msg *m)
{
    uint64_t h = 1469598103934665603ull;
    for (int i = 0; i < 8; i++)
        h = (h ^ m->w[i]) * 1099511628211ull;
    return h;
}

/* The held call that just arrived in m from slot k (sender r): print and check it. */
static void diff_took(int step, int k, long r, const struct ipc_msg *m)
{
    struct diff_slot *d = &slots[k];
    CHECK(r == d->tid, "diff: the call comes from the thread answered");
    d->regs_set = false;
    d->intr = m->w[0] == FWD_LABEL(FWD_OP_INTERRUPT);
    if (d->intr) {
        printf("FD %d x%d.%d took interrupt\n", step, k, d->gen);
        return;
    }
    printf("FD %d x%d.%d took nr=%llu answer=%lld changed=%llu h=%016llx\n", step, k, d->gen,
           (unsigned long long)(m->w[1] - DIFF_NR), (long long)m->w[2],
           (unsigned long long)m->w[3], (unsigned long long)words_hash(m));
    CHECK(m->w[0] == FWD_LABEL(FWD_OP_SYSCALL) && m->w[1] >= DIFF_NR, "diff: label, number");
    CHECK(m->w[4] == diff_pattern[1] && m->w[5] == diff_pattern[7] && m->w[6] == diff_pattern[5] &&
          m->w[7] == diff_pattern[6], "diff: rdx, r10, r8, r9 in words 4-7");
    if (m->w[1] > DIFF_NR) {           /* the first call reports nothing */
        CHECK((long)m->w[2] == d->expect, "diff: the answer arrived in rax");
        CHECK((long)m->w[3] == d->expect_changed, "diff: registers kept");
    }
    d->expect_changed = 0;
}

/* A new Linux task in slot k, and its first call. */
static void diff_spawn(int step, int k)
{
    struct diff_slot *d = &slots[k];
    d->task = linux_task(diff_server_tid, linux_diff, 0, k, &d->tid);
    CHECK(d->task > 0, "diff: Linux task");
    struct ipc_msg m = {{0}};
    long r = ipc_recv(IPC_ANY, &m, WAIT);
    diff_took(step, k, r, &m);
}

/* Slot k's task ended (or must): reap it, print its status, start the next. */
static void diff_reap(int step, int k)
{
    struct diff_slot *d = &slots[k];
    int status = -1;
    CHECK(sys_task_wait((int)d->task, &status) == d->task, "diff: reaped");
    printf("FD %d x%d.%d ended status=%d\n", step, k, d->gen, status);
    d->gen++;
    diff_spawn(step, k);
}

/* Answer slot k with value v, and take its next call (or its end). */
static void diff_answer(int step, int k, long v, bool deferred)
{
    struct diff_slot *d = &slots[k];
    bool dies = d->intr && !d->regs_set && v < 0;   /* an interrupt not handled: ended */
    if (!d->intr && !d->regs_set)
        d->expect = v;
    struct ipc_msg m = {{(uint64_t)v}};
    long r;
    if (deferred || dies) {
        r = ipc_reply_recv((int)d->tid, (int)d->tid, &m, IPC_POLL);
        printf("FD %d x%d.%d answer deferred v=%ld r=%ld\n", step, k, d->gen, v, r);
        if (dies) {
            diff_reap(step, k);
            return;
        }
        r = ipc_recv(IPC_ANY, &m, WAIT);
    } else {
        uint32_t timeout = diff_rnd(2) ? IPC_FOREVER : 5000;
        r = ipc_reply_recv((int)d->tid, IPC_ANY, &m, timeout);
        printf("FD %d x%d.%d answer v=%ld t=%u\n", step, k, d->gen, v, timeout);
    }
    diff_took(step, k, r, &m);
}

static void diff_regs_op(int step, int k, bool set)
{
    struct diff_slot *d = &slots[k];
    struct user_regs r;
    long e = sys_thread_ctl((int)d->tid, THREAD_CTL_GET_REGS, &r);
    uint64_t h = 1469598103934665603ull;
    for (size_t i = 0; i < sizeof(r); i++)
        h = (h ^ ((const uint8_t *)&r)[i]) * 1099511628211ull;
    printf("FD %d x%d.%d get r=%ld h=%016llx\n", step, k, d->gen, e, (unsigned long long)h);
    CHECK(e == 0 && r.rbx == diff_pattern[0] && r.r15 == diff_pattern[11], "diff: registers read");
    if (!set)
        return;
    r.r13 ^= (uint64_t)step;           /* one register the thread will see changed */
    r.rax = 7000 + step;               /* and its result; the answer is then ignored */
    e = sys_thread_ctl((int)d->tid, THREAD_CTL_SET_REGS, &r);
    printf("FD %d x%d.%d set r=%ld\n", step, k, d->gen, e);
    d->expect = 7000 + step;
    d->expect_changed = 1;
    d->regs_set = true;
}

static void diff_step(int step)
{
    int k = (int)diff_rnd(DIFF_TASKS);
    struct diff_slot *d = &slots[k];
    unsigned op = diff_rnd(20);
    long v = (long)diff_rnd(1000) - (d->intr ? 300 : 0);
    if (op < 11) {
        diff_answer(step, k, v, false);
    } else if (op < 14) {
        diff_answer(step, k, v, true);
    } else if (op < 15) {
        diff_regs_op(step, k, false);
    } else if (op < 16) {
        diff_regs_op(step, k, true);
    } else if (op < 18) {
        long r = sys_thread_ctl((int)d->tid, THREAD_CTL_INTERRUPT, NULL);
        printf("FD %d x%d.%d interrupt r=%ld\n", step, k, d->gen, r);
    } else if (op < 19) {
        long r = sys_thread_ctl((int)d->tid, THREAD_CTL_END, NULL);
        printf("FD %d x%d.%d end r=%ld\n", step, k, d->gen, r);
        diff_reap(step, k);
    } else {
        long r = sys_task_kill((int)d->task);
        printf("FD %d x%d.%d kill r=%ld\n", step, k, d->gen, r);
        diff_reap(step, k);
    }
}

static int diff_steps;

static int diff_server(void *arg)
{
    (void)arg;
    diff_server_tid = self_tid();
    for (int k = 0; k < DIFF_TASKS; k++)
        diff_spawn(0, k);
    for (int step = 1; step <= diff_steps; step++)
        diff_step(step);
    return 0;                          /* with every call held: the tasks are killed */
}

static void diff(uint64_t seed, int steps)
{
    diff_rng = seed * 0x9e3779b97f4a7c15ull + 1;
    diff_steps = steps;
    static struct thread server;
    CHECK(thread_start(&server, diff_server, NULL, PRIO_INHERIT, STACK_SIZE) > 0, "server");
    thread_join(&server, NULL);
    for (int k = 0; k < DIFF_TASKS; k++) {
        int status = -1;
        CHECK(sys_task_wait((int)slots[k].task, &status) == slots[k].task, "diff: reaped at end");
        printf("FD end x%d.%d status=%d\n", k, slots[k].gen, status);
    }
}

int main(int argc, char **argv)
{
    static const struct {
        const char *name;
        void (*fn)(void);
    } modes[] = {{"basic", basic}, {"defer", defer}, {"fault", fault},
                 {"regs", regs},   {"intr", intr},   {"nosrv", nosrv},
                 {"errors", errors}};
    if (argc > 3 && strcmp(argv[1], "diff") == 0) {
        diff((uint64_t)atol(argv[2]), atoi(argv[3]));
        printf(failures ? "fwdtest failed: %d\n" : "fwdtest ok\n", failures);
        return failures != 0;
    }
    for (size_t i = 0; argc > 1 && i < sizeof(modes) / sizeof(modes[0]); i++) {
        if (strcmp(argv[1], modes[i].name) == 0) {
            modes[i].fn();
            printf(failures ? "fwdtest failed: %d\n" : "fwdtest ok\n", failures);
            return failures != 0;
        }
    }
    printf("usage: fwdtest basic|defer|fault|regs|intr|nosrv|errors | diff SEED STEPS\n");
    return 2;
}
