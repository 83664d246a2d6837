/*
 * Synchronous IPC in the L4 style, with P1's direct thread switching (docs/ipc.md).
 *
 * A thread blocked in IPC keeps no kernel continuation: everything it will see when it
 * resumes (message words, partner tid or error in rax) is written into its saved user
 * registers (t->tf) by whoever completes its operation, and it resumes by leaving the
 * kernel through that frame. That makes a direct switch cheap: the kernel returns to user
 * mode through the partner's frame instead of the caller's, with no stack switch in C.
 *
 * Locking (docs/smp.md, "Design: IPC's per-endpoint state"). Each thread's ipc_lock
 * (thread.h) covers its rendezvous state, its senders and receivers queues with the links
 * of the threads on them, and while it is blocked in IPC its frame's message registers,
 * rax and resume_via_tf. An operation holds the locks of both threads of its rendezvous
 * from its test of the partner's state to its commit: the words copied, both states
 * changed, the partner made ready (class ipc before rq) or switched to. A thread blocks
 * by publishing itself under a lock, its own state written first (sched.c): on the
 * partner's queue under the partner's lock, as an open receiver or a caller awaiting a
 * reply under its own. The general path holds the BKL too, except the operations between
 * plain native threads (step 4 of the design: "IPC without the BKL" below), which block
 * and switch without it; the fastpath (ipcfast.S, and its C twin below) does not: it
 * holds the two threads' ipc locks, and every waker of a thread blocked in IPC (a
 * partner, the clock, a kill: ipc_wake_killed) holds that thread's.
 */
#include <ondol/abi.h>
#include "arch.h"
#include "fastpath_layout.h"
#include "fault.h"
#include "fwd.h"
#include "pager.h"
#include "ipc.h"
#include "kernel.h"
#include "memlayout.h"
#include "pcnt.h"
#include "sched.h"
#include "srv.h"
#include "task.h"
#include "thread.h"
#include "usercopy.h"
#include "vm.h"
#include "waitq.h"

/* ipc_dts and ipc_fastpath_on: defined in ipcfast.S, bytes of the fast gate. */

/* ---- id arguments -------------------------------------------------------------------------
 * Thread and task ids are positive ints; a register holds 64 bits. A larger value saturates
 * to ID_MAX instead of being truncated into some other, possibly live, id. */
#define ID_MAX 0x7fffffffull

static inline int id_arg(u64 reg) { return (int)MIN(reg, ID_MAX); }

/* A register that holds neither an id nor IPC_ANY. */
static inline bool id_arg_invalid(u64 reg) { return (i64)reg != IPC_ANY && reg > ID_MAX; }

/* ---- the ipc locks ------------------------------------------------------------------------
 * Two threads' locks are taken together (spin_lock_two: no wait without contention, lower
 * address first when one must wait). A thread found on a locked thread's queue is locked
 * after it (lock_also), in the same order. */
static inline void ipc_lock(struct thread *t) { spin_lock(&t->ipc_lock); }
static inline void ipc_unlock(struct thread *t) { spin_unlock(&t->ipc_lock); }

static inline __attribute__((always_inline)) void lock_two(struct thread *a, struct thread *b)
{
    spin_lock_two(&a->ipc_lock, &b->ipc_lock);
}

static inline __attribute__((always_inline)) void unlock_two(struct thread *a, struct thread *b)
{
    spin_unlock_two(&a->ipc_lock, &b->ipc_lock);
}

/* t's lock held: o's taken too. When o is below t, t's is let go and both taken again in
 * the order: false then, and what the caller read under t's lock must be read again. */
static bool lock_also(struct thread *t, struct thread *o)
{
    if (o > t) {
        spin_lock_nested(&o->ipc_lock);
        return true;
    }
    ipc_unlock(t);
    lock_two(o, t);
    return false;
}

/* t's lock held: the first thread on one of t's lists (a queue's head, or reply_head),
 * its lock held too; NULL when the list is empty. */
static struct thread *lock_first(struct thread *t, struct thread *const *head)
{
    for (;;) {
        struct thread *x = *head;
        if (!x || lock_also(t, x) || *head == x)
            return x;
        ipc_unlock(x);
    }
}

/* ---- message words ------------------------------------------------------------------ */
static void copy_mrs(const struct trapframe *from, struct trapframe *to)
{
    to->r8 = from->r8;
    to->r9 = from->r9;
    to->r10 = from->r10;
    to->r12 = from->r12;
    to->r13 = from->r13;
    to->r14 = from->r14;
    to->r15 = from->r15;
    to->rbx = from->rbx;
}

static u64 timeout_of(u64 rdx)
{
    u32 t = (u32)rdx;
    return t == IPC_FOREVER ? WAIT_FOREVER : t;
}

/* ---- access control ---------------------------------------------------------------------
 * A task may send to: its own threads; threads of tasks it created; threads it was granted
 * (SYS_IPC_GRANT); and, once, the thread whose message it received last (reply right). */
static bool granted(const struct task *t, int tid)
{
    int n = __atomic_load_n(&t->ngrants, __ATOMIC_ACQUIRE);   /* the entries before it */
    for (int i = 0; i < n; i++)
        if (t->grants[i] == tid)
            return true;
    return false;
}

/* Inline, with the grant list out of line: the fastpath asks on every call. */
static __attribute__((noinline)) bool granted_to(const struct thread *s, const struct thread *d)
{
    return granted(s->task, d->tid);
}

static inline bool may_send(const struct thread *s, const struct thread *d)
{
    return d->task == s->task || d->task->parent == s->task || s->reply_to == d->tid ||
           granted_to(s, d);
}

long ipc_grant_right(struct task *to, int tid)
{
    if (granted(to, tid))
        return 0;
    if (to->ngrants == (int)ARRAY_SIZE(to->grants))
        return E_NOMEM;
    /* Append-only, the count published after the entry: the fastpath reads the list
     * without the BKL. */
    to->grants[to->ngrants] = tid;
    __atomic_store_n(&to->ngrants, to->ngrants + 1, __ATOMIC_RELEASE);
    return 0;
}

/* SYS_IPC_GRANT(task, tid): the owner of thread `tid` may let any task send to it; a task
 * holding a right may pass it on to its own children. */
static long sys_ipc_grant(u64 task_id, u64 tid)
{
    struct thread *self = current_thread();
    struct task *to = task_lookup(id_arg(task_id));
    struct thread *d = thread_lookup(id_arg(tid));
    if (!to || !d || d->state == T_ZOMBIE)
        return E_SRCH;
    bool owner = d->task == self->task;
    bool delegate = granted(self->task, d->tid) && to->parent == self->task;
    if (!owner && !delegate)
        return E_PERM;
    return ipc_grant_right(to, d->tid);
}

/* ---- long messages ---------------------------------------------------------------------
 * One copy, straight from the sender's pages to the receiver's through PHYSMAP, page by
 * page, after checking every page is mapped user (and writable on the receiving side);
 * pages not touched yet are brought in as a fault would (fault.c). */
static bool page_ok(struct aspace *as, u64 va, bool write, u64 *pa)
{
    return vm_resolve(as, va, write ? VM_ACCESS_WRITE : VM_ACCESS_READ, pa) == 0;   /* demand paging */
}

static bool range_ok(struct aspace *as, u64 va, u64 len, bool write)
{
    if (!user_range_ok(va, len))
        return false;
    for (u64 p = ALIGN_DOWN(va, PAGE_SIZE); p < va + len; p += PAGE_SIZE) {
        u64 pa;
        if (!page_ok(as, p, write, &pa))
            return false;
    }
    return true;
}

/* One side of a copy: user memory of an address space, or kernel memory when as is NULL. */
struct span {
    struct aspace *as;
    u64 addr;
};

static struct span user_span(struct aspace *as, u64 va) { return (struct span){as, va}; }
static struct span kernel_span(void *p) { return (struct span){NULL, (u64)p}; }

/* Where the span's next byte is in the kernel, and how many bytes follow it contiguously
 * (to the end of its page for user memory). NULL when the user page is not mapped user,
 * or not writable for a write. */
static u8 *span_bytes(struct span s, bool write, u64 *contig)
{
    if (!s.as) {
        *contig = UINT64_MAX;
        return (u8 *)s.addr;
    }
    u64 pa, off = s.addr & (PAGE_SIZE - 1);
    *contig = PAGE_SIZE - off;
    return page_ok(s.as, s.addr, write, &pa) ? (u8 *)phys_to_virt(pa) + off : NULL;
}

/* Copy len bytes page by page: the one walk for long messages and UTCB reads and writes.
 * Callers check the user ranges first (range_ok), so a page is missing here only if that
 * check was skipped; the copy then stops, with a prefix copied, and returns false.
 * Always inline: transfer() runs on every slow-path message, and with the loop inline its
 * register use, and so the measured DTS-off round trip (docs/ipc.md), stays as it was. */
static inline __attribute__((always_inline)) bool copy_loop(struct span dst, struct span src,
                                                           u64 len)
{
    while (len > 0) {
        u64 dn, sn;
        u8 *d = span_bytes(dst, true, &dn);
        const u8 *s = span_bytes(src, false, &sn);
        if (!d || !s)
            return false;
        u64 n = MIN(len, MIN(dn, sn));
        memcpy(d, s, n);
        dst.addr += n;
        src.addr += n;
        len -= n;
    }
    return true;
}

/* copy_loop, with a write into user memory marked (vm_kwrite_begin: no clone without the
 * kernel lock shares a frame of the destination meanwhile). */
static inline __attribute__((always_inline)) bool copy_spans(struct span dst, struct span src,
                                                            u64 len)
{
    if (!dst.as)
        return copy_loop(dst, src, len);
    vm_kwrite_begin(dst.as);
    bool ok = copy_loop(dst, src, len);
    vm_kwrite_end();
    return ok;
}

