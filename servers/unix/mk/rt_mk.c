/*
 * The UNIX server's MK runtime (docs/unix.md, "The MK runtime"): the server as the user
 * task unixsrv. The kernel forwards every system call and unresolved fault of a Linux
 * task to the main thread as an IPC call (kernel/ipc/fwd.c); the main loop hands each one
 * to the server's entries (runtime.h) and answers with reply_recv(to, to, IPC_POLL), now
 * or later (a held call is just a thread that has not been answered yet). The rt_* calls
 * are ondol system calls on the tasks the server created. A second thread reads the
 * console and passes the bytes to the main thread as an IPC call, so the server's state is
 * only ever touched by the main thread: one call at a time, as unix.h requires. The calls
 * without server state (syscalls.def LX_UNLOCKED: munmap, mprotect, madvise) go instead
 * to a helper thread per CPU, which the kernel routes them to (SYS_FWD_HELPER): they run
 * on the caller's CPU beside the main thread, as the IK form runs them on the caller's
 * own stack without the server lock (docs/unix.md, "Calls without the server lock").
 */
#include <ondol/ipc.h>
#include <ondol/sys.h>
#include <ondol/thread.h>
#include <ondol/timing.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../devices.h"
#include "net_server.h"                 /* NET_IFACE, NET_WAITEVENTS */
#include "../runtime.h"
#include "../signal.h"

/* Label of the console thread's calls: an op of UNIX_IFACE no forwarded call uses. */
#define CONSOLE_LABEL FWD_LABEL(0x100)
/* ...and of the network event thread's (w1: the stack's activity count). */
#define NET_EVENT_LABEL FWD_LABEL(0x101)
#define CONSOLE_CHUNK 48                /* bytes per call: message words 2..7 */

static int server_tid;                  /* the main thread: forwarded calls come here */

/* ---- time and memory ------------------------------------------------------------------ */
/* Nanoseconds per TSC tick in 32.32 fixed point, from SYS_TIME at start (0: no calibrated
 * TSC): every call reads the clock once (ucall.started_ns), so with a TSC it is a user-mode
 * rdtsc and a multiply, no system call. */
static uint64_t ns_per_tsc_q32;
static uint64_t ticks_hz;               /* the kernel's timer ticks per second */

static void clock_init(void)
{
    struct time_info t = {0};
    sys_time(&t);
    ns_per_tsc_q32 = t.tsc_hz ? (1000000000ull << 32) / t.tsc_hz : 0;
    ticks_hz = t.hz;
}

uint64_t unix_now_ns(void)
{
    if (ns_per_tsc_q32)
        return (uint64_t)(((unsigned __int128)rdtsc() * ns_per_tsc_q32) >> 32);
    struct time_info t = {0};
    sys_time(&t);
    return t.ticks * (1000000000ull / t.hz);
}

void *unix_alloc(size_t n) { return calloc(1, n ? n : 1); }
void unix_free(void *p) { free(p); }

void unix_log(const char *msg)
{
    sys_console_write(msg, strlen(msg));
    sys_console_write("\n", 1);
}

void console_write(const char *buf, size_t n) { sys_console_write(buf, n); }

/* ---- answers -------------------------------------------------------------------------- */
/* Answer thread `to` with rax = value, taking no other call. There is no reply-only
 * operation, so the receive half names this thread itself, which never sends to itself:
 * it fails at once (E_DEADLK) after the reply. It used to poll `to`, on the grounds that
 * `to` could not have sent yet; with several CPUs it can: answered, it ran on another CPU
 * and made its next call before the poll, which took that call and dropped it (an
 * `exit_group` lost so, and the parent's `wait4` never answered: docs/smp.md Next item
 * 13). A thread that died meanwhile: E_SRCH, nothing to do. */
static void answer_thread(int to, long value)
{
    struct ipc_msg m = {{(uint64_t)value}};
    ipc_reply_recv(to, server_tid, &m, IPC_POLL);
}

/* The latest answer, held back so that the main loop sends it with its next receive, in
 * one reply_recv (the IPC fastpath's forwarded answer, docs/ipc.md): the common case of a
 * call answered at once costs one system call in the server, not two. An earlier held
 * answer goes first, so threads are answered in the order the server answered them. */
