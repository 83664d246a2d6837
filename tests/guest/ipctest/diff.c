/*
 * diff SEED STEPS: randomised IPC sequences whose printed results are the differential
 * test of the fastpath (tests/test_ipc.py boots this with ipc_fastpath=on and =off, under
 * icount, and requires the same output; docs/ipc.md).
 *
 * A director (this main thread, priority 200) drives WORKERS worker threads of random
 * priorities and a passive echo peer in a child task (`diffpeer`). Each step it gives one
 * idle worker one operation — send, recv, call, reply_recv with random partners (other
 * workers, itself, the peer, a thread of a foreign task, an unknown id, 0), timeouts (poll,
 * 2 ticks, 5000 ticks, forever) and buffer flags — or tells it to exit (its slot is joined
 * and refilled: partners blocked on it see E_DEAD) or changes its priority. Then the
 * director waits until the system is quiet: every worker idle or blocked in IPC (2-tick
 * waits run to their end). So each operation meets a state that depends only on the
 * sequence, never on timing, and every result is deterministic; only the interleaving of
 * the printed lines is not, so the host compares them per worker.
 *
 * Lines: "DIFF w<slot>.<gen> <step> <op> r=<result> h=<hash of the 8 words> [len=<n>
 * buf=<hash>]" when an operation ends, and "DIFF end ..." with every worker's final state.
 * Thread ids in results are printed as names (w<slot>.<gen>, peer, foreign). The run stops
 * early when only one worker is idle and nothing changes for STUCK steps.
 */
#include "ipctest.h"

#define WORKERS 4
#define STUCK 40
#define LONG_WAIT 5000
#define PEER_STOP 0x53544f50ull

enum op { OP_SEND, OP_RECV, OP_CALL, OP_REPLY_RECV, OP_EXIT, OP_PRIO };
static const char *const op_names[] = {"send", "recv", "call", "reply_recv", "exit", "prio"};
static const long op_calls[] = {SYS_IPC_SEND, SYS_IPC_RECV, SYS_IPC_CALL, SYS_IPC_REPLY_RECV};

struct cmd {
    int op, step;
    long a, b;               /* partner ids as the call takes them */
    uint64_t rdx;            /* timeout | flags */
};

struct worker {
    struct thread t;
    int slot, gen, tid;
    volatile int pending;    /* a command waits in cmd */
    volatile int busy;       /* the worker is carrying it out */
    volatile int last_from;  /* the sender of its last message received (reply target) */
    struct cmd cmd;
    struct ipc_utcb utcb;
    char send_buf[96], recv_buf[64];
};

static struct worker workers[WORKERS];
static int peer_tid, foreign_tid;

/* ---- names and hashes ------------------------------------------------------------- */
static const char *name_of(long r, char buf[24])
{
    for (int i = 0; i < WORKERS; i++)
        if (r == workers[i].tid) {
            snprintf(buf, 24, "w%d.%d", i, workers[i].gen);
            return buf;
        }
    if (r > 0 && r == peer_tid)
        return "peer";
    if (r > 0 && r == foreign_tid)
        return "foreign";
    snprintf(buf, 24, "%ld", r);
    return buf;
}

static uint64_t hash(const void *p, size_t n)
{
    uint64_t h = 1469598103934665603ull;
    for (size_t i = 0; i < n; i++)
        h = (h ^ ((const uint8_t *)p)[i]) * 1099511628211ull;
    return h;
}

/* ---- workers ------------------------------------------------------------------------ */
static void report(struct worker *w, const struct cmd *c, long r, const struct ipc_msg *m)
{
    char name[24], extra[64] = "";
    if (c->rdx & IPC_RECV_BUF)
        snprintf(extra, sizeof(extra), " len=%llu buf=%016llx",
                 (unsigned long long)w->utcb.recv_len,
                 (unsigned long long)hash(w->recv_buf, sizeof(w->recv_buf)));
    printf("DIFF w%d.%d %d %s r=%s h=%016llx%s\n", w->slot, w->gen, c->step, op_names[c->op],
           name_of(r, name), (unsigned long long)hash(m, sizeof(*m)), extra);
}

