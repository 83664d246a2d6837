/* Pagers (pager.c, docs/memory.md "Pagers"): a fault on a page of a pager region that was
 * never supplied becomes an IPC call from the faulting thread to the region's pager. */
#ifndef PAGER_H
#define PAGER_H
#include "arch.h"
#include "thread.h"

/* A user-mode fault that vm_fault answered VM_NEEDS_PAGER (trap.c): never returns while
 * the region's pager lives and has not refused this page to the thread; returns false
 * when the access is the thread's fault (then the trap kills or forwards as for any
 * fault), true when the thread is being killed (it leaves through its frame, and the exit
 * checks end it; ipc.c kill_pending). */
bool pager_fault(struct trapframe *tf, u64 addr, unsigned access);
/* Pager p's message reached client c in its pager call (ipc.c, transfer): a checked
 * PAGER_SUPPLY installs the page, PAGER_REFUSE makes the access c's fault; anything else
 * is not taken, and c's next call says why. c leaves the call and retries its access.
 * Returns the value c's rax must hold (its own, unchanged). */
long pager_answer(struct thread *p, struct thread *c);
/* c's pager exited while c waited (ipc.c): c retries and gets the fault. */
void pager_gone(struct thread *c);
#endif
