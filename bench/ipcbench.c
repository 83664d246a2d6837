/*
 * ipcbench: P1's IPC experiment (docs/ipc.md, shared/docs/papers.md P1). Rows go to the
 * result stream (COM2) for `./ondol bench ipc`; a summary goes to the console.
 *
 *   ipcbench roundtrip [N] [OTHERS]  call/reply_recv round trips between two tasks and
 *                                 between two threads of one task; N samples; OTHERS busy
 *                                 threads in the client task (default 0: nothing else runs)
 *   ipcbench cacheroundtrip [N] [OTHERS]  the same as bench "ipc-cache": each measured loop
 *                                 is a cache-model window (SYS_MEASURE; 1 = tasks,
 *                                 2 = threads) and rows carry "window" and "ipcs", so
 *                                 `./ondol bench ipc-cache --cache ...` attaches the counts
 *   ipcbench table1 [OTHERS] [N]  one-way send -> recv with OTHERS other threads that
 *                                 busy_wait, sleep & busy_wait, or sleep (P1 Table 1)
 *   ipcbench busy OTHERS [N]      one-way send -> recv with OTHERS busy_wait threads
 *                                 (one point of P1 Table 2)
 *   ipcbench serve [halves]       the server task of `roundtrip` (started by it)
 *   ipcbench fwd [N]              forwarded Linux system calls (docs/unix.md "Forwarding"):
 *                                 a Linux task (a clone of this one, served by the main
 *                                 thread) makes N null calls, each answered at once with
 *                                 reply_recv: rows "fwd" (round trip), "fwd_call" (trap ->
 *                                 server after its receive) and "fwd_reply" (server before
 *                                 reply_recv -> the Linux thread after its syscall)
 *
 * Measured as in P1: the time stamp counter is read just before the IPC call and just
 * after the matching receive returns in the partner (one-way), or just after the call
 * returns (round trip). `roundtrip` also times the two halves of a round trip apart, in
 * a second series whose server reads the TSC after its receive and before its reply:
 * rows "call" (client before the call -> server after the receive) and "reply" (server
 * before reply_recv -> client after the call). Every row records whether the kernel's
 * pcnt probes were on ("pcnt_probes", which libc adds to every result record); the
 * benchmark never turns them on. Under QEMU icount the TSC counts guest instructions,
 * otherwise it follows (emulated) time; rows say "unit":"tsc" and the host labels them
 * for the mode.
 *
 * One-way protocol: the receiver R loops in ipc_recv(S). The sender S (the main thread)
 * reads the TSC, puts it in word 0 and sends with a zero timeout, so a sample is only
 * taken when R is already waiting; if R is not back in its receive yet, S yields and
 * retries with a fresh timestamp. After a send S waits (yielding) until R has recorded the
 * sample. With DTS the send switches straight to R; without it R is queued behind every
 * other ready thread, which is what the scenarios vary:
 *   busy_wait   every other thread spins
 *   sleep_busy  half of them spin, the other half sleep 1-3 ticks in a loop
 *   sleep       every other thread sleeps 1-3 ticks in a loop
 * All threads (S, R, others) run at the default priority.
 */

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <ondol/ipc.h>
#include <ondol/result.h>
#include <ondol/sys.h>
#include <ondol/thread.h>
#include <ondol/timing.h>

#define OTHER_STACK (8 * 1024)
#define MAX_OTHERS 1000
#define STOP_WORD 0x53544f50ull              /* "STOP" */

/* ---- configuration reported in every row --------------------------------------------- */
static char dts[8] = "on";
static uint64_t hz, slice = 1;

static void read_config(void)
{
    char v[16];
    if (sys_kopt("dts", v, sizeof(v)) >= 0)
        strcpy(dts, !strcmp(v, "off") || !strcmp(v, "0") || !strcmp(v, "false") ? "off" : "on");
    if (sys_kopt("slice", v, sizeof(v)) > 0 && atoi(v) > 0)
        slice = (uint64_t)atoi(v);
    struct time_info ti;
    sys_time(&ti);
    hz = ti.hz;
}

static long progress_done, progress_total;

