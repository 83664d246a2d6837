/*
 * ipctest MODE: checks of the IPC semantics (docs/ipc.md), driven by tests/test_ipc.py.
 *
 * Every check that does not hold prints "FAIL <mode> (line N): ..."; a mode ends with
 * "ipctest MODE ok" or "ipctest MODE FAIL <count>" and exits with the failure count.
 * Measured quantities are printed as "<mode> <what> r=<result> ticks=<elapsed>" so the
 * host test can check them as well.
 *
 *   order       blocked senders are served in arrival order (FIFO); receive-from-any
 *               reports the right sender; a closed receive picks one sender out of the
 *               queue (or waits for it) and leaves the others in order
 *   timeout     poll, N ticks and forever, for send, recv, call and reply_recv
 *   dead        the partner exits while we are blocked (E_DEAD); IPC to exited, freed,
 *               unknown thread ids (E_DEAD / E_SRCH); IPC to ourselves (E_DEADLK); a child
 *               task (`killpeer`) exits while its threads wait in our queues
 *   perm        access control: no right (E_PERM), SYS_IPC_GRANT, the one-shot reply
 *               right, delegation to a grandchild; uses `permchild` and `permgrand`
 *   buf         long messages between two tasks (`bufpeer`) and two threads:
 *               page-crossing buffers up to 4096 bytes, bad pointers, E_2BIG
 *   prio        the L4 priority rule; expected orders depend on the dts option
 *   storm C S M [tasks]
 *               C client threads each send M sequence-numbered messages round-robin to
 *               S server threads, half as call (checked replies), half as send; with
 *               `tasks` the servers live in a child task (`stormserve`)
 *   sleeper N   (helper) sleep N ticks and exit
 *
 * Built without SSE code (the pragma below), so that these checks do not depend on the
 * kernel's FPU state handling, which has its own test (schedtest fpu).
 */
#pragma GCC target("general-regs-only")

#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <ondol/ipc.h>
#include <ondol/sys.h>
#include <ondol/thread.h>
#include <ondol/timing.h>

#define STACK (16 * 1024)
#define PAGE 4096

static const char *mode = "?";
static int fails;

#define CHECK(cond, ...) check_((cond), __LINE__, __VA_ARGS__)

__attribute__((format(printf, 3, 4)))
static void check_(int ok, int line, const char *fmt, ...)
{
    if (ok)
        return;
    __atomic_add_fetch(&fails, 1, __ATOMIC_SEQ_CST);
    char buf[256];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof(buf), fmt, ap);
    va_end(ap);
    printf("FAIL %s (line %d): %s\n", mode, line, buf);
}

/* Check that `got` equals `want`; the message names the operation. */
#define EXPECT(got, want, ...) expect_((long)(got), (long)(want), __LINE__, __VA_ARGS__)

__attribute__((format(printf, 4, 5)))
static long expect_(long got, long want, int line, const char *fmt, ...)
{
    if (got == want)
        return got;
    char buf[200];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof(buf), fmt, ap);
    va_end(ap);
    check_(0, line, "%s: got %ld, expected %ld", buf, got, want);
    return got;
}

/* ---- small helpers ------------------------------------------------------------------ */
static uint64_t now(void)
{
    struct time_info ti;
    sys_time(&ti);
    return ti.ticks;
}

static struct ps_entry ps_buf[1024];

/* State of thread `tid` (enum thread_state_abi), -1 if it does not exist. */
static int state_of(int tid)
{
    long n = sys_ps(ps_buf, 1024);
    for (long i = 0; i < n; i++)
        if (ps_buf[i].tid == tid)
            return ps_buf[i].state;
    return -1;
}

/* Sleep a tick at a time (so lower priorities run too) until `tid` is in `state`. */
static int wait_state(int tid, int state, int max_ticks)
{
    for (int i = 0; i <= max_ticks; i++) {
        if (state_of(tid) == state)
            return 1;
        sys_sleep(1);
    }
    return 0;
}

/* The (first live) thread of task `task`, or 0. */
static int tid_of_task(int task, int max_ticks)
{
    for (int i = 0; i <= max_ticks; i++) {
        long n = sys_ps(ps_buf, 1024);
        for (long k = 0; k < n; k++)
            if (ps_buf[k].task == task && ps_buf[k].state != TS_ZOMBIE)
                return ps_buf[k].tid;
        sys_sleep(1);
    }
    return 0;
}

static int start(struct thread *t, thread_fn fn, void *arg, int prio)
{
    int tid = thread_start(t, fn, arg, prio, STACK);
    CHECK(tid > 0, "thread_start: %d", tid);
    return tid;
}

static int join(struct thread *t)
{
    int st = -1;
    int r = thread_join(t, &st);
    CHECK(r == 0, "thread_join(%d): %d", t->tid, r);
    return st;
}

/* Messages whose eight words are all derived from word 0 (the key), so a receiver can
 * check that every register arrived intact. */
static uint64_t word(uint64_t key, int k)
{
    return (key * 0x9e3779b97f4a7c15ull) ^ ((uint64_t)k << 56) ^ ((uint64_t)k * 0x1234567ull);
}

static void msg_make(struct ipc_msg *m, uint64_t key)
{
    m->w[0] = key;
    for (int k = 1; k < IPC_MRS; k++)
        m->w[k] = word(key, k);
}

static int msg_ok(const struct ipc_msg *m)
{
    for (int k = 1; k < IPC_MRS; k++)
        if (m->w[k] != word(m->w[0], k))
            return 0;
    return 1;
}

static void *map_pages(int n)
{
    long a = sys_vm_map((size_t)n * PAGE, PROT_READ | PROT_WRITE);
    CHECK(a > 0, "vm_map(%d pages): %ld", n, a);
    return a > 0 ? (void *)(uintptr_t)a : NULL;
}

static char *tidstr(char *buf, long v)
{
    snprintf(buf, 16, "%ld", v);
    return buf;
}

/* ---- shared thread bodies ----------------------------------------------------------- */
struct snd {
    int dest, idx, rounds, delay;
    long res;
};

/* Optionally sleep, then send `rounds` messages keyed (idx << 32 | j) to dest. */
static int sender_fn(void *p)
{
    struct snd *a = p;
    if (a->delay)
        sys_sleep((uint64_t)a->delay);
    for (int j = 0; j < a->rounds; j++) {
        struct ipc_msg m = {{0}};
        msg_make(&m, ((uint64_t)a->idx << 32) | (uint64_t)j);
        long r = ipc_send(a->dest, &m, IPC_FOREVER);
        if (r != 0) {
            a->res = r;
            return 1;
        }
    }
    a->res = 0;
    return 0;
}

static int sleeper_fn(void *p)
{
    sys_sleep((uint64_t)(uintptr_t)p);
    return 0;
}

/* ---- order ------------------------------------------------------------------------- */
enum { NSEND = 8, ROUNDS = 4 };

static void start_blocked_senders(struct thread *th, struct snd *a, int n, int dest, int rounds)
{
    for (int i = 0; i < n; i++) {
        a[i] = (struct snd){dest, i, rounds, 0, 1};
        start(&th[i], sender_fn, &a[i], PRIO_INHERIT);
        /* arrival order is creation order: each one is blocked before the next starts */
        CHECK(wait_state(th[i].tid, TS_BLOCKED, 200), "sender %d never blocked", i);
    }
}

static void join_senders(struct thread *th, struct snd *a, int n)
{
    for (int i = 0; i < n; i++) {
        int st = join(&th[i]);
        CHECK(st == 0 && a[i].res == 0, "sender %d: status %d, send returned %ld", i, st, a[i].res);
    }
}

