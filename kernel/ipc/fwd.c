/*
 * Linux forwarding (docs/unix.md, "Forwarding"), as an L4 exception IPC: a task marked
 * with SYS_TASK_LINUX is a Linux process served by a server thread. Its threads enter the
 * kernel through linux_syscall_entry (entry.S; the CPU's LSTAR follows the running thread,
 * cpu_user_context), which calls fwd_syscall for any rax: the call becomes one IPC call
 * from the thread to the server (ipc_forward, ipc.c) with the number and the six
 * arguments as message words, built here and kept in the thread (fwd_words) so that its
 * registers stay as they were. The thread stays blocked until the server answers with
 * reply_recv; word 0 of the answer becomes rax (fwd_answer) and every other register is
 * preserved, as Linux's syscall clobbers only rcx and r11. A fault the VM does not
 * resolve is forwarded the same way (fwd_fault, from trap.c), so the server can deliver
 * a signal. While a thread is blocked in a forwarded call the server may read and
 * rewrite its registers (SYS_THREAD_CTL); it may also start threads with given registers
 * (SYS_TASK_THREAD_REGS: fork's child, clone's thread) and end threads.
 *
 * A server holds any number of pending forwarded calls and answers each once, in any
 * order: each caller waits with recv_from = the server (ipc.c, await_reply), which is
 * exactly the right reply_recv checks, so a second answer finds it no longer waiting
 * (E_SRCH). If the server is gone, the Linux task is killed with a report.
 *
 * Helpers (SYS_FWD_HELPER, docs/unix.md "Calls without the server lock"): a server thread
 * may name, for each CPU, a thread of its task that takes the system calls of a set of
 * numbers (below 64) its Linux threads make on that CPU. The set is copied into each task
 * marked afterwards (task->fwd_routed), the pair into the CPU (cpu->fwd_server,
 * fwd_helper), so the fastpath (ipcfast.S) and fwd_route send such a call to the helper
 * and every other call to the server thread as before. A routed call is an ordinary
 * forwarded call to the helper, which answers it itself (recv_from = the helper) and acts
 * on the caller's memory by naming the caller (SYS_VM_CTL with VM_CTL_CALLER), so it needs
 * no table of the server's.
 */
#include <ondol/abi.h>
#include "fwd.h"
#include "ipc.h"
#include "kernel.h"
#include "klock.h"
#include "pcnt.h"
#include "sched.h"
#include "task.h"
#include "thread.h"
#include "unix_ik.h"
#include "usercopy.h"
#include "waitq.h"

/* The live server thread of t's task, or NULL. */
static struct thread *server_of(struct thread *t)
{
    struct thread *s = thread_lookup(t->task->linux_server);
    return s && s->state != T_ZOMBIE ? s : NULL;
}

static __attribute__((noreturn)) void no_server(struct thread *t)
{
    printk("ondol: killed Linux task %d (%s): its server %d is gone\n", t->task->id,
           t->task->name, t->task->linux_server);
    task_kill(t->task, KILLED_STATUS);
    thread_exit(KILLED_STATUS);
}

/* Whether call nr of t is one its server routes to a helper (SYS_FWD_HELPER). */
static bool fwd_is_routed(const struct thread *t, u64 nr)
{
    return nr < 64 && (t->task->fwd_routed >> nr & 1);
}

/* The thread that takes call nr of t on this CPU: the helper server s named for this CPU
 * when nr is one of t's routed calls and that helper lives, else s. */
static struct thread *fwd_route(struct thread *t, struct thread *s, u64 nr)
{
    struct cpu *c = this_cpu();
    if (!fwd_is_routed(t, nr) || c->fwd_server != s->tid)
        return s;
    struct thread *h = thread_lookup(c->fwd_helper);
    if (!h || h->task != s->task || h->state == T_ZOMBIE)
        return s;
    return h;
}

/* Without the BKL when the server can be taken so (ipc_forward_unlocked: probes off, a
 * plain server), else under it. A routed call goes the BKL's way: only under it can the
 * helper's task be checked against the server's (fwd_route). */