/* A thread's UTCB, if it has one mapped user and writable (whole). */
static bool utcb_ok(struct thread *t)
{
    return t->utcb && range_ok(t->task->as, t->utcb, sizeof(struct ipc_utcb), true);
}

/* A kernel caller's record (ipc_kernel_call): its frame is t->tf while the call runs. */
static inline struct ipc_kcall *kcall_of(const struct thread *t)
{
    return (struct ipc_kcall *)((u8 *)t->tf - offsetof(struct ipc_kcall, frame));
}

/* Read a thread's UTCB (its own address space, through PHYSMAP so any thread can; a kernel
 * caller's is in its record). */
static bool utcb_read(struct thread *t, struct ipc_utcb *u)
{
    if (t->ipc_flags & IPC_KCALL) {
        *u = kcall_of(t)->utcb;
        return true;
    }
    return utcb_ok(t) && copy_spans(kernel_span(u), user_span(t->task->as, t->utcb), sizeof(*u));
}

/* Tell a receiver how many buffer bytes arrived (its UTCB's recv_len); nothing when its
 * UTCB is gone or unmapped by now. */
static void utcb_set_recv_len(struct thread *t, u64 len)
{
    u64 va = t->utcb + offsetof(struct ipc_utcb, recv_len);
    if (t->ipc_flags & IPC_KCALL)
        kcall_of(t)->utcb.recv_len = len;
    else if (utcb_ok(t))
        copy_spans(user_span(t->task->as, va), kernel_span(&len), sizeof(len));
}

/* A buffer of a transfer: in t's address space, or a kernel caller's kernel memory (its
 * own code's buffers: nothing to check). */
static bool buffer_ok(struct thread *t, u64 va, u64 len, bool write)
{
    return (t->ipc_flags & IPC_KCALL) || range_ok(t->task->as, va, len, write);
}

static struct span buffer_span(struct thread *t, u64 va)
{
    return t->ipc_flags & IPC_KCALL ? kernel_span((void *)va) : user_span(t->task->as, va);
}

/* Check the buffers named by an operation's flags before it starts: 0, or E_FAULT / E_2BIG
 * for the thread that passed them. */
static long check_buffers(struct thread *t, u64 flags)
{
    if (!(flags & (IPC_SEND_BUF | IPC_RECV_BUF)))
        return 0;
    struct ipc_utcb u;
    if (!utcb_read(t, &u))
        return E_FAULT;
    if ((flags & IPC_SEND_BUF) && (u.send_len > IPC_BUF_MAX ||
                                   !range_ok(t->task->as, (u64)u.send_buf, u.send_len, false)))
        return u.send_len > IPC_BUF_MAX ? E_2BIG : E_FAULT;
    if ((flags & IPC_RECV_BUF) && (u.recv_cap > IPC_BUF_MAX ||
                                   !range_ok(t->task->as, (u64)u.recv_buf, u.recv_cap, true)))
        return u.recv_cap > IPC_BUF_MAX ? E_2BIG : E_FAULT;
    return 0;
}

/* Bring the receiver r the buffer s sends, if r accepts one (IPC_RECV_BUF): 0, or
 * E_2BIG / E_FAULT when it did not fit or pages went away while the partner was blocked. */
static long transfer_buffer(struct thread *s, struct thread *r)
{
    u64 len = 0;
    if ((s->ipc_flags & IPC_SEND_BUF) && (r->ipc_flags & IPC_RECV_BUF)) {   /* (a kernel
                                                  caller may take none: its buffer is dropped) */
        struct ipc_utcb su, ru;
        if (!utcb_read(s, &su) || !utcb_read(r, &ru))
            return E_FAULT;
        if (su.send_len > ru.recv_cap)
            return E_2BIG;
        if (!buffer_ok(s, (u64)su.send_buf, su.send_len, false) ||
            !buffer_ok(r, (u64)ru.recv_buf, su.send_len, true))
            return E_FAULT;
        copy_spans(buffer_span(r, (u64)ru.recv_buf), buffer_span(s, (u64)su.send_buf),
                   su.send_len);
        len = su.send_len;
    }
    utcb_set_recv_len(r, len);
    return 0;
}

/* transfer() for a receiver that takes a buffer, or that waits in a forwarded call
 * (fwd.c: the answer goes to its rax, not its message registers) or a pager call
 * (mm/pager.c: the answer is a page, and the thread retries its access), or a kernel
 * caller (its buffers are kernel memory: transfer_buffer). */
static __attribute__((noinline)) long transfer_special(struct thread *s, struct thread *r)
{
    if (r->fwd == FWD_PAGER)
        return pager_answer(s, r);
    if (r->ipc_flags & IPC_FWD)
        return fwd_answer(r, s->tf->r8);
    copy_mrs(s->tf, r->tf);
    long err = transfer_buffer(s, r);
    if (err)
        return err;
    r->rwtid = s->tid;
    r->reply_to = s->tid;
    return s->tid;
}

/* Deliver s's message to r: words, buffer, and who sent it. Returns the result of both
 * sides: s's tid, or E_2BIG / E_FAULT when the buffer did not fit or pages went away
 * while the partner was blocked. A failed message is not delivered: the receiver learns
 * no sender and gets no reply right, and the sender gets the same error (callers do). */
static long transfer(struct thread *s, struct thread *r)
{
    if (r->ipc_flags & (IPC_RECV_BUF | IPC_FWD | IPC_KCALL))
        return transfer_special(s, r);
    copy_mrs(s->tf, r->tf);
    r->rwtid = s->tid;
    r->reply_to = s->tid;
    return s->tid;
}

/* Deliver a Linux thread's forwarded call (fwd.c) to its server r: the words the trap
 * built (the thread's registers stay as they were), no buffer. */
static long take_forwarded(struct thread *s, struct thread *r)
{
    ipc_words_to_frame(s->fwd_words, r->tf);   /* a forwarded call's message */
    if (r->ipc_flags & IPC_RECV_BUF)
        utcb_set_recv_len(r, 0);
    r->rwtid = s->tid;
    r->reply_to = s->tid;
    return s->tid;
}

/* ---- callers waiting for a reply ------------------------------------------------------
 * A caller whose message was taken waits, blocked and receiving from the callee only, on
 * no queue (so the RPC path does no queue work) but on the callee's reply_head list, the
 * latest first (an RPC loop answers the head: the fastpath answers only it), so that the
 * callee's exit finds it. A receiver with recv_from set and no queue (waiting_on) is
 * exactly such a caller: a closed receive is always on the sender's `receivers` queue.
 * The list and the links are under the callee's lock; a caller leaves it when its wait
 * ends: answered (end_receive_wait), the callee gone (ipc_thread_exited) or killed
 * (ipc_wake_killed). */
static inline void await_reply(struct thread *caller, struct thread *callee)
{
    caller->ipc_state = IPC_RECEIVING;
    caller->recv_from = callee->tid;
    caller->reply_next = callee->reply_head;
    callee->reply_head = caller;
}

/* c off callee's list (both locks held). */
static void reply_unlink(struct thread *callee, struct thread *c)
{
    struct thread **pp = &callee->reply_head;
    while (*pp && *pp != c)
        pp = &(*pp)->reply_next;
    if (*pp)
        *pp = c->reply_next;
}

/* Whether c waits for r's reply (r took its call): a caller on no queue. r may always
 * answer it, not only with its one-shot reply right: a server that defers a call keeps
 * its caller waiting and answers later, after other calls (docs/servers.md, "Deferred
 * answers"). A closed receive from r (on r's queue) still needs the right to send. */
static inline bool awaits_reply_from(const struct thread *c, const struct thread *r)
{
    return c->ipc_state == IPC_RECEIVING && c->recv_from == r->tid && !c->waiting_on;
}

struct task *ipc_caller_task(struct thread *self, u64 tid)
{
    struct thread *c = thread_lookup(id_arg(tid));
    if (!c || !c->task || c->state == T_ZOMBIE)
        return NULL;
    ipc_lock(c);
    bool waits = awaits_reply_from(c, self);
    ipc_unlock(c);
    return waits ? c->task : NULL;
}

int ipc_caller_task_unlocked(struct thread *self, u64 tid)
{
    int id = id_arg(tid);
    struct thread *c = id > 0 ? thread_slot(id) : &thread_none;
    if (__atomic_load_n(&c->tid, __ATOMIC_RELAXED) != id)
        return 0;
    if (!spin_trylock(&c->ipc_lock))
        return -1;
    bool waits = c->tid == id && c->task && c->state != T_ZOMBIE && awaits_reply_from(c, self);
    int task = waits ? c->task->id : 0;       /* alive: it has a thread waiting for us */
    ipc_unlock(c);
    return task;
}

long ipc_caller_privileged(struct thread *self, u64 tid)
{
    struct thread *c = thread_lookup(id_arg(tid));
    if (!c || c->state == T_ZOMBIE)
        return E_PERM;
    ipc_lock(c);
    bool waits = awaits_reply_from(c, self), kcall = c->ipc_flags & IPC_KCALL;
    ipc_unlock(c);
    if (!waits)
        return E_PERM;
    return !c->task || kcall || c->task->privileged;
}

/* `from` delivers to the blocked receiver r: r leaves its queue, or stops waiting for
 * from's reply. (r's sleep, if any, is the caller's business.) */
static inline void end_receive_wait(struct thread *from, struct thread *r)
{
    if (r->waiting_on)
        waitq_remove(r->waiting_on, r);
    else if (r->recv_from)
        reply_unlink(from, r);
}