static int worker_fn(void *p)
{
    struct worker *w = p;
    ipc_set_utcb(&w->utcb);
    for (;;) {
        while (!w->pending)
            sys_sleep(1);
        struct cmd c = w->cmd;
        w->busy = 1;
        w->pending = 0;
        if (c.op == OP_EXIT)
            return 0;                          /* busy stays set: the director joins */
        struct ipc_msg m;
        msg_make(&m, (uint64_t)c.step << 8 | (uint64_t)w->slot);
        memset(w->recv_buf, 0, sizeof(w->recv_buf));
        w->utcb.recv_len = ~0ull;
        long r = ipc_raw(op_calls[c.op], c.a, c.b, c.rdx, &m);
        report(w, &c, r, &m);
        if (r > 0 && (c.op == OP_RECV || c.op == OP_REPLY_RECV))
            w->last_from = (int)r;
        w->busy = 0;
    }
}

static void worker_start(int slot, int prio)
{
    struct worker *w = &workers[slot];
    w->slot = slot;
    w->pending = w->busy = w->last_from = 0;
    for (size_t i = 0; i < sizeof(w->send_buf); i++)
        w->send_buf[i] = (char)(slot * 31 + w->gen * 7 + (int)i);
    w->utcb = (struct ipc_utcb){.send_buf = w->send_buf, .send_len = 40 + 8 * (uint64_t)slot,
                                .recv_buf = w->recv_buf, .recv_cap = 56 - 8 * (uint64_t)slot};
    w->tid = start(&w->t, worker_fn, w, prio);
}

/* ---- the peer task: answers calls with every word + 1 -----------------------------
 * It may send to a worker only with the one-shot reply right. When the step in word 0 is
 * a multiple of 3 its reply's receive phase waits 2 ticks (the director waits for that),
 * times out, and a poll send to the caller whose right the reply has used up must give
 * E_PERM. */
int diffpeer(void)
{
    struct ipc_msg m = {{0}};
    sys_set_priority(0, 40);                   /* below the workers: its replies may switch */
    long from = ipc_recv(IPC_ANY, &m, IPC_FOREVER);
    while (from > 0 && m.w[0] != PEER_STOP) {
        uint64_t step = m.w[0] >> 8;
        for (int i = 0; i < 8; i++)
            m.w[i]++;
        long r = ipc_reply_recv((int)from, IPC_ANY, &m, step % 3 ? IPC_FOREVER : 2);
        if (r == E_TIMEOUT) {
            struct ipc_msg again = {{step}};
            printf("DIFF peer %llu again r=%ld\n", (unsigned long long)step,
                   ipc_send((int)from, &again, IPC_POLL));
        }
        from = r > 0 ? r : ipc_recv(IPC_ANY, &m, IPC_FOREVER);   /* a send: no reply */
    }
    return 0;
}

/* A thread of a task that is neither ours nor our child (the shell or init): sending to
 * it needs a right we do not have. */
static int foreign_thread(int peer_task)
{
    static struct ps_entry ps[256];
    struct self_info me;
    sys_self(&me);
    long n = sys_ps(ps, 256);
    for (long i = 0; i < n; i++)
        if (ps[i].task > 0 && ps[i].task != me.task && ps[i].task != peer_task &&
            ps[i].state != TS_ZOMBIE)
            return ps[i].tid;
    return 0;
}

/* ---- the director ------------------------------------------------------------------- */
static uint64_t rng;

static unsigned rnd(unsigned n)
{
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return (unsigned)(rng % n);
}

/* A partner id: a worker (perhaps the caller itself), the peer, a foreign thread, an
 * unknown id, or 0. */
static long pick_partner(void)
{
    unsigned k = rnd(WORKERS + 4);
    if (k < WORKERS)
        return workers[k].tid;
    static const int others[] = {0, 0x7ffffe, 0, 0};
    return k == WORKERS ? peer_tid : k == WORKERS + 1 ? foreign_tid : others[k - WORKERS - 2];
}