static void test_order(void)
{
    int me = thread_self();
    struct thread th[NSEND];
    struct snd a[NSEND];
    struct ipc_msg m = {{0}};
    char order[3 * NSEND * ROUNDS + 1] = "";

    /* 1: NSEND senders blocked in arrival order, ROUNDS messages each */
    start_blocked_senders(th, a, NSEND, me, ROUNDS);
    int next[NSEND] = {0};
    for (int n = 0; n < NSEND * ROUNDS; n++) {
        long from = ipc_recv(IPC_ANY, &m, IPC_FOREVER);
        int idx = (int)(m.w[0] >> 32), seq = (int)(uint32_t)m.w[0];
        if (from < 0 || idx < 0 || idx >= NSEND || !msg_ok(&m)) {
            CHECK(0, "receive %d: r=%ld idx=%d words %s", n, from, idx, msg_ok(&m) ? "ok" : "bad");
            continue;
        }
        CHECK(from == th[idx].tid, "message of sender %d reported as from %ld, its tid is %d",
              idx, from, th[idx].tid);
        CHECK(seq == next[idx], "sender %d: sequence %d, expected %d", idx, seq, next[idx]);
        next[idx] = seq + 1;
        if (n < NSEND)
            CHECK(idx == n, "FIFO: receive %d got sender %d", n, idx);
        snprintf(order + strlen(order), 4, "%d ", idx);
    }
    printf("order first-rounds: %s\n", order);
    join_senders(th, a, NSEND);

    /* 2: a closed receive takes sender 5 out of the middle; the rest stay FIFO */
    start_blocked_senders(th, a, NSEND, me, 1);
    long from = ipc_recv(th[5].tid, &m, IPC_FOREVER);
    CHECK(from == th[5].tid && m.w[0] >> 32 == 5 && msg_ok(&m),
          "closed receive from sender 5: r=%ld idx=%d", from, (int)(m.w[0] >> 32));
    for (int i = 0; i < NSEND; i++) {
        if (i == 5)
            continue;
        from = ipc_recv(IPC_ANY, &m, IPC_POLL);
        CHECK(from == th[i].tid && (int)(m.w[0] >> 32) == i,
              "after the closed receive: expected sender %d, got r=%ld idx=%d", i, from,
              (int)(m.w[0] >> 32));
    }
    from = ipc_recv(IPC_ANY, &m, IPC_POLL);
    CHECK(from == E_TIMEOUT, "queue should be empty, receive returned %ld", from);
    join_senders(th, a, NSEND);

    /* 3: a closed receive from a thread not yet sending waits for it, even with another
     * sender queued, which is then still there */
    a[0] = (struct snd){me, 100, 1, 0, 1};
    start(&th[0], sender_fn, &a[0], PRIO_INHERIT);
    CHECK(wait_state(th[0].tid, TS_BLOCKED, 200), "sender 100 never blocked");
    a[1] = (struct snd){me, 101, 1, 5, 1};
    start(&th[1], sender_fn, &a[1], PRIO_INHERIT);
    from = ipc_recv(th[1].tid, &m, IPC_FOREVER);
    CHECK(from == th[1].tid && m.w[0] >> 32 == 101, "closed receive: r=%ld idx=%d", from,
          (int)(m.w[0] >> 32));
    from = ipc_recv(IPC_ANY, &m, IPC_POLL);
    CHECK(from == th[0].tid && m.w[0] >> 32 == 100, "queued sender lost: r=%ld", from);
    join_senders(th, a, 2);

    /* IPC with ourselves would wait forever */
    msg_make(&m, 1);
    CHECK(ipc_send(me, &m, IPC_POLL) == E_DEADLK, "send to self");
    CHECK(ipc_call(me, &m, IPC_FOREVER) == E_DEADLK, "call to self");
    CHECK(ipc_recv(me, &m, IPC_FOREVER) == E_DEADLK, "receive from self");
}

/* ---- timeout ----------------------------------------------------------------------- */
static volatile int go;

struct poller {
    long res;
};

/* Never receives until `go`, then polls once: a timed-out sender must not be queued. */
static int poller_fn(void *p)
{
    struct poller *a = p;
    while (!go)
        sys_sleep(1);
    struct ipc_msg m = {{0}};
    a->res = ipc_recv(IPC_ANY, &m, IPC_POLL);
    return 0;
}

struct drecv {
    int delay;
    long from;
    struct ipc_msg m;
};

static int delayed_recv_fn(void *p)
{
    struct drecv *a = p;
    sys_sleep((uint64_t)a->delay);
    a->from = ipc_recv(IPC_ANY, &a->m, IPC_FOREVER);
    return 0;
}

struct rr_server {
    uint32_t timeout;
    long first, res;
    uint64_t dt;
    volatile int done;
};

/* Take one call, then reply_recv with a receive timeout nobody satisfies. */
static int rr_server_fn(void *p)
{
    struct rr_server *a = p;
    struct ipc_msg m = {{0}};
    a->first = ipc_recv(IPC_ANY, &m, IPC_FOREVER);
    m.w[0] += 1;
    uint64_t t0 = now();
    a->res = ipc_reply_recv((int)a->first, IPC_ANY, &m, a->timeout);
    a->dt = now() - t0;
    a->done = 1;
    return 0;
}

static void report(const char *what, long r, uint64_t dt)
{
    printf("timeout %s r=%ld ticks=%llu\n", what, r, (unsigned long long)dt);
}

static void test_reply_recv_timeout(uint32_t timeout)
{
    struct thread t;
    struct rr_server s = {timeout, 0, 1, 0, 0};
    start(&t, rr_server_fn, &s, PRIO_INHERIT);
    struct ipc_msg m = {{0}};
    msg_make(&m, 41);
    long r = ipc_call(t.tid, &m, IPC_FOREVER);
    CHECK(r == t.tid && m.w[0] == 42, "call to the server: r=%ld w0=%llu", r,
          (unsigned long long)m.w[0]);
    for (int i = 0; i < 300 && !s.done; i++)
        sys_sleep(1);
    if (!s.done) {
        CHECK(0, "reply_recv with a %u-tick receive timeout still blocked after 300 ticks",
              timeout);
        ipc_send(t.tid, &m, IPC_POLL);              /* release it */
    } else {
        char what[32];
        snprintf(what, sizeof(what), "reply_recv/%u", timeout);
        report(what, s.res, s.dt);
        CHECK(s.res == E_TIMEOUT && s.dt >= timeout && s.dt <= timeout + 10,
              "reply_recv, receive timeout %u: r=%ld after %llu ticks", timeout, s.res,
              (unsigned long long)s.dt);
    }
    join(&t);
}

static void test_timeout(void)
{
    int me = thread_self();
    struct ipc_msg m = {{0}};
    uint64_t t0, dt;
    long r;
    struct thread t1, t2;

    /* a partner that does not receive (until `go`) */
    struct poller pa = {1};
    go = 0;
    start(&t1, poller_fn, &pa, PRIO_INHERIT);

    msg_make(&m, 1);
    t0 = now(); r = ipc_recv(IPC_ANY, &m, IPC_POLL); dt = now() - t0;
    report("recv/poll", r, dt);
    CHECK(r == E_TIMEOUT && dt <= 2, "recv poll: r=%ld after %llu ticks", r, (unsigned long long)dt);
    t0 = now(); r = ipc_send(t1.tid, &m, IPC_POLL); dt = now() - t0;
    report("send/poll", r, dt);
    CHECK(r == E_TIMEOUT && dt <= 2, "send poll: r=%ld after %llu ticks", r, (unsigned long long)dt);
    t0 = now(); r = ipc_call(t1.tid, &m, IPC_POLL); dt = now() - t0;
    report("call/poll", r, dt);
    CHECK(r == E_TIMEOUT && dt <= 2, "call poll: r=%ld after %llu ticks", r, (unsigned long long)dt);

    t0 = now(); r = ipc_recv(IPC_ANY, &m, 5); dt = now() - t0;
    report("recv/5", r, dt);
    CHECK(r == E_TIMEOUT && dt >= 5 && dt <= 15, "recv 5 ticks: r=%ld after %llu ticks", r,
          (unsigned long long)dt);
    t0 = now(); r = ipc_send(t1.tid, &m, 7); dt = now() - t0;
    report("send/7", r, dt);
    CHECK(r == E_TIMEOUT && dt >= 7 && dt <= 17, "send 7 ticks: r=%ld after %llu ticks", r,
          (unsigned long long)dt);
    t0 = now(); r = ipc_call(t1.tid, &m, 6); dt = now() - t0;
    report("call/6", r, dt);
    CHECK(r == E_TIMEOUT && dt >= 6 && dt <= 16, "call 6 ticks: r=%ld after %llu ticks", r,
          (unsigned long long)dt);
    t0 = now(); r = ipc_recv(t1.tid, &m, 4); dt = now() - t0;   /* closed receive */
    report("recvfrom/4", r, dt);
    CHECK(r == E_TIMEOUT && dt >= 4 && dt <= 14, "closed receive 4 ticks: r=%ld after %llu ticks",
          r, (unsigned long long)dt);
    go = 1;
    join(&t1);
    CHECK(pa.res == E_TIMEOUT, "timed-out senders were left queued: the receiver got %ld", pa.res);

    /* forever, then satisfied */
    struct snd s1 = {me, 7, 1, 5, 1}, s2;
    start(&t1, sender_fn, &s1, PRIO_INHERIT);
    t0 = now(); r = ipc_recv(IPC_ANY, &m, IPC_FOREVER); dt = now() - t0;
    report("recv/forever", r, dt);
    CHECK(r == t1.tid && m.w[0] >> 32 == 7 && msg_ok(&m) && dt >= 5,
          "recv forever: r=%ld after %llu ticks", r, (unsigned long long)dt);
    join(&t1);

    /* N ticks, satisfied before they pass; the timeout must not fire later */
    s1 = (struct snd){me, 8, 1, 3, 1};
    s2 = (struct snd){me, 9, 1, 40, 1};
    start(&t1, sender_fn, &s1, PRIO_INHERIT);
    start(&t2, sender_fn, &s2, PRIO_INHERIT);
    t0 = now(); r = ipc_recv(IPC_ANY, &m, 30); dt = now() - t0;
    report("recv/30-satisfied", r, dt);
    CHECK(r == t1.tid && m.w[0] >> 32 == 8 && dt < 30, "recv 30 ticks: r=%ld after %llu ticks",
          r, (unsigned long long)dt);
    r = ipc_recv(IPC_ANY, &m, IPC_FOREVER); dt = now() - t0;
    report("recv/forever-after", r, dt);
    CHECK(r == t2.tid && m.w[0] >> 32 == 9 && dt >= 40,
          "stale timeout? second receive r=%ld after %llu ticks", r, (unsigned long long)dt);
    join(&t1);
    join(&t2);

    /* send with N ticks, satisfied */
    struct drecv d = {3, 0, {{0}}};
    start(&t1, delayed_recv_fn, &d, PRIO_INHERIT);
    msg_make(&m, 10);
    t0 = now(); r = ipc_send(t1.tid, &m, 50); dt = now() - t0;
    report("send/50-satisfied", r, dt);
    CHECK(r == 0 && dt >= 3 && dt < 50, "send 50 ticks: r=%ld after %llu ticks", r,
          (unsigned long long)dt);
    join(&t1);
    CHECK(d.from == me && d.m.w[0] == 10 && msg_ok(&d.m), "receiver got r=%ld", d.from);

    /* reply_recv: the receive phase honours poll and N ticks */
    test_reply_recv_timeout(0);
    test_reply_recv_timeout(5);
    test_reply_recv_timeout(12);
}