static void progress(long step)
{
    progress_done += step;
    result_printf("{\"type\":\"progress\",\"bench\":\"ipc\",\"done\":%ld,\"total\":%ld}",
                  progress_done, progress_total);
}

/* Sorts the samples and writes one result row. */
static const char *bench_name = "ipc";    /* "ipc-cache" when rows carry cache windows */
static int cache_windows;                   /* cacheroundtrip: measured loops are windows */
static int window;                          /* the measured loop's cache-model window, or 0 */

static void emit(const char *test, const char *scenario, int threads, uint64_t *t, int n, int warmup)
{
    sort_u64(t, (size_t)n);
    char win[32] = "";
    if (window)
        snprintf(win, sizeof(win), ",\"window\":%d,\"ipcs\":%d", window, n);
    result_printf("{\"type\":\"result\",\"bench\":\"%s\",\"test\":\"%s\",\"scenario\":\"%s\","
                  "\"threads\":%d,\"dts\":\"%s\",\"unit\":\"tsc\",\"median\":%llu,\"min\":%llu,"
                  "\"max\":%llu,\"n\":%d,\"warmup\":%d,\"hz\":%llu,\"slice\":%llu%s}",
                  bench_name, test, scenario, threads, dts, (unsigned long long)t[n / 2],
                  (unsigned long long)t[0], (unsigned long long)t[n - 1], n, warmup,
                  (unsigned long long)hz, (unsigned long long)slice, win);
    printf("ipcbench %s %s threads=%d dts=%s: median %llu min %llu max %llu n %d (TSC)\n", test,
           scenario, threads, dts, (unsigned long long)t[n / 2], (unsigned long long)t[0],
           (unsigned long long)t[n - 1], n);
}

static int failed(const char *what, long r)
{
    printf("ipcbench: %s failed: %ld\n", what, r);
    result_printf("{\"type\":\"end\",\"bench\":\"%s\",\"status\":1,\"error\":\"%s (%ld)\"}",
                  bench_name, what, r);
    return 1;
}

/* ---- round trip --------------------------------------------------------------------- */
/* Answers every call with word 0 + 1 until it gets STOP_WORD. */
static int server(void *arg)
{
    (void)arg;
    struct ipc_msg m = {{0}};
    long from = ipc_recv(IPC_ANY, &m, IPC_FOREVER);
    while (from > 0) {
        int stop = m.w[0] == STOP_WORD;
        m.w[0] += 1;
        if (stop) {
            ipc_send((int)from, &m, IPC_FOREVER);
            return 0;
        }
        from = ipc_reply_recv((int)from, IPC_ANY, &m, IPC_FOREVER);
    }
    printf("ipcbench: server receive failed: %ld\n", from);
    return 1;
}

static int tid_of_task(int task);

/* The server of the halves series: like server(), and it returns the TSC read just after
 * its receive in word 1 and the one read just before its reply in word 2. */
static int halves_server(void *arg)
{
    (void)arg;
    struct ipc_msg m = {{0}};
    long from = ipc_recv(IPC_ANY, &m, IPC_FOREVER);
    while (from > 0) {
        uint64_t t_in = rdtsc();
        int stop = m.w[0] == STOP_WORD;
        m.w[0] += 1;
        if (stop) {
            ipc_send((int)from, &m, IPC_FOREVER);
            return 0;
        }
        m.w[1] = t_in;
        m.w[2] = rdtsc();
        from = ipc_reply_recv((int)from, IPC_ANY, &m, IPC_FOREVER);
    }
    printf("ipcbench: server receive failed: %ld\n", from);
    return 1;
}

/* Time `warm + n` calls to a halves_server, each half apart: call[] and reply[]. */
static long halves(int srv, uint64_t *call, uint64_t *reply, int n, int warm)
{
    for (int i = 0; i < warm + n; i++) {
        struct ipc_msg m = {{(uint64_t)i, 1, 2, 3, 4, 5, 6, 7}};
        uint64_t t0 = rdtsc();
        long r = ipc_call(srv, &m, IPC_FOREVER);
        uint64_t t1 = rdtsc();
        if (r != srv || m.w[0] != (uint64_t)i + 1 || m.w[7] != 7)
            return r < 0 ? r : E_INVAL;
        if (i >= warm) {
            call[i - warm] = m.w[1] - t0;
            reply[i - warm] = t1 - m.w[2];
        }
    }
    struct ipc_msg m = {{STOP_WORD}};
    return ipc_call(srv, &m, IPC_FOREVER) == srv ? 0 : E_INVAL;
}

