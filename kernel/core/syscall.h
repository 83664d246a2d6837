/* System calls (syscall.c): the memory calls on any task's address space, which the UNIX
 * server's IK form (kernel/srv/unix_ik.c) also makes on its Linux tasks. Arguments as
 * SYS_VM_CTL takes them (no VM_MMAP_PHYS); results an address, 0 or E_*. */
#ifndef SYSCALL_H
#define SYSCALL_H
#include "types.h"
#include "vm.h"

struct task;
long vm_ctl_map(struct task *t, u64 addr, u64 len, u64 prot, u64 flags);
long vm_ctl_unmap(struct task *t, u64 addr, u64 len);
long vm_ctl_protect(struct task *t, u64 addr, u64 len, u64 prot);
long vm_ctl_discard(struct task *t, u64 addr, u64 len);

struct meminfo;
/* SYS_MEMINFO's figures (the logs applied first, so object counts are exact). */
void kernel_meminfo(struct meminfo *m);
/* SYS_MEASURE: a window marker, or MEASURE_MODEL's pause/resume on every CPU (0 or E_INVAL). */
long kernel_measure(u64 op, u64 arg);
struct vm_check;
/* SYS_VM_CHECK's checker into *out (the IK server's /proc/ondol/vmcheck). */
void vm_check_all(struct vm_check *out);
#endif