static uint64_t pick_timeout(int op, int must_not_block)
{
    static const uint32_t choices[] = {IPC_POLL, 2, LONG_WAIT, IPC_FOREVER};
    if (must_not_block)
        return IPC_POLL;
    uint32_t t = choices[rnd(4)];
    return op == OP_CALL && t == 2 ? IPC_FOREVER : t;  /* a call's reply wait is untimed */
}

static struct cmd random_cmd(int step, int last_idle)
{
    struct cmd c = {.step = step};
    unsigned k = rnd(20);
    c.op = k < 4 ? OP_SEND : k < 8 ? OP_RECV : k < 13 ? OP_CALL : k < 18 ? OP_REPLY_RECV
         : k == 18 ? OP_EXIT : OP_PRIO;
    if (last_idle && c.op == OP_CALL)
        c.op = OP_SEND;                        /* its reply wait could block the last one */
    c.a = c.op == OP_RECV && rnd(3) ? IPC_ANY : pick_partner();
    c.b = c.op == OP_REPLY_RECV && rnd(5) ? IPC_ANY : pick_partner();
    c.rdx = pick_timeout(c.op, last_idle);
    if (rnd(6) == 0)
        c.rdx |= (uint64_t)(rnd(3) + 1) << 32; /* IPC_SEND_BUF, IPC_RECV_BUF or both */
    return c;
}

/* An operation of worker w that completes another worker's blocked one (the cases the
 * fastpath takes, and their neighbours): send or call to a worker blocked receiving from
 * w or anyone, reply to a caller waiting for w, receive from a sender blocked on w.
 * Returns 0 when no worker waits for w. It may block w, but wakes the other. */
static int matching_cmd(const struct worker *w, int step, int last_idle, struct cmd *c)
{
    struct cmd cands[WORKERS];
    int n = 0;
    for (int i = 0; i < WORKERS; i++) {
        const struct worker *b = &workers[i];
        if (b == w || !b->busy)
            continue;
        struct cmd x = {.step = step, .b = IPC_ANY, .rdx = rnd(3) ? IPC_FOREVER : LONG_WAIT};
        long from = b->cmd.op == OP_RECV ? b->cmd.a : b->cmd.b;
        if ((b->cmd.op == OP_RECV || b->cmd.op == OP_REPLY_RECV) &&
            (from == IPC_ANY || from == w->tid)) {
            x.op = rnd(3) ? OP_CALL : OP_SEND;
            x.a = b->tid;
        } else if (b->cmd.op == OP_CALL && b->cmd.a == w->tid && w->last_from == b->tid) {
            x.op = OP_REPLY_RECV;
            x.a = b->tid;
        } else if ((b->cmd.op == OP_SEND || b->cmd.op == OP_CALL) && b->cmd.a == w->tid) {
            x.op = OP_RECV;                    /* b may wait for our reply already: */
            x.a = rnd(2) ? IPC_ANY : b->tid;
            if (last_idle)
                x.rdx = IPC_POLL;                  /* then the last idle one must not block */
        } else {
            continue;
        }
        if (rnd(8) == 0)
            x.rdx |= (uint64_t)(rnd(3) + 1) << 32;
        cands[n++] = x;
    }
    if (n)
        *c = cands[rnd((unsigned)n)];
    return n;
}

static struct cmd pick_cmd(const struct worker *w, int step, int last_idle)
{
    struct cmd c;
    if ((last_idle || rnd(3)) && matching_cmd(w, step, last_idle, &c))
        return c;
    if (rnd(5) == 0)                           /* the peer answers at once */
        return (struct cmd){.op = OP_CALL, .step = step, .a = peer_tid, .rdx = IPC_FOREVER};
    return random_cmd(step, last_idle);
}

/* Quiet: no command waiting, every busy worker blocked in IPC (a 2-tick wait, and an
 * exiting worker, must end first). */
