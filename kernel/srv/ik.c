/*
 * The IK server runtime (docs/servers.md): a call to an in-kernel server is a function
 * call of the generated dispatch on the calling thread's kernel stack, with no thread or
 * address-space switch. The caller's address space is current, so its buffers are reached
 * with the fault-safe user copy (usercopy.c); the IPC code has already checked them with
 * the same rules as a call to a thread, so both placements give the same errors.
 *
 * One call at a time (the kernel lock), so the request and reply buffers are static. A
 * later server that sleeps inside an op (the UNIX server's read) must copy what it needs
 * out of them before it blocks.
 */
#include <ondol/srv.h>
#include "ipc.h"
#include "kernel.h"
#include "srv.h"
#include "task.h"
#include "usercopy.h"

static u8 request_buf[IPC_BUF_MAX], reply_buf[IPC_BUF_MAX];

/* The request buffer, if the caller sent one (its length is checked: <= IPC_BUF_MAX). */
static long copy_request(struct srv_call *call, const struct ipc_utcb *u, u64 flags)
{
    call->in = request_buf;
    call->in_len = flags & IPC_SEND_BUF ? u->send_len : 0;
    return copyin(request_buf, (u64)u->send_buf, call->in_len);
}

/* The reply buffer and its length into the caller's UTCB, as a receive would. */
static long copy_reply(const struct srv_call *call, const struct ipc_utcb *u, u64 utcb)
{
    u64 len = call->out_len;
    if (copyout((u64)u->recv_buf, reply_buf, len) ||
        copyout(utcb + offsetof(struct ipc_utcb, recv_len), &len, sizeof(len)))
        return E_FAULT;
    return 0;
}

long srv_ik_call(const struct srv_iface *s, struct thread *c, u64 flags)
{
    struct ipc_utcb u = {0};
    if (flags && copyin(&u, c->utcb, sizeof(u)))
        return E_FAULT;
    struct srv_call call = {.out = reply_buf, .client = c->tid};
    ipc_words_from_frame(c->tf, call.w);
    if (copy_request(&call, &u, flags))
        return E_FAULT;
    call.out_cap = flags & IPC_RECV_BUF ? MIN(u.recv_cap, srv_label_cap(call.w[0])) : 0;
    srv_handle(s, &call);
    if ((flags & IPC_RECV_BUF) && copy_reply(&call, &u, c->utcb))
        return E_FAULT;
    ipc_words_to_frame(call.w, c->tf);
    return 0;
}

/* An IPC call here comes from a user thread (current, alive while its call runs); the
 * IK UNIX server's calls from kernel code say so in by_kernel (unix_ik.c). */
bool srv_privileged(const struct srv_call *c)
{
    struct thread *t = thread_lookup(c->client);
    return c->by_kernel || (t && (!t->task || t->task->privileged));
}

/* Deferred answers (srv.h): an IK op runs on its caller's own thread, so it sleeps where
 * an MK op would defer; nothing is ever deferred here. */
int srv_defer(const struct srv_call *c)
{
    (void)c;
    return 0;
}

long srv_answer(int token, const uint64_t w[IPC_MRS])
{
    (void)token;
    (void)w;
    return E_NOSYS;
}

void srv_set_wake(void (*fn)(void)) { (void)fn; }

/* An IK client's call is a function call: no thread to route it to. */
long srv_words_thread(const struct srv_iface *s, int client_task)
{
    (void)s;
    (void)client_task;
    return E_NOTSUP;
}
void srv_wake(void) {}
