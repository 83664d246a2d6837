/* Servers in MK or IK placement (docs/servers.md): the kernel's table of interfaces,
 * started at boot (MK) or served by a direct call (IK). */
#ifndef KSRV_H
#define KSRV_H
#include "thread.h"

void srv_start(void);                       /* boot: read NAME=mk|ik, spawn the MK servers */
long srv_lookup(u64 iface);                 /* SYS_SRV_LOOKUP */
struct thread;
void srv_thread_exited(struct thread *t);   /* thread_exit: an MK server's main thread? */
struct srv_iface;
/* IK: the in-kernel server that IPC destination `dest` names (a thread id no thread can
 * have), or NULL. */
const struct srv_iface *srv_ik_server(int dest);
/* The main thread of `iface`'s MK server, for a call from the kernel (ipc_kernel_call);
 * NULL with *err = E_NOENT when it is not placed MK, E_DEAD when its server failed to
 * start or has exited. */
struct thread *srv_mk_server(u64 iface, long *err);
/* IK: run client c's call to `s` on c's kernel stack (kernel/srv/ik.c). The IPC code has
 * checked the buffers `flags` names (IPC_SEND_BUF / IPC_RECV_BUF) in c's UTCB. Reply words
 * go to c's frame; returns 0, or E_FAULT when c's memory changed under the copy. */
long srv_ik_call(const struct srv_iface *s, struct thread *c, u64 flags);
#endif
