/* Pagers (pager.c, docs/memory.md "Pagers"): a fault on a page of a pager region that was
 * never supplied becomes an IPC call from the faulting thread to the region's pager. */
#ifndef PAGER_H
#define PAGER_H
#include "arch.h"
#include "thread.h"

/* A user-mode fault that vm_fault answered VM_NEEDS_PAGER (trap.c): never returns while
 * the region's pager lives and has not refused this page to the thread; returns when the
 * access is the thread's fault (then the trap kills or forwards as for any fault). */
void pager_fault(struct trapframe *tf, u64 addr, unsigned access);
/* The checks of pager p's answer to client c, which waits in a pager call (ipc.c, before
 * the reply is delivered): 0, or the error p's reply_recv returns while c keeps waiting:
 * E_INVAL (not PAGER_SUPPLY / PAGER_REFUSE, unaligned address), E_FAULT (not a readable
 * page of p), E_NOMEM (no frame for the copy). A good PAGER_SUPPLY installs the page. */
long pager_answer(struct thread *p, struct thread *c);
/* A message reached c in its pager call (ipc.c, transfer): c leaves the call and retries
 * the access (a message other than a checked answer just makes it ask again). Returns
 * the value c's rax must hold (its own, unchanged). */
long pager_resume(struct thread *c);
/* c's pager exited while c waited (ipc.c): c retries and gets the fault. */
void pager_gone(struct thread *c);
#endif
