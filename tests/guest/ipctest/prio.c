/* ipctest prio: the L4 priority rule, with and without direct thread switching (dts). */
#include "ipctest.h"

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

void test_prio(void)
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
