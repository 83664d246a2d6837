/* Synchronous IPC with direct thread switching (docs/ipc.md). */
#ifndef IPC_H
#define IPC_H
#include <ondol/abi.h>
#include "arch.h"
#include "thread.h"

enum { IPC_IDLE = 0, IPC_SENDING = 1, IPC_RECEIVING = 2 };

extern bool ipc_dts;                           /* option dts=on|off, SYS_KSET at run time */
extern bool ipc_fastpath_on;                   /* option ipc_fastpath=on|off (the oracle: off) */
struct trapframe *ipc_syscall(struct trapframe *tf);
extern u64 ipc_unlocked_ops;   /* sends and receives made without the BKL, counted with
                                  the lock checker on (docs/smp.md, IPC's step 4) */
extern u64 ipc_unlocked_rpcs;  /* calls and reply_recvs likewise, blocking included */
extern u64 ipc_unlocked_answers; /* of those reply_recvs, the ones that answered a Linux
                                    thread's forwarded system call */
/* Linux forwarding (fwd.c): the current thread t calls its server s with t->fwd_words,
 * as a register-only call the kernel makes for it. Returns the frame to leave through;
 * with may_switch false (a fault's trap path) it blocks and never returns, unless t is
 * being killed: then no call is made and t's frame is returned (ipc.c kill_pending). */
struct trapframe *ipc_forward(struct thread *t, struct thread *s, bool may_switch);
/* The same from fwd_syscall without the BKL, when it can be made so (ipc.c): the frame
 * to leave through, or NULL with nothing done. */
struct trapframe *ipc_forward_unlocked(struct thread *t, const u64 w[IPC_MRS]);
/* With pcnt probes on, the fastpath of a forwarded system call (in assembly otherwise)
 * under its probe: the frame to leave through, or NULL for ipc_forward. */
struct trapframe *ipc_forward_fast_probed(struct thread *t, struct thread *s);
#define IPC_FWD (1ull << 34)   /* ipc_flags: blocked in a forwarded call (kernel only) */
#define IPC_KCALL (1ull << 35) /* ipc_flags: in a kernel caller's call (ipc_kernel_call) */
void ipc_thread_exited(struct thread *t);     /* wake peers blocked on t with E_DEAD */
/* The clock ends t's timed wait if it is still the one of generation gen (sched.c
 * wake_sleepers, BKL held): under t's ipc lock, and its queue owner's when t waits on an
 * IPC queue (docs/smp.md, "Design: IPC's per-endpoint state", step 2). */
void ipc_end_timed_wait(struct thread *t, u32 gen);
/* A kill's wake-up of t (sched.c thread_kill): under the same locks, whatever t waits in
 * (none held by the caller). */
void ipc_wake_killed(struct thread *t);

/* The thread whose IPC queue holds t: a blocked sender's receiver (its senders queue), a
 * closed receiver's sender (its receivers queue); NULL when t waits on none (an open
 * receive, a caller awaiting its reply, or no IPC wait: another object's queue). */
static inline struct thread *ipc_queue_owner(const struct thread *t)
{
    if (t->ipc_state == IPC_IDLE || !t->waiting_on)
        return NULL;
    return t->ipc_state == IPC_SENDING ? container_of(t->waiting_on, struct thread, senders)
                                       : container_of(t->waiting_on, struct thread, receivers);
}

/* The ipc lock that covers t's wait in IPC: its queue owner's, else its own; NULL when t
 * does not wait in IPC (the lock checker's view of thread_wake, sched.c). */
static inline struct spinlock *ipc_wait_lock(struct thread *t)
{
    struct thread *o = ipc_queue_owner(t);
    return o ? &o->ipc_lock : t->ipc_state != IPC_IDLE ? &t->ipc_lock : NULL;
}
long ipc_grant_right(struct task *to, int tid);  /* let `to` send to `tid`: 0 or E_NOMEM */
/* The task of thread `tid` when it waits for self's reply (a call self took and has not
 * answered, deferred or not), else NULL: what a server may act on for its caller. */
struct task *ipc_caller_task(struct thread *self, u64 tid);
/* The same without the BKL, as the id of that task: 0 when tid waits for none, -1 when
 * its lock was busy (tried once, as lock_partner does: ask again under the BKL). */
int ipc_caller_task_unlocked(struct thread *self, u64 tid);
/* SYS_CALLER_PRIVILEGED: whether the call self serves from thread `tid` is privileged: 1
 * when tid's task is privileged, or the kernel's own code makes the call (a kernel thread,
 * or ipc_kernel_call: the IK UNIX server, which checked its Linux caller itself); 0
 * otherwise; E_PERM when tid waits for no reply of self. A server's access check. */
long ipc_caller_privileged(struct thread *self, u64 tid);

/* A call the kernel makes for the current thread (a Linux thread in the IK UNIX server, or
 * one of that server's kernel threads) to a user thread: docs/ipc.md, "Kernel callers".
 * While it runs, `frame` is the caller's frame for the IPC paths (the message words in
 * its message registers, the result in rax) and `utcb` its UTCB, with kernel addresses:
 * send_buf/send_len the request, recv_buf/recv_cap room for the reply, recv_len its
 * length. Set the words and utcb; the rest is ipc_kernel_call's. */
struct ipc_kcall {
    struct trapframe frame;
    struct ipc_utcb utcb;
};
/* Call d with w and k's buffers and wait, with a kernel continuation, for its reply: d's
 * tid with the reply words in w, or E_DEAD (d exited, before or during the call), E_2BIG
 * (a reply buffer larger than recv_cap, or a request larger than d accepts), E_FAULT (d's
 * UTCB or buffer unmapped). It waits until d answers or exits, whatever else happens
 * (a kill included: the thread is in the middle of kernel code). Kernel lock held. */
long ipc_kernel_call(struct thread *d, u64 w[IPC_MRS], struct ipc_kcall *k);

/* The message registers of a user frame (docs/ipc.md: w0..w7 in r8, r9, r10, r12..r15,
 * rbx) to and from an array: forwarded calls (fwd.c) and IK server calls (srv/ik.c). */
static inline void ipc_words_to_frame(const u64 w[IPC_MRS], struct trapframe *to)
{
    to->r8 = w[0];
    to->r9 = w[1];
    to->r10 = w[2];
    to->r12 = w[3];
    to->r13 = w[4];
    to->r14 = w[5];
    to->r15 = w[6];
    to->rbx = w[7];
}

static inline void ipc_words_from_frame(const struct trapframe *tf, u64 w[IPC_MRS])
{
    const u64 mrs[IPC_MRS] = {tf->r8, tf->r9, tf->r10, tf->r12, tf->r13, tf->r14, tf->r15, tf->rbx};
    for (int i = 0; i < IPC_MRS; i++)
        w[i] = mrs[i];
}
#endif
