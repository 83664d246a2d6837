/* ipctest storm: client threads send sequence-numbered messages to server threads in the
 * same task or in a child task (`stormserve`); every message and reply is checked. */
#include "ipctest.h"

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

void test_storm(int c, int s, int per)
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

void test_storm_tasks(int c, int s, int per)
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

int stormserve(int s, int p)
{
    if (s < 1 || s > MAX_SERVERS)
        return 1;
    nservers = s;
    nclients = MAX_CLIENTS;
    static struct thread st[MAX_SERVERS];
    for (int j = 0; j < s; j++)
        server_tid[j] = start(&st[j], storm_server, (void *)(intptr_t)j, PRIO_INHERIT);
    struct ipc_msg m = {{0}};
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