static struct {
    int tid;                            /* 0: none held */
    long value;
} held;

static void flush_held(void)
{
    if (held.tid)
        answer_thread(held.tid, held.value);
    held.tid = 0;
}

static void hold_answer(int tid, long value)
{
    flush_held();
    held.tid = tid;
    held.value = value;
}

/* The call's result goes back (entry.c decides what and whether). */
void unix_answer(struct ucall *c, long result)
{
    if (unix_answer_value(c, &result))
        hold_answer(c->thread->tid, result);
}

/* ---- the rt_* calls over ondol system calls ------------------------------------------- */
long rt_task_create(const char *name) { return sys_task_create(name); }
long rt_task_linux(int task) { return sys_task_linux(task, server_tid); }
long rt_task_kill(int task) { return sys_task_kill(task); }
long rt_task_reap(int task) { return sys_task_wait(task, NULL); }
long rt_vm_clone(int task, int from) { return sys_vm_clone(task, from); }

long rt_vm_map(int task, uint64_t addr, uint64_t len, unsigned prot, unsigned flags)
{
    return sys_vm_ctl(task, VM_CTL_MAP, (void *)addr, len, prot, flags);
}

/* An op on a task, or on the task of a caller whose call we hold (rt_caller_task). */
static long vm_ctl_on(int task, unsigned op, uint64_t addr, uint64_t len, unsigned prot)
{
    if (task < 0)
        return sys_vm_ctl(-task, op, (void *)addr, len, prot, VM_CTL_CALLER);
    return sys_vm_ctl(task, op, (void *)addr, len, prot, 0);
}

long rt_vm_unmap(int task, uint64_t addr, uint64_t len)
{
    return vm_ctl_on(task, VM_CTL_UNMAP, addr, len, 0);
}

long rt_vm_protect(int task, uint64_t addr, uint64_t len, unsigned prot)
{
    return vm_ctl_on(task, VM_CTL_PROTECT, addr, len, prot);
}

long rt_vm_discard(int task, uint64_t addr, uint64_t len)
{
    return vm_ctl_on(task, VM_CTL_DISCARD, addr, len, 0);
}

/* The page cache: an object's window in our own address space is its handle. A window
 * spans VM_FILE_WINDOW bytes whatever the object's size, so growing never moves it and
 * any offset of a file names a page of it (VM_CTL_MAP_FILE). */
long rt_file_new(uint64_t cap, uint64_t *handle, unsigned char **data)
{
    long at = sys_vm_mmap(NULL, cap, PROT_READ | PROT_WRITE, VM_MMAP_FILE, 0);
    if (at < 0)
        return at;
    *handle = (uint64_t)at;
    *data = (unsigned char *)at;
    return 0;
}

long rt_file_grow(uint64_t *handle, uint64_t cap, unsigned char **data)
{
    long at = sys_vm_ctl(0, VM_CTL_FILE_GROW, (void *)*handle, cap, 0, 0);
    if (at < 0)
        return at;
    *handle = (uint64_t)at;
    *data = (unsigned char *)at;
    return 0;
}

long rt_file_eof(uint64_t handle, uint64_t size)
{
    return sys_vm_ctl(0, VM_CTL_FILE_EOF, (void *)handle, size, 0, 0);
}

void rt_file_free(uint64_t handle) { sys_vm_unmap((void *)handle, VM_FILE_WINDOW); }

long rt_file_map(int task, uint64_t addr, uint64_t len, unsigned prot, unsigned flags,
                 uint64_t handle, uint64_t off)
{
    return sys_vm_ctl(task, VM_CTL_MAP_FILE, (void *)addr, len, prot, (handle + off) | flags);
}

/* SYS_TASK_COPY moves at most TASK_COPY_MAX bytes a call. */
static long task_copy(int task, unsigned dir, uint64_t uaddr, void *local, size_t n)
{
    for (size_t done = 0; done < n;) {
        size_t chunk = n - done < TASK_COPY_MAX ? n - done : TASK_COPY_MAX;
        long r = sys_task_copy(task, dir, (void *)(uaddr + done), (char *)local + done, chunk);
        if (r <= 0)
            return r < 0 ? r : E_FAULT;
        done += (size_t)r;
    }
    return 0;
}

