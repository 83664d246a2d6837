/* User-side IPC stubs (ABI: lib/include/ondol/abi.h, docs/ipc.md). Message words travel in
 * registers r8, r9, r10, r12, r13, r14, r15, rbx; rax returns the partner's tid or an error. */
#ifndef ONDOL_IPC_H
#define ONDOL_IPC_H

#include <stdint.h>
#include <ondol/abi.h>

struct ipc_msg {
    uint64_t w[IPC_MRS];
};

static inline long ipc_raw(long nr, long a, long b, uint64_t rdx, struct ipc_msg *m)
{
    register uint64_t r8 __asm__("r8") = m->w[0];
    register uint64_t r9 __asm__("r9") = m->w[1];
    register uint64_t r10 __asm__("r10") = m->w[2];
    register uint64_t r12 __asm__("r12") = m->w[3];
    register uint64_t r13 __asm__("r13") = m->w[4];
    register uint64_t r14 __asm__("r14") = m->w[5];
    register uint64_t r15 __asm__("r15") = m->w[6];
    uint64_t rbx = m->w[7];
    long ret;
    __asm__ volatile("syscall"
                     : "=a"(ret), "+r"(r8), "+r"(r9), "+r"(r10), "+r"(r12), "+r"(r13), "+r"(r14),
                       "+r"(r15), "+b"(rbx), "+D"(a), "+S"(b), "+d"(rdx)
                     : "a"(nr)
                     : "rcx", "r11", "memory");
    m->w[0] = r8; m->w[1] = r9; m->w[2] = r10; m->w[3] = r12;
    m->w[4] = r13; m->w[5] = r14; m->w[6] = r15; m->w[7] = rbx;
    return ret;
}

/* Send `m` to `dest`; 0 or an error (E_TIMEOUT, E_PERM, E_SRCH, E_DEAD, E_FAULT ...). */
static inline long ipc_send(int dest, struct ipc_msg *m, uint32_t timeout)
{
    return ipc_raw(SYS_IPC_SEND, dest, 0, timeout, m);
}
/* Receive from `from` (or IPC_ANY) into `m`; returns the sender's tid. */
static inline long ipc_recv(int from, struct ipc_msg *m, uint32_t timeout)
{
    return ipc_raw(SYS_IPC_RECV, from, 0, timeout, m);
}
/* Send `m` to `dest` and wait for its reply in `m`. */
static inline long ipc_call(int dest, struct ipc_msg *m, uint32_t timeout)
{
    return ipc_raw(SYS_IPC_CALL, dest, 0, timeout, m);
}
/* Reply with `m` to `to` (0 = no reply), then receive from `from` into `m`. */
static inline long ipc_reply_recv(int to, int from, struct ipc_msg *m, uint32_t timeout)
{
    return ipc_raw(SYS_IPC_REPLY_RECV, to, from, timeout, m);
}
/* Variants with long-message flags (IPC_SEND_BUF / IPC_RECV_BUF, buffers in the UTCB). */
static inline long ipc_send_flags(int dest, struct ipc_msg *m, uint32_t timeout, uint64_t flags)
{
    return ipc_raw(SYS_IPC_SEND, dest, 0, timeout | flags, m);
}
static inline long ipc_recv_flags(int from, struct ipc_msg *m, uint32_t timeout, uint64_t flags)
{
    return ipc_raw(SYS_IPC_RECV, from, 0, timeout | flags, m);
}
static inline long ipc_call_flags(int dest, struct ipc_msg *m, uint32_t timeout, uint64_t flags)
{
    return ipc_raw(SYS_IPC_CALL, dest, 0, timeout | flags, m);
}
static inline long ipc_set_utcb(struct ipc_utcb *u)
{
    struct ipc_msg m = {{0}};
    return ipc_raw(SYS_IPC_UTCB, (long)u, 0, 0, &m);
}
static inline long ipc_grant(int task, int tid)
{
    struct ipc_msg m = {{0}};
    return ipc_raw(SYS_IPC_GRANT, task, tid, 0, &m);
}
#endif