/* ---- dead -------------------------------------------------------------------------- */
struct recv_exit {
    long res;
};

/* Take one message and exit without replying. */
static int recv_exit_fn(void *p)
{
    struct ipc_msg m = {{0}};
    ((struct recv_exit *)p)->res = ipc_recv(IPC_ANY, &m, IPC_FOREVER);
    return 0;
}

static void test_killed_partners(void);

static void test_dead(void)
{
    int me = thread_self();
    struct thread t;
    struct ipc_msg m = {{0}};
    uint64_t t0, dt;
    long r;
    msg_make(&m, 3);

    /* blocked in send / call / closed receive while the partner exits */
    start(&t, sleeper_fn, (void *)20, PRIO_INHERIT);
    t0 = now(); r = ipc_send(t.tid, &m, IPC_FOREVER); dt = now() - t0;
    CHECK(r == E_DEAD && dt >= 10, "send to a thread that exits: r=%ld after %llu ticks", r,
          (unsigned long long)dt);
    printf("dead send r=%ld ticks=%llu\n", r, (unsigned long long)dt);
    join(&t);

    start(&t, sleeper_fn, (void *)20, PRIO_INHERIT);
    t0 = now(); r = ipc_call(t.tid, &m, IPC_FOREVER); dt = now() - t0;
    CHECK(r == E_DEAD && dt >= 10, "call to a thread that exits: r=%ld after %llu ticks", r,
          (unsigned long long)dt);
    printf("dead call r=%ld ticks=%llu\n", r, (unsigned long long)dt);
    join(&t);

    struct recv_exit re = {0};
    start(&t, recv_exit_fn, &re, PRIO_INHERIT);
    r = ipc_call(t.tid, &m, IPC_FOREVER);
    CHECK(r == E_DEAD && re.res == me, "call, server exits without replying: r=%ld (server got %ld)",
          r, re.res);
    printf("dead reply r=%ld\n", r);
    join(&t);

    start(&t, sleeper_fn, (void *)20, PRIO_INHERIT);
    t0 = now(); r = ipc_recv(t.tid, &m, IPC_FOREVER); dt = now() - t0;
    CHECK(r == E_DEAD && dt >= 10, "closed receive from a thread that exits: r=%ld after %llu ticks",
          r, (unsigned long long)dt);
    printf("dead recvfrom r=%ld ticks=%llu\n", r, (unsigned long long)dt);
    join(&t);

    /* an exited thread: first a zombie (E_DEAD), then, joined and freed, unknown (E_SRCH) */
    start(&t, sleeper_fn, (void *)1, PRIO_INHERIT);
    int zombie = wait_state(t.tid, TS_ZOMBIE, 100);
    CHECK(zombie, "thread %d never became a zombie", t.tid);
    if (zombie) {
        EXPECT(ipc_send(t.tid, &m, IPC_POLL), E_DEAD, "send to a zombie");
        EXPECT(ipc_send(t.tid, &m, IPC_FOREVER), E_DEAD, "send forever to a zombie");
        EXPECT(ipc_call(t.tid, &m, IPC_FOREVER), E_DEAD, "call to a zombie");
        EXPECT(ipc_recv(t.tid, &m, IPC_FOREVER), E_DEAD, "receive from a zombie");
    }
    int gone = t.tid;
    join(&t);
    EXPECT(ipc_send(gone, &m, IPC_FOREVER), E_SRCH, "send to a joined thread");
    EXPECT(ipc_call(gone, &m, IPC_FOREVER), E_SRCH, "call to a joined thread");
    EXPECT(ipc_recv(gone, &m, IPC_FOREVER), E_SRCH, "receive from a joined thread");

    /* never-existing ids */
    static const long bad[] = {0, -5, 0x7fffffff, 123456789, 1l << 40, -(1l << 40)};
    for (unsigned i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        struct ipc_msg x = m;
        EXPECT(ipc_raw(SYS_IPC_SEND, bad[i], 0, IPC_FOREVER, &x), E_SRCH, "send to %ld", bad[i]);
        EXPECT(ipc_raw(SYS_IPC_CALL, bad[i], 0, IPC_FOREVER, &x), E_SRCH, "call to %ld", bad[i]);
        EXPECT(ipc_raw(SYS_IPC_RECV, bad[i], 0, IPC_FOREVER, &x), E_SRCH, "recv from %ld", bad[i]);
        if (bad[i] != 0)      /* 0 is reply_recv's "no reply" */
            EXPECT(ipc_raw(SYS_IPC_REPLY_RECV, bad[i], IPC_ANY, IPC_POLL, &x), E_SRCH,
                   "reply_recv to %ld", bad[i]);
    }
    EXPECT(ipc_send(IPC_ANY, &m, IPC_POLL), E_SRCH, "send to IPC_ANY");

    /* reply_recv to a live thread that is not waiting for our reply */
    start(&t, sleeper_fn, (void *)10, PRIO_INHERIT);
    EXPECT(ipc_reply_recv(t.tid, IPC_ANY, &m, IPC_POLL), E_SRCH, "reply to a thread not waiting for us");
    join(&t);

    test_killed_partners();

    /* across tasks: the server task exits while we are blocked calling it */
    char arg[16];
    const char *argv[] = {"ipctest", "sleeper", tidstr(arg, 30)};
    long task = sys_spawn("ipctest", argv, 3, 0);
    CHECK(task > 0, "spawn: %ld", task);
    int child = tid_of_task((int)task, 100);
    CHECK(child > 0, "no thread for task %ld", task);
    t0 = now(); r = ipc_call(child, &m, IPC_FOREVER); dt = now() - t0;
    CHECK(r == E_DEAD, "call to a task that exits: r=%ld after %llu ticks", r, (unsigned long long)dt);
    printf("dead task r=%ld ticks=%llu\n", r, (unsigned long long)dt);
    int st = -1;
    {
        long w = sys_task_wait((int)task, &st);
        CHECK(w == task && st == 0, "sleeper task: task_wait %ld, status %d", w, st);
    }
    r = ipc_send(child, &m, IPC_FOREVER);
    CHECK(r == E_SRCH || r == E_DEAD, "send to the exited task's thread: %ld", r);
}

/* A child task whose threads are blocked in IPC with us when it exits (SYS_EXIT kills
 * them): they must leave our queues. */
enum { TAG_A1 = 0xa1, TAG_B = 0xb, TAG_A2 = 0xa2, TAG_EXIT = 0xe };

