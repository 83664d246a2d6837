/* The UNIX server's IK form (unix_ik.c, docs/unix.md "The IK form"): the server's code
 * linked into the kernel, entered on the trapping thread's kernel stack. */
#ifndef UNIX_IK_H
#define UNIX_IK_H
#include "arch.h"
#include "thread.h"

/* At boot, after the other servers (main.c): with unix=ik, start the server's kernel
 * threads (the first one unpacks the root archive and starts init); else nothing. */
void unix_ik_boot(void);
/* From fwd_slow (entry.S), with nothing taken yet, for a thread of a task with
 * linux_server == FWD_SERVER_IK: takes the kernel lock and the syscall probe, as
 * fwd_syscall does; the system call in tf runs the server; the thread sleeps here until
 * answered. Returns the frame to leave through (tf). */
struct trapframe *unix_ik_syscall(struct trapframe *tf);
/* An unresolved user fault: the server signals the process; true (leave through tf,
 * which the server may have rewritten, or exit if killed). */
bool unix_ik_fault(struct trapframe *tf, u64 vector, u64 addr);
/* THREAD_CTL_INTERRUPT reached t at its return to user mode: the server delivers the
 * pending signals (or kills it). */
void unix_ik_interrupted(struct thread *t);
#endif
