/* Page-fault resolution (fault.c): demand paging, called from the architecture's trap
 * handler and by kernel code that reaches another address space's pages. */
#ifndef FAULT_H
#define FAULT_H
#include "types.h"
#include "vm.h"

#define VM_ACCESS_READ  0u
#define VM_ACCESS_WRITE 1u
#define VM_ACCESS_EXEC  2u

/* vm_resolve's answer for a page of a pager region that its pager has not supplied: not
 * an E_* code (> 0). A user-mode fault then calls the pager (pager.c); a kernel access
 * (copyin, IPC buffers, SYS_TASK_COPY) treats it as E_FAULT, as any non-zero result. */
#define VM_NEEDS_PAGER 1
/* vm_resolve's answer for a page of a file mapping wholly past the file's end (fileobj.c):
 * not an E_* code either; a Linux task's server gets it as FWD_FAULT_BUS (SIGBUS). */
#define VM_PAST_EOF 2

/* Resolve an access to va in as: 0 when the page is now mapped for it (*pa: its frame);
 * E_FAULT when no region allows the access (the thread gets the fault), E_NOMEM when no
 * frame is left, VM_NEEDS_PAGER, VM_PAST_EOF. Never blocks. */
int vm_resolve(struct aspace *as, u64 va, unsigned access, u64 *pa);
int vm_fault(struct aspace *as, u64 va, unsigned access);
/* A pager's page for va in as (pager.c): a copy of the frame at src_pa becomes the page, an
 * anonymous page from then on (map count 1, reverse map). 0 also when there is nothing
 * to do (va is no longer in a pager region, or the page is there already: the thread
 * simply retries); E_NOMEM. */
int vm_supply(struct aspace *as, u64 va, u64 src_pa);
#endif