struct trapframe *fwd_syscall(struct trapframe *tf)
{
    struct thread *t = current_thread();
    const u64 w[IPC_MRS] = {FWD_LABEL(FWD_OP_SYSCALL), tf->rax, tf->rdi, tf->rsi,
                            tf->rdx, tf->r10, tf->r8, tf->r9};
    if (!pcnt_probes_on && !fwd_is_routed(t, tf->rax)) {
        struct trapframe *done = ipc_forward_unlocked(t, w);
        if (done)
            return done;
    }
    kernel_lock();
    pcnt_probe_start(PROBE_SYSCALL, tf->rax);
    struct thread *s = server_of(t);
    if (!s)
        no_server(t);
    struct thread *to = t->task->fwd_routed ? fwd_route(t, s, tf->rax) : s;
    memcpy(t->fwd_words, w, sizeof(w));
    t->fwd = FWD_SYSCALL;
    /* without probes, linux_syscall_entry has tried the fastpath already */
    struct trapframe *fast = pcnt_probes_on && ipc_fastpath_on ? ipc_forward_fast_probed(t, to)
                                                               : NULL;
    return fast ? fast : ipc_forward(t, to, true);
}

bool fwd_fault(struct trapframe *tf, u64 vector, u64 addr)
{
    struct thread *t = current_thread();
    if (t->task && t->task->linux_server == FWD_SERVER_IK)
        return unix_ik_fault(tf, vector, addr);
    struct thread *s = t->task && t->task->linux_server ? server_of(t) : NULL;
    if (!s)
        return false;
    const u64 w[IPC_MRS] = {FWD_LABEL(FWD_OP_FAULT), vector, tf->error, addr, tf->rip};
    memcpy(t->fwd_words, w, sizeof(w));
    t->fwd = FWD_FAULT;
    ipc_forward(t, s, false);
    return true;                    /* returned: being killed, the exit checks end it */
}

/* An interrupt is carried by `killed` (with `interrupt`), so that the one check every
 * return to user mode already makes (sched_kernel_exit_checks) finds it: native exits
 * pay nothing. A Linux thread never sleeps in the kernel outside a forwarded call, so no
 * wait sees the flag as a kill; a real kill clears `interrupt`. MK: returns only when a
 * real kill came meanwhile (the call is not made; the thread leaves through the server
 * otherwise); IK: returns once the server has answered. */
void fwd_interrupt(struct thread *t)
{
    t->killed = false;
    t->interrupt = KILL_EXIT;
    if (t->task->linux_server == FWD_SERVER_IK) {
        unix_ik_interrupted(t);
        return;
    }
    struct thread *s = t->task->linux_server ? server_of(t) : NULL;
    if (!s)
        no_server(t);
    const u64 w[IPC_MRS] = {FWD_LABEL(FWD_OP_INTERRUPT)};
    memcpy(t->fwd_words, w, sizeof(w));
    t->fwd = FWD_INTERRUPT;
    ipc_forward(t, s, false);       /* returns when a kill came meanwhile (leave_killed ends t) */
}

/* c (blocked in IPC, its lock held by the caller) ends its task with `status` on its
 * way out (leave_killed): the kills of the other threads take their ipc locks
 * (thread_kill), so they wait until c runs, past the operation's commit. */
static void kill_task_on_exit(struct thread *c, int status)
{
    c->killed = true;
    c->interrupt = KILL_EXIT;
    c->kill_task = status;
}

long fwd_answer_trap(struct thread *c, u8 kind, u64 w0)
{
    if ((kind == FWD_FAULT || kind == FWD_INTERRUPT) && (i64)w0 < 0)    /* not handled */
        kill_task_on_exit(c, kind == FWD_FAULT ? KILLED_STATUS_BASE + (int)c->fwd_words[1]
                                               : KILLED_STATUS);
    return (long)c->tf->rax;
}

void fwd_server_gone(struct thread *c)
{
    printk("ondol: killed Linux task %d (%s): its server %d exited\n", c->task->id,
           c->task->name, c->task->linux_server);
    c->fwd = FWD_NONE;
    c->ipc_flags = 0;
    kill_task_on_exit(c, KILLED_STATUS);
}

/* ---- the server's calls ------------------------------------------------------------- */
static int id_of(u64 reg) { return (int)MIN(reg, 0x7fffffffull); }

struct linux_mark {
    int server;                    /* the server thread's id, 0 if it is no live thread of ours */
    u64 routed;                    /* the calls its helpers take (SYS_FWD_HELPER) */
};