/* The halves series against a server task and then a server thread: rows "call" and
 * "reply" for each. */
static int halves_rows(int n, int others)
{
    const int warm = others ? 2 : 200;
    uint64_t *call = malloc(sizeof(uint64_t) * (size_t)n);
    uint64_t *reply = malloc(sizeof(uint64_t) * (size_t)n);
    if (!call || !reply)
        return failed("malloc", E_NOMEM);
    const char *argv[] = {"ipcserver", "serve", "halves"};
    long task = sys_spawn("ipcbench", argv, 3, 0);
    int srv = task < 0 ? 0 : tid_of_task((int)task), status = -1;
    long r = srv ? halves(srv, call, reply, n, warm) : E_SRCH;
    if (task > 0)
        sys_task_wait((int)task, &status);
    if (r < 0 || status != 0)
        return failed("halves tasks", r < 0 ? r : status);
    emit("call", "tasks", others, call, n, warm);
    emit("reply", "tasks", others, reply, n, warm);
    struct thread th;
    int tid = thread_start(&th, halves_server, NULL, PRIO_INHERIT, 0);
    if (tid < 0)
        return failed("thread_start", tid);
    r = halves(tid, call, reply, n, warm);
    thread_join(&th, &status);
    if (r < 0 || status != 0)
        return failed("halves threads", r < 0 ? r : status);
    emit("call", "threads", others, call, n, warm);
    emit("reply", "threads", others, reply, n, warm);
    free(call);
    free(reply);
    return 0;
}

/* Time `warm + n` calls to `srv`; the samples after the warm-up go to t. The measured
 * calls form one cache-model window (a no-op without the plugin). */
static long round_trips(int srv, uint64_t *t, int n, int warm)
{
    for (int i = 0; i < warm + n; i++) {
        if (i == warm && window)
            SC2(SYS_MEASURE, MEASURE_WINDOW_BEGIN, window);
        struct ipc_msg m = {{(uint64_t)i, 1, 2, 3, 4, 5, 6, 7}};
        uint64_t t0 = rdtsc();
        long r = ipc_call(srv, &m, IPC_FOREVER);
        uint64_t t1 = rdtsc();
        if (r != srv || m.w[0] != (uint64_t)i + 1 || m.w[7] != 7)
            return r < 0 ? r : E_INVAL;
        if (i >= warm)
            t[i - warm] = t1 - t0;
        if ((i + 1) % 500 == 0)
            progress(500);
    }
    if (window)
        SC2(SYS_MEASURE, MEASURE_WINDOW_END, window);
    struct ipc_msg m = {{STOP_WORD}};
    return ipc_call(srv, &m, IPC_FOREVER) == srv ? 0 : E_INVAL;
}

static int tid_of_task(int task)
{
    static struct ps_entry ps[256];
    for (int tries = 0; tries < 1000; tries++) {
        long n = sys_ps(ps, 256);
        for (long k = 0; k < n; k++)
            if (ps[k].task == task && ps[k].state != TS_ZOMBIE)
                return ps[k].tid;
        sys_yield();
    }
    return 0;
}

static volatile int stop_others;
static int busy_fn(void *arg);

