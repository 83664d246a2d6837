/* ipctest dead: partners that exit while we are blocked, exited and unknown thread ids, and
 * a child task (`killpeer`) that exits while its threads wait in our queues. */
#include "ipctest.h"

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

void test_dead(void)
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
    struct ipc_msg m = {{0}};
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

int killpeer(int p)
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