static void test_killed_partners(void)
{
    int me = thread_self();
    char a1[16];
    const char *argv[] = {"ipctest", "killpeer", tidstr(a1, me)};
    long task = sys_spawn("ipctest", argv, 3, 0);
    CHECK(task > 0, "spawn killpeer: %ld", task);
    EXPECT(ipc_grant((int)task, me), 0, "grant to killpeer");
    struct ipc_msg m;
    long r = ipc_recv(IPC_ANY, &m, 500);            /* A1's send; tells us the main thread */
    CHECK(r > 0 && m.w[0] == TAG_A1, "first sender: r=%ld w0=%llx", r, (unsigned long long)m.w[0]);
    int child_main = (int)m.w[1];
    long caller = ipc_recv(IPC_ANY, &m, 500);       /* B's call: B now waits for our reply */
    CHECK(caller > 0 && m.w[0] == TAG_B, "caller: r=%ld w0=%llx", caller, (unsigned long long)m.w[0]);
    /* A2 is blocked sending to us; now the child exits, killing B and A2 */
    m.w[0] = TAG_EXIT;
    EXPECT(ipc_send(child_main, &m, IPC_FOREVER), 0, "exit order to killpeer");
    int st = -1;
    long w = sys_task_wait((int)task, &st);
    CHECK(w == task && st == 0, "killpeer: task_wait %ld, status %d", w, st);
    r = ipc_recv(IPC_ANY, &m, IPC_POLL);
    CHECK(r == E_TIMEOUT, "a killed sender is still queued: receive got %ld", r);
    r = ipc_send((int)caller, &m, IPC_POLL);
    CHECK(r == E_SRCH || r == E_DEAD, "reply to a killed caller: %ld", r);
    EXPECT(ipc_reply_recv((int)caller, IPC_ANY, &m, IPC_POLL), E_SRCH, "reply_recv to a killed caller");
    printf("dead killed-partners ok\n");
}

struct kp {
    int p, tag;
    long res;
    volatile int done;
};

static int kp_send_fn(void *arg)
{
    struct kp *a = arg;
    struct ipc_msg m = {{(uint64_t)a->tag, (uint64_t)a->res}};
    long r;
    while ((r = ipc_send(a->p, &m, IPC_FOREVER)) == E_PERM)
        sys_sleep(1);                             /* until the parent's grant */
    a->res = r;
    a->done = 1;
    return 0;
}

static int kp_call_fn(void *arg)
{
    struct kp *a = arg;
    struct ipc_msg m = {{(uint64_t)a->tag}};
    a->res = ipc_call(a->p, &m, IPC_FOREVER);
    return 0;
}

static int killpeer(int p)
{
    int me = thread_self();
    struct thread ta1, tb, ta2;
    struct kp a1 = {p, TAG_A1, me, 0}, b = {p, TAG_B, 0, 0}, a2 = {p, TAG_A2, 0, 0};
    start(&ta1, kp_send_fn, &a1, PRIO_INHERIT);
    for (int i = 0; i < 300 && !a1.done; i++)
        sys_sleep(1);
    CHECK(a1.done && a1.res == 0, "A1's send: %ld", a1.res);
    join(&ta1);
    start(&tb, kp_call_fn, &b, PRIO_INHERIT);
    CHECK(wait_state(tb.tid, TS_BLOCKED, 300), "B never blocked");
    start(&ta2, kp_send_fn, &a2, PRIO_INHERIT);
    CHECK(wait_state(ta2.tid, TS_BLOCKED, 300), "A2 never blocked");
    struct ipc_msg m;
    long r = ipc_recv(p, &m, IPC_FOREVER);
    CHECK(r == p && m.w[0] == TAG_EXIT, "exit order: %ld", r);
    return fails;               /* exit: B (awaiting a reply) and A2 (queued) are killed */
}

/* ---- perm -------------------------------------------------------------------------- */
enum { TAG_GO = 0x6f67, TAG_HELLO = 0x68656c6c6f, TAG_REPLY = 0x7270, TAG_G = 0x47,
       TAG_REPORT = 0x7265706f7274, TAG_CALL = 0x22 };

static volatile int go2, go3;

struct pthr {
    int child;
    long res;
    struct ipc_msg m;
};

static int p2_fn(void *p)
{
    struct pthr *a = p;
    while (!go2)
        sys_sleep(1);
    msg_make(&a->m, TAG_CALL);
    a->res = ipc_call(a->child, &a->m, IPC_FOREVER);
    while (go2 != 2)              /* stay alive: the child checks its right to us */
        sys_sleep(1);
    return 0;
}

static int p3_fn(void *p)
{
    struct pthr *a = p;
    while (!go3)
        sys_sleep(1);
    a->res = ipc_recv(a->child, &a->m, IPC_FOREVER);
    return 0;
}

static void test_perm(void)
{
    int me = thread_self();
    struct thread t2, t3;
    struct pthr a2 = {0, 1, {{0}}}, a3 = {0, 1, {{0}}};
    go2 = go3 = 0;
    start(&t2, p2_fn, &a2, PRIO_INHERIT);
    start(&t3, p3_fn, &a3, PRIO_INHERIT);

    char s1[16], s2[16], s3[16];
    const char *argv[] = {"ipctest", "permchild", tidstr(s1, me), tidstr(s2, t2.tid), tidstr(s3, t3.tid)};
    long task = sys_spawn("ipctest", argv, 5, 0);
    CHECK(task > 0, "spawn permchild: %ld", task);
    int child = tid_of_task((int)task, 100);
    CHECK(child > 0, "no thread for task %ld", task);
    a2.child = a3.child = child;
    /* the child tried its sends without a right and now waits in a closed receive */
    CHECK(wait_state(child, TS_BLOCKED, 300), "the child never blocked");

    long r;
    EXPECT(ipc_grant((int)task, child), E_PERM, "granting a right to someone else's thread");
    EXPECT(ipc_grant(1000000, me), E_SRCH, "grant to no task");
    EXPECT(ipc_grant((int)task, 0x7fffffff), E_SRCH, "grant of no thread");
    EXPECT(ipc_grant((int)task, me), 0, "grant");
    struct ipc_msg m = {{0}};
    m.w[0] = TAG_GO;
    EXPECT(ipc_send(child, &m, IPC_FOREVER), 0, "send to our child");
    r = ipc_recv(child, &m, 500);
    CHECK(r == child && m.w[0] == TAG_HELLO, "hello from the child after the grant: r=%ld", r);

    go2 = go3 = 1;
    int got_g = 0, got_report = 0;
    long child_rr = 1;
    for (int k = 0; k < 6 && !got_report; k++) {
        r = ipc_recv(IPC_ANY, &m, 300);
        if (r == E_TIMEOUT) {
            CHECK(0, "no report from the child within 300 ticks (thread 3 received %ld)", a3.res);
            struct ipc_msg x = {{0}};
            ipc_send(child, &x, IPC_POLL);           /* release a child stuck receiving */
            continue;
        }
        if (r > 0 && m.w[0] == TAG_G) {
            got_g = 1;
            CHECK(r != child && r != me, "grandchild message from %ld", r);
        } else if (r == child && m.w[0] == TAG_REPORT) {
            got_report = 1;
            child_rr = (long)m.w[2];
        } else {
            CHECK(0, "unexpected receive: r=%ld w0=%llx", r, (unsigned long long)m.w[0]);
        }
    }
    CHECK(got_g, "no message from the grandchild (delegated right)");
    CHECK(got_report, "no report from the child");
    CHECK(child_rr == E_PERM,
          "reply_recv to a thread merely waiting to receive from the caller, without a right: "
          "%ld, expected E_PERM", child_rr);
    int st = -1;
    long w = sys_task_wait((int)task, &st);
    CHECK(w == task && st == 0, "permchild: task_wait %ld, exit status %d", w, st);
    go2 = 2;
    join(&t2);
    CHECK(a2.res == child && a2.m.w[0] == TAG_REPLY, "call answered with the reply right: r=%ld w0=%llx",
          a2.res, (unsigned long long)a2.m.w[0]);
    join(&t3);
    CHECK(a3.res == E_DEAD, "closed receive from the exited child: %ld (E_DEAD expected)", a3.res);
}