/* Whether t (its ipc lock held) is being killed. A kill sets `killed` and then wakes a
 * thread blocked in IPC under that thread's lock (thread_kill, ipc_wake_killed); one that
 * lands before t publishes its wait (while t waited for the BKL at its system call's
 * entry, say) finds nothing to wake, and t would wait until its partner answers, or for
 * good. So an operation tests this under t's lock before it starts and gives up
 * (killed_op): either the kill's wake-up comes after t's wait is published, or t sees the
 * flag. A stop or a Linux thread's interrupt is no kill: it waits for the return to user
 * mode (sched.c leave_killed). */
static inline bool kill_pending(const struct thread *t)
{
    return __atomic_load_n(&t->killed, __ATOMIC_RELAXED) && t->interrupt == KILL_EXIT;
}

/* The operation of t, which kill_pending found being killed, does nothing: the result
 * is the one a kill's wake-up gives (thread_wake), and the exit checks on the way out end
 * the thread. t's lock (and o's, when not NULL) is let go. */
static __attribute__((noinline, cold)) struct trapframe *killed_op(struct thread *t,
                                                                   struct thread *o)
{
    if (o)
        unlock_two(t, o);
    else
        ipc_unlock(t);
    t->tf->rax = (u64)(i64)WAIT_KILLED;
    return t->tf;
}

/* ---- blocking and switching --------------------------------------------------------------- */

/* Run another thread, leaving t (the current thread, blocked, resume_via_tf set under its
 * lock, its locks let go) without a kernel continuation. Never returns: t resumes later
 * by leaving the kernel through t->tf, where whoever completes or aborts its operation
 * has written the result. */
static inline __attribute__((always_inline, noreturn)) void switch_away_blocked(struct thread *t)
{
    schedule();
    panic("ipc: blocked thread %d resumed on a stale stack", t->tid);
}

/* switch_away_blocked after making `partner` ready, both under one acquisition of this
 * CPU's run-queue lock when the partner stays here (sched.c make_ready_and_schedule: the
 * general path's round trip without direct switching wakes and switches twice), which
 * lets go of both threads' locks once the partner is ready. */
static __attribute__((noreturn)) void wake_and_switch_away(struct thread *t, struct thread *partner)
{
    t->resume_via_tf = true;
    make_ready_and_schedule(partner);
    panic("ipc: blocked thread %d resumed on a stale stack", t->tid);
}

/* Block the current thread t in IPC, on q if not NULL (a queue of o), for at most timeout
 * ticks, then let go of t's lock and o's (when not NULL), which the caller holds. Never
 * returns (switch_away_blocked). */
static __attribute__((noreturn)) void block_current(struct thread *t, struct waitq *q, u64 timeout,
                                                    struct thread *o)
{
    t->state = T_BLOCKED;                      /* before a waker can find it (sched.c) */
    if (q)
        waitq_append(q, t);
    sleep_until(t, timeout);
    t->resume_via_tf = true;
    if (o)
        unlock_two(t, o);
    else
        ipc_unlock(t);
    switch_away_blocked(t);
}

/* Switch from `cur` straight to `next` without the scheduler, returning the frame to
 * leave through. `next` must be blocked without a continuation (always true in IPC), and
 * on this CPU, so off every CPU (this one left its stack when it last ran). cur stays on
 * this CPU (on_cpu) until the exit checks, on next's stack, find c->leaving set. The
 * part without the probe is the fastpath's (probes are off there). */
static inline __attribute__((always_inline)) struct trapframe *
switch_to_partner(struct cpu *c, struct thread *cur, struct thread *next)
{
    cur->resume_via_tf = true;
    next->resume_via_tf = false;
    next->state = T_RUNNING;
    next->on_cpu = 1;
    c->left = cur;
    c->leaving = 1;
    next->slice_left = cur->slice_left ? cur->slice_left : (u32)slice_ticks;  /* rest of slice */
    c->current = next;
    cpu_set_kernel_stack(c, next->kstack + KSTACK_SIZE);
    /* the same task: its tables are loaded */
    cpu_count_switch(next->task != cur->task && aspace_switch(next->task->as));
    thread_fpu_switch(c, next);
    return next->tf;
}

/* The lock checker's view of a direct switch: it claims the blocked partner without its
 * run-queue lock, which is right because every waker of a thread blocked in IPC holds
 * its ipc lock, held here (docs/smp.md); and the partner is off every CPU: its CPU is
 * this one, and a thread still on a CPU is always on its own (its CPU changes only while
 * it is off every CPU: sched.c migrate), so no fallback to a wake-up is needed. */
static __attribute__((noinline, cold)) void direct_switch_check(const struct thread *next)
{
    lockcheck_assert_held(&next->ipc_lock);
    if (__atomic_load_n(&next->on_cpu, __ATOMIC_ACQUIRE))
        panic("ipc: direct switch to thread %d, still on CPU", next->tid);
}

static struct trapframe *direct_switch(struct thread *cur, struct thread *next)
{
    if (pcnt_probes_on)
        pcnt_abort(PROBE_SYSCALL);
    if (lockcheck_on)
        direct_switch_check(next);
    struct cpu *c = this_cpu();
    thread_user_context(c, next);
    return switch_to_partner(c, cur, next);
}

/* A kernel caller's call ended (answered, or its request failed): it has a kernel
 * continuation, so the scheduler runs it, never a direct switch; and it may be ready
 * already (a kill woke it: ipc_kernel_call waits on), so it is queued only if blocked. */
static __attribute__((noinline, cold)) struct trapframe *
wake_kernel_caller(struct thread *cur, struct thread *partner, bool cur_blocks)
{
    if (partner->state == T_BLOCKED)
        make_ready(partner);
    if (cur_blocks)
        cur->resume_via_tf = true;
    unlock_two(cur, partner);
    if (cur_blocks)
        switch_away_blocked(cur);
    return cur->tf;
}

bool fwd_pull = true;                   /* option fwd_pull */

/* A forwarded call (cur blocked in it) to a server thread waiting on another CPU that
 * idles: the server comes here (sched_pull_blocked) and the call switches to it as on one
 * CPU, where a wake-up there costs two IPIs a call (the server's CPU, then the caller's
 * for the answer) and two wake-ups of halted CPUs: on 4 vCPUs of a 2-core host a pipeline
 * of one-byte writes ran 5 times slower than on one (docs/smp.md, "The server comes to
 * the caller"). Linux's sync wake-up, for forwarded calls only: native IPC keeps its
 * placement (P1's experiments, the smptest IPC cases). Out of line: not the fastpath's. */
static __attribute__((noinline)) bool pulls(const struct thread *cur, struct thread *partner,
                                            bool cur_blocks)
{
    return fwd_pull && cur_blocks && (cur->ipc_flags & IPC_FWD) && sched_pull_blocked(partner);
}

/* `partner` has become runnable through an IPC by `cur`, which either has blocked
 * (`cur_blocks`: published under the locks already) or continues; both threads' locks are
 * held, and let go here once the partner is ready or switched to. DTS on and the partner
 * on this CPU: run it at once unless a higher-priority thread is ready here (the L4 rule).
 * Otherwise queue it and let the scheduler choose: on another CPU, make_ready queues it
 * there and sends that CPU the reschedule IPI. */
static struct trapframe *wake_partner(struct thread *cur, struct thread *partner, bool cur_blocks)
{
    partner->ipc_state = IPC_IDLE;
    if (partner->ipc_flags & IPC_KCALL)
        return wake_kernel_caller(cur, partner, cur_blocks);
    if (ipc_dts && (partner->cpu == this_cpu()->id || pulls(cur, partner, cur_blocks))) {
        int top = rq_highest_prio();
        int cur_prio = cur_blocks ? -1 : cur->prio;
        if (partner->prio >= top && partner->prio >= cur_prio) {
            if (!cur_blocks)
                rq_add(cur);
            struct trapframe *next = direct_switch(cur, partner);
            unlock_two(cur, partner);
            return next;
        }
    }
    if (cur_blocks)
        wake_and_switch_away(cur, partner);
    make_ready(partner);
    unlock_two(cur, partner);
    return cur->tf;
}

/* ---- the operations --------------------------------------------------------------------- */
static struct thread *find_sender(struct thread *r, int from)
{
    for (struct thread *s = r->senders.head; s; s = s->q_next)
        if (from == IPC_ANY || s->tid == from)
            return s;
    return NULL;
}

static long lookup_partner(int tid, struct thread **out)
{
    struct thread *t = thread_lookup(tid);
    if (!t || !t->task)
        return E_SRCH;
    if (t->state == T_ZOMBIE)
        return E_DEAD;
    *out = t;
    return 0;
}

/* A call to an id that no thread has: E_SRCH, unless the id names an in-kernel server
 * (docs/servers.md). Then the caller's buffers get the checks of a call to a thread, and
 * the server's dispatch runs as a function call on this stack; the caller never blocks.
 * Like any call it returns the destination in rax and the reply in its MRs. Cold, out of
 * line, and it re-reads the destination from the frame rather than keep it live through
 * do_send: the IPC paths between threads keep their exact instruction counts. */
static __attribute__((noinline, cold)) struct trapframe *call_no_thread(struct thread *c, u64 rdx)
{
    int dest = c->tf->rdi > 0x7fffffffull ? -1 : (int)c->tf->rdi;   /* re-read: see above */
    const struct srv_iface *srv = srv_ik_server(dest);
    u64 flags = rdx & (IPC_SEND_BUF | IPC_RECV_BUF);
    long err = srv ? check_buffers(c, flags) : E_SRCH;
    if (!err)
        err = srv_ik_call(srv, c, flags);
    c->tf->rax = (u64)(err ? err : dest);
    return c->tf;
}

