/* System calls (syscall.c): the memory calls on any address space, which the UNIX
 * server's IK form (kernel/srv/unix_ik.c) also makes on its Linux tasks. Arguments as
 * SYS_VM_MMAP / SYS_VM_UNMAP / SYS_VM_PROTECT take them; results an address, 0 or E_*. */
#ifndef SYSCALL_H
#define SYSCALL_H
#include "types.h"
#include "vm.h"

long mmap_in(struct aspace *as, u64 addr, u64 len, u64 prot, u64 flags, u64 phys);
long unmap_in(struct aspace *as, u64 addr, u64 len);
long protect_in(struct aspace *as, u64 addr, u64 len, u64 prot);
#endif
