/*
 * The client side of ondol server interfaces (docs/servers.md); the generated
 * NAME_client.h stubs are built on it. One client binary works with either placement:
 * srv_connect asks the kernel where the interface is served (SYS_SRV_LOOKUP) and gets an
 * IPC destination, a server thread (MK) or a kernel-reserved id (IK).
 */
#ifndef ONDOL_SRV_CLIENT_H
#define ONDOL_SRV_CLIENT_H

#include <ondol/ipc.h>
#include <ondol/srv.h>
#include <ondol/sys.h>

/* A connection: the destination, and the UTCB whose buffers carry calls with a buffer. */
struct srv_conn {
    int dest;
    struct ipc_utcb utcb;
};

/* Connect to interface `iface` and register c's UTCB for the calling thread (it replaces
 * the thread's UTCB, so a thread talks through one connection at a time). 0 or an error. */
static inline long srv_connect(struct srv_conn *c, unsigned iface)
{
    long dest = sys_srv_lookup(iface);   /* stub from syscalls.def (<ondol/sys.h>) */
    if (dest < 0)
        return dest;
    c->dest = (int)dest;
    c->utcb = (struct ipc_utcb){0};
    return ipc_set_utcb(&c->utcb);
}

/* One call: an IPC error (E_FAULT, E_2BIG for the buffers ...), else the server's result
 * (m->w[0]); the reply words are in m. */
static inline long srv_call(struct srv_conn *c, struct ipc_msg *m, uint64_t flags)
{
    long r = ipc_call_flags(c->dest, m, IPC_FOREVER, flags);
    return r < 0 ? r : (long)m->w[0];
}

#endif