static int permchild(int p, int p2, int p3)
{
    int me = thread_self();
    struct ipc_msg m = {{0}};
    long r;
    /* no right yet: E_PERM at once, whatever the timeout */
    EXPECT(ipc_send(p, &m, IPC_POLL), E_PERM, "send to the parent without a right");
    EXPECT(ipc_send(p, &m, IPC_FOREVER), E_PERM, "send (forever) without a right");
    EXPECT(ipc_call(p, &m, IPC_FOREVER), E_PERM, "call without a right");
    EXPECT(ipc_send(p2, &m, IPC_POLL), E_PERM, "send to thread 2 without a right");
    /* receiving needs no right */
    r = ipc_recv(p, &m, IPC_FOREVER);
    CHECK(r == p && m.w[0] == TAG_GO, "go from the parent: r=%ld", r);
    m.w[0] = TAG_HELLO;
    EXPECT(ipc_send(p, &m, IPC_FOREVER), 0, "send after the grant");

    /* the reply right: thread 2 calls us; we may answer once */
    r = ipc_recv(IPC_ANY, &m, 500);
    CHECK(r == p2 && m.w[0] == TAG_CALL && msg_ok(&m), "call from thread 2: r=%ld", r);
    m.w[0] = TAG_REPLY;
    EXPECT(ipc_send(p2, &m, IPC_FOREVER), 0, "reply with the reply right");
    EXPECT(ipc_send(p2, &m, IPC_POLL), E_PERM, "second send on a one-shot reply right");

    /* thread 3 waits to receive from us, but we have no right to send to it, not even
     * with reply_recv (which may take the IPC fastpath) */
    CHECK(wait_state(p3, TS_BLOCKED, 300), "thread 3 never blocked");
    m.w[0] = 0x33;
    long rr = ipc_reply_recv(p3, IPC_ANY, &m, IPC_FOREVER);
    CHECK(rr == E_PERM, "reply_recv to thread 3 without a right: %ld", rr);

    /* delegation: pass our right to the parent's main thread on to our own child */
    char s1[16], s2[16];
    const char *argv[] = {"ipctest", "permgrand", tidstr(s1, p), tidstr(s2, me)};
    long g = sys_spawn("ipctest", argv, 4, 0);
    CHECK(g > 0, "spawn permgrand: %ld", g);
    EXPECT(ipc_grant((int)g, p), 0, "delegating a granted right to a child");
    EXPECT(ipc_grant((int)g, p2), E_PERM, "delegating a right we do not hold");
    int gt = tid_of_task((int)g, 100);
    m.w[0] = TAG_GO;
    CHECK(gt > 0, "no thread for the grandchild");
    EXPECT(ipc_send(gt, &m, IPC_FOREVER), 0, "go to the grandchild");
    int st = -1;
    {
        long w = sys_task_wait((int)g, &st);
        CHECK(w == g && st == 0, "permgrand: task_wait %ld, status %d", w, st);
    }

    m.w[0] = TAG_REPORT;
    m.w[1] = (uint64_t)fails;
    m.w[2] = (uint64_t)rr;
    EXPECT(ipc_send(p, &m, IPC_FOREVER), 0, "report");
    return fails;
}

static int permgrand(int p, int parent)
{
    struct ipc_msg m = {{0}};
    long r = ipc_recv(parent, &m, 500);
    CHECK(r == parent && m.w[0] == TAG_GO, "go from the child: %ld", r);
    m.w[0] = TAG_G;
    EXPECT(ipc_send(p, &m, IPC_FOREVER), 0, "send with a delegated right");
    return fails;
}

/* ---- buf --------------------------------------------------------------------------- */
static uint8_t pat(uint64_t seed, uint64_t i)
{
    return (uint8_t)((i * 131u + seed * 71u + (i >> 8) * 29u) ^ (seed << 3));
}

static void fill(uint8_t *b, uint64_t len, uint64_t seed)
{
    for (uint64_t i = 0; i < len; i++)
        b[i] = pat(seed, i);
}

/* Does [b, b+len) hold the pattern and the rest of [area, area+size) hold 0xee? */
static int area_ok(const uint8_t *area, uint64_t size, const uint8_t *b, uint64_t len, uint64_t seed)
{
    for (uint64_t i = 0; i < size; i++) {
        const uint8_t *q = area + i;
        uint8_t want = q >= b && q < b + len ? pat(seed, (uint64_t)(q - b)) : 0xee;
        if (*q != want)
            return 0;
    }
    return 1;
}

static struct ipc_utcb utcb;

static int buf_send(int dest, int step, uint8_t *b, uint64_t len, uint64_t seed)
{
    fill(b, len, seed);
    utcb.send_buf = b;
    utcb.send_len = len;
    struct ipc_msg m = {{(uint64_t)step, len, seed}};
    return (int)ipc_send_flags(dest, &m, IPC_FOREVER, IPC_SEND_BUF);
}

static int bad_send(int dest, const void *b, uint64_t len)
{
    utcb.send_buf = b;
    utcb.send_len = len;
    struct ipc_msg m = {{0xbad}};
    return (int)ipc_send_flags(dest, &m, IPC_FOREVER, IPC_SEND_BUF);
}

struct same_task {
    int from;
    long r;
    uint64_t len;
    int ok;
};

static int same_task_recv_fn(void *p)
{
    struct same_task *a = p;
    struct ipc_utcb u;            /* the UTCB is per thread */
    uint8_t *area = map_pages(3);
    if (!area || ipc_set_utcb(&u) != 0)
        return 1;
    memset(area, 0xee, 3 * PAGE);
    u.recv_buf = area + PAGE - 333;
    u.recv_cap = IPC_BUF_MAX;
    u.recv_len = 1;
    struct ipc_msg m = {{0}};
    a->r = ipc_recv_flags(a->from, &m, IPC_FOREVER, IPC_RECV_BUF);
    a->len = u.recv_len;
    a->ok = m.w[0] == 77 && area_ok(area, 3 * PAGE, u.recv_buf, m.w[1], m.w[2]);
    return 0;
}

static void test_buf(void)
{
    int me = thread_self();
    long r;
    EXPECT(ipc_set_utcb(&utcb), 0, "register UTCB");
    uint8_t *s = map_pages(3), *rb = map_pages(3);
    if (!s || !rb)
        return;

    /* two threads of this task: 4096 bytes, both buffers across a page boundary */
    struct thread t;
    struct same_task st = {me, 0, 0, 0};
    start(&t, same_task_recv_fn, &st, PRIO_INHERIT);
    EXPECT(buf_send(t.tid, 77, s + PAGE - 2000, IPC_BUF_MAX, 5), 0, "same-task send");
    join(&t);
    CHECK(st.r == me && st.len == IPC_BUF_MAX && st.ok, "same-task long message: r=%ld len=%llu ok=%d",
          st.r, (unsigned long long)st.len, st.ok);

    char s1[16];
    const char *argv[] = {"ipctest", "bufpeer", tidstr(s1, me)};
    long task = sys_spawn("ipctest", argv, 3, 0);
    CHECK(task > 0, "spawn bufpeer: %ld", task);
    int child = tid_of_task((int)task, 100);
    CHECK(child > 0, "no thread for task %ld", task);

    /* 1-5: sizes and alignments, page-crossing on both sides */
    EXPECT(buf_send(child, 1, s + PAGE - 123, 4096, 1), 0, "step 1");
    EXPECT(buf_send(child, 2, s + PAGE - 1, 1, 2), 0, "step 2");
    EXPECT(buf_send(child, 3, s + PAGE - 50, 100, 3), 0, "step 3");
    EXPECT(buf_send(child, 4, s + 1, 4095, 4), 0, "step 4");
    EXPECT(buf_send(child, 5, s + PAGE - 7, 4096, 5), 0, "step 5");
    /* 6: no buffer sent to a receiver that accepts one; 7: a buffer it does not accept */
    struct ipc_msg m = {{6}};
    EXPECT(ipc_send(child, &m, IPC_FOREVER), 0, "step 6");
    EXPECT(buf_send(child, 7, s, 500, 7), 0, "step 7");

    /* 8: bad send buffers fail in the sender and leave the waiting receiver alone */
    CHECK(wait_state(child, TS_BLOCKED, 300), "bufpeer never blocked for step 8");
    EXPECT(bad_send(child, (void *)0x1000, 100), E_FAULT, "unmapped send_buf");
    EXPECT(bad_send(child, (void *)0xffffffff80100000ull, 100), E_FAULT, "kernel send_buf");
    EXPECT(bad_send(child, (void *)(USER_SPACE_END - 100), 200), E_FAULT, "send_buf across the end of user space");
    uint8_t *half = map_pages(2);
    CHECK(sys_vm_unmap(half + PAGE, PAGE) == 0, "unmap");
    EXPECT(bad_send(child, half + PAGE - 100, 200), E_FAULT, "send_buf running into an unmapped page");
    EXPECT(bad_send(child, s, IPC_BUF_MAX + 1), E_2BIG, "send_len 4097");
    EXPECT(ipc_set_utcb((void *)0x1000), E_FAULT, "unmapped UTCB");
    EXPECT(ipc_set_utcb((void *)0xffffffff80100000ull), E_FAULT, "kernel UTCB");
    EXPECT(ipc_set_utcb(NULL), 0, "unregister UTCB");
    EXPECT(bad_send(child, s, 10), E_FAULT, "SEND_BUF without a UTCB");
    EXPECT(ipc_set_utcb(&utcb), 0, "register UTCB again");
    CHECK(state_of(child) == TS_BLOCKED, "the receiver was disturbed by failed sends");
    EXPECT(buf_send(child, 8, s + 10, 300, 8), 0, "step 8");

    /* 9 is the receiver's own bad-buffer checks; 10: too long for the receiver */
    EXPECT(buf_send(child, 10, s + 100, 200, 10), E_2BIG, "step 10, 200 bytes to a 100-byte buffer: the sender");

    /* 11: call with buffers both ways, the reply buffer across a page boundary */
    memset(rb, 0xee, 3 * PAGE);
    fill(s + PAGE - 1500, 3000, 11);
    utcb.send_buf = s + PAGE - 1500;
    utcb.send_len = 3000;
    utcb.recv_buf = rb + PAGE - 700;
    utcb.recv_cap = IPC_BUF_MAX;
    utcb.recv_len = 0xdead;
    m = (struct ipc_msg){{11, 3000, 11}};
    r = ipc_call_flags(child, &m, IPC_FOREVER, IPC_SEND_BUF | IPC_RECV_BUF);
    CHECK(r == child && m.w[0] == 0x111 && utcb.recv_len == 2500 &&
          area_ok(rb, 3 * PAGE, utcb.recv_buf, 2500, 12),
          "step 11, call with buffers: r=%ld w0=%llx recv_len=%llu", r, (unsigned long long)m.w[0],
          (unsigned long long)utcb.recv_len);

    /* 12: a reply longer than the caller's buffer: E_2BIG to the caller */
    memset(rb, 0xee, 3 * PAGE);
    utcb.recv_cap = 100;
    m = (struct ipc_msg){{12}};
    r = ipc_call_flags(child, &m, IPC_FOREVER, IPC_RECV_BUF);
    CHECK(r == E_2BIG && area_ok(rb, 3 * PAGE, rb, 0, 0),
          "step 12, 200-byte reply into 100 bytes: r=%ld", r);
    m = (struct ipc_msg){{13}};
    EXPECT(ipc_send(child, &m, IPC_FOREVER), 0, "step 13");

    int status = -1;
    {
        long w = sys_task_wait((int)task, &status);
        CHECK(w == task && status == 0, "bufpeer: task_wait %ld, status %d", w, status);
    }
}