/* send (call = false) or call (call = true) from the current thread. */
static struct trapframe *do_send(struct thread *s, int dest, u64 rdx, bool call)
{
    struct thread *d;
    long err = lookup_partner(dest, &d);
    if (!err && d == s)
        err = E_DEADLK;
    if (!err && !may_send(s, d))
        err = E_PERM;
    if (!err)
        err = check_buffers(s, rdx & (IPC_SEND_BUF | IPC_RECV_BUF));
    if (err) {
        if (err == E_SRCH && call)
            return call_no_thread(s, rdx);
        s->tf->rax = (u64)err;
        return s->tf;
    }
    lock_two(s, d);
    if (kill_pending(s))
        return killed_op(s, d);
    if (s->reply_to == d->tid)
        s->reply_to = 0;                       /* the reply right is one-shot */
    s->ipc_flags = rdx & (IPC_SEND_BUF | IPC_RECV_BUF);
    s->ipc_call = call;
    u64 timeout = timeout_of(rdx);
    if (d->ipc_state == IPC_RECEIVING && (d->recv_from == 0 || d->recv_from == s->tid)) {
        end_receive_wait(s, d);
        thread_unblock(d);
        long res = transfer(s, d);
        d->tf->rax = (u64)res;
        if (call && res >= 0) {                /* now wait for the reply from d only */
            await_reply(s, d);
            s->state = T_BLOCKED;              /* before a waker can find it (sched.c) */
            return wake_partner(s, d, true);
        }
        s->tf->rax = res < 0 ? (u64)res : 0;   /* a failed transfer: both sides learn */
        return wake_partner(s, d, false);
    }
    if (timeout == 0) {
        unlock_two(s, d);
        s->tf->rax = (u64)E_TIMEOUT;
        return s->tf;
    }
    s->ipc_state = IPC_SENDING;
    s->send_to = d->tid;
    block_current(s, &d->senders, timeout, d);
}

static struct trapframe *do_recv(struct thread *r, int from, u64 rdx)
{
    struct thread *f = NULL;
    long err = 0;
    if (from != IPC_ANY) {
        err = lookup_partner(from, &f);
        if (!err && f == r)
            err = E_DEADLK;
    }
    if (!err)
        err = check_buffers(r, rdx & IPC_RECV_BUF);
    if (err) {
        r->tf->rax = (u64)err;
        return r->tf;
    }
    /* A closed receive locks its partner with r (the one sender it may find, and the owner
     * of the queue it blocks on); an open one locks the sender it finds, if any. */
    if (f)
        lock_two(r, f);
    else
        ipc_lock(r);
    if (kill_pending(r))
        return killed_op(r, f);
    struct thread *s = f ? find_sender(r, from) : lock_first(r, &r->senders.head);
    r->ipc_flags = rdx & IPC_RECV_BUF;
    if (s) {
        thread_unblock(s);
        long res = s->ipc_flags & IPC_FWD ? take_forwarded(s, r) : transfer(s, r);
        r->tf->rax = (u64)res;
        if (s->ipc_call && res >= 0) {         /* the caller now waits for our reply */
            await_reply(s, r);
            unlock_two(r, s);
            return r->tf;
        }
        s->tf->rax = res < 0 ? (u64)res : 0;   /* a failed transfer: both sides learn */
        return wake_partner(r, s, false);
    }
    u64 timeout = timeout_of(rdx);
    if (timeout == 0) {
        if (f)
            unlock_two(r, f);
        else
            ipc_unlock(r);
        r->tf->rax = (u64)E_TIMEOUT;
        return r->tf;
    }
    r->ipc_state = IPC_RECEIVING;
    r->recv_from = from == IPC_ANY ? 0 : from;
    block_current(r, f ? &f->receivers : NULL, timeout, f);
}

/* A caller without a task (a kernel thread in ipc_kernel_call) may be answered, and only
 * that: it is E_SRCH to every other operation, as kernel threads are. */
static __attribute__((noinline, cold)) long lookup_kernel_caller(int tid, struct thread **out)
{
    struct thread *t = thread_lookup(tid);
    if (!t || t->task || !(t->ipc_flags & IPC_KCALL))
        return E_SRCH;
    *out = t;
    return 0;
}

/* The answered caller c runs on (the replier does too): queued, unless it is a kernel
 * caller a kill has woken already (wake_kernel_caller). */
static inline void ready_answered(struct thread *c)
{
    c->ipc_state = IPC_IDLE;
    if (!(c->ipc_flags & IPC_KCALL) || c->state == T_BLOCKED)
        make_ready(c);
}

/* reply_recv's closed receive from a thread other than r and the answered c: f, when
 * `from` names a live one (its receivers queue takes r if r blocks), else NULL. */
static __attribute__((noinline, cold)) struct thread *third_partner(struct thread *r,
                                                                    struct thread *c, int from)
{
    struct thread *f;
    return !lookup_partner(from, &f) && f != r && f != c ? f : NULL;
}

/* The locks of r, c and f (reply_recv's three threads), lower address first. */
static __attribute__((noinline, cold)) void lock_three(struct thread *r, struct thread *c,
                                                       struct thread *f)
{
    struct thread *t[3] = {r, c, f};
    for (int i = 1; i < 3; i++)
        for (int j = i; j > 0 && t[j] < t[j - 1]; j--) {
            struct thread *x = t[j];
            t[j] = t[j - 1];
            t[j - 1] = x;
        }
    ipc_lock(t[0]);
    spin_lock_nested(&t[1]->ipc_lock);
    spin_lock_nested(&t[2]->ipc_lock);
}

static void unlock_reply(struct thread *r, struct thread *c, struct thread *f)
{
    unlock_two(r, c);
    if (f)
        ipc_unlock(f);
}

/* reply_recv's reply to c, r's and c's locks held: 0 with c answered (off its wait, the
 * words and the result in its frame; its state and wake-up are the caller's), or the
 * error for r, nothing done. */
static inline __attribute__((always_inline)) long answer_caller(struct thread *r,
                                                               struct thread *c, u64 rdx)
{
    if (c->ipc_state != IPC_RECEIVING || c->recv_from != r->tid)
        return E_SRCH;                         /* not waiting for a reply from us */
    if (!awaits_reply_from(c, r) && !may_send(r, c))
        return E_PERM;
    long err = check_buffers(r, rdx & (IPC_SEND_BUF | IPC_RECV_BUF));
    if (err)
        return err;
    r->ipc_flags = rdx & (IPC_SEND_BUF | IPC_RECV_BUF);
    if (r->reply_to == c->tid)
        r->reply_to = 0;
    end_receive_wait(r, c);
    thread_unblock(c);
    u64 saved = r->ipc_flags;
    r->ipc_flags = saved & IPC_SEND_BUF;
    c->tf->rax = (u64)transfer(r, c);
    r->ipc_flags = saved & IPC_RECV_BUF;
    return 0;
}

/* reply_recv whose receive names a thread `from` (do_reply_recv has the common open
 * receive): with the lock of a third thread when `from` names one besides r and c, since
 * r may block on its receivers queue. */
static __attribute__((noinline, cold)) struct trapframe *
reply_recv_closed(struct thread *r, struct thread *c, int from, u64 rdx)
{
    struct thread *f = third_partner(r, c, from);
    if (f)
        lock_three(r, c, f);
    else
        lock_two(r, c);
    long err = answer_caller(r, c, rdx);
    if (err) {
        unlock_reply(r, c, f);
        r->tf->rax = (u64)err;
        return r->tf;
    }
    /* Receive phase: a sender already queued is taken at once, an error or an expired
     * timeout reported; the client stays ready (do_recv). Else r waits on q's queue. */
    struct thread *q;                          /* the partner named: c, or f */
    if (find_sender(r, from) || timeout_of(rdx) == 0 || lookup_partner(from, &q) || q == r ||
        kill_pending(r)) {
        ready_answered(c);
        unlock_reply(r, c, f);
        return do_recv(r, from, rdx & ~(u64)IPC_SEND_BUF);
    }
    r->ipc_state = IPC_RECEIVING;
    r->recv_from = from;
    r->state = T_BLOCKED;                      /* before a waker can find it (sched.c) */
    waitq_append(&q->receivers, r);
    if (f)
        ipc_unlock(f);                         /* r is on its queue */
    sleep_until(r, timeout_of(rdx));
    return wake_partner(r, c, true);
}

/* reply_recv: reply to `to` (which must be waiting for our reply), then receive. */
static struct trapframe *do_reply_recv(struct thread *r, int to, int from, u64 rdx)
{
    if (to == 0)
        return do_recv(r, from, rdx);
    struct thread *c;
    long err = lookup_partner(to, &c);
    if (err == E_SRCH)
        err = lookup_kernel_caller(to, &c);
    if (!err && c == r)
        err = E_SRCH;                          /* r waits for no reply of its own */
    if (err) {
        r->tf->rax = (u64)err;
        return r->tf;
    }
    if (from != IPC_ANY)
        return reply_recv_closed(r, c, from, rdx);
    lock_two(r, c);
    err = answer_caller(r, c, rdx);
    if (err) {
        unlock_two(r, c);
        r->tf->rax = (u64)err;
        return r->tf;
    }
    /* Receive phase: a sender already queued is taken at once; the client stays ready. */
    u64 timeout = timeout_of(rdx);
    if (r->senders.head || timeout == 0 || kill_pending(r)) {
        ready_answered(c);
        unlock_two(r, c);
        return do_recv(r, IPC_ANY, rdx & ~(u64)IPC_SEND_BUF);
    }
    r->ipc_state = IPC_RECEIVING;
    r->recv_from = 0;
    r->state = T_BLOCKED;                      /* before a waker can find it (sched.c) */
    if (timeout != WAIT_FOREVER)               /* (most receives are untimed: no call) */
        sleep_until(r, timeout);
    return wake_partner(r, c, true);
}