/* Task t's marking, its controller's test passed, under the task table's lock
 * (task_controlled_call), with or without the BKL. */
static long mark_linux(struct task *t, void *arg)
{
    const struct linux_mark *m = arg;
    if (!m->server)
        return E_SRCH;
    if (__atomic_load_n(&t->live_threads, __ATOMIC_RELAXED))
        return E_INVAL;            /* marked before its first thread runs */
    if (t->as->shared)
        return E_NOTSUP;           /* mmu=off: a Linux program needs its own address space */
    t->linux_server = m->server;
    t->fwd_routed = m->routed;
    t->fwd_fast_server = t->fwd_routed ? 0 : m->server;
    return 0;
}

/* The server thread `sid`, a live thread of self's task: found under the BKL, or without
 * it under its own lock, tried once (thread_trylock; busy, or no such thread: declined,
 * and the BKL path answers). */
static long linux_server_of(struct task *self, int sid, int *server)
{
    struct thread *s;
    if (kernel_lock_held()) {
        s = thread_lookup(sid);
        *server = s && s->task == self && s->state != T_ZOMBIE ? sid : 0;
        return 0;
    }
    if (!(s = thread_trylock(sid)))
        return FWD_DECLINED;
    *server = s->task == self ? sid : 0;
    spin_unlock(&s->ipc_lock);
    return 0;
}

long fwd_task_linux(struct task *self, u64 task, u64 server)
{
    struct linux_mark m = {.routed = __atomic_load_n(&self->fwd_helper_calls, __ATOMIC_RELAXED)};
    if (linux_server_of(self, id_of(server), &m.server))
        return FWD_DECLINED;
    return task_controlled_call(self, id_of(task), mark_linux, &m);
}

/* One helper a CPU, for one server: the last call for a CPU wins, so only privileged
 * tasks (servers) may name one. The fastpath reads the pair without a lock and checks the
 * helper it names, so the two stores need no order. */
long fwd_helper(struct thread *server, u64 cpu, u64 helper, u64 calls)
{
    if (!server->task->privileged)
        return E_PERM;
    if (cpu >= cpus_running)
        return E_INVAL;
    struct thread *h = thread_lookup(id_of(helper));
    if (!h || h->task != server->task || h->state == T_ZOMBIE)
        return E_SRCH;
    server->task->fwd_helper_calls = calls;
    cpus[cpu].fwd_helper = h->tid;
    cpus[cpu].fwd_server = server->tid;
    return 0;
}

/* Registers as the thread sees them: a syscall frame does not hold rcx and r11, which
 * the return from syscall sets to rip and rflags. */
static void regs_from_frame(const struct thread *t, struct user_regs *r)
{
    const struct trapframe *f = t->tf;
    bool sys = f->vector == VEC_SYSCALL;
    *r = (struct user_regs){
        .rax = f->rax, .rbx = f->rbx, .rcx = sys ? f->rip : f->rcx, .rdx = f->rdx,
        .rsi = f->rsi, .rdi = f->rdi, .rbp = f->rbp, .rsp = f->rsp, .r8 = f->r8, .r9 = f->r9,
        .r10 = f->r10, .r11 = sys ? f->rflags : f->r11, .r12 = f->r12, .r13 = f->r13,
        .r14 = f->r14, .r15 = f->r15, .rip = f->rip, .rflags = f->rflags, .fs_base = t->fs_base,
        .gs_base = t->gs_base,
    };
}

/* rip, rsp and the FS and GS bases must lie in the user half: the return to user mode
 * (iret, sysret) and the base writes would fault in the kernel on a non-canonical one. */
static bool regs_valid(const struct user_regs *r)
{
    return r->rip < USER_SPACE_END && r->rsp < USER_SPACE_END && r->fs_base < USER_SPACE_END &&
           r->gs_base < USER_SPACE_END;
}

/* Load r into t's frame. The frame is marked VEC_REGS so that the thread leaves by iret
 * with every register (rcx and r11 included) as given; the flags it may choose are the
 * arithmetic ones and DF (IF on, IOPL 0). */
