/* System calls (syscall.c): the memory calls on any task's address space, which the UNIX
 * server's IK form (kernel/srv/unix_ik.c) also makes on its Linux tasks. Arguments as
 * SYS_VM_CTL takes them (op VM_CTL_MAP, _UNMAP, _PROTECT or _DISCARD; no VM_MMAP_PHYS);
 * results an address, 0 or E_*. All but the *_from forms are called with the kernel lock
 * held.
 * vm_ctl_unlocked lets it go for the work when the call allows (docs/smp.md "mmap and
 * munmap without the BKL") and answers VM_NEEDS_LOCK, having changed nothing, when the
 * call must run under it: the caller then looks the task up again (it may have gone
 * while the lock was let go) and calls vm_ctl_locked. */
#ifndef SYSCALL_H
#define SYSCALL_H
#include "types.h"
#include "vm.h"

struct task;
long vm_ctl_unlocked(struct task *t, u64 op, u64 addr, u64 len, u64 prot, u64 flags);
long vm_ctl_locked(struct task *t, u64 op, u64 addr, u64 len, u64 prot, u64 flags);
/* The same on task id, which self controls, from a caller that does not hold the kernel
 * lock (the IK server's, from a Linux thread's system call): the task found and its
 * address space held under the task table's lock, the work and its frees without the
 * BKL (docs/smp.md "Done: memory calls from their entry without the BKL"); VM_NEEDS_LOCK
 * with the lock taken when the call must run under it (then vm_ctl_locked). */
long vm_ctl_from(struct task *self, int id, u64 op, u64 addr, u64 len, u64 prot, u64 flags);

/* A clone's copy of from's memory into t, whose threads do not run, in the same two
 * halves: vm_clone_unlocked copies without the kernel lock when it may; on VM_NEEDS_LOCK
 * (nothing copied) or E_NOMEM (part of a copy left) the caller looks both tasks up
 * again and hands that answer to vm_clone_locked, which copies or cleans up under it. */
long vm_clone_unlocked(struct task *t, struct task *from);
long vm_clone_locked(struct task *t, struct task *from, long unlocked);
/* The same from a caller without the kernel lock, task id cloned from task from_id (0:
 * self), both controlled by self, as vm_ctl_from finds them; VM_NEEDS_LOCK or E_NOMEM
 * with the lock taken: then the two halves above. */
long vm_clone_from(struct task *self, u64 id, u64 from_id);

struct memobj;
/* VM_CTL_MAP_FILE's work: len bytes (page-aligned) of file object obj from byte offset
 * off into t at addr, flags VM_MMAP_FIXED and VM_MMAP_SHARED only; the caller holds a
 * reference to obj. Without the kernel lock when it may, else VM_NEEDS_LOCK with nothing
 * mapped: the caller looks t up again and calls vm_map_file_locked. */
long vm_map_file_unlocked(struct task *t, u64 addr, u64 len, u64 prot, u64 flags,
                          struct memobj *obj, u64 off);
long vm_map_file_locked(struct task *t, u64 addr, u64 len, u64 prot, u64 flags,
                        struct memobj *obj, u64 off);
/* The same from a caller without the kernel lock, on task id that self controls, as
 * vm_ctl_from finds it; VM_NEEDS_LOCK with the lock taken: then the two halves above. */
long vm_map_file_from(struct task *self, int id, u64 addr, u64 len, u64 prot, u64 flags,
                      struct memobj *obj, u64 off);

/* The IK server's copy of len bytes between the kernel buffer kbuf and addr in task id,
 * which self controls (to_task: into the task), from a caller without the kernel lock, as
 * vm_ctl_from finds the task; each page resolved and copied under its address space's
 * lock, as the task's own access would be (E_FAULT when it is not allowed). 0, E_*, or
 * VM_NEEDS_LOCK with the lock taken (a file page being dropped; bytes before it may have
 * been copied): then copy again under it. */
long vm_copy_from(struct task *self, int id, u64 addr, void *kbuf, u64 len, bool to_task);

struct meminfo;
/* SYS_MEMINFO's figures (the logs applied first, so object counts are exact). */
void kernel_meminfo(struct meminfo *m);
/* SYS_MEASURE: a window marker, or MEASURE_MODEL's pause/resume on every CPU (0 or E_INVAL). */
long kernel_measure(u64 op, u64 arg);
struct vm_check;
/* SYS_VM_CHECK's checker into *out (the IK server's /proc/ondol/vmcheck). */
void vm_check_all(struct vm_check *out);
#endif