/* t's forwarded call (t->fwd_words) to its server s, both locked, t's kill tested: when
 * s is not receiving from t, t waits on s's senders queue (never returns: block_current);
 * else s has the words and t awaits its reply, blocked, both still locked for the caller
 * to wake s or switch to it. Shared by ipc_forward and ipc_forward_unlocked. */
static inline __attribute__((always_inline)) void forward_deliver(struct thread *t,
                                                                  struct thread *s)
{
    t->ipc_flags = IPC_FWD;
    t->ipc_call = true;
    if (s->ipc_state != IPC_RECEIVING || (s->recv_from != 0 && s->recv_from != t->tid)) {
        t->ipc_state = IPC_SENDING;
        t->send_to = s->tid;
        block_current(t, &s->senders, WAIT_FOREVER, s);
    }
    end_receive_wait(t, s);
    thread_unblock(s);
    s->tf->rax = (u64)take_forwarded(t, s);
    await_reply(t, s);
    t->state = T_BLOCKED;                      /* before s can answer it (sched.c) */
}

/* A Linux thread's forwarded call (fwd.c): do_send's call without its checks (the kernel
 * makes it; registers only, no timeout). A fault's trap path cannot leave through
 * another frame, so there (may_switch false) the server is only made ready. */
struct trapframe *ipc_forward(struct thread *t, struct thread *s, bool may_switch)
{
    lock_two(t, s);
    if (kill_pending(t)) {
        t->fwd = FWD_NONE;                     /* no call made */
        return killed_op(t, s);
    }
    forward_deliver(t, s);
    if (may_switch)
        return wake_partner(t, s, true);
    s->ipc_state = IPC_IDLE;
    make_ready(s);
    t->resume_via_tf = true;
    unlock_two(t, s);
    switch_away_blocked(t);
}

/* ---- kernel callers (ipc.h, docs/ipc.md "Kernel callers") ------------------------------
 * The current thread calls d as do_send's call would, with its record's frame as its
 * frame while the call runs (so the paths that deliver to it or take from it work
 * unchanged: words in the message registers, the result in rax) and its buffers in
 * kernel memory (utcb_read, buffer_ok). It waits with a kernel continuation, so the
 * partner's end never switches to it directly (wake_kernel_caller). The thread stays
 * in the call until its state is idle again (delivered and answered, or failed) or d
 * is gone; other wake-ups (a kill) find it still sending or receiving, and it waits on,
 * back on d's senders queue if it was there. Each step holds t's and d's locks. */
static bool kcall_delivered(struct thread *t, struct thread *d)
{
    if (d->ipc_state != IPC_RECEIVING || (d->recv_from != 0 && d->recv_from != t->tid))
        return false;
    end_receive_wait(t, d);
    thread_unblock(d);
    long res = transfer(t, d);
    d->tf->rax = (u64)res;
    d->ipc_state = IPC_IDLE;
    make_ready(d);
    if (res < 0)
        t->tf->rax = (u64)res;                 /* a failed transfer: both sides learn */
    else
        await_reply(t, d);
    return true;
}

/* The partner of the pending call (thread `tid`), if it lives. */
static struct thread *kcall_partner(int tid)
{
    struct thread *d = thread_lookup(tid);
    return d && d->state != T_ZOMBIE ? d : NULL;
}

long ipc_kernel_call(struct thread *d, u64 w[IPC_MRS], struct ipc_kcall *k)
{
    struct thread *t = current_thread();
    struct trapframe *own = t->tf;
    ipc_words_to_frame(w, &k->frame);
    k->frame.rax = 0;
    k->utcb.recv_len = 0;
    lock_two(t, d);
    t->tf = &k->frame;
    t->ipc_flags = IPC_KCALL | (k->utcb.send_len ? IPC_SEND_BUF : 0) |
                   (k->utcb.recv_cap ? IPC_RECV_BUF : 0);
    t->ipc_call = true;
    if (!kcall_delivered(t, d)) {
        t->ipc_state = IPC_SENDING;
        t->send_to = d->tid;
    }
    int dtid = d->tid;
    unlock_two(t, d);
    for (;;) {
        struct thread *p = kcall_partner(dtid);
        if (p)
            lock_two(t, p);
        else
            ipc_lock(t);
        bool waits = t->ipc_state != IPC_IDLE;
        if (waits && !p) {
            t->ipc_state = IPC_IDLE;           /* d exited: its exit woke us, or will not */
            k->frame.rax = (u64)E_DEAD;
            waits = false;
        }
        if (waits) {
            t->state = T_BLOCKED;              /* before a waker can find it (sched.c) */
            if (t->ipc_state == IPC_SENDING && !t->waiting_on)
                waitq_append(&p->senders, t);
        }
        if (p)
            unlock_two(t, p);
        else
            ipc_unlock(t);
        if (!waits)
            break;
        schedule();
    }
    ipc_lock(t);
    ipc_words_from_frame(&k->frame, w);
    t->tf = own;
    t->ipc_flags = 0;
    t->ipc_call = false;
    ipc_unlock(t);
    return (long)k->frame.rax;
}

/* The thread a register names, or NULL, for the fastpath: the occupant of the id's slot
 * must carry exactly this id, which also rejects 0, negative values and anything >= 2^31
 * (ids are positive ints) as the general path does (ipc_syscall, lookup_partner). */
static inline struct thread *thread_of_reg(u64 reg)
{
    struct thread *t = idtable_at(&thread_ids, (int)(reg & ((1u << THREAD_ID_BITS) - 1)));
    return t && (u64)(i64)t->tid == reg ? t : NULL;
}

/* A receiver the fastpath may answer although it has ipc_flags: a Linux thread waiting in
 * a forwarded system call (fwd.c), not killed or interrupted (its exit acts on that), whose
 * frame leaves by sysret (a canonical rip). Faults, interrupts and registers the server
 * set (FWD_REGS: an iret frame) take the general path. */
static inline bool fast_answerable(const struct thread *p)
{
    return p->ipc_flags == IPC_FWD && p->fwd == FWD_SYSCALL && !p->killed &&
           (i64)p->tf->rip >> 47 == 0;
}

/* ---- fastpath ---------------------------------------------------------------------------
 * call / reply_recv with registers only, the partner already waiting for us, DTS on and no
 * priority conflict: switch to the partner touching as little as possible. Without probes
 * it runs in assembly straight from the syscall entry (ipc_fastpath, arch ipcfast.S: no
 * kernel lock, the message words stay in the CPU registers); this C version runs under the
 * pcnt probe when probes are on (the words are copied frame to frame). The two make the
 * same decisions: the assembly follows this function check for check, and both are held
 * to the general path (do_send / do_reply_recv), which has the same semantics, by the
 * differential test (tests/test_ipc.py, ipctest diff; with and without probes). Forwarded
 * Linux system calls have their twins too: the answer (fast_answer) and the call itself
 * (forward_fast), held to the general path by fwdtest diff (tests/test_unix_fwd.py). */

/* The L4 rule as wake_partner applies it when the caller blocks (p at least as high as
 * every thread ready on this CPU); not killed, no FS base of its own to switch
 * (user_bases: native TLS), not sleeping, on this CPU (a partner on another is woken
 * there: wake_partner), and not in a closed receive (on a queue). */
static inline bool fast_partner_ready(const struct thread *p)
{
    return !(this_cpu()->rq_words && p->prio < rq_highest_prio()) && !p->killed &&
           !p->user_bases && !p->sleeping && p->cpu == this_cpu()->id && !p->waiting_on;
}

/* A partner p receiving only from cur: it waits for cur's reply, as the fastpath takes
 * it only when it is the head of cur's list (ipcfast.S POP_REPLY_HEAD). */
static inline bool fast_unlinkable(const struct thread *cur, const struct thread *p)
{
    return p->recv_from == cur->tid && cur->reply_head == p;
}

/* The caller's side, once p has its message: the reply right used up if it named p; now
 * receiving (the reply from p, or from anyone); then the switch to p. */
static inline __attribute__((always_inline)) struct trapframe *
fast_block_and_switch(struct thread *cur, struct thread *p, const struct trapframe *tf,
                      bool is_call)
{
    if (cur->reply_to == p->tid)
        cur->reply_to = 0;                     /* the reply right is one-shot */
    cur->ipc_flags = 0;
    cur->ipc_call = false;
    if (is_call) {
        await_reply(cur, p);
    } else {
        cur->ipc_state = IPC_RECEIVING;
        cur->recv_from = 0;
        if ((u32)tf->rdx != IPC_FOREVER)
            sleep_until(cur, (u32)tf->rdx);     /* reply_recv's receive timeout */
    }
    cur->state = T_BLOCKED;
    return direct_switch(cur, p);
}

/* reply_recv's answer to p, a Linux thread waiting in a forwarded call (the reply_recv
 * checks before passed, p->ipc_flags is set): on fast_answerable's terms, word 0 becomes
 * p's rax and its forwarded call ends, as fwd_answer does; no sender id, no reply right. */
static __attribute__((noinline)) struct trapframe *fast_answer(struct thread *cur, struct thread *p,
                                                               const struct trapframe *tf)
{
    if (!fast_answerable(p) || (cur->reply_to != p->tid && !may_send(cur, p)) ||
        !fast_partner_ready(p))
        return NULL;
    reply_unlink(cur, p);                      /* p waited for our reply */
    p->ipc_state = IPC_IDLE;
    p->tf->rax = tf->r8;
    p->fwd = FWD_NONE;
    p->ipc_flags = 0;
    return fast_block_and_switch(cur, p, tf, false);
}

