/*
 * Pagers (docs/memory.md, "Pagers"). A pager region's object (MEMOBJ_PAGER) names a
 * pager thread; a user-mode fault on a page of it that was never supplied becomes an IPC
 * call from the faulting thread to the pager, made the way a Linux thread's fault is
 * forwarded (ipc_forward: the thread blocks with its registers untouched, the words are
 * kept in fwd_words, thread->fwd = FWD_PAGER). The pager answers with reply_recv:
 * PAGER_SUPPLY names a page of its own memory, whose bytes are copied into a new frame
 * of the faulting address space (vm_supply), or PAGER_REFUSE. Either way the thread
 * leaves the call and retries its access. An answer that fails its checks is not taken:
 * the retry calls the pager again, with the reason in word 7, so the IPC paths pay
 * nothing for pagers (the answer is looked at where a forwarded call's already is, in
 * transfer_special). Copying rather than mapping the pager's frame keeps a supplied page an
 * ordinary private anonymous page (map count, reverse map, copy-on-write on clone,
 * freed on unmap) and keeps the pager's memory its own.
 *
 * After a refusal, or when the pager has gone, the thread retries the access with
 * pager_refused set to the page: the next fault on it returns to the trap, which kills
 * the thread with a report, or forwards the fault to a Linux task's server.
 */
#include <ondol/abi.h>
#include "fault.h"
#include "fwd.h"
#include "ipc.h"
#include "kernel.h"
#include "memlayout.h"
#include "pager.h"
#include "region.h"
#include "sched.h"
#include "task.h"
#include "thread.h"

/* The live pager thread of obj, or NULL (exited, or its id reused by another task). */
static struct thread *pager_of(const struct memobj *obj)
{
    struct thread *p = thread_lookup(obj->pager);
    return p && p->state != T_ZOMBIE && p->task && p->task->id == obj->pager_task ? p : NULL;
}

static u64 access_prot(unsigned access)
{
    return access & VM_ACCESS_WRITE ? PROT_WRITE : access & VM_ACCESS_EXEC ? PROT_EXEC : PROT_READ;
}

bool pager_fault(struct trapframe *tf, u64 addr, unsigned access)
{
    struct thread *t = current_thread();
    u64 page = ALIGN_DOWN(addr, PAGE_SIZE);
    if (t->pager_refused == (page | 1)) {
        t->pager_refused = 0;
        return false;                 /* refused: this time it is the thread's fault */
    }
    t->pager_refused = 0;
    struct region r;
    bool found = region_lookup(t->task->as, addr, &r);
    struct thread *p = found && r.obj->kind == MEMOBJ_PAGER ? pager_of(r.obj) : NULL;
    if (!p || p == t)
        return false;                 /* no pager to ask, or it faults on its own region */
    const u64 w[IPC_MRS] = {PAGER_FAULT, addr, access_prot(access), tf->rip, (u64)t->tid,
                            (u64)t->task->id, r.off + (page - r.start), (u64)t->pager_error};
    memcpy(t->fwd_words, w, sizeof(w));
    t->pager_error = 0;
    t->fwd = FWD_PAGER;
    ipc_forward(t, p, false);
    return true;                      /* returned: being killed, the exit checks end it */
}

/* The frame of the page the pager names, readable by it: 0 and *pa, or an E_* code. */
static long source_page(struct thread *p, u64 va, u64 *pa)
{
    if (va & (PAGE_SIZE - 1))
        return E_INVAL;
    return vm_resolve(p->task->as, va, VM_ACCESS_READ, pa) ? E_FAULT : 0;
}

/* Carry out p's answer for c: 0, or why it was not taken. */
static long take_answer(struct thread *p, struct thread *c)
{
    u64 label = p->tf->r8, va = p->tf->r9, pa;
    if (label == PAGER_REFUSE) {
        c->pager_refused = ALIGN_DOWN(c->fwd_words[1], PAGE_SIZE) | 1;
        return 0;
    }
    if (label != PAGER_SUPPLY)
        return E_INVAL;
    long err = source_page(p, va, &pa);
    return err ? err : vm_supply(c->task->as, c->fwd_words[1], pa);
}

long pager_answer(struct thread *p, struct thread *c)
{
    c->pager_error = take_answer(p, c);
    c->fwd = FWD_NONE;
    c->ipc_flags = 0;
    return (long)c->tf->rax;
}

void pager_gone(struct thread *c)
{
    u64 rax = c->tf->rax;
    c->pager_refused = ALIGN_DOWN(c->fwd_words[1], PAGE_SIZE) | 1;
    c->fwd = FWD_NONE;
    c->ipc_flags = 0;
    thread_wake(c, E_DEAD);
    c->tf->rax = rax;                 /* it retries the access with its own registers */
}
