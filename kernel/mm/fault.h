/* Page-fault resolution (fault.c): demand paging, called from the architecture's trap
 * handler and by kernel code that reaches another address space's pages. */
#ifndef FAULT_H
#define FAULT_H
#include "types.h"
#include "vm.h"

#define VM_ACCESS_READ  0u
#define VM_ACCESS_WRITE 1u
#define VM_ACCESS_EXEC  2u
#define VM_ACCESS_UNLOCKED 4u   /* vm_fault_unlocked's: the caller holds no kernel lock */

/* vm_resolve's answer for a page of a pager region that its pager has not supplied: not
 * an E_* code (> 0). A user-mode fault then calls the pager (pager.c); a kernel access
 * (copyin, IPC buffers, SYS_TASK_COPY) treats it as E_FAULT, as any non-zero result. */
#define VM_NEEDS_PAGER 1
/* vm_resolve's answer for a page of a file mapping wholly past the file's end (fileobj.c):
 * not an E_* code either; a Linux task's server gets it as FWD_FAULT_BUS (SIGBUS). */
#define VM_PAST_EOF 2
/* vm_resolve's answer to VM_ACCESS_UNLOCKED when the page is a file object's whose
 * mappings the kernel lock's holder is dropping (fileobj.c), or the gate is closed
 * (below): nothing changed, resolve it again under the lock. */
#define VM_NEEDS_LOCK 3

/* Resolve an access to va in as: 0 when the page is now mapped for it (*pa: its frame);
 * E_FAULT when no region allows the access (the thread gets the fault), E_NOMEM when no
 * frame is left, VM_NEEDS_PAGER, VM_PAST_EOF. Never blocks. */
int vm_resolve(struct aspace *as, u64 va, unsigned access, u64 *pa);
/* Copy n bytes between the kernel buffer kbuf and va in as (to_as: into as), within one
 * page, without the kernel lock (inside vm_unlocked_enter): the page is resolved and
 * copied under as's lock, so no unmap, copy-on-write break, clone or file drop (each
 * takes that lock) can take or share the frame meanwhile, and no kwrite mark is needed
 * (vm_kwrite_begin). 0; E_FAULT when the access is not allowed or fails (E_NOMEM, a
 * pager's page not supplied, past a file's end: as a kernel access treats them);
 * VM_NEEDS_LOCK when a file page is being dropped: copy it under the kernel lock. */
int vm_copy_unlocked(struct aspace *as, u64 va, void *kbuf, size_t n, bool to_as);
int vm_fault(struct aspace *as, u64 va, unsigned access);
/* A pager's page for va in as (pager.c): a copy of the frame at src_pa becomes the page, an
 * anonymous page from then on (map count 1, reverse map). 0 also when there is nothing
 * to do (va is no longer in a pager region, or the page is there already: the thread
 * simply retries); E_NOMEM. */
int vm_supply(struct aspace *as, u64 va, u64 src_pa);

/* A user-mode page fault resolved without the kernel lock (trap.c; docs/smp.md "Page
 * faults without the BKL"): under the address space's lock and the object's own, for
 * every kind of object. 0 when mapped; any other answer (VM_NEEDS_PAGER, VM_NEEDS_LOCK
 * among them) means: take the kernel lock and resolve it again there (then call the
 * pager, forward the fault or kill the thread). */
int vm_fault_unlocked(struct aspace *as, u64 va, unsigned access);
/* Around other memory work without the kernel lock (the map calls, syscall.c): false
 * when the gate is closed (take the kernel lock instead); after true, vm_unlocked_leave
 * when done. */
bool vm_unlocked_enter(void);
void vm_unlocked_leave(void);
/* Under the kernel lock: no fault or map call runs without it from the return of
 * vm_faults_stop until vm_faults_resume (for readers of every address space: the
 * reverse map's checker). */
void vm_faults_stop(void);
void vm_faults_resume(void);
#endif