static int bufpeer(int p)
{
    struct ipc_utcb u;
    struct ipc_msg m = {{0}};
    long r;
    EXPECT(ipc_set_utcb(&u), 0, "register UTCB");
    uint8_t *area = map_pages(3), *sb = map_pages(2), *ro;
    if (!area || !sb)
        return 1;

    /* receive step `step` into [buf, buf+cap) of the 3-page area */
#define RECV(step, buf, cap, flags)                                                  \
    do {                                                                             \
        memset(area, 0xee, 3 * PAGE);                                                \
        u.recv_buf = (buf);                                                          \
        u.recv_cap = (cap);                                                          \
        u.recv_len = 12345;                                                          \
        r = ipc_recv_flags(p, &m, IPC_FOREVER, (flags));                             \
        CHECK(r == p && m.w[0] == (uint64_t)(step), "step %d: r=%ld w0=%llu", (step), r,       \
              (unsigned long long)m.w[0]);                                           \
    } while (0)

    static const uint64_t offs[] = {PAGE - 1000, PAGE - 1000, PAGE - 1000, PAGE - 1000, PAGE};
    for (int step = 1; step <= 5; step++) {
        RECV(step, area + offs[step - 1], IPC_BUF_MAX, IPC_RECV_BUF);
        CHECK(u.recv_len == m.w[1] && area_ok(area, 3 * PAGE, u.recv_buf, m.w[1], m.w[2]),
              "step %d: recv_len %llu of %llu, contents %s", step, (unsigned long long)u.recv_len,
              (unsigned long long)m.w[1],
              area_ok(area, 3 * PAGE, u.recv_buf, m.w[1], m.w[2]) ? "ok" : "wrong");
    }
    RECV(6, area + 100, IPC_BUF_MAX, IPC_RECV_BUF);
    CHECK(u.recv_len == 0, "step 6: no buffer sent, recv_len %llu", (unsigned long long)u.recv_len);
    RECV(7, area + 100, IPC_BUF_MAX, 0);
    CHECK(u.recv_len == 12345 && area_ok(area, 3 * PAGE, area, 0, 0),
          "step 7: buffer not accepted but written (recv_len %llu)", (unsigned long long)u.recv_len);
    RECV(8, area + PAGE - 1000, IPC_BUF_MAX, IPC_RECV_BUF);
    CHECK(u.recv_len == 300 && area_ok(area, 3 * PAGE, u.recv_buf, 300, 8),
          "step 8: recv_len %llu", (unsigned long long)u.recv_len);

    /* 9: bad receive buffers fail at once, without blocking or taking a message */
    static const struct { uint64_t addr, cap; long want; } bad[] = {
        {0x1000, 100, E_FAULT},
        {0xffffffff80100000ull, 100, E_FAULT},
        {USER_SPACE_END - 100, 200, E_FAULT},
        {0, IPC_BUF_MAX + 1, E_2BIG},     /* addr 0 is replaced by a good buffer below */
    };
    for (unsigned i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        u.recv_buf = bad[i].addr ? (void *)(uintptr_t)bad[i].addr : area;
        u.recv_cap = bad[i].cap;
        r = ipc_recv_flags(p, &m, IPC_FOREVER, IPC_RECV_BUF);
        CHECK(r == bad[i].want, "bad receive buffer %d: %ld (expected %ld)", i, r, bad[i].want);
    }
    ro = (uint8_t *)(uintptr_t)sys_vm_map(PAGE, PROT_READ);
    u.recv_buf = ro;
    u.recv_cap = 100;
    EXPECT(ipc_recv_flags(p, &m, IPC_FOREVER, IPC_RECV_BUF), E_FAULT, "read-only receive buffer");
    CHECK(ipc_set_utcb(NULL) == 0, "unregister UTCB");
    EXPECT(ipc_recv_flags(p, &m, IPC_FOREVER, IPC_RECV_BUF), E_FAULT, "RECV_BUF without a UTCB");
    CHECK(ipc_set_utcb((struct ipc_utcb *)ro) == E_FAULT, "read-only UTCB accepted");
    CHECK(ipc_set_utcb(&u) == 0, "register UTCB again");

    /* 10: 200 bytes into a 100-byte buffer: E_2BIG, nothing written */
    memset(area, 0xee, 3 * PAGE);
    u.recv_buf = area + PAGE - 30;
    u.recv_cap = 100;
    r = ipc_recv_flags(p, &m, IPC_FOREVER, IPC_RECV_BUF);
    CHECK(r == E_2BIG && area_ok(area, 3 * PAGE, area, 0, 0), "step 10: r=%ld", r);

    /* 11: a call with a buffer; reply with one and wait for step 12 in the same call */
    RECV(11, area + PAGE - 1000, IPC_BUF_MAX, IPC_RECV_BUF);
    CHECK(u.recv_len == 3000 && area_ok(area, 3 * PAGE, u.recv_buf, 3000, 11),
          "step 11: recv_len %llu", (unsigned long long)u.recv_len);
    fill(sb + PAGE - 1234, 2500, 12);
    u.send_buf = sb + PAGE - 1234;
    u.send_len = 2500;
    m = (struct ipc_msg){{0x111}};
    r = ipc_raw(SYS_IPC_REPLY_RECV, p, p, IPC_FOREVER | IPC_SEND_BUF | IPC_RECV_BUF, &m);
    CHECK(r == p && m.w[0] == 12, "step 12 after the reply: r=%ld w0=%llu", r, (unsigned long long)m.w[0]);
    /* 12: reply with 200 bytes to a caller that takes 100: its problem, not ours */
    u.send_len = 200;
    r = ipc_raw(SYS_IPC_REPLY_RECV, p, p, IPC_FOREVER | IPC_SEND_BUF | IPC_RECV_BUF, &m);
    CHECK(r == p && m.w[0] == 13, "step 13 after the oversized reply: r=%ld w0=%llu", r,
          (unsigned long long)m.w[0]);
#undef RECV
    return fails;
}

/* ---- prio -------------------------------------------------------------------------- */
static char plog[16];
static int plog_n;

static void plog_add(char c)
{
    int i = __atomic_fetch_add(&plog_n, 1, __ATOMIC_SEQ_CST);
    if (i < (int)sizeof(plog) - 1)
        plog[i] = c;
}

/* L: receive one message, log, answer it with a plain send. */
static int low_fn(void *p)
{
    (void)p;
    struct ipc_msg m = {{0}};
    long from = ipc_recv(IPC_ANY, &m, IPC_FOREVER);
    plog_add('L');
    if (from > 0 && m.w[0] == 1)
        ipc_send((int)from, &m, IPC_FOREVER);
    return 0;
}