static int quiet(void)
{
    for (int i = 0; i < WORKERS; i++) {
        struct worker *w = &workers[i];
        if (w->pending)
            return 0;
        if (w->busy && (w->cmd.op == OP_EXIT || (uint32_t)w->cmd.rdx == 2 ||
                        state_of(w->tid) != TS_BLOCKED))
            return 0;
    }
    return 1;
}

/* The check is of the state the loop saw. Called again, quiet() may be false by then on
 * several CPUs (e.g. the peer, on another CPU, answering a call whose caller was just seen
 * blocked): on -smp 2 about one run in 15 failed so, within a second or two, not after
 * the 10000 ticks a real hang takes. */
static void wait_quiet(int step)
{
    int settled = quiet();
    for (int i = 0; i < 10000 && !settled; i++) {
        sys_sleep(1);
        settled = quiet();
    }
    CHECK(settled, "step %d: workers never settled", step);
}

static void give(struct worker *w, struct cmd c)
{
    w->cmd = c;
    w->pending = 1;
    while (w->pending || (c.op == OP_EXIT && state_of(w->tid) != TS_ZOMBIE))
        sys_sleep(1);
    if (c.op == OP_EXIT) {
        join(&w->t);
        printf("DIFF w%d.%d %d exit\n", w->slot, w->gen, c.step);
        w->gen++;
        worker_start(w->slot, 50 + 10 * (int)rnd(5));
    }
}

static int idle_workers(int *first)
{
    int n = 0, off = (int)rnd(WORKERS);
    for (int k = 0; k < WORKERS; k++) {
        int i = (k + off) % WORKERS;
        if (!workers[i].busy && !n++)
            *first = i;
    }
    return n;
}

static void print_end(int step)
{
    for (int i = 0; i < WORKERS; i++) {
        struct worker *w = &workers[i];
        printf("DIFF end w%d.%d step %d busy=%d op=%s state=%d\n", i, w->gen, step, w->busy,
               w->busy ? op_names[w->cmd.op] : "-", w->busy ? state_of(w->tid) : -1);
    }
}

void test_diff(uint64_t seed, int steps)
{
    rng = seed * 0x9e3779b97f4a7c15ull + 1;
    sys_set_priority(0, 200);
    const char *argv[] = {"ipctest", "diffpeer"};
    long task = sys_spawn("ipctest", argv, 2, 0);
    CHECK(task > 0, "spawn diffpeer: %ld", task);
    peer_tid = tid_of_task((int)task, 100);
    foreign_tid = foreign_thread((int)task);
    CHECK(peer_tid > 0 && foreign_tid > 0, "peer %d, foreign %d", peer_tid, foreign_tid);
    for (int i = 0; i < WORKERS; i++)
        worker_start(i, 50 + 10 * (int)rnd(5));
    wait_quiet(0);
    int step, unchanged = 0;
    uint64_t last_busy = 0;
    for (step = 1; step <= steps && unchanged < STUCK; step++) {
        int slot = 0, idle = idle_workers(&slot);
        if (!idle)
            break;
        struct cmd c = pick_cmd(&workers[slot], step, idle == 1);
        if (c.op == OP_PRIO) {
            long r = sys_set_priority(workers[slot].tid, 50 + 10 * (int)rnd(5));
            printf("DIFF w%d.%d %d prio r=%ld\n", slot, workers[slot].gen, step, r);
        } else {
            give(&workers[slot], c);
        }
        if (c.op == OP_CALL && c.a == peer_tid && step % 3 == 0)
            sys_sleep(5);                      /* the peer's 2-tick wait (diffpeer) */
        wait_quiet(step);
        uint64_t busy = 0;
        for (int i = 0; i < WORKERS; i++)
            busy = busy << 8 | (uint64_t)(workers[i].busy | workers[i].gen << 1);
        unchanged = busy == last_busy && idle == 1 ? unchanged + 1 : 0;
        last_busy = busy;
    }
    print_end(step - 1);
    struct ipc_msg m = {{PEER_STOP}};
    EXPECT(ipc_send(peer_tid, &m, IPC_FOREVER), 0, "stop the peer");
    printf("diff steps=%d\n", step - 1);
}
