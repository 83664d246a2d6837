/*
 * What the signal files (signal.c, signal_frame.c, signal_calls.c, signal_timer.c) share
 * among themselves; the rest of the server uses signal.h.
 */
#ifndef UNIX_SIGNAL_IMPL_H
#define UNIX_SIGNAL_IMPL_H

#include "signal.h"

#define SIG_BIT(sig) (1ull << ((sig) - 1))
#define SIG_UNBLOCKABLE (SIG_BIT(SIGKILL) | SIG_BIT(SIGSTOP))
/* Faults: dequeued before other signals, as Linux's SYNCHRONOUS_MASK. */
#define SIG_SYNCHRONOUS (SIG_BIT(SIGSEGV) | SIG_BIT(SIGBUS) | SIG_BIT(SIGILL) | \
                         SIG_BIT(SIGTRAP) | SIG_BIT(SIGFPE) | SIG_BIT(SIGSYS))

/* A signal's default action (signal(7)). */
enum sig_default { SIG_DO_TERM, SIG_DO_CORE, SIG_DO_STOP, SIG_DO_CONT, SIG_DO_IGNORE };
enum sig_default sig_default_action(int sig);
/* p's disposition of sig discards it (SIG_IGN, or SIG_DFL whose default is to ignore or
 * to continue). */
bool sig_discarded_by(const struct proc *p, int sig);

void pending_add(struct sig_pending *q, const struct sig_info *info);
void pending_take(struct sig_pending *q, int sig, struct sig_info *info);
void pending_flush(struct sig_pending *q, uint64_t mask);
void flush_everywhere(struct proc *p, uint64_t mask);

/* Send: to process p (t NULL) or to its thread t; info->signo is a valid signal. */
void send_info(struct proc *p, struct uthread *t, const struct sig_info *info);
void stop_process(struct proc *p, int sig);
/* proc_exit(p, status), counted: a process may be freed by it (a parent that reaps at
 * once), so a loop that goes on afterwards compares sig_terminations instead of looking
 * at p. */
void sig_terminate(struct proc *p, int status);
extern unsigned sig_terminations;
bool pgrp_orphaned(int pgid);

/* Signals pending for t that it does not block. */
static inline uint64_t sig_deliverable(const struct uthread *t)
{
    return (t->sig_pending.set | t->proc->sig_pending.set) & ~t->sig_blocked;
}

#endif
