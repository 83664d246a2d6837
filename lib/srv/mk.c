/*
 * The MK server runtime (docs/servers.md): the server is a user task whose main thread
 * receives calls from any client, runs the generated dispatch, and answers with
 * reply_recv, one system call per request. The kernel spawns the task at boot and names
 * its main thread as the interface's destination (kernel/srv/srv.c), so a client that
 * calls before the loop starts simply waits in the IPC send queue.
 */
#include <ondol/ipc.h>
#include <ondol/srv.h>

static uint8_t request_buf[IPC_BUF_MAX], reply_buf[IPC_BUF_MAX];

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
}

int srv_serve(const struct srv_iface *s)
{
    struct ipc_utcb u = {.recv_buf = request_buf, .recv_cap = sizeof(request_buf),
                         .send_buf = reply_buf};
    ipc_set_utcb(&u);
    struct ipc_msg m;
    long client = ipc_recv_flags(IPC_ANY, &m, IPC_FOREVER, IPC_RECV_BUF);
    for (;;) {
        if (client < 0) {          /* the receive failed, or the reply did and nothing came */
            client = ipc_recv_flags(IPC_ANY, &m, IPC_FOREVER, IPC_RECV_BUF);
            continue;
        }
        struct srv_call c;
        call_from_msg(&c, &m, &u, client);
        srv_handle(s, &c);
        for (int i = 0; i < IPC_MRS; i++)
            m.w[i] = c.w[i];
        u.send_len = c.out_len;
        uint64_t flags = IPC_RECV_BUF | (c.out_len ? IPC_SEND_BUF : 0);
        client = ipc_raw(SYS_IPC_REPLY_RECV, client, IPC_ANY, IPC_FOREVER | flags, &m);
    }
}
