/*
 * Signals (signal.c; docs/unix.md, "Signals"): what the rest of the server calls. A
 * signal is made pending on a process or a thread; it is delivered when its thread next
 * returns to user mode through the server: at the answer of a system call, or, for a
 * thread that runs in user mode, after rt_thread_interrupt makes it enter (unix_interrupted).
 * Delivery builds Linux's rt_sigframe on the user stack (or the alternate stack) through
 * rt_regs_get/rt_regs_set and copy_out; default actions terminate (proc_exit), stop,
 * continue or ignore.
 */
#ifndef UNIX_SIGNAL_H
#define UNIX_SIGNAL_H

#include <stdbool.h>
#include <stdint.h>
#include "unix.h"

/* Make sig pending on process p (kill) or on one thread (tgkill, faults); wakes a thread
 * that waits interruptibly (its call ends with -EINTR or restarts, per SA_RESTART) or
 * interrupts one that runs. sig 0 only checks. */
void signal_send(struct proc *p, int sig);
void signal_send_to_thread(struct uthread *t, int sig);

/* Before the runtime answers thread t's system call with `result`: deliver what is pending
 * and not blocked. True when t's registers were set (a handler frame, or t ended): the
 * answer's value is then ignored (the frame holds result as the interrupted rax).
 * `result` may be one of Linux's internal restart codes (-ERESTARTSYS...: a handler
 * interrupted by a signal returns one); signal_deliver always turns it into -EINTR (in
 * the frame) or a restart (rax = the call's number, rip -= 2; registers set: true).
 * Stop: when t's process is stopped, it returns true with t->sig_held set: the runtime
 * does not answer now, and signal.c answers through unix_answer once SIGCONT comes.
 * For a thread that came in through FWD_OP_INTERRUPT (unix_interrupted), result is
 * SIGNAL_INTERRUPTED: rax is kept; the runtime then answers 0 unless t->sig_held. */
#define SIGNAL_INTERRUPTED (-4096L - 3)
bool signal_deliver_pending(struct uthread *t, long result);   /* the work (signal_frame.c) */
/* Inline, as nearly every answer has nothing to deliver: no signal pending and unblocked,
 * no stop, no mask to restore, no restart code (-ERESTARTSYS..-ERESTART_RESTARTBLOCK). */
static inline bool signal_deliver(struct uthread *t, long result)
{
    t->sig_interrupting = false;
    if (!((t->sig_pending.set | t->proc->sig_pending.set) & ~t->sig_blocked) &&
        !t->proc->sig_stopped && !t->sig_restore_mask &&
        (result < -ERESTART_RESTARTBLOCK || result > -ERESTARTSYS))
        return false;
    return signal_deliver_pending(t, result);
}
/* A fault the kernel forwarded: SIGSEGV/SIGBUS/SIGFPE/SIGILL/SIGTRAP to t with siginfo;
 * a blocked or ignored synchronous signal terminates the process, as Linux does. It is
 * delivered at once (signal_deliver); the runtime then answers the fault with 0 unless
 * t->sig_held. signal_force_fault is the same for a signal the memory part chooses
 * (SIGBUS with BUS_ADRERR for an access beyond a mapped file's end). */
void signal_fault(struct uthread *t, unsigned vector, uint64_t error, uint64_t addr,
                  uint64_t rip);
void signal_force_fault(struct uthread *t, int sig, int code, uint64_t addr,
                        unsigned vector, uint64_t error);

/* A call that waits with a temporary signal mask (ppoll, pselect6): signal_mask_begin
 * reads the 8-byte set at umask (0: none) and makes it t's blocked set, saving the old
 * one on the first run only (0 or -EFAULT); signal_mask_end(c, r) passes the call's
 * result through and restores the old mask at once unless the call blocked (Linux's
 * restore_saved_sigmask_unless: a signal that ends the wait is delivered under the
 * temporary mask, and its frame saves the old one). */
long signal_mask_begin(struct ucall *c, uint64_t umask);
long signal_mask_end(struct ucall *c, long r);

/* Process lifecycle hooks (process.c calls them): a child's exit sends SIGCHLD per the
 * parent's disposition (SA_NOCLDWAIT, SIG_IGN: the child is reaped at once when this
 * returns true); fork copies dispositions (share: CLONE_SIGHAND, the parent's table
 * itself), mask and the alternate stack; execve unshares the dispositions (-ENOMEM when
 * it cannot) and resets caught handlers to default; a thread or process going away frees its signal state. */
bool signal_child_exited(struct proc *parent, struct proc *child);
void signal_fork(struct proc *child, const struct proc *parent, bool share,
                 struct uthread *child_thread, const struct uthread *parent_thread);
long signal_exec(struct proc *p);
/* Linux's flush_signal_handlers(p, 0): every caught signal back to SIG_DFL, ignored ones
 * stay ignored, flags and masks cleared (execve; clone3's CLONE_CLEAR_SIGHAND, on a
 * child's own table). */
void signal_reset_handlers(struct proc *p);
void signal_exit(struct proc *p);
void signal_thread_exit(struct uthread *t);
/* Every new thread (init's, an exec's, a clone thread's; signal_fork does fork's child):
 * t->proc set; it joins its process's thread list and inherits creator's blocked mask
 * (creator NULL: nothing blocked). A CLONE_VM thread has no alternate stack. A signal
 * already pending for the process and not blocked interrupts it (rt_thread_interrupt),
 * so an exec's new image takes it at once, as Linux does on execve's return. */
void signal_thread_new(struct uthread *t, const struct uthread *creator);

/* The end of a process, for signals' default actions (process.c): every thread ends,
 * files close, the parent is told; wait_status is wait4's encoding (exit code << 8, or
 * the terminating signal). */
void proc_exit(struct proc *p, int wait_status);
/* process.c: a child's stop or continue changed p->sig_wait_report: wake the parent's
 * wait4/waitid calls (WUNTRACED, WCONTINUED) so they run again. */
void proc_wake_parent(struct proc *p);
/* unix-run's thread code: the tid user space knows thread t by (gettid, tkill, tgkill). */
int thread_linux_tid(const struct uthread *t);
/* The live thread user space calls tid (in process tgid when tgid > 0), or NULL
 * (signal_calls.c: tkill, tgkill; sched_*affinity). */
struct uthread *thread_find_linux(int64_t tgid, int64_t tid);

#endif
