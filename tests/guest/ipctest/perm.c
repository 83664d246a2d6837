/* ipctest perm: access control (E_PERM), SYS_IPC_GRANT, the one-shot reply right, and
 * delegation to a grandchild (helper tasks `permchild` and `permgrand`). */
#include "ipctest.h"

enum { TAG_HELLO = 0x68656c6c6f, TAG_REPLY = 0x7270, TAG_G = 0x47,
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

void test_perm(void)
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

int permchild(int p, int p2, int p3)
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

int permgrand(int p, int parent)
{
    struct ipc_msg m = {{0}};
    long r = ipc_recv(parent, &m, 500);
    CHECK(r == parent && m.w[0] == TAG_GO, "go from the child: %ld", r);
    m.w[0] = TAG_G;
    EXPECT(ipc_send(p, &m, IPC_FOREVER), 0, "send with a delegated right");
    return fails;
}