/* The checks and the switch, cur's and p's locks held (fastpath). */
static inline __attribute__((always_inline)) struct trapframe *
fastpath_locked(struct thread *cur, struct thread *p, struct trapframe *tf)
{
    if ((u64)(i64)p->tid != tf->rdi)        /* freed meanwhile (ipcfast.S LOCK_BOTH) */
        return NULL;
    bool is_call = tf->rax == SYS_IPC_CALL;
    if (is_call) {
        if (p->ipc_state != IPC_RECEIVING || (p->recv_from != 0 && !fast_unlinkable(cur, p)) ||
            p->ipc_flags || !may_send(cur, p))
            return NULL;
    } else {
        if ((i64)tf->rsi != IPC_ANY || cur->senders.head || (u32)tf->rdx == 0)
            return NULL;
        if (p->ipc_state != IPC_RECEIVING || cur->reply_head != p)   /* p awaits our reply */
            return NULL;
        if (p->ipc_flags)
            return fast_answer(cur, p, tf);
        if (cur->reply_to != p->tid && !may_send(cur, p))   /* usually the reply right */
            return NULL;
    }
    if (!fast_partner_ready(p))
        return NULL;
    /* the partner: stops waiting for our reply if it did, message in, running next */
    if (p->recv_from)
        reply_unlink(cur, p);
    copy_mrs(tf, p->tf);
    p->tf->rax = (u64)cur->tid;
    p->ipc_state = IPC_IDLE;
    p->rwtid = cur->tid;
    p->reply_to = cur->tid;
    return fast_block_and_switch(cur, p, tf, is_call);
}

/* The partner p found in the table, then both threads' locks (never ourselves: the
 * assembly finds its own lock busy), held to the switch or the decline. */
static struct trapframe *fastpath(struct thread *cur, struct trapframe *tf)
{
    if ((u32)(tf->rdx >> 32) != 0)           /* flags: buffers */
        return NULL;
    if (cur->user_bases)                          /* its FS base: the general path switches it */
        return NULL;
    struct thread *p = thread_of_reg(tf->rdi);
    if (!p || p == cur)
        return NULL;
    lock_two(cur, p);
    struct trapframe *next = fastpath_locked(cur, p, tf);
    unlock_two(cur, p);
    return next;
}

/* The fastpath under the pcnt probe (only when probes are on, so the plain path pays one
 * check for the facility). */
static struct trapframe *fastpath_probed(struct thread *cur, struct trapframe *tf)
{
    pcnt_start(PROBE_IPC_FAST, tf->rax);
    struct trapframe *fast = ipc_dts ? fastpath(cur, tf) : NULL;
    if (fast) {
        pcnt_stop(PROBE_IPC_FAST);
        pcnt_abort(PROBE_SYSCALL);            /* the syscall now ends in another thread */
    } else {
        pcnt_abort(PROBE_IPC_FAST);
    }
    return fast;
}

/* A Linux thread's forwarded system call, on the fastpath's terms (ipcfast.S,
 * fwd_fastpath, which runs instead when probes are off): the server s waits in an open
 * receive (or one from t), with no buffer, on no queue, not in a timed receive, and may
 * run before every ready thread; then ipc_forward's delivery and direct switch. NULL
 * when a condition fails (ipc_forward decides). */
static struct trapframe *forward_fast(struct thread *t, struct thread *s)
{
    if (!ipc_dts || s->ipc_state != IPC_RECEIVING || (s->recv_from && !fast_unlinkable(t, s)) ||
        s->ipc_flags || !fast_partner_ready(s))
        return NULL;
    if (s->recv_from)
        reply_unlink(t, s);
    ipc_words_to_frame(t->fwd_words, s->tf);
    s->tf->rax = (u64)t->tid;
    s->ipc_state = IPC_IDLE;
    s->rwtid = t->tid;
    s->reply_to = t->tid;
    t->ipc_flags = IPC_FWD;
    t->ipc_call = true;
    await_reply(t, s);
    t->state = T_BLOCKED;
    return direct_switch(t, s);
}

struct trapframe *ipc_forward_fast_probed(struct thread *t, struct thread *s)
{
    pcnt_start(PROBE_IPC_FAST, SYS_IPC_CALL);
    lock_two(t, s);
    struct trapframe *fast = forward_fast(t, s);
    unlock_two(t, s);
    if (fast)
        pcnt_stop(PROBE_IPC_FAST);
    else
        pcnt_abort(PROBE_IPC_FAST);
    return fast;
}

/* The assembly fastpath's address-space load when PCID or the cache model's markers are on
 * (its CR3 gate, ipcfast.S): aspace_load, out of line. */
void fastpath_load_aspace(struct aspace *as);
void fastpath_load_aspace(struct aspace *as) { aspace_load(as->cr3, as->asid); }

/* The layout the assembly fastpath relies on (fastpath_layout.h). */
#define FP_AT(type, field, off) _Static_assert(offsetof(type, field) == (off), "fastpath_layout.h: " #type "." #field)
FP_AT(struct thread, tid, TH_TID);
FP_AT(struct thread, state, TH_STATE);
FP_AT(struct thread, prio, TH_PRIO);
FP_AT(struct thread, task, TH_TASK);
FP_AT(struct thread, slice_left, TH_SLICE_LEFT);
FP_AT(struct thread, killed, TH_KILLED);
FP_AT(struct thread, user_bases, TH_KILLED + 1);     /* cmpw at TH_KILLED: killed, user_bases */
FP_AT(struct thread, user_bases, TH_USER_BASES);
FP_AT(struct thread, sleeping, TH_USER_BASES + 1);
FP_AT(struct thread, cpu, TH_KILLED + 3);   /* cmpl at TH_KILLED: killed, user_bases, sleeping, cpu */
FP_AT(struct thread, cpu, TH_CPU);
FP_AT(struct thread, on_cpu, TH_ON_CPU);
FP_AT(struct thread, waiting_on, TH_WAITING_ON);
FP_AT(struct thread, sleeping, TH_SLEEPING);
FP_AT(struct thread, tf, TH_TF);
FP_AT(struct thread, resume_via_tf, TH_RESUME_VIA_TF);
FP_AT(struct thread, ipc_state, TH_RESUME_VIA_TF + 1);
FP_AT(struct thread, ipc_call, TH_RESUME_VIA_TF + 2);
FP_AT(struct thread, on_cpu, TH_RESUME_VIA_TF + 3);
FP_AT(struct thread, send_to, TH_RESUME_VIA_TF + 4);   /* the 32-bit store ends before it */
FP_AT(struct thread, ipc_state, TH_IPC_STATE);
FP_AT(struct thread, recv_from, TH_RECV_FROM);
FP_AT(struct thread, rwtid, TH_RWTID);
FP_AT(struct thread, reply_to, TH_REPLY_TO);
FP_AT(struct thread, ipc_flags, TH_IPC_FLAGS);
FP_AT(struct thread, senders.head, TH_SENDERS_HEAD);
FP_AT(struct thread, reply_head, TH_REPLY_HEAD);
FP_AT(struct thread, reply_next, TH_REPLY_NEXT);
FP_AT(struct thread, fwd, TH_FWD);
FP_AT(struct thread, fs_base, TH_FS_BASE);
FP_AT(struct thread, gs_base, TH_GS_BASE);
FP_AT(struct thread, ipc_lock.locked, TH_IPC_LOCK);
FP_AT(struct task, as, TASK_AS);
FP_AT(struct task, parent, TASK_PARENT);
FP_AT(struct task, grants, TASK_GRANTS);
FP_AT(struct task, ngrants, TASK_NGRANTS);
FP_AT(struct task, linux_server, TASK_LINUX_SERVER);
FP_AT(struct task, fwd_fast_server, TASK_FWD_FAST_SERVER);
FP_AT(struct task, fwd_routed, TASK_FWD_ROUTED);
FP_AT(struct aspace, cr3, AS_CR3);
FP_AT(struct cpu, current, CPU_CURRENT);
FP_AT(struct cpu, need_resched, CPU_NEED_RESCHED);
FP_AT(struct cpu, fpu_ts, CPU_FPU_TS);
FP_AT(struct cpu, fpu_owner, CPU_FPU_OWNER);
FP_AT(struct cpu, linux_entry, CPU_LINUX_ENTRY);
FP_AT(struct cpu, fs_base, CPU_FS_BASE);
FP_AT(struct cpu, gs_base, CPU_GS_BASE);
FP_AT(struct cpu, user_ctx, CPU_USER_CTX);
FP_AT(struct cpu, switches_same, CPU_SWITCHES_SAME);
FP_AT(struct cpu, switches_cross, CPU_SWITCHES_CROSS);
FP_AT(struct cpu, rq_words, CPU_RQ_WORDS);
FP_AT(struct cpu, rq_bitmap, CPU_RQ_BITMAP);
FP_AT(struct cpu, loaded_cr3, CPU_LOADED_CR3);
FP_AT(struct cpu, fwd_server, CPU_FWD_SERVER);
FP_AT(struct cpu, fwd_helper, CPU_FWD_HELPER);
FP_AT(struct cpu, tss.rsp0, CPU_TSS_RSP0);
_Static_assert(sizeof(((struct thread *)0)->state) == 4 && sizeof(((struct thread *)0)->resume_via_tf) == 1 &&
               sizeof(((struct thread *)0)->ipc_flags) == 8 && sizeof(((struct thread *)0)->slice_left) == 4,
               "fastpath_layout.h: field sizes");
