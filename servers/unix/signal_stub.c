/*
 * Placeholder signals (signal.h) until unix-signals' signal.c is merged; the lead deletes
 * this file then. Nothing is delivered to a handler: a signal whose default action
 * terminates ends the process at once (proc_exit with the signal as its wait status);
 * stop, continue and ignore do nothing; a fault ends the process with its signal.
 */
#include "devices.h"
#include "signal.h"

#define SIGILL 4
#define SIGTRAP 5
#define SIGBUS 7
#define SIGFPE 8
#define SIGSEGV 11
#define SIGSTOP 19
#define SIGURG 23

static bool terminates(int sig)
{
    return sig > 0 && sig < 65 && sig != SIGCHLD && sig != SIGCONT && sig != SIGURG &&
           sig != SIGWINCH && sig != SIGSTOP && sig != SIGTSTP && sig != SIGTTIN &&
           sig != SIGTTOU;
}

void signal_send(struct proc *p, int sig)
{
    if (!p->zombie && terminates(sig))
        proc_exit(p, sig);
}

void signal_send_to_thread(struct uthread *t, int sig) { signal_send(t->proc, sig); }

bool signal_deliver(struct uthread *t, long result)
{
    (void)t;
    (void)result;
    return false;
}

void signal_fault(struct uthread *t, unsigned vector, uint64_t error, uint64_t addr,
                  uint64_t rip)
{
    (void)error;
    (void)addr;
    (void)rip;
    int sig = vector == 0 || vector == 16 || vector == 19 ? SIGFPE
              : vector == 6                              ? SIGILL
              : vector == 1 || vector == 3               ? SIGTRAP
              : vector == 17                             ? SIGBUS
                                                         : SIGSEGV;
    proc_exit(t->proc, sig);
}

bool signal_child_exited(struct proc *parent, struct proc *child)
{
    (void)parent;
    (void)child;
    return false;
}

void signal_fork(struct proc *child, const struct proc *parent, struct uthread *child_thread,
                 const struct uthread *parent_thread)
{
    (void)child;
    (void)parent;
    (void)child_thread;
    (void)parent_thread;
}

void signal_exec(struct proc *p) { (void)p; }
void signal_exit(struct proc *p) { (void)p; }
void signal_thread_exit(struct uthread *t) { (void)t; }

void signal_send_pipe(struct proc *p) { signal_send(p, SIGPIPE); }

struct pgrp_signal {
    int pgid, sig;
};

static void send_if_in_group(struct proc *p, void *arg)
{
    const struct pgrp_signal *s = arg;
    if (p->pgid == s->pgid)
        signal_send(p, s->sig);
}

void signal_send_pgrp(int pgid, int sig)
{
    struct pgrp_signal s = {pgid, sig};
    proc_for_each(send_if_in_group, &s);
}

long signal_tty_background(struct proc *p, int sig)
{
    (void)p;
    (void)sig;
    return 0;
}