long rt_copy_to(int task, uint64_t uaddr, const void *src, size_t n)
{
    return task_copy(task, TASK_COPY_TO, uaddr, (void *)src, n);
}

long rt_copy_from(int task, void *dst, uint64_t uaddr, size_t n)
{
    return task_copy(task, TASK_COPY_FROM, uaddr, dst, n);
}

long rt_regs_get(int tid, struct user_regs *r) { return sys_thread_ctl(tid, THREAD_CTL_GET_REGS, r); }

long rt_regs_set(int tid, const struct user_regs *r)
{
    return sys_thread_ctl(tid, THREAD_CTL_SET_REGS, (struct user_regs *)r);
}

long rt_thread_start(int task, const struct user_regs *r)
{
    return sys_task_thread_regs(task, r, PRIO_INHERIT);
}

long rt_thread_end(int tid) { return sys_thread_ctl(tid, THREAD_CTL_END, NULL); }
long rt_thread_interrupt(int tid) { return sys_thread_ctl(tid, THREAD_CTL_INTERRUPT, NULL); }
long rt_thread_affinity(int tid, uint64_t mask, uint64_t *old)
{
    return sys_thread_affinity(tid, mask, old);
}
void rt_poweroff(void) { sys_poweroff(); }

/* SYS_FRAMES, not SYS_MEMINFO: the budget asks on every buffer it grows, and MEMINFO
 * takes the BKL and syncs the reverse map's logs (the IK form reads the counters). */
void rt_memory(uint64_t *total, uint64_t *free)
{
    uint64_t f[2] = {0, 0};
    sys_frames(f);
    *total = f[0] * 4096;
    *free = f[1] * 4096;
}
void rt_result_write(const char *buf, size_t n) { sys_result_write(buf, n); }
void rt_kernel_counters(struct meminfo *m) { sys_meminfo(m); }
long rt_measure(unsigned op, unsigned arg) { return sys_measure(op, arg); }

void rt_vm_check(uint64_t out[3])
{
    struct vm_check c = {0, 0, 0};
    sys_vm_check(&c);
    out[0] = c.mappings;
    out[1] = c.entries;
    out[2] = c.errors;
}

/* The kernel's switch counters (runtime.h): SYS_TIME carries them. */
void unix_switch_counts(uint64_t *thread_switches, uint64_t *as_switches)
{
    struct time_info t = {0};
    sys_time(&t);
    *thread_switches = t.thread_switches;
    *as_switches = t.as_switches;
}

void rt_cpu_times(struct rt_cpu_times *out)
{
    static struct time_info t;
    sys_time(&t);
    out->ncpu = t.cpus < TIME_CPUS ? t.cpus : TIME_CPUS;
    out->hz = t.hz;
    for (unsigned i = 0; i < out->ncpu; i++)
        for (unsigned k = 0; k < TIME_TICK_KINDS; k++)
            out->ticks[i][k] = t.cpu_ticks[i][k];
    out->interrupts = t.interrupts;
    out->switches = t.thread_switches;
}

uint64_t unix_idle_ns(void)
{
    struct time_info t = {0};
    sys_time(&t);
    return t.tsc_hz ? t.idle_tsc / t.tsc_hz * 1000000000ull +
                      t.idle_tsc % t.tsc_hz * 1000000000ull / t.tsc_hz : 0;
}

const void *rt_rootfs(size_t *len)
{
    long addr = sys_rootfs_map(len);
    return addr < 0 ? NULL : (const void *)addr;
}

long rt_option(const char *key, char *buf, size_t cap) { return sys_kopt(key, buf, cap); }

/* ---- calls to other servers (runtime.h) ----------------------------------------------
 * The main thread's UTCB carries the buffers; the destination of each interface is looked
 * up at its first use (a server placed at boot does not move). Only the network server
 * is called today, with ops that never wait. */
#define SRV_CACHE 4
static struct ipc_utcb srv_utcb;
static struct {
    unsigned iface;
    long dest;                          /* the lookup's result: a thread, or E_* */
} srv_dests[SRV_CACHE];