_Static_assert(T_RUNNING == FP_T_RUNNING && T_BLOCKED == FP_T_BLOCKED && IPC_RECEIVING == FP_IPC_RECEIVING &&
               IPC_IDLE == 0 && FP_SLOT_MASK == (1 << THREAD_ID_BITS) - 1 &&
               CR0_TS == FP_CR0_TS && MSR_LSTAR == FP_MSR_LSTAR && MSR_FS_BASE == FP_MSR_FS_BASE &&
               MSR_KERNEL_GS_BASE == FP_MSR_KERNEL_GS_BASE && USER_CTX_LINUX == FP_USER_CTX_LINUX &&
               FWD_SYSCALL == FP_FWD_SYSCALL && ENTRY_ONDOL == 0 && ENTRY_LINUX_FWD == 1 &&
               IPC_FWD == FP_IPC_FWD &&
               FWD_LABEL(FWD_OP_SYSCALL) == FP_FWD_SYSCALL_LABEL &&
               sizeof(((struct thread *)0)->fwd) == 1 && sizeof(((struct cpu *)0)->linux_entry) == 1 &&
               IPC_ANY == -1 && IPC_FOREVER == 0xffffffffu,
               "fastpath_layout.h: values");

/* ---- IPC without the BKL -----------------------------------------------------------------
 * docs/smp.md, "Design: IPC's per-endpoint state", step 4. With the probes off, the
 * general path's operations between native threads, registers only, let the BKL go around
 * their work (as mmap's without_bkl, syscall.c): a call and a reply_recv with an open
 * receive, blocking included (the BKL is never held across a switch: sched.c schedule),
 * with DTS on or off; an open receive, blocking included, that finds no sender or a
 * caller queued; with DTS off, a send to a thread that waits to receive it and an open
 * receive that finds a plain sender queued. Anything else (long messages, a
 * forwarded, pager or kernel caller or receiver, an error to report, a busy or empty slot,
 * a kill or stop pending, for a send a partner to wait for) answers NULL with
 * nothing changed, and the call runs again under the BKL (ipc_syscall). The partner is
 * found in the fastpath's slots (thread_slot), its lock tried once, its id compared under
 * both threads' locks. The partner, live under its lock, keeps its task for may_send; the
 * grant list is read with acquire order (granted). */
u64 ipc_unlocked_ops;      /* counted with the lock checker on (its summary prints them) */
u64 ipc_unlocked_rpcs;
u64 ipc_unlocked_answers;

static inline void count_unlocked(u64 *n)
{
    if (lockcheck_on)
        __atomic_add_fetch(n, 1, __ATOMIC_RELAXED);
}

/* A thread the unlocked path may deliver to or take from: no long message, forwarded,
 * pager or kernel call. */
static inline bool plain_partner(const struct thread *t)
{
    return !(t->ipc_flags & (IPC_SEND_BUF | IPC_RECV_BUF | IPC_FWD | IPC_KCALL)) &&
           t->fwd == FWD_NONE;
}

/* A queued sender the unlocked receive may take: a plain one, or a Linux thread's
 * forwarded call (system call, fault, interrupt or pager call), whose words take_forwarded
 * copies without touching anything but the two threads. */
static inline bool takeable_sender(const struct thread *t)
{
    return plain_partner(t) || t->ipc_flags == IPC_FWD;
}

/* A caller the unlocked reply_recv may answer: a plain one, or a Linux thread in a
 * forwarded system call, not being killed, whose answer (fwd_answer) only sets its rax:
 * the fastpath's conditions (ipcfast.S fast_answer). A fault's or interrupt's answer may
 * end the task, a pager's maps a page, registers the server set leave by another frame:
 * those go the BKL's way. */
static inline bool answerable_caller(const struct thread *t)
{
    return plain_partner(t) ||
           (t->ipc_flags == IPC_FWD && t->fwd == FWD_SYSCALL && !t->killed);
}

/* Both locks held: p, made ready by `cur`, which continues (DTS off: no direct switch). */
static struct trapframe *unlocked_done(struct thread *cur, struct thread *p)
{
    p->ipc_state = IPC_IDLE;
    make_ready(p);
    unlock_two(cur, p);
    count_unlocked(&ipc_unlocked_ops);
    return cur->tf;
}

/* cur's lock and the lock of the thread `tid`, held on return, if thread_trylock takes it
 * (as the fastpath takes a partner: once, never waited for) and `ok` accepts the thread
 * (plain_partner: not in a forwarded, pager or kernel call); else NULL, nothing held.
 * Inlined, so that `ok` is a direct test. A busy lock, thread_none's included, and the
 * current thread's own (held) send the call to the BKL path; so does a kill or stop of
 * cur pending (the BKL path's behaviour is kept for it). */
static inline __attribute__((always_inline)) struct thread *
lock_partner(struct thread *cur, int tid, bool (*ok)(const struct thread *))
{
    ipc_lock(cur);
    struct thread *p = thread_trylock(tid);
    if (!p) {
        ipc_unlock(cur);
        return NULL;
    }
    if (!ok(p) || cur->killed) {
        unlock_two(cur, p);
        return NULL;
    }
    return p;
}

static struct trapframe *send_unlocked(struct thread *s, int dest)
{
    struct thread *d = lock_partner(s, dest, plain_partner);
    if (!d)
        return NULL;
    if (d->ipc_state != IPC_RECEIVING || (d->recv_from != 0 && d->recv_from != s->tid) ||
        !may_send(s, d)) {
        unlock_two(s, d);
        return NULL;
    }
    if (s->reply_to == d->tid)
        s->reply_to = 0;                       /* the reply right is one-shot */
    s->ipc_flags = 0;
    s->ipc_call = false;
    end_receive_wait(s, d);
    thread_unblock(d);
    d->tf->rax = (u64)transfer(s, d);          /* plain: s's tid */
    s->tf->rax = 0;
    return unlocked_done(s, d);
}

/* r's lock held: the sender at the head of r's queue (held there by r's lock, which a
 * kill or the clock takes to release it) is tried as lock_partner does; NULL with r's lock
 * let go when there is none or it cannot be taken here. */
static struct trapframe *take_sender_unlocked(struct thread *r)
{
    struct thread *s = r->senders.head;
    if (!s || !spin_trylock(&s->ipc_lock)) {
        ipc_unlock(r);
        return NULL;
    }
    if (!takeable_sender(s)) {
        unlock_two(r, s);
        return NULL;
    }
    r->ipc_flags = 0;
    thread_unblock(s);
    r->tf->rax = (u64)(s->ipc_flags & IPC_FWD ? take_forwarded(s, r) : transfer(s, r));
    if (s->ipc_call) {                         /* the caller (a forwarded one always is
                                                  one) now waits for our reply */
        await_reply(s, r);
        unlock_two(r, s);
        count_unlocked(&ipc_unlocked_ops);
        return r->tf;
    }
    s->tf->rax = 0;
    return unlocked_done(r, s);
}

/* do_recv's open receive without the BKL: a queued sender taken by take_sender_unlocked,
 * except, with DTS on, a send that is no call, to which do_recv may switch directly
 * (wake_partner): that one goes the BKL's way. With none queued r blocks as do_recv
 * blocks it (block_current), the queue and r's state published under r's lock, which
 * every sender takes to find it; a zero timeout's E_TIMEOUT is left to do_recv. A
 * queued sender stays queued while r's lock is held (a kill or the clock takes it to
 * dequeue one), so its ipc_call is read under that lock. */
static struct trapframe *recv_unlocked(struct thread *r, u64 rdx)
{
    ipc_lock(r);
    struct thread *s = r->senders.head;
    u64 timeout = timeout_of(rdx);
    if (r->killed || (s ? ipc_dts && !s->ipc_call : timeout == 0)) {
        ipc_unlock(r);
        return NULL;
    }
    if (s)
        return take_sender_unlocked(r);
    count_unlocked(&ipc_unlocked_ops);
    r->ipc_flags = 0;
    r->ipc_state = IPC_RECEIVING;
    r->recv_from = 0;
    block_current(r, NULL, timeout, NULL);
}

/* do_send's call, without the BKL: the same steps, the partner taken by lock_partner;
 * the caller blocks (on d's senders queue, or awaiting d's reply) and switches away
 * without it, or switches to d directly (DTS). */
static struct trapframe *call_unlocked(struct thread *s, int dest, u64 rdx)
{
    struct thread *d = lock_partner(s, dest, plain_partner);
    if (!d)
        return NULL;
    if (!may_send(s, d)) {
        unlock_two(s, d);
        return NULL;                           /* E_PERM: the BKL path reports it */
    }
    u64 timeout = timeout_of(rdx);
    bool receives = d->ipc_state == IPC_RECEIVING && (d->recv_from == 0 || d->recv_from == s->tid);
    if (!receives && timeout == 0) {
        unlock_two(s, d);
        return NULL;                           /* E_TIMEOUT: likewise */
    }
    count_unlocked(&ipc_unlocked_rpcs);
    if (s->reply_to == d->tid)
        s->reply_to = 0;                       /* the reply right is one-shot */
    s->ipc_flags = 0;
    s->ipc_call = true;
    if (!receives) {
        s->ipc_state = IPC_SENDING;
        s->send_to = d->tid;
        block_current(s, &d->senders, timeout, d);
    }
    end_receive_wait(s, d);
    thread_unblock(d);
    d->tf->rax = (u64)transfer(s, d);          /* plain: s's tid */
    await_reply(s, d);
    s->state = T_BLOCKED;                      /* before a waker can find it (sched.c) */
    return wake_partner(s, d, true);
}

/* do_reply_recv without the BKL, with an open receive or one from r itself (`reply_only`:
 * an answer alone, E_DEADLK after it, as the MK UNIX server answers a held call): c, a
 * plain caller or a Linux thread's forwarded system call (answerable_caller), answered as
 * answer_caller does (every error it could report declines first), then the receive: a
 * sender queued, plain or forwarded, is taken as an open receive takes it
 * (take_sender_unlocked), or else under the BKL taken with no lock held (do_recv, which
 * also reports an expired timeout); with none r blocks, and c is woken or switched to. */
