/* ipctest timeout: poll, N ticks and forever, for send, recv, call and reply_recv. */
#include "ipctest.h"

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

void test_timeout(void)
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