/* ---- the guard (docs/net.md, "Mixed forms") ------------------------------------------
 * The reply wait of an IPC call has no timeout, so a server that takes our call and never
 * answers would hold the main thread, and with it every process and the console, for
 * ever. The guard thread looks at the main thread's call every quarter of net_timeout;
 * when the same call has waited that long, it ends the called server's task, whose death
 * then fails the call (E_DEAD) and every later one. The main thread pays two stores a
 * call. (The event thread's waitevents waits by design and is not watched.) */
static volatile uint32_t guard_seq;     /* odd while the main thread waits in a call */
static volatile long guard_dest;        /* the thread it called */

/* End the server the call `seq` waits for, unless that call ended meanwhile (the scan
 * for the server's task takes a while). */
static void guard_end_server(uint32_t seq, uint64_t seconds)
{
    long task = thread_task_of((int)guard_dest);
    if (task <= 0 || guard_seq != seq)
        return;
    char msg[96];
    snprintf(msg, sizeof msg, "unix: the network server did not answer for %lu s: ending it",
             (unsigned long)seconds);
    unix_log(msg);
    sys_task_kill((int)task);
}

static int guard_main(void *arg)
{
    uint64_t seconds = (uint64_t)(uintptr_t)arg, limit = seconds * ticks_hz;
    uint64_t step = limit / 4 ? limit / 4 : 1;
    struct net_guard_watch watch = {0};
    for (;;) {
        sys_sleep(step);
        uint32_t now = guard_seq;
        if (net_guard_expired(&watch, now, step, limit))
            guard_end_server(now, seconds);
    }
    return 0;
}

/* Once, at the first call to another server: the guard (net_timeout=0: none). */
static void guard_start(void)
{
    static struct thread guard;
    uint64_t seconds = unix_net_timeout_s();
    if (seconds)
        thread_start(&guard, guard_main, (void *)(uintptr_t)seconds, PRIO_INHERIT, 16 * 1024);
}

static long srv_dest(unsigned iface)
{
    int i = 0;
    for (; i < SRV_CACHE && srv_dests[i].iface; i++)
        if (srv_dests[i].iface == iface)
            return srv_dests[i].dest;
    long dest = sys_srv_lookup(iface);
    if (i == 0 && dest > 0) {
        ipc_set_utcb(&srv_utcb);
        guard_start();
    }
    if (i < SRV_CACHE && dest > 0) {
        srv_dests[i].iface = iface;
        srv_dests[i].dest = dest;
    }
    return dest;
}

static unsigned words_iface;         /* rt_srv_words: calls without buffers to words_tid */
static long words_tid;

void rt_srv_words(unsigned iface, long tid)
{
    words_iface = iface;
    words_tid = tid;
}

int rt_task_self(void)
{
    struct self_info me;
    sys_self(&me);
    return me.task;
}

long rt_srv_call(unsigned iface, uint64_t w[IPC_MRS], const void *in, size_t in_len,
                 void *out, size_t out_cap, size_t *out_len)
{
    long dest = words_tid > 0 && iface == words_iface && !in_len && !out_cap ? words_tid
                                                                             : srv_dest(iface);
    if (dest < 0)
        return dest;
    struct ipc_msg m;
    memcpy(m.w, w, sizeof m.w);
    srv_utcb = (struct ipc_utcb){.send_buf = in, .send_len = in_len, .recv_buf = out,
                                 .recv_cap = out_cap};
    uint64_t flags = (in_len ? IPC_SEND_BUF : 0) | (out_cap ? IPC_RECV_BUF : 0);
    guard_dest = dest;
    guard_seq++;
    long r = ipc_call_flags((int)dest, &m, IPC_FOREVER, flags);
    guard_seq++;
    if (out_len)
        *out_len = r < 0 ? 0 : srv_utcb.recv_len;
    srv_utcb = (struct ipc_utcb){0};
    if (r < 0)
        return r;
    memcpy(w, m.w, sizeof m.w);
    return (long)m.w[0];
}

/* ---- the console thread --------------------------------------------------------------- */
/* Reads the console and calls the main thread with the bytes (w1 = count, w2.. = bytes);
 * the main thread answers at once, so input keeps its order. */
