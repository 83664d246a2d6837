/*
 * The MK server runtime (docs/servers.md): the server is a user task whose main thread
 * receives calls from any client, runs the generated dispatch, and answers with
 * reply_recv, one system call per request. The kernel spawns the task at boot and names
 * its main thread as the interface's destination (kernel/srv/srv.c), so a client that
 * calls before the loop starts simply waits in the IPC send queue.
 *
 * Deferred answers (srv.h): an op that returns SRV_DEFERRED leaves its caller waiting for
 * our reply; the loop then only receives, and the server answers later with srv_answer
 * (the kernel lets a thread answer any caller waiting for its reply). Other threads of the
 * server reach the serving thread with srv_wake: a call with the wake label, on which the
 * loop runs the server's wake function (it runs it after every call too).
 *
 * Test only, for the servers whose bugs are tested (the options are declared for net):
 * with NAME_crash=N the server faults on receiving a call of op N; with NAME_longreply=N
 * it answers op N with one byte more than the room the caller gave; with NAME_hang=N it
 * answers its first N calls, then takes every call and answers none (a server that lives
 * but never answers); so that tests can check what its clients and the kernel do then.
 */
#include <stdbool.h>
#include <string.h>
#include <ondol/ipc.h>
#include <ondol/srv.h>
#include <ondol/sys.h>
#include <ondol/thread.h>

/* The label of srv_wake's call: interface 0, which no interface has (its op is ignored).
 * From a client it only runs the wake function early, which is harmless. */
#define SRV_WAKE_LABEL SRV_LABEL(0, 1, 0)

static uint8_t request_buf[IPC_BUF_MAX], reply_buf[IPC_BUF_MAX];
static uint8_t words_reply[IPC_BUF_MAX];   /* the words thread's replies (srv_words_thread) */
static int serving_tid;
static unsigned crash_op;              /* NAME_crash: the op to die on; 0 never */
static unsigned long_op;               /* NAME_longreply: the op to answer too long; 0 never */
static unsigned hang_after;            /* NAME_hang: calls answered before the hang; 0 never */
static unsigned calls_taken;           /* ...counted over both serving threads */
static const char *server_name;
static void (*wake_fn)(void);

/* Turn a received message into a call (the buffer is in request_buf, recv_len long). */
static void call_from_msg(struct srv_call *c, const struct ipc_msg *m, const struct ipc_utcb *u,
                          long client)
{
    for (int i = 0; i < IPC_MRS; i++)
        c->w[i] = m->w[i];
    c->in = request_buf;
    c->in_len = u->recv_len;
    c->out = reply_buf;
    c->out_cap = srv_label_cap(m->w[0]);
    c->client = (int)client;
    c->by_kernel = false;              /* the kernel tells such calls apart itself */
}

/* The serving thread defers; the words thread cannot (its calls are answered in its loop). */
int srv_defer(const struct srv_call *c) { return c->out == words_reply ? E_INVAL : c->client; }

long srv_answer(int token, const uint64_t w[IPC_MRS])
{
    struct ipc_msg m;
    for (int i = 0; i < IPC_MRS; i++)
        m.w[i] = w[i];
    /* the receive half polls the caller, which cannot be sending: E_TIMEOUT is success */
    long r = ipc_reply_recv(token, token, &m, IPC_POLL);
    return r == E_TIMEOUT ? 0 : r;
}

bool srv_privileged(const struct srv_call *c) { return sys_caller_privileged(c->client) == 1; }

void srv_set_wake(void (*fn)(void)) { wake_fn = fn; }

void srv_wake(void)
{
    struct ipc_msg m = {{SRV_WAKE_LABEL}};
    if (serving_tid)
        ipc_call(serving_tid, &m, 1);
}

/* Test only (NAME_crash): a fault of our own on a call of op crash_op. */
static __attribute__((noinline)) void crash_if_asked(uint64_t label)
{
    volatile uintptr_t unmapped = 8;
    if (srv_label_op(label) == crash_op)
        *(volatile int *)unmapped = 0;
}

/* Test only (NAME_hang): after hang_after calls this thread stops for good, holding the
 * call it took (its caller waits for an answer that never comes). */
static void hang_if_asked(void)
{
    if (!hang_after)
        return;
    unsigned n = __atomic_add_fetch(&calls_taken, 1, __ATOMIC_RELAXED);
    if (n <= hang_after)
        return;
    if (n == hang_after + 1) {        /* one thread says it, once */
        const char *parts[] = {server_name, ": not answering any more (test option ",
                               server_name, "_hang)\n"};
        for (int i = 0; i < 4; i++)
            sys_console_write(parts[i], strlen(parts[i]));
    }
    for (;;)
        sys_sleep(SLEEP_FOREVER);
}

/* Option NAME_suffix's number (an op, or a count of calls), or 0. */
static unsigned op_option(const char *name, const char *suffix)
{
    char key[48], val[8];
    size_t n = 0, k = 0;
    for (; name[n] && n < 16; n++)
        key[n] = name[n];
    for (; suffix[k] && k < 16; k++)
        key[n + k] = suffix[k];
    key[n + k] = 0;
    if (sys_kopt(key, val, sizeof val) <= 0)
        return 0;
    unsigned op = 0;
    for (const char *p = val; *p >= '0' && *p <= '9'; p++)
        op = op * 10 + (unsigned)(*p - '0');
    return op;
}