static int roundtrip(int n, int others)
{
    const int warm = others ? 2 : 200;   /* with DTS off, each busy thread costs a slice */
    uint64_t *t = malloc(sizeof(uint64_t) * (size_t)n);
    if (!t)
        return failed("malloc", E_NOMEM);
    progress_total = 2L * (warm + n);

    const char *argv[] = {"ipcserver", "serve"};   /* named apart from the client */
    long task = sys_spawn("ipcbench", argv, 2, 0);
    if (task < 0)
        return failed("spawn", task);
    int srv = tid_of_task((int)task);
    if (!srv)
        return failed("server thread", E_SRCH);
    struct thread *ot = malloc(sizeof(struct thread) * (size_t)(others ? others : 1));
    stop_others = 0;
    for (int i = 0; i < others; i++)
        if (!ot || thread_start(&ot[i], busy_fn, (void *)(uintptr_t)i, PRIO_INHERIT, OTHER_STACK) < 0)
            return failed("thread_start other", E_NOMEM);
    window = cache_windows ? 1 : 0;
    long r = round_trips(srv, t, n, warm);
    int status = -1;
    sys_task_wait((int)task, &status);
    if (r < 0 || status != 0)
        return failed("roundtrip tasks", r < 0 ? r : status);
    emit("roundtrip", "tasks", others, t, n, warm);

    struct thread th;
    int tid = thread_start(&th, server, NULL, PRIO_INHERIT, 0);
    if (tid < 0)
        return failed("thread_start", tid);
    window = window ? 2 : 0;
    r = round_trips(tid, t, n, warm);
    thread_join(&th, &status);
    if (r < 0 || status != 0)
        return failed("roundtrip threads", r < 0 ? r : status);
    emit("roundtrip", "threads", others, t, n, warm);
    if (!cache_windows && halves_rows(n, others))
        return 1;
    stop_others = 1;
    for (int i = 0; i < others; i++)
        thread_join(&ot[i], NULL);
    free(ot);
    free(t);
    return 0;
}

/* ---- forwarded Linux system calls --------------------------------------------------------
 * The Linux thread may make no ondol call (every `syscall` is forwarded), so it reports its
 * timestamps in the arguments of its next call: rdi = the TSC before its previous call,
 * rsi = the TSC after it. The server answers each call with word 0 = the call's index
 * (the Linux thread checks it) and, in the halves series, reads the TSC after its receive
 * and before its answer. The first series (no TSC reads in the server) gives the round
 * trip; the second the halves. */
#define LX_NULL 39                            /* getpid: any number is forwarded alike */
#define LX_EXIT 60
static uint8_t fwd_stack[16 * 1024] __attribute__((aligned(16)));

static long lx_call(long nr, uint64_t a, uint64_t b)
{
    long ret;
    __asm__ volatile("syscall" : "=a"(ret) : "a"(nr), "D"(a), "S"(b) : "rcx", "r11", "memory");
    return ret;
}

/* The Linux task: `total` calls, then exit with rdi = 0, or 1 if an answer was wrong. */
static void fwd_client(void *arg)
{
    long total = (long)arg, bad = 0;
    uint64_t t0 = 0, t1 = 0;
    for (long i = 0; i < total; i++) {
        uint64_t s0 = rdtsc();
        long r = lx_call(LX_NULL, t0, t1);
        t1 = rdtsc();
        t0 = s0;
        bad |= r != i;
    }
    lx_call(LX_EXIT, (uint64_t)bad, 0);
    for (;;)
        ;
}

/* reply_recv(to, IPC_ANY, forever) answering with w0 and taking the next call's words
 * 1-3 (number, rdi, rsi) in registers: libc's stub stores all eight words with SSE, and
 * the server's first x87/SSE use after each switch traps (#NM, lazy FPU), a cost of the
 * program, not of forwarding. The sender, or E_*. */
static long answer_take(long to, uint64_t w0, uint64_t *nr, uint64_t *a, uint64_t *b)
{
    register uint64_t r8 __asm__("r8") = w0;
    register uint64_t r9 __asm__("r9");
    register uint64_t r10 __asm__("r10");
    register uint64_t r12 __asm__("r12");
    long ret;
    __asm__ volatile("syscall"
                     : "=a"(ret), "+r"(r8), "=r"(r9), "=r"(r10), "=r"(r12)
                     : "a"((long)SYS_IPC_REPLY_RECV), "D"(to), "S"((long)IPC_ANY),
                       "d"((long)IPC_FOREVER)
                     : "rcx", "r11", "rbx", "r13", "r14", "r15", "memory");
    *nr = r9;
    *a = r10;
    *b = r12;
    return ret;
}

/* Serve `warm + n + 1` calls from a new Linux task; samples after the warm-up go to rt
 * (round trip) or, with halves, to call[] and reply[]. */
