/* A hosted stand-in for <ondol/srv_client.h> (tests/idlgen): srv_call hands the message to
 * a dispatch in the same process, moving words and buffers as the kernel would, so the
 * generated client stubs and dispatch can be checked against each other on the host. */
#ifndef ONDOL_SRV_CLIENT_H
#define ONDOL_SRV_CLIENT_H
#include <string.h>
#include <ondol/srv.h>

struct ipc_msg {
    uint64_t w[IPC_MRS];
};
struct srv_conn {
    int dest;
    struct ipc_utcb utcb;
};

extern const struct srv_iface *loopback_server;
enum { LOOPBACK_CLIENT = 7 };

static inline long srv_call(struct srv_conn *c, struct ipc_msg *m, uint64_t flags)
{
    static uint8_t reply[IPC_BUF_MAX];
    struct srv_call call = {.out = reply, .client = LOOPBACK_CLIENT};
    memcpy(call.w, m->w, sizeof(call.w));
    if (flags & IPC_SEND_BUF) {
        call.in = c->utcb.send_buf;
        call.in_len = c->utcb.send_len;
    }
    size_t label_cap = srv_label_cap(m->w[0]);
    call.out_cap = flags & IPC_RECV_BUF ? (c->utcb.recv_cap < label_cap ? c->utcb.recv_cap : label_cap) : 0;
    srv_handle(loopback_server, &call);
    if (flags & IPC_RECV_BUF) {
        memcpy(c->utcb.recv_buf, reply, call.out_len);
        c->utcb.recv_len = call.out_len;
    }
    memcpy(m->w, call.w, sizeof(m->w));
    return (long)m->w[0];
}
#endif