/* The length of the reply buffer to c (its out_len), or, for the test option
 * NAME_longreply, one byte more than the caller's room. */
static size_t reply_len(uint64_t label, const struct srv_call *c)
{
    if (long_op && srv_label_op(label) == long_op && c->out_cap < IPC_BUF_MAX)
        return c->out_cap + 1;
    return c->out_len;
}

/* One received message: its reply words and buffer in m and u; false when no answer goes
 * back now (a deferred call). */
static bool serve_one(const struct srv_iface *s, struct ipc_msg *m, struct ipc_utcb *u,
                      long client)
{
    if (crash_op)
        crash_if_asked(m->w[0]);
    if (m->w[0] == SRV_WAKE_LABEL) {
        m->w[0] = 0;
        u->send_len = 0;
    } else {
        hang_if_asked();
        struct srv_call c;
        call_from_msg(&c, m, u, client);
        srv_handle(s, &c);
        u->send_len = reply_len(m->w[0], &c);
        for (int i = 0; i < IPC_MRS; i++)
            m->w[i] = c.w[i];
    }
    if (wake_fn)
        wake_fn();
    return m->w[0] != SRV_DEFERRED;
}

/* ---- the words thread (srv.h, srv_words_thread) ----
 * A second serving thread whose receives take no buffer, so that calls and replies of
 * words alone take the kernel's IPC fastpath (docs/ipc.md: it serves only partners without
 * buffers); a reply buffer still goes back (the general path). It never defers and never
 * runs the wake function: those belong to the serving thread. */
static const struct srv_iface *words_iface;
static int words_tid;

static int words_main(void *arg)
{
    (void)arg;
    struct ipc_utcb u = {.send_buf = words_reply};
    ipc_set_utcb(&u);
    struct ipc_msg m;
    long client = ipc_recv(IPC_ANY, &m, IPC_FOREVER);
    for (;;) {
        if (client < 0) {
            client = ipc_recv(IPC_ANY, &m, IPC_FOREVER);
            continue;
        }
        uint64_t label = m.w[0];
        if (crash_op)                 /* the test options hold here too */
            crash_if_asked(label);
        hang_if_asked();
        struct srv_call c = {.in = NULL, .in_len = 0, .out = words_reply,
                             .out_cap = srv_label_cap(label), .client = (int)client};
        for (int i = 0; i < IPC_MRS; i++)
            c.w[i] = m.w[i];
        srv_handle(words_iface, &c);
        for (int i = 0; i < IPC_MRS; i++)
            m.w[i] = c.w[i];
        if (m.w[0] == SRV_DEFERRED)   /* an op that defers all the same: not here */
            m.w[0] = (uint64_t)E_INVAL;
        u.send_len = m.w[0] == 0 ? reply_len(label, &c) : 0;
        uint64_t flags = u.send_len ? IPC_SEND_BUF : 0;
        client = ipc_raw(SYS_IPC_REPLY_RECV, client, IPC_ANY, IPC_FOREVER | flags, &m);
    }
    return 0;
}

long srv_words_thread(const struct srv_iface *s, int client_task)
{
    static struct thread words;
    if (!words_tid) {
        words_iface = s;
        int tid = thread_start(&words, words_main, NULL, PRIO_INHERIT, THREAD_STACK_DEFAULT);
        if (tid < 0)
            return tid;
        words_tid = tid;
    }
    long r = ipc_grant(client_task, words_tid);
    return r < 0 ? r : words_tid;
}

int srv_serve(const struct srv_iface *s)
{
    crash_op = op_option(s->name, "_crash");
    long_op = op_option(s->name, "_longreply");
    hang_after = op_option(s->name, "_hang");
    server_name = s->name;
    struct ipc_utcb u = {.recv_buf = request_buf, .recv_cap = sizeof(request_buf),
                         .send_buf = reply_buf};
    ipc_set_utcb(&u);
    serving_tid = (int)sys_self(NULL);
    struct ipc_msg m;
    long client = ipc_recv_flags(IPC_ANY, &m, IPC_FOREVER, IPC_RECV_BUF);
    for (;;) {
        if (client < 0) {          /* the receive failed, or the reply did and nothing came */
            client = ipc_recv_flags(IPC_ANY, &m, IPC_FOREVER, IPC_RECV_BUF);
            continue;
        }
        if (!serve_one(s, &m, &u, client)) {
            client = ipc_recv_flags(IPC_ANY, &m, IPC_FOREVER, IPC_RECV_BUF);
            continue;
        }
        uint64_t flags = IPC_RECV_BUF | (u.send_len ? IPC_SEND_BUF : 0);
        client = ipc_raw(SYS_IPC_REPLY_RECV, client, IPC_ANY, IPC_FOREVER | flags, &m);
    }
}