static void regs_to_frame(struct thread *t, const struct user_regs *r)
{
    struct trapframe *f = t->tf;
    f->rax = r->rax; f->rbx = r->rbx; f->rcx = r->rcx; f->rdx = r->rdx;
    f->rsi = r->rsi; f->rdi = r->rdi; f->rbp = r->rbp; f->rsp = r->rsp;
    f->r8 = r->r8; f->r9 = r->r9; f->r10 = r->r10; f->r11 = r->r11;
    f->r12 = r->r12; f->r13 = r->r13; f->r14 = r->r14; f->r15 = r->r15;
    f->rip = r->rip;
    f->rflags = (r->rflags & USER_RFLAGS_MASK) | RFLAGS_IF | 0x2;
    f->cs = SEL_UCODE;
    f->ss = SEL_UDATA;
    f->vector = VEC_REGS;
    f->error = 0;
    thread_set_bases(t, r->fs_base, r->gs_base);
    if (t == current_thread())          /* the IK server on the thread's own stack: the */
        thread_user_context(this_cpu(), t);   /* bases are loaded now, as a switch would */
}

static long read_regs(u64 uregs, struct user_regs *r)
{
    if (copyin(r, uregs, sizeof(*r)))
        return E_FAULT;
    return regs_valid(r) ? 0 : E_INVAL;
}

/* A thread of a task the caller controls, or NULL with *err. */
static struct thread *controlled_thread(struct task *self, u64 tid, long *err)
{
    struct thread *t = thread_lookup(id_of(tid));
    *err = E_SRCH;
    if (!t || !t->task || t->state == T_ZOMBIE || !task_controlled(self, t->task->id, err))
        return NULL;
    return t;
}

/* Its registers are stable, complete in its frame: stopped (THREAD_CTL_STOP), or blocked
 * in a Linux forwarded call (not a pager call: that one resumes by retrying the access). */
static bool regs_stable(const struct thread *t)
{
    return t->stopped || (t->fwd != FWD_NONE && t->fwd != FWD_PAGER);
}

/* ---- the controls on a thread, shared by SYS_THREAD_CTL (MK) and the IK runtime ---- */
void fwd_thread_end(struct thread *t) { thread_kill(t); }

void fwd_thread_interrupt(struct thread *t)
{
    if (!t->killed) {              /* a thread being killed or stopped stays so */
        t->killed = true;
        t->interrupt = KILL_INTERRUPT;
        thread_poke(t);
    }
}

struct start {
    struct thread *th;
    const struct user_regs *r;
    int prio;
    long tid;                          /* out */
};

/* Under the task table's lock (task_controlled_call), which a kill and the last thread's
 * exit take to mark t exiting: th joins t whole (task, frame, id, list) while t has live
 * threads or none yet, so a kill after it finds th, and an exit counts it; and th is
 * made ready before the lock goes, for a kill that found it blocked would make it ready
 * itself, and it could then run, end, and be freed before our own make_ready. Its id is
 * read before it is ready (*tid). */
static long start_in(struct task *t, void *arg)
{
    struct start *s = arg;
    if (s->prio > t->max_prio)
        return E_PERM;                 /* the ceiling may have fallen (SYS_TASK_HANDOVER) */
    thread_attach(s->th, t);
    regs_to_frame(s->th, s->r);
    if (!thread_publish(s->th))
        return E_NOMEM;
    task_thread_link_locked(t, s->th);
    s->tid = s->th->tid;
    make_ready_new(s->th);             /* a new process's or thread's first: an idle CPU */
    return 0;
}

long fwd_thread_start(struct task *self, int id, const struct user_regs *r, int prio)
{
    if (!regs_valid(r))
        return E_INVAL;
    struct thread *th = thread_prepare(r->rip, r->rsp, 0, 0, prio);
    if (!th)
        return E_NOMEM;
    struct start s = {.th = th, .r = r, .prio = prio};
    long err = task_controlled_call(self, id, start_in, &s);
    if (err)
        thread_discard(th);
    return err ? err : s.tid;
}

/* Under t's ipc lock: its fwd, and the frame of a thread blocked in a forwarded call. */
long fwd_regs_get(struct thread *t, struct user_regs *r)
{
    spin_lock(&t->ipc_lock);
    bool stable = regs_stable(t);
    if (stable)
        regs_from_frame(t, r);
    spin_unlock(&t->ipc_lock);
    return stable ? 0 : E_INVAL;
}