static int console_reader(void *arg)
{
    (void)arg;
    for (;;) {
        struct ipc_msg m = {{CONSOLE_LABEL}};
        long n = sys_console_read((char *)&m.w[2], CONSOLE_CHUNK);
        if (n <= 0)
            continue;
        m.w[1] = (uint64_t)n;
        ipc_call(server_tid, &m, IPC_FOREVER);
    }
    return 0;
}

/* ---- the network event thread (runtime.h, rt_net_watch) -------------------------------
 * Waits in the network server's op waitevents (a deferred answer there) and calls the
 * main thread with each new count, which unix_net_event takes as an entry: so only the
 * main thread touches the server's state. When the network server fails it passes
 * UNIX_NET_GONE (the parked socket calls run again and fail) and ends. */
static int net_watcher(void *arg)
{
    (void)arg;
    long net = sys_srv_lookup(NET_IFACE);
    uint64_t since = 0;
    while (since != UNIX_NET_GONE) {
        struct ipc_msg m = {{SRV_LABEL(NET_IFACE, NET_WAITEVENTS, 0), since}};
        bool ok = net > 0 && ipc_call((int)net, &m, IPC_FOREVER) >= 0 && m.w[0] == 0;
        since = ok ? m.w[1] : UNIX_NET_GONE;
        m = (struct ipc_msg){{NET_EVENT_LABEL, since}};
        ipc_call(server_tid, &m, IPC_FOREVER);
    }
    return 0;
}

long rt_net_watch(void)
{
    static struct thread watcher;
    int tid = thread_start(&watcher, net_watcher, NULL, PRIO_INHERIT, 16 * 1024);
    return tid < 0 ? tid : 0;
}

/* ---- the helpers (docs/unix.md, "Calls without the server lock") ---------------------
 * One thread per CPU that runs threads, kept on it, named to the kernel for the
 * LX_UNLOCKED calls (unix_unlocked_calls) made on that CPU. It touches no server state:
 * it runs the call (unix_syscall_unlocked, on the caller's task by naming the caller) and
 * answers it with its next receive, in one reply_recv. Anything else sent to it (no other
 * thread has reason to) is answered E_NOSYS. */
#define HELPERS_MAX 64                  /* MAX_CPUS */

static long helper_run(long sender, const struct ipc_msg *m)
{
    long nr = (long)m->w[1];
    if (m->w[0] != FWD_LABEL(FWD_OP_SYSCALL) || !unix_call_unlocked(nr))
        return E_NOSYS;
    struct ucall c = {.proc = NULL, .thread = NULL, .task = 0, .nr = nr,
                      .a = {m->w[2], m->w[3], m->w[4], m->w[5], m->w[6], m->w[7]},
                      .started_ns = 0, .done = 0};
    return unix_syscall_unlocked(rt_caller_task((int)sender), &c);
}

static int helper_main(void *arg)
{
    (void)arg;
    int to = 0;
    struct ipc_msg m = {{0}};
    for (;;) {
        long sender = to ? ipc_reply_recv(to, IPC_ANY, &m, IPC_FOREVER)
                         : ipc_recv(IPC_ANY, &m, IPC_FOREVER);
        to = 0;
        if (sender > 0) {
            long value = helper_run(sender, &m);
            m = (struct ipc_msg){{(uint64_t)value}};
            to = (int)sender;
        }
    }
    return 0;
}

/* Before the first Linux task is marked: tasks marked earlier would not be routed. A CPU
 * whose helper cannot start keeps sending those calls to the main thread. */
static void helpers_start(void)
{
    static struct thread helpers[HELPERS_MAX];
    if (!unix_unlocked_calls)
        return;
    struct time_info t = {0};
    sys_time(&t);
    for (unsigned cpu = 0; cpu < t.cpus && cpu < HELPERS_MAX; cpu++) {
        int tid = thread_start(&helpers[cpu], helper_main, NULL, PRIO_INHERIT, 16 * 1024);
        if (tid > 0 && sys_thread_affinity(tid, 1ull << cpu, NULL) == 0)
            sys_fwd_helper(cpu, tid, unix_unlocked_calls);
    }
}