static int high_fn(void *p)
{
    (void)p;
    plog_add('H');
    return 0;
}

/* The main thread (priority `sp`) calls (or sends to) L (priority 50, blocked receiving)
 * while H (priority hp) is ready; returns the order of events. */
static const char *prio_case(int sp, int hp, int use_call)
{
    struct thread tl, th;
    memset(plog, 0, sizeof(plog));
    plog_n = 0;
    sys_set_priority(0, 200);
    start(&tl, low_fn, NULL, 50);
    sys_set_priority(0, sp);
    CHECK(wait_state(tl.tid, TS_BLOCKED, 100), "L never blocked");
    start(&th, high_fn, NULL, hp);          /* ready; cannot run while we do (hp <= sp) */
    struct ipc_msg m = {{(uint64_t)use_call}};
    plog_add('a');
    long r = use_call ? ipc_call(tl.tid, &m, IPC_FOREVER) : ipc_send(tl.tid, &m, IPC_FOREVER);
    plog_add('b');
    CHECK(r == (use_call ? tl.tid : 0), "IPC to L: %ld", r);
    join(&th);
    join(&tl);
    sys_set_priority(0, PRIO_DEFAULT);
    return plog;
}

/* The server (main, priority 100) replies to a client of priority 50 and blocks receiving
 * while H (priority 80) is ready: H must run before the client. */
static int client_fn(void *p)
{
    int server = (int)(intptr_t)p;
    struct ipc_msg m = {{5}};
    plog_add('c');
    ipc_call(server, &m, IPC_FOREVER);
    plog_add('d');
    return 0;
}

static const char *prio_reply_case(void)
{
    struct thread tc, th;
    memset(plog, 0, sizeof(plog));
    plog_n = 0;
    start(&tc, client_fn, (void *)(intptr_t)thread_self(), 50);
    struct ipc_msg m = {{0}};
    long from = ipc_recv(IPC_ANY, &m, IPC_FOREVER);
    CHECK(from == tc.tid, "call from the client: %ld", from);
    start(&th, high_fn, NULL, 80);
    plog_add('s');
    long r = ipc_reply_recv((int)from, IPC_ANY, &m, 20);
    plog_add('t');
    CHECK(r == E_TIMEOUT, "server reply_recv: %ld", r);
    join(&th);
    join(&tc);
    return plog;
}

static void test_prio(void)
{
    char dts[8] = "on";
    sys_kopt("dts", dts, sizeof(dts));
    int on = strcmp(dts, "off") != 0;
    static const struct {
        const char *name;
        int sp, hp, call;
        const char *on, *off;
    } cases[] = {
        /* a higher-priority thread (80) is ready: it runs before L (50), DTS or not */
        {"call-higher-ready", 100, 80, 1, "aHLb", "aHLb"},
        /* only lower priorities ready: the direct switch to L */
        {"call-lower-ready", 100, 40, 1, "aLbH", "aLbH"},
        /* equal priority ready: DTS runs L at once, without DTS H goes first (FIFO) */
        {"call-equal-ready", 100, 50, 1, "aLbH", "aHLb"},
        /* send from an equal-priority sender: DTS switches to L before the sender goes on */
        {"send-equal", 50, 20, 0, "aLbH", "abLH"},
        /* send to a lower-priority L: never switches */
        {"send-lower", 100, 20, 0, "abLH", "abLH"},
    };
    for (unsigned i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        const char *got = prio_case(cases[i].sp, cases[i].hp, cases[i].call);
        const char *want = on ? cases[i].on : cases[i].off;
        printf("prio %s dts=%s order=%s\n", cases[i].name, on ? "on" : "off", got);
        CHECK(!strcmp(got, want), "%s (dts %s): order %s, expected %s", cases[i].name,
              on ? "on" : "off", got, want);
    }
    const char *got = prio_reply_case();
    printf("prio reply-higher-ready dts=%s order=%s\n", on ? "on" : "off", got);
    CHECK(!strcmp(got, "csHdt"), "reply with H ready: order %s, expected csHdt", got);
}

/* ---- storm ------------------------------------------------------------------------- */
enum { MAX_CLIENTS = 256, MAX_SERVERS = 64, KIND_SEND = 1, KIND_CALL = 2, KIND_STOP = 3 };
#define REPLY_MAGIC 0x5a5a000000000000ull

static int nclients, nservers, per_client;
static int server_tid[MAX_SERVERS], client_tid[MAX_CLIENTS];
static uint32_t server_next[MAX_SERVERS][MAX_CLIENTS];   /* next seq expected per pair */
static uint32_t client_sent[MAX_CLIENTS][MAX_SERVERS];   /* messages sent per pair */
static uint64_t server_got[MAX_SERVERS];
static int storm_errors;
static uint64_t storm_replies;                           /* replies that checked out */
static volatile int storm_ready;

/* message: w0 = client | server << 16 | kind << 24 | seq << 32, w1..w7 derived */
static void storm_msg(struct ipc_msg *m, int c, int s, int kind, uint32_t seq)
{
    uint64_t key = (uint64_t)c | (uint64_t)s << 16 | (uint64_t)kind << 24 | (uint64_t)seq << 32;
    msg_make(m, key);
}

static void storm_error(const char *what, long a, long b)
{
    if (__atomic_fetch_add(&storm_errors, 1, __ATOMIC_SEQ_CST) < 10)
        printf("FAIL storm: %s (%ld, %ld)\n", what, a, b);
}

static int storm_server(void *p)
{
    int j = (int)(intptr_t)p;
    struct ipc_msg m = {{0}};
    long from = ipc_recv(IPC_ANY, &m, IPC_FOREVER);
    for (;;) {
        if (from < 0) {
            storm_error("server receive", j, from);
            return 1;
        }
        int c = (int)(m.w[0] & 0xffff), s = (int)(m.w[0] >> 16 & 0xff);
        int kind = (int)(m.w[0] >> 24 & 0xff);
        uint32_t seq = (uint32_t)(m.w[0] >> 32);
        if (kind == KIND_STOP)
            return 0;
        if (!msg_ok(&m) || s != j || c < 0 || c >= nclients) {
            storm_error("corrupt message at server", j, (long)m.w[0]);
            from = ipc_recv(IPC_ANY, &m, IPC_FOREVER);
            continue;
        }
        if (!client_tid[c])
            client_tid[c] = (int)from;       /* servers in their own task learn the ids */
        else if (from != client_tid[c])
            storm_error("wrong sender id", from, client_tid[c]);
        if (seq != server_next[j][c])
            storm_error(seq < server_next[j][c] ? "duplicate or reordered" : "lost message",
                        (long)seq, (long)server_next[j][c]);
        server_next[j][c] = seq + 1;
        server_got[j]++;
        if (kind == KIND_CALL) {
            msg_make(&m, REPLY_MAGIC | (uint64_t)seq << 16 | (uint64_t)j);
            from = ipc_reply_recv((int)from, IPC_ANY, &m, IPC_FOREVER);
        } else {
            from = ipc_recv(IPC_ANY, &m, IPC_FOREVER);
        }
    }
}

static int storm_client(void *p)
{
    int i = (int)(intptr_t)p;
    while (!storm_ready)
        sys_yield();
    for (int k = 0; k < per_client; k++) {
        int j = (i + k) % nservers;
        uint32_t seq = client_sent[i][j];
        int kind = (k & 1) ? KIND_SEND : KIND_CALL;
        struct ipc_msg m = {{0}};
        storm_msg(&m, i, j, kind, seq);
        client_sent[i][j] = seq + 1;
        if (kind == KIND_CALL) {
            long r = ipc_call(server_tid[j], &m, IPC_FOREVER);
            if (r != server_tid[j] || !msg_ok(&m) ||
                m.w[0] != (REPLY_MAGIC | (uint64_t)seq << 16 | (uint64_t)j))
                storm_error("bad reply", r, (long)m.w[0]);
            else
                __atomic_add_fetch(&storm_replies, 1, __ATOMIC_RELAXED);
        } else {
            long r = ipc_send(server_tid[j], &m, IPC_FOREVER);
            if (r != 0)
                storm_error("send failed", r, j);
        }
    }
    return 0;
}

