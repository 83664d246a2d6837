/* ipctest order: blocked senders are served in arrival order, receive-from-any reports the
 * sender, a closed receive picks its sender out of the queue; IPC with ourselves fails. */
#include "ipctest.h"

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

void test_order(void)
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
