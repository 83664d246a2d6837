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
 * answer's value is then ignored (the frame holds result as the interrupted rax). */
bool signal_deliver(struct uthread *t, long result);
/* A fault the kernel forwarded: SIGSEGV/SIGBUS/SIGFPE/SIGILL/SIGTRAP to t with siginfo;
 * a blocked or ignored synchronous signal terminates the process, as Linux does. */
void signal_fault(struct uthread *t, unsigned vector, uint64_t error, uint64_t addr,
                  uint64_t rip);

/* Process lifecycle hooks (process.c calls them): a child's exit sends SIGCHLD per the
 * parent's disposition (SA_NOCLDWAIT, SIG_IGN: the child is reaped at once when this
 * returns true); fork copies dispositions, mask and the alternate stack; execve resets
 * caught handlers to default; a thread or process going away frees its signal state. */
bool signal_child_exited(struct proc *parent, struct proc *child);
void signal_fork(struct proc *child, const struct proc *parent,
                 struct uthread *child_thread, const struct uthread *parent_thread);
void signal_exec(struct proc *p);
void signal_exit(struct proc *p);
void signal_thread_exit(struct uthread *t);

/* The end of a process, for signals' default actions (process.c): every thread ends,
 * files close, the parent is told; wait_status is wait4's encoding (exit code << 8, or
 * the terminating signal). */
void proc_exit(struct proc *p, int wait_status);

#endif