static void test_storm(int c, int s, int per)
{
    if (c < 1 || c > MAX_CLIENTS || s < 1 || s > MAX_SERVERS || per < 1) {
        CHECK(0, "storm: bad parameters %d %d %d", c, s, per);
        return;
    }
    nclients = c;
    nservers = s;
    per_client = per;
    static struct thread st[MAX_SERVERS], ct[MAX_CLIENTS];
    for (int j = 0; j < s; j++)
        server_tid[j] = start(&st[j], storm_server, (void *)(intptr_t)j, PRIO_INHERIT);
    for (int i = 0; i < c; i++)
        client_tid[i] = start(&ct[i], storm_client, (void *)(intptr_t)i, PRIO_INHERIT);
    uint64_t t0 = now(), c0 = rdtsc();
    storm_ready = 1;
    for (int i = 0; i < c; i++)
        CHECK(join(&ct[i]) == 0, "client %d", i);
    uint64_t dt = now() - t0, dc = rdtsc() - c0;
    for (int j = 0; j < s; j++) {
        struct ipc_msg m = {{0}};
        storm_msg(&m, 0, j, KIND_STOP, 0);
        CHECK(ipc_send(server_tid[j], &m, IPC_FOREVER) == 0, "stop server %d", j);
        CHECK(join(&st[j]) == 0, "server %d", j);
    }
    uint64_t total = 0, sent = 0;
    int lost = 0;
    for (int j = 0; j < s; j++) {
        total += server_got[j];
        for (int i = 0; i < c; i++) {
            sent += client_sent[i][j];
            if (server_next[j][i] != client_sent[i][j])
                lost++;
        }
    }
    CHECK(lost == 0, "storm: %d client/server pairs lost messages at the end", lost);
    CHECK(total == sent && sent == (uint64_t)c * (uint64_t)per, "storm: sent %llu, received %llu",
          (unsigned long long)sent, (unsigned long long)total);
    CHECK(storm_errors == 0, "storm: %d errors", storm_errors);
    printf("storm threads=%d messages=%llu replies=%llu ticks=%llu tsc=%llu errors=%d\n", c + s,
           (unsigned long long)total, (unsigned long long)storm_replies,
           (unsigned long long)dt, (unsigned long long)dc, storm_errors);
}

/* The same storm with the servers in a child task (`stormserve`): every message crosses
 * address spaces. The child reports how many messages each server took. */
enum { TAG_SERVER = 0x5345, TAG_SREPORT = 0x5352 };

static void test_storm_tasks(int c, int s, int per)
{
    if (c < 1 || c > MAX_CLIENTS || s < 1 || s > MAX_SERVERS || per < 1) {
        CHECK(0, "storm: bad parameters %d %d %d", c, s, per);
        return;
    }
    int me = thread_self();
    nclients = c;
    nservers = s;
    per_client = per;
    char a1[16], a2[16];
    const char *argv[] = {"ipctest", "stormserve", tidstr(a1, s), tidstr(a2, me)};
    long task = sys_spawn("ipctest", argv, 4, 0);
    CHECK(task > 0, "spawn stormserve: %ld", task);
    EXPECT(ipc_grant((int)task, me), 0, "grant to the server task");
    int child = tid_of_task((int)task, 100);
    struct ipc_msg m = {{TAG_GO}};
    EXPECT(ipc_send(child, &m, IPC_FOREVER), 0, "go to the server task");
    for (int k = 0; k < s; k++) {
        long r = ipc_recv(child, &m, 500);
        CHECK(r == child && m.w[0] == TAG_SERVER && m.w[1] < (uint64_t)s, "server id: r=%ld", r);
        if (r == child && m.w[1] < (uint64_t)s)
            server_tid[m.w[1]] = (int)m.w[2];
    }
    static struct thread ct[MAX_CLIENTS];
    for (int i = 0; i < c; i++)
        client_tid[i] = start(&ct[i], storm_client, (void *)(intptr_t)i, PRIO_INHERIT);
    uint64_t t0 = now();
    storm_ready = 1;
    for (int i = 0; i < c; i++)
        CHECK(join(&ct[i]) == 0, "client %d", i);
    uint64_t dt = now() - t0;
    for (int j = 0; j < s; j++) {
        storm_msg(&m, 0, j, KIND_STOP, 0);
        EXPECT(ipc_send(server_tid[j], &m, IPC_FOREVER), 0, "stop server %d", j);
    }
    uint64_t total = 0;
    long child_errors = 0;
    for (int k = 0; k < s; k++) {
        long r = ipc_recv(child, &m, 500);
        int j = (int)m.w[1];
        if (r != child || m.w[0] != TAG_SREPORT || j < 0 || j >= s) {
            CHECK(0, "server report: r=%ld", r);
            continue;
        }
        uint64_t sent = 0;
        for (int i = 0; i < c; i++)
            sent += client_sent[i][j];
        CHECK(m.w[2] == sent, "server %d received %llu of %llu messages", j,
              (unsigned long long)m.w[2], (unsigned long long)sent);
        total += m.w[2];
        child_errors = (long)m.w[3];
    }
    int status = -1;
    {
        long w = sys_task_wait((int)task, &status);
        CHECK(w == task && status == 0, "stormserve: task_wait %ld, status %d", w, status);
    }
    CHECK(child_errors == 0 && storm_errors == 0, "storm: %ld errors in the servers, %d in the clients",
          child_errors, storm_errors);
    CHECK(total == (uint64_t)c * (uint64_t)per, "storm: received %llu", (unsigned long long)total);
    printf("storm tasks threads=%d messages=%llu replies=%llu ticks=%llu errors=%ld\n", c + s,
           (unsigned long long)total, (unsigned long long)storm_replies,
           (unsigned long long)dt, child_errors + storm_errors);
}

static int stormserve(int s, int p)
{
    if (s < 1 || s > MAX_SERVERS)
        return 1;
    nservers = s;
    nclients = MAX_CLIENTS;
    static struct thread st[MAX_SERVERS];
    for (int j = 0; j < s; j++)
        server_tid[j] = start(&st[j], storm_server, (void *)(intptr_t)j, PRIO_INHERIT);
    struct ipc_msg m;
    long r = ipc_recv(p, &m, IPC_FOREVER);
    CHECK(r == p && m.w[0] == TAG_GO, "go: %ld", r);
    for (int j = 0; j < s; j++) {
        m = (struct ipc_msg){{TAG_SERVER, (uint64_t)j, (uint64_t)server_tid[j]}};
        EXPECT(ipc_send(p, &m, IPC_FOREVER), 0, "server id %d", j);
    }
    for (int j = 0; j < s; j++)
        CHECK(join(&st[j]) == 0, "server %d", j);
    for (int j = 0; j < s; j++) {
        m = (struct ipc_msg){{TAG_SREPORT, (uint64_t)j, server_got[j], (uint64_t)storm_errors}};
        EXPECT(ipc_send(p, &m, IPC_FOREVER), 0, "report %d", j);
    }
    return fails || storm_errors;
}

/* ---- main -------------------------------------------------------------------------- */
int main(int argc, char **argv)
{
    if (argc < 2) {
        printf("usage: ipctest order|timeout|dead|perm|buf|prio|storm C S M\n");
        return 2;
    }
    mode = argv[1];
    if (!strcmp(mode, "sleeper") && argc >= 3) {
        sys_sleep((uint64_t)atoi(argv[2]));
        return 0;
    }
    if (!strcmp(mode, "permchild") && argc >= 5)
        return permchild(atoi(argv[2]), atoi(argv[3]), atoi(argv[4]));
    if (!strcmp(mode, "permgrand") && argc >= 4)
        return permgrand(atoi(argv[2]), atoi(argv[3]));
    if (!strcmp(mode, "bufpeer") && argc >= 3)
        return bufpeer(atoi(argv[2]));
    if (!strcmp(mode, "stormserve") && argc >= 4)
        return stormserve(atoi(argv[2]), atoi(argv[3]));
    if (!strcmp(mode, "killpeer") && argc >= 3)
        return killpeer(atoi(argv[2]));

    if (!strcmp(mode, "order"))
        test_order();
    else if (!strcmp(mode, "timeout"))
        test_timeout();
    else if (!strcmp(mode, "dead"))
        test_dead();
    else if (!strcmp(mode, "perm"))
        test_perm();
    else if (!strcmp(mode, "buf"))
        test_buf();
    else if (!strcmp(mode, "prio"))
        test_prio();
    else if (!strcmp(mode, "storm") && argc > 5 && !strcmp(argv[5], "tasks"))
        test_storm_tasks(atoi(argv[2]), atoi(argv[3]), atoi(argv[4]));
    else if (!strcmp(mode, "storm"))
        test_storm(argc > 2 ? atoi(argv[2]) : 48, argc > 3 ? atoi(argv[3]) : 16,
                   argc > 4 ? atoi(argv[4]) : 20834);
    else {
        printf("ipctest: unknown mode %s\n", mode);
        return 2;
    }
    if (fails)
        printf("ipctest %s FAIL %d\n", mode, fails);
    else
        printf("ipctest %s ok\n", mode);
    return fails != 0;
}