static struct trapframe *reply_recv_unlocked(struct thread *r, int to, bool reply_only, u64 rdx)
{
    struct thread *c = lock_partner(r, to, answerable_caller);
    if (!c)
        return NULL;
    if (c->ipc_state != IPC_RECEIVING || c->recv_from != r->tid ||
        (!awaits_reply_from(c, r) && !may_send(r, c))) {
        unlock_two(r, c);
        return NULL;                           /* E_SRCH or E_PERM: the BKL path reports it */
    }
    count_unlocked(&ipc_unlocked_rpcs);
    if (c->ipc_flags & IPC_FWD)
        count_unlocked(&ipc_unlocked_answers);
    answer_caller(r, c, rdx & ~(u64)(IPC_SEND_BUF | IPC_RECV_BUF));   /* cannot fail now */
    if (reply_only) {
        ready_answered(c);
        unlock_two(r, c);
        r->tf->rax = (u64)E_DEADLK;            /* do_recv's answer to a receive from oneself */
        return r->tf;
    }
    u64 timeout = timeout_of(rdx);
    if (r->senders.head || timeout == 0) {
        ready_answered(c);
        ipc_unlock(c);
        struct trapframe *done = take_sender_unlocked(r);
        if (done)
            return done;
        kernel_lock();
        return do_recv(r, IPC_ANY, rdx);
    }
    r->ipc_state = IPC_RECEIVING;
    r->recv_from = 0;
    r->state = T_BLOCKED;                      /* before a waker can find it (sched.c) */
    if (timeout != WAIT_FOREVER)
        sleep_until(r, timeout);
    return wake_partner(r, c, true);
}

/* A Linux thread's forwarded system call (fwd.c fwd_syscall), without the BKL: ipc_forward
 * with the server taken by lock_partner (a plain native thread, not in a call of its
 * own, not receiving into a buffer; t not killed or interrupted), t's forwarded words
 * and `fwd` written under t's lock, in the section that publishes its wait. The
 * server's answer to it still goes the BKL's way (transfer_special, fwd_answer). NULL
 * with nothing done: the BKL path then finds the server (or its absence) itself. */
struct trapframe *ipc_forward_unlocked(struct thread *t, const u64 w[IPC_MRS])
{
    struct thread *s = lock_partner(t, t->task->linux_server, plain_partner);
    if (!s)
        return NULL;
    count_unlocked(&ipc_unlocked_rpcs);
    memcpy(t->fwd_words, w, sizeof(t->fwd_words));
    t->fwd = FWD_SYSCALL;
    forward_deliver(t, s);                     /* s plain: no buffer, no UTCB touched */
    return wake_partner(t, s, true);
}

/* The general path's try without the BKL (ipc_syscall, BKL not held): the frame to leave
 * through when the operation was made without it, else NULL, nothing done. A call or
 * reply_recv that blocks never returns here. */
static inline struct trapframe *ipc_try_without_bkl(struct thread *cur, struct trapframe *tf)
{
    u64 op = tf->rax;
    bool rpc = op == SYS_IPC_CALL || op == SYS_IPC_REPLY_RECV;
    if (!(rpc || op == SYS_IPC_RECV || (op == SYS_IPC_SEND && !ipc_dts)) || pcnt_probes_on ||
        cur->linux || (tf->rdx & (IPC_SEND_BUF | IPC_RECV_BUF)))
        return NULL;
    bool reply_only = op == SYS_IPC_REPLY_RECV && tf->rsi == (u64)cur->tid;
    if (op == SYS_IPC_RECV ? (i64)tf->rdi != IPC_ANY
                           : tf->rdi == 0 || tf->rdi > ID_MAX ||
                                 (op == SYS_IPC_REPLY_RECV && (i64)tf->rsi != IPC_ANY &&
                                  !reply_only))
        return NULL;
    int id = (int)tf->rdi;
    struct trapframe *done = op == SYS_IPC_CALL ? call_unlocked(cur, id, tf->rdx)
                             : op == SYS_IPC_REPLY_RECV
                                 ? reply_recv_unlocked(cur, id, reply_only, tf->rdx)
                             : op == SYS_IPC_SEND      ? send_unlocked(cur, id)
                                                       : recv_unlocked(cur, tf->rdx);
    return done;
}

/* ---- entry ---------------------------------------------------------------------------- */
static long sys_ipc_utcb(struct thread *t, u64 addr)
{
    if (addr && !range_ok(t->task->as, addr, sizeof(struct ipc_utcb), true))
        return E_FAULT;
    t->utcb = addr;
    return 0;
}

/* syscall_dispatch hands the IPC calls here before it takes the BKL: those made without
 * it never take it (ipc_try_without_bkl); the rest take it here. */
struct trapframe *ipc_syscall(struct trapframe *tf)
{
    struct thread *cur = current_thread();
    struct trapframe *done = ipc_try_without_bkl(cur, tf);
    if (done)
        return done;
    kernel_lock();
    pcnt_probe_start(PROBE_SYSCALL, tf->rax);
    int a = (int)(i64)tf->rdi, b = (int)(i64)tf->rsi;
    if (id_arg_invalid(tf->rdi))
        a = -2;   /* no thread has this id (and it is not reply_recv's "no reply", 0) */
    switch (tf->rax) {
    case SYS_IPC_CALL:
    case SYS_IPC_REPLY_RECV: {
        /* without probes, syscall_entry has tried the fastpath already */
        struct trapframe *fast = pcnt_probes_on && ipc_fastpath_on ? fastpath_probed(cur, tf)
                                                                   : NULL;
        if (fast)
            return fast;
        if (tf->rax == SYS_IPC_CALL)
            return do_send(cur, a, tf->rdx, true);
        if (id_arg_invalid(tf->rsi))
            b = 0;
        return do_reply_recv(cur, a, b, tf->rdx);
    }
    case SYS_IPC_SEND:
        return do_send(cur, a, tf->rdx, false);
    case SYS_IPC_RECV: {
        if (a == 0) {
            tf->rax = (u64)E_SRCH;
            return tf;
        }
        return do_recv(cur, a, tf->rdx);
    }
    case SYS_IPC_UTCB:
        tf->rax = (u64)sys_ipc_utcb(cur, tf->rdi);
        return tf;
    case SYS_IPC_GRANT:
        tf->rax = (u64)sys_ipc_grant(tf->rdi, tf->rsi);
        return tf;
    }
    tf->rax = (u64)E_NOSYS;
    return tf;
}

/* A thread is exiting: everyone blocked on it learns that it died: its senders, its
 * closed receivers and the callers awaiting its reply (its reply_head list), each under
 * the exiting thread's lock and its own. */
static void release(struct thread *x)
{
    if (x->fwd == FWD_PAGER) {
        pager_gone(x);                         /* its access becomes its fault */
        return;
    }
    if (x->ipc_flags & IPC_FWD)
        fwd_server_gone(x);                    /* a Linux task loses its server: killed */
    thread_wake(x, E_DEAD);
}

void ipc_thread_exited(struct thread *t)
{
    struct thread *x;
    ipc_lock(t);
    while ((x = lock_first(t, &t->senders.head))) {
        release(x);
        ipc_unlock(x);
    }
    while ((x = lock_first(t, &t->receivers.head))) {
        thread_wake(x, E_DEAD);
        ipc_unlock(x);
    }
    while ((x = lock_first(t, &t->reply_head))) {
        t->reply_head = x->reply_next;
        release(x);                            /* (a kernel caller woken by a kill before
                                                  finds t gone itself: ipc_kernel_call) */
        ipc_unlock(x);
    }
    ipc_unlock(t);
}

/* The thread whose IPC list holds t: its queue's owner (ipc_queue_owner), or the thread
 * whose reply it awaits (on its reply_head list), found by its id: the BKL's thread table
 * (every caller holds the BKL so far). NULL when t waits on none. t's lock held. */
static struct thread *wait_owner(const struct thread *t)
{
    struct thread *o = ipc_queue_owner(t);
    if (o || t->ipc_state != IPC_RECEIVING || !t->recv_from)
        return o;
    return thread_lookup(t->recv_from);
}

/* The locks that cover t's wait in IPC, held on return: t's, and its list owner's when it
 * waits on an IPC list (wait_owner, read under t's lock; an owner below t in address
 * makes it let go, take both and read again). Returns the owner, or NULL. */
static struct thread *lock_waiter(struct thread *t)
{
    struct thread *o;
    ipc_lock(t);
    while ((o = wait_owner(t)) && !lock_also(t, o) && wait_owner(t) != o)
        ipc_unlock(o);
    return o;
}

static void unlock_waiter(struct thread *t, struct thread *o)
{
    if (o)
        ipc_unlock(o);
    ipc_unlock(t);
}

/* Both wakers below also hold the lock of the waits for a child's end (task.h), which a
 * thread may be in: with it, a wait that tested the kill under that lock is woken. */
void ipc_end_timed_wait(struct thread *t, u32 gen)
{
    struct thread *o = lock_waiter(t);
    task_child_waits_lock();
    if (t->wait_gen == gen)
        thread_wake(t, t->state == T_BLOCKED ? E_TIMEOUT : 0);
    task_child_waits_unlock();
    unlock_waiter(t, o);
}

void ipc_wake_killed(struct thread *t)
{
    struct thread *o = lock_waiter(t);
    bool awaits_reply = o && !t->waiting_on;
    task_child_waits_lock();
    thread_wake(t, WAIT_KILLED);
    task_child_waits_unlock();
    if (awaits_reply && t->ipc_state == IPC_IDLE)   /* its wait ended (not a kernel caller's) */
        reply_unlink(o, t);
    unlock_waiter(t, o);
}