/* ---- the main loop -------------------------------------------------------------------- */
/* The receive timeout, in ticks, until deadline (the earliest of a waiting call). */
static uint32_t timeout_ticks(uint64_t deadline)
{
    if (deadline == UNIX_NO_DEADLINE)
        return IPC_FOREVER;
    uint64_t now = unix_now_ns();
    if (deadline <= now)
        return IPC_POLL;
    uint64_t ns_per_tick = 1000000000ull / ticks_hz;
    uint64_t ticks = (deadline - now + ns_per_tick - 1) / ns_per_tick;
    return ticks >= IPC_FOREVER ? IPC_FOREVER - 1 : (uint32_t)ticks;
}

/* Test only (option unix_crash=N, docs/unix.md "Reliability"): the server dies as a
 * server with a bug would, by a fault of its own, on receiving system call N, so that
 * tests can check what the kernel does then. 0: never. */
static long crash_call;

static void crash_if_asked(long nr)
{
    volatile uintptr_t unmapped = 8;
    if (crash_call && nr == crash_call)
        *(volatile int *)unmapped = 0;
}

static void handle(long sender, const struct ipc_msg *m)
{
    switch (m->w[0]) {
    case FWD_LABEL(FWD_OP_SYSCALL): {
        crash_if_asked((long)m->w[1]);
        /* every field named: no zeroing loop before the stores */
        struct ucall c = {.proc = NULL, .thread = NULL, .task = 0, .nr = (long)m->w[1],
                          .a = {m->w[2], m->w[3], m->w[4], m->w[5], m->w[6], m->w[7]},
                          .started_ns = 0, .done = 0};
        long value = unix_syscall((int)sender, &c);
        if (value != UNIX_NO_ANSWER)
            hold_answer((int)sender, value);
        break;
    }
    case FWD_LABEL(FWD_OP_FAULT):
        unix_fault((int)sender, (unsigned)m->w[1], m->w[2], m->w[3], m->w[4]);
        break;
    case FWD_LABEL(FWD_OP_INTERRUPT):
        unix_interrupted((int)sender);
        break;
    case NET_EVENT_LABEL:
        unix_net_event(m->w[1]);
        answer_thread((int)sender, 0);
        break;
    case CONSOLE_LABEL:
        unix_console_input((const char *)&m->w[2],
                           m->w[1] < CONSOLE_CHUNK ? (size_t)m->w[1] : CONSOLE_CHUNK);
        answer_thread((int)sender, 0);
        break;
    default:                        /* a native client calling an op: there are none */
        answer_thread((int)sender, E_NOSYS);
    }
}

int main(void)
{
    server_tid = (int)sys_self(NULL);
    clock_init();
    char opt[8];
    unix_report_unknown = rt_option("unix_unknown", opt, sizeof(opt)) > 0 && opt[0] == 'o' &&
                          opt[1] == 'n';
    crash_call = rt_option("unix_crash", opt, sizeof(opt)) > 0 ? strtol(opt, NULL, 10) : 0;
    unix_unlocked_init();
    helpers_start();
    unix_start();
    static struct thread reader;
    thread_start(&reader, console_reader, NULL, PRIO_INHERIT, 16 * 1024);
    for (;;) {
        struct ipc_msg m = {{(uint64_t)held.value}};
        int to = held.tid;
        held.tid = 0;
        /* The held answer and the next call: a reply to a thread that died meanwhile
         * fails (E_SRCH) without receiving, and the loop simply comes round again. */
        uint64_t deadline = unix_next_deadline();
        long sender = to ? ipc_reply_recv(to, IPC_ANY, &m, timeout_ticks(deadline))
                         : ipc_recv(IPC_ANY, &m, timeout_ticks(deadline));
        if (sender > 0)
            handle(sender, &m);
        /* The end of the step, when it left work or a deadline may have passed: a call
         * answered at once with no timer anywhere (the common case) skips it. */
        if (unix_step_pending || deadline != UNIX_NO_DEADLINE) {
            if (unix_next_deadline() != UNIX_NO_DEADLINE)
                unix_timers_expire(unix_now_ns());
            unix_run_woken();
            uthread_collect();
            unix_step_pending = false;
        }
    }
}