static long fwd_series(uint64_t *rt, uint64_t *call, uint64_t *reply, int n, int warm)
{
    int total = warm + n + 1;                 /* call i reports call i - 1's timestamps */
    long task = sys_task_create("ipcfwd");
    long r = task < 0 ? task : sys_vm_clone((int)task, 0);
    if (!r)
        r = sys_task_linux((int)task, thread_self());
    if (!r)
        r = sys_task_thread((int)task, fwd_client, fwd_stack + sizeof(fwd_stack) - 8,
                            (void *)(uintptr_t)total, PRIO_INHERIT);
    if (r < 0)
        return r;
    struct ipc_msg m = {{0}};
    uint64_t t_in = 0, t_out = 0;
    long from = ipc_recv(IPC_ANY, &m, IPC_FOREVER);
    uint64_t nr = m.w[1], t0 = m.w[2], t1 = m.w[3];   /* the call's number and report */
    for (int i = 0; from > 0 && nr == LX_NULL; i++) {
        uint64_t in = call ? rdtsc() : 0;
        if (i > warm) {                       /* this call reports call i - 1 */
            int k = i - 1 - warm;
            if (call) {
                call[k] = t_in - t0;
                reply[k] = t1 - t_out;
            } else {
                rt[k] = t1 - t0;
            }
        }
        t_in = in;
        t_out = call ? rdtsc() : 0;
        from = answer_take(from, (uint64_t)i, &nr, &t0, &t1);
    }
    long ok = from > 0 && nr == LX_EXIT && t0 == 0;
    sys_task_kill((int)task);
    sys_task_wait((int)task, NULL);
    return ok ? 0 : from < 0 ? from : E_INVAL;
}

static int fwd_rows(int n)
{
    const int warm = 200;
    uint64_t *rt = malloc(sizeof(uint64_t) * (size_t)n);
    uint64_t *call = malloc(sizeof(uint64_t) * (size_t)n);
    uint64_t *reply = malloc(sizeof(uint64_t) * (size_t)n);
    if (!rt || !call || !reply)
        return failed("malloc", E_NOMEM);
    long r = fwd_series(rt, NULL, NULL, n, warm);
    if (r < 0)
        return failed("fwd round trips", r);
    r = fwd_series(NULL, call, reply, n, warm);
    if (r < 0)
        return failed("fwd halves", r);
    emit("fwd", "linux", 0, rt, n, warm);
    emit("fwd_call", "linux", 0, call, n, warm);
    emit("fwd_reply", "linux", 0, reply, n, warm);
    free(rt);
    free(call);
    free(reply);
    return 0;
}

/* ---- one way, with other threads ----------------------------------------------------- */
enum { BUSY, SLEEPY };
static volatile uint64_t spins;

static int busy_fn(void *arg)
{
    (void)arg;
    while (!stop_others)
        spins++;
    return 0;
}

static int sleepy_fn(void *arg)
{
    uint64_t ticks = 1 + (uint64_t)(uintptr_t)arg % 3;
    while (!stop_others)
        sys_sleep(ticks);
    return 0;
}

struct receiver {
    int sender, n, warm;
    uint64_t *t;
    volatile int received;
    long err;
};

static int receiver_fn(void *arg)
{
    struct receiver *a = arg;
    for (int i = 0; i < a->warm + a->n; i++) {
        struct ipc_msg m = {{0}};
        long from = ipc_recv(a->sender, &m, IPC_FOREVER);
        uint64_t t1 = rdtsc();
        if (from != a->sender || m.w[1] != (uint64_t)i) {
            a->err = from < 0 ? from : E_INVAL;
            return 1;
        }
        if (i >= a->warm)
            a->t[i - a->warm] = t1 - m.w[0];
        a->received = i + 1;
    }
    return 0;
}