long fwd_regs_set(struct thread *t, const struct user_regs *r)
{
    if (!regs_valid(r))
        return E_INVAL;
    spin_lock(&t->ipc_lock);
    bool stable = regs_stable(t);
    if (stable) {
        regs_to_frame(t, r);
        if (t->fwd != FWD_NONE)
            t->fwd = FWD_REGS;     /* the answer's word 0 is ignored */
    }
    spin_unlock(&t->ipc_lock);
    return stable ? 0 : E_INVAL;
}

/* t, its lock held: blocked in a forwarded call its task's controller may read or
 * rewrite, with no BKL held. Its flags and state are written under that lock as the call
 * is made (forward_deliver) and answered (fwd_answer), so the frame is complete and stays
 * so until we let go; the BKL path's `fwd` alone is set before the call is made. A live
 * thread blocked so keeps its task (the task goes with its last thread); `parent` and
 * `exiting` are read once each, as the task table's lock would give them. */
static bool regs_controllable_unlocked(const struct thread *t, const struct task *self)
{
    return t->ipc_flags == IPC_FWD && t->ipc_state != IPC_IDLE && t->fwd != FWD_NONE &&
           t->fwd != FWD_PAGER && __atomic_load_n(&t->task->parent, __ATOMIC_RELAXED) == self &&
           !__atomic_load_n(&t->task->exiting, __ATOMIC_RELAXED);
}

long fwd_regs_unlocked(struct task *self, u64 tid, u64 op, u64 uregs)
{
    struct user_regs r;
    bool set = op == THREAD_CTL_SET_REGS;
    if (set && read_regs(uregs, &r))
        return FWD_DECLINED;            /* the BKL path reports E_SRCH before E_FAULT */
    struct thread *t = thread_trylock(id_of(tid));
    if (!t)
        return FWD_DECLINED;
    bool ok = regs_controllable_unlocked(t, self);
    if (ok && set) {
        regs_to_frame(t, &r);
        t->fwd = FWD_REGS;              /* the answer's word 0 is ignored */
    } else if (ok) {
        regs_from_frame(t, &r);
    }
    spin_unlock(&t->ipc_lock);
    if (!ok)
        return FWD_DECLINED;
    return set ? 0 : copyout(uregs, &r, sizeof(r));
}

long fwd_thread_ctl(struct task *self, u64 tid, u64 op, u64 uregs)
{
    long err;
    struct thread *t = controlled_thread(self, tid, &err);
    if (!t)
        return err;
    if (op == THREAD_CTL_END) {
        fwd_thread_end(t);
        return 0;
    }
    if (op == THREAD_CTL_INTERRUPT) {
        if (!t->task->linux_server)
            return E_INVAL;
        fwd_thread_interrupt(t);
        return 0;
    }
    if (op == THREAD_CTL_STOP)
        return thread_stop(t);
    if (op == THREAD_CTL_RESUME) {
        thread_resume(t);
        return 0;
    }
    struct user_regs r;
    if (op == THREAD_CTL_GET_REGS) {
        err = fwd_regs_get(t, &r);
        return err ? err : copyout(uregs, &r, sizeof(r));
    }
    if (op != THREAD_CTL_SET_REGS)
        return E_INVAL;
    if (!regs_stable(t))
        return E_INVAL;
    if ((err = read_regs(uregs, &r)))
        return err;
    return fwd_regs_set(t, &r);
}

static long ceiling_of(struct task *t, void *ceiling)
{
    *(int *)ceiling = t->max_prio;
    return 0;
}

/* Without the BKL: the task's tests (then the arguments') in the order the ABI gives its
 * errors, then the start, which tests the task again. */
long fwd_task_thread_regs(struct task *self, u64 task, u64 uregs, u64 prio)
{
    int ceiling;
    long err = task_controlled_call(self, id_of(task), ceiling_of, &ceiling);
    if (err)
        return err;
    if ((i64)prio == PRIO_INHERIT)
        prio = (u64)current_thread()->prio;
    if (prio > PRIO_MAX)
        return E_INVAL;
    if (prio > (u64)ceiling)
        return E_PERM;                 /* above the task's ceiling, as SYS_TASK_THREAD */
    struct user_regs r;
    if ((err = read_regs(uregs, &r)))
        return err;
    return fwd_thread_start(self, id_of(task), &r, (int)prio);
}
