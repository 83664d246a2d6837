/* Page-fault resolution (fault.c): demand paging, called from the architecture's trap
 * handler and by kernel code that reaches another address space's pages. */
#ifndef FAULT_H
#define FAULT_H
#include "types.h"
#include "vm.h"

#define VM_ACCESS_READ  0u
#define VM_ACCESS_WRITE 1u
#define VM_ACCESS_EXEC  2u

/* Resolve an access to va in as: 0 when the page is now mapped for it (*pa: its frame);
 * E_FAULT when no region allows the access (the thread gets the fault), E_NOMEM when no
 * frame is left. Never blocks. */
int vm_resolve(struct aspace *as, u64 va, unsigned access, u64 *pa);
int vm_fault(struct aspace *as, u64 va, unsigned access);
#endif