static int oneway(const char *scenario, int others, int n, int warm)
{
    uint64_t *t = malloc(sizeof(uint64_t) * (size_t)n);
    struct thread *ot = malloc(sizeof(struct thread) * (size_t)(others ? others : 1));
    if (!t || !ot)
        return failed("malloc", E_NOMEM);
    struct receiver rc = {thread_self(), n, warm, t, 0, 0};
    struct thread rt;
    int rtid = thread_start(&rt, receiver_fn, &rc, PRIO_INHERIT, 0);
    if (rtid < 0)
        return failed("thread_start receiver", rtid);
    stop_others = 0;
    for (int i = 0; i < others; i++) {
        int kind = !strcmp(scenario, "busy_wait") ? BUSY
                 : !strcmp(scenario, "sleep") ? SLEEPY : (i % 2 ? SLEEPY : BUSY);
        int tid = thread_start(&ot[i], kind == BUSY ? busy_fn : sleepy_fn, (void *)(uintptr_t)i,
                               PRIO_INHERIT, OTHER_STACK);
        if (tid < 0)
            return failed("thread_start other", tid);
    }
    long step = (warm + n) / 10 > 0 ? (warm + n) / 10 : 1;
    for (int i = 0; i < warm + n; i++) {
        for (;;) {
            struct ipc_msg m = {{0, (uint64_t)i}};
            m.w[0] = rdtsc();
            long r = ipc_send(rtid, &m, IPC_POLL);
            if (r == 0)
                break;
            if (r != E_TIMEOUT || rc.err)
                return failed("send", r != E_TIMEOUT ? r : rc.err);
            sys_yield();                     /* R is not back in its receive yet */
        }
        while (rc.received <= i && !rc.err)
            sys_yield();                     /* without DTS: let R (and the others) run */
        if ((i + 1) % step == 0)
            progress(step);
    }
    stop_others = 1;
    int status = 0;
    thread_join(&rt, &status);
    for (int i = 0; i < others; i++)
        thread_join(&ot[i], NULL);
    if (rc.err || status != 0)
        return failed("receiver", rc.err ? rc.err : status);
    emit("oneway", scenario, others, t, n, warm);
    free(t);
    free(ot);
    return 0;
}

int main(int argc, char **argv)
{
    read_config();
    const char *mode = argc > 1 ? argv[1] : "";
    int status;
    if (!strcmp(mode, "serve")) {
        return argc > 2 && !strcmp(argv[2], "halves") ? halves_server(NULL) : server(NULL);
    } else if (!strcmp(mode, "roundtrip") || !strcmp(mode, "cacheroundtrip")) {
        int n = argc > 2 ? atoi(argv[2]) : 2000;
        int others = argc > 3 ? atoi(argv[3]) : 0;
        if (others < 0 || others > MAX_OTHERS)
            return failed("arguments", E_INVAL);
        if (!strcmp(mode, "cacheroundtrip")) {
            bench_name = "ipc-cache";
            cache_windows = 1;
        }
        status = roundtrip(n < 10 ? 10 : n, others);
    } else if (!strcmp(mode, "fwd")) {
        int n = argc > 2 ? atoi(argv[2]) : 2000;
        status = fwd_rows(n < 10 ? 10 : n);
    } else if (!strcmp(mode, "table1")) {
        int others = argc > 2 ? atoi(argv[2]) : 50;
        int n = argc > 3 ? atoi(argv[3]) : 1000;
        if (others < 0 || others > MAX_OTHERS || n < 1)
            return failed("arguments", E_INVAL);
        static const char *const scen[] = {"busy_wait", "sleep_busy", "sleep"};
        int warm = n >= 100 ? 20 : 2;
        progress_total = 3L * (warm + n);
        status = 0;
        for (int s = 0; s < 3 && !status; s++)
            status = oneway(scen[s], others, n, warm);
    } else if (!strcmp(mode, "busy")) {
        int others = argc > 2 ? atoi(argv[2]) : 0;
        int n = argc > 3 ? atoi(argv[3]) : 1000;
        if (others < 0 || others > MAX_OTHERS || n < 1)
            return failed("arguments", E_INVAL);
        int warm = n >= 100 ? 20 : 2;
        progress_total = warm + n;
        status = oneway("busy_wait", others, n, warm);
    } else {
        printf("usage: ipcbench roundtrip|cacheroundtrip [N] [OTHERS] | table1 [OTHERS] [N] | "
               "busy OTHERS [N] | fwd [N]\n");
        return 2;
    }
    if (status)
        return status;        /* failed() already wrote the end line */
    result_printf("{\"type\":\"end\",\"bench\":\"%s\",\"status\":0}", bench_name);
    return 0;
}
