/* System calls (syscall.c): the memory calls on any address space, which the UNIX
 * server's IK form (kernel/srv/unix_ik.c) also makes on its Linux tasks. Arguments as
 * SYS_VM_CTL takes them (no VM_MMAP_PHYS); results an address, 0 or E_*. */
#ifndef SYSCALL_H
#define SYSCALL_H
#include "types.h"
#include "vm.h"

struct vm_check;

long vm_ctl_map(struct aspace *as, u64 addr, u64 len, u64 prot, u64 flags);
long vm_ctl_unmap(struct aspace *as, u64 addr, u64 len);
long vm_ctl_protect(struct aspace *as, u64 addr, u64 len, u64 prot);
long vm_ctl_discard(struct aspace *as, u64 addr, u64 len);
/* SYS_VM_CHECK's checker into *out (the IK server's /proc/ondol/vmcheck). */
void vm_check_all(struct vm_check *out);
#endif
