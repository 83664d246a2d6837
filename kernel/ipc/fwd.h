/* Linux forwarding (fwd.c, docs/unix.md "Forwarding"): the system calls and faults of a
 * Linux task become IPC calls to its server; the server's calls on its tasks' threads. */
#ifndef FWD_H
#define FWD_H
#include "arch.h"
#include "thread.h"

/* thread->fwd: the forwarded call a thread is blocked in */
enum { FWD_NONE = 0, FWD_SYSCALL = 1, FWD_FAULT = 2, FWD_INTERRUPT = 3,
       FWD_REGS = 4 /* registers were set */, FWD_PAGER = 5 /* a pager call (mm/pager.c) */ };
/* task->linux_server of a task served by the UNIX server's IK form (kernel/srv/unix_ik.c):
 * no thread; its calls and faults run the server on the trapping thread's stack. */
#define FWD_SERVER_IK (-1)

/* linux_syscall_entry (entry.S): forward the current thread's system call; the frame to
 * leave through. Kills the task when its server is gone. */
struct trapframe *fwd_syscall(struct trapframe *tf);
/* A user-mode fault the VM did not resolve (trap.c): forwarded, never returning, when the
 * thread's task is a Linux task with a live MK server (unless the thread is being killed:
 * then true, not forwarded); handled by the IK server, true (leave through the frame,
 * which the server may have rewritten); else false (kill as usual). `vector` is the frame's, or FWD_FAULT_NOMEM when no frame was free. */
bool fwd_fault(struct trapframe *tf, u64 vector, u64 addr);
/* THREAD_CTL_INTERRUPT reached t at its return to user mode (sched.c): forward an
 * "interrupted" call; in MK returns only when a kill came meanwhile (no call made), in IK
 * once answered. */
void fwd_interrupt(struct thread *t);
/* The server answered c's forwarded call with word 0 = w0 (ipc.c, transfer): ends the
 * forwarded call and returns the value c's rax must hold. Inline for a system call (the
 * IK server answers each one here: rax = w0); a fault or interrupt goes to
 * fwd_answer_trap, which may kill the task. */
long fwd_answer_trap(struct thread *c, u8 kind, u64 w0);
static inline long fwd_answer(struct thread *c, u64 w0)
{
    u8 kind = c->fwd;
    c->fwd = FWD_NONE;
    c->ipc_flags = 0;
    return kind == FWD_SYSCALL ? (long)w0 : fwd_answer_trap(c, kind, w0);
}
/* fwd_answer for a call known to be a system call whose registers were not set (c->fwd
 * == FWD_SYSCALL; the IK server's own, answered at once): rax = w0. */
static inline long fwd_answer_syscall(struct thread *c, u64 w0)
{
    c->fwd = FWD_NONE;
    c->ipc_flags = 0;
    return (long)w0;
}
/* The server c waits for has exited: its task is killed, with a report. */
void fwd_server_gone(struct thread *c);

/* The controls on a thread t of a controlled task (SYS_THREAD_CTL's ops; the IK runtime
 * calls them directly). Registers only while t is stopped or in a Linux forwarded call
 * (else E_INVAL); rip, rsp and the FS and GS bases must be user addresses (E_INVAL).
 * fwd_thread_start: a new thread with registers r of task `id`, which self controls, its
 * tid or E_* (task_controlled_call's E_SRCH and E_PERM; E_PERM above the task's ceiling,
 * E_NOMEM); without the BKL (with it too); it starts on an idle CPU it may use when there
 * is one (make_ready_new: a new process has no cache). */
void fwd_thread_end(struct thread *t);
void fwd_thread_interrupt(struct thread *t);
long fwd_regs_get(struct thread *t, struct user_regs *r);
long fwd_regs_set(struct thread *t, const struct user_regs *r);
long fwd_thread_start(struct task *self, int id, const struct user_regs *r, int prio);

/* SYS_TASK_LINUX: task `task`, which self controls and which has no thread yet, becomes a
 * Linux task served by `server`, a thread of self. With or without the BKL (without:
 * FWD_DECLINED, nothing done, when the server thread's lock was busy). */
long fwd_task_linux(struct task *self, u64 task, u64 server);
long fwd_helper(struct thread *server, u64 cpu, u64 helper, u64 calls);   /* SYS_FWD_HELPER */
long fwd_thread_ctl(struct task *self, u64 tid, u64 op, u64 uregs);        /* SYS_THREAD_CTL */
/* SYS_THREAD_CTL's GET_REGS and SET_REGS without the BKL (SYSCALL_UNLOCKED): the thread
 * taken by thread_trylock (one try, as IPC's unlocked paths take a partner), blocked in a
 * forwarded call of a task self controls; the answer, or FWD_DECLINED with nothing done,
 * and the BKL path (fwd_thread_ctl) then finds and reports what stood in the way. */
#define FWD_DECLINED 1
long fwd_regs_unlocked(struct task *self, u64 tid, u64 op, u64 uregs);
/* SYS_TASK_THREAD_REGS, without the BKL (SYSCALL_UNLOCKED) */
long fwd_task_thread_regs(struct task *self, u64 task, u64 uregs, u64 prio);
#endif
