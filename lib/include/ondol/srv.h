/*
 * The server runtime (docs/servers.md): the only header server code includes, besides the
 * headers tools/idlgen generates and freestanding C headers. The same server source is
 * built two ways and does not know which:
 *   MK  a user task; srv_serve() (lib/srv/mk.c) runs a reply_recv loop around the dispatch.
 *   IK  linked into the kernel; a call arrives through the IPC slow path and the dispatch
 *       runs on the caller's kernel stack (kernel/srv/ik.c): no thread or address-space
 *       switch.
 * A boot option NAME=mk|ik chooses the placement; clients use one binary for both.
 *
 * Message layout of a call (both placements): word 0 is the label (op, interface, the
 * capacity of the caller's reply buffer), words 1..7 the op's u64 arguments, and one
 * optional byte buffer each way in the UTCB buffers. The reply: word 0 the result (0 or
 * E_*), words 1..7 the u64 results, and the reply buffer.
 */
#ifndef ONDOL_SRV_H
#define ONDOL_SRV_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <ondol/abi.h>

/* The label word: op in bits 0-15, interface in 16-31, reply capacity in 32-63. */
#define SRV_LABEL(iface, op, cap) \
    ((uint64_t)(op) | (uint64_t)(iface) << 16 | (uint64_t)(cap) << 32)
static inline unsigned srv_label_op(uint64_t label) { return label & 0xffff; }
static inline unsigned srv_label_iface(uint64_t label) { return (label >> 16) & 0xffff; }
static inline size_t srv_label_cap(uint64_t label)
{
    uint64_t cap = label >> 32;
    return cap < IPC_BUF_MAX ? (size_t)cap : IPC_BUF_MAX;
}

/* One call as the server sees it. The runtime fills it in; the dispatch passes its parts
 * to the op; the op writes reply words and the reply buffer. */
struct srv_call {
    uint64_t w[IPC_MRS];     /* in: label, arguments; out: result, results */
    const void *in;          /* request buffer, in_len bytes (in_len 0 when none was sent) */
    size_t in_len;
    void *out;               /* reply buffer: the op writes up to out_cap bytes, sets out_len */
    size_t out_cap, out_len;
    int client;              /* the calling thread's id */
    bool by_kernel;          /* IK: the kernel's own code makes the call (srv_privileged) */
};

/* An interface as the runtimes see it (generated: NAME_iface in NAME_server.c). */
struct srv_iface {
    unsigned id;
    const char *name;
    long (*dispatch)(struct srv_call *c);    /* 0 or E_*; E_NOSYS for an unknown op */
};

/* The thread that made the call: its identity for access checks (the UNIX server's
 * process lookup). */
static inline int srv_client(const struct srv_call *c) { return c->client; }
/* Whether the call is privileged (docs/servers.md, "Privileged ops"): the calling
 * thread's task is privileged, or the kernel's own code makes the call (the IK UNIX
 * server, which checks its Linux programs itself). What an op that changes what every
 * client sees (net's setconfig) checks, refusing others with E_PERM. MK: one system call
 * (SYS_CALLER_PRIVILEGED; the kernel answers from the waiting caller itself), so an op
 * asks only when it needs to; IK: a look at the caller's task. */
bool srv_privileged(const struct srv_call *c);

/* One request, the step both runtimes share: dispatch if the label names this interface
 * (else E_NOSYS), then put the result in word 0. An error reply carries no buffer, and a
 * reply buffer longer than the caller's capacity is E_2BIG, in both placements. */
static inline void srv_handle(const struct srv_iface *s, struct srv_call *c)
{
    c->out_len = 0;
    long r = srv_label_iface(c->w[0]) == s->id ? s->dispatch(c) : E_NOSYS;
    if (r >= 0 && c->out_len > c->out_cap)
        r = E_2BIG;
    if (r < 0)
        c->out_len = 0;
    c->w[0] = (uint64_t)r;
}

/* MK: serve `s` in the calling thread forever (the task's main, generated NAME_mk.c). */
int srv_serve(const struct srv_iface *s);

/* ---- deferred answers and a server's own threads (docs/servers.md, "Deferred answers") --
 * An op that cannot answer yet either sleeps (IK: it runs on its caller's own thread, so
 * nothing else waits) or defers the call (MK: the serving thread must go on serving).
 * srv_defer says which: MK the call's token (> 0): the op returns SRV_DEFERRED, the
 * runtime sends no answer, and the server answers later with srv_answer(token, w) from
 * its serving thread; IK 0: the op sleeps instead; < 0 (MK, a call to the words thread,
 * srv_words_thread): the call may not wait here, the op fails with that error. */
#define SRV_DEFERRED 1
int srv_defer(const struct srv_call *c);
/* Answer deferred call `token` with w (w[0] the result, then the op's results; no
 * buffer): 0, or E_SRCH when its caller is gone. Serving thread only; IK: E_NOSYS. */
long srv_answer(int token, const uint64_t w[IPC_MRS]);
/* MK: fn runs in the serving thread after every call and at every srv_wake, where it
 * answers the deferred calls whose condition now holds. IK: never called (nothing is
 * deferred). */
void srv_set_wake(void (*fn)(void));
/* From another thread of the server (MK): have the serving thread run the wake function
 * soon; waits at most one tick for it to take the request (the serving thread may be
 * busy in a call; it runs the function after that call anyway). IK: nothing to do. */
void srv_wake(void);
/* MK: a second serving thread of `s` for calls of words alone (started once; every call
 * of it lets task client_task call it): its receives take no buffer, so such calls and
 * their replies take the IPC fastpath (docs/net.md, "The data channel"). A request's
 * buffer is not taken there (in_len 0), a reply's still goes back; an op may not defer
 * there (srv_defer < 0). Its thread id, or an error; IK: E_NOTSUP (calls are function
 * calls). */
long srv_words_thread(const struct srv_iface *s, int client_task);

#endif
