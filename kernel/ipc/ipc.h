/* Synchronous IPC with direct thread switching (docs/ipc.md). */
#ifndef IPC_H
#define IPC_H
#include "arch.h"
#include "thread.h"

enum { IPC_IDLE = 0, IPC_SENDING = 1, IPC_RECEIVING = 2 };

extern bool ipc_dts;                           /* option dts=on|off, SYS_KSET at run time */
extern bool ipc_fastpath_on;                   /* option ipc_fastpath=on|off (the oracle: off) */
struct trapframe *ipc_syscall(struct trapframe *tf);
/* Linux forwarding (fwd.c): the current thread t calls its server s with t->fwd_words,
 * as a register-only call the kernel makes for it. Returns the frame to leave through;
 * with may_switch false (a fault's trap path) it blocks and never returns. */
struct trapframe *ipc_forward(struct thread *t, struct thread *s, bool may_switch);
#define IPC_FWD (1ull << 34)   /* ipc_flags: blocked in a forwarded call (kernel only) */
void ipc_thread_exited(struct thread *t);     /* wake peers blocked on t with E_DEAD */
long ipc_grant_right(struct task *to, int tid);  /* let `to` send to `tid`: 0 or E_NOMEM */
#endif
