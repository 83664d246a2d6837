/*
 * System calls (ABI in lib/include/ondol/abi.h and docs/syscalls.md). Each handler checks
 * every argument and reaches user memory only through usercopy.c, so any argument value
 * yields a result or an error code, never a kernel fault.
 */
#include <ondol/abi.h>
#include "arch.h"
#include "console.h"
#include "dev.h"
#include "ipc.h"
#include "kernel.h"
#include "multiboot.h"
#include "klock.h"
#include "kobj.h"
#include "marker.h"
#include "memlayout.h"
#include "options.h"
#include "pcnt.h"
#include "pmm.h"
#include "fault.h"
#include "fileobj.h"
#include "futex.h"
#include "fwd.h"
#include "region.h"
#include "rmap.h"
#include "sched.h"
#include "srv.h"
#include "syscall.h"
#include "task.h"
#include "thread.h"
#include "usercopy.h"
#include "vm.h"
#include "waitq.h"

typedef long (*syscall_fn)(u64, u64, u64, u64, u64, u64);

static struct task *self_task(void) { return current_thread()->task; }

static long sys_null(void) { return 0; }

static long sys_exit(u64 status)
{
    task_kill(self_task(), (int)status);
    thread_exit((int)status);
}

/* Copy user bytes through a small bounce buffer to a sink (COM1 or COM2). */
static long write_to(u64 ubuf, u64 len, void (*sink)(const char *, size_t))
{
    if (!user_range_ok(ubuf, len))
        return E_FAULT;
    char chunk[256];
    for (u64 done = 0; done < len;) {
        size_t n = MIN(len - done, sizeof(chunk));
        if (copyin(chunk, ubuf + done, n))
            return E_FAULT;
        sink(chunk, n);
        done += n;
    }
    return (long)len;
}

static long sys_console_write(u64 buf, u64 len) { return write_to(buf, len, console_write); }

static void result_sink(const char *s, size_t n) { serial_write(COM2, s, n); }
static long sys_result_write(u64 buf, u64 len) { return write_to(buf, len, result_sink); }

static long sys_console_read(u64 buf, u64 len)
{
    if (!user_range_ok(buf, len))
        return E_FAULT;
    char chunk[128];
    size_t n = console_read(chunk, MIN(len, sizeof(chunk)));
    if (copyout(buf, chunk, n))
        return E_FAULT;
    return (long)n;
}

/* The priority ceiling of a task the caller spawns: a privileged child keeps the
 * creator's ceiling; an unprivileged one may never outrank the thread that started it,
 * so a shell stays able to answer (and to kill) whatever it runs. */
static int spawn_ceiling(bool privileged)
{
    struct thread *self = current_thread();
    return privileged ? self->task->max_prio : MIN(self->task->max_prio, self->prio);
}

static long sys_spawn(u64 uprog, u64 uargv, u64 argc, u64 flags)
{
    char prog[64];
    long r = copyin_str(prog, uprog, sizeof(prog));
    if (r < 0)
        return r;
    if (argc > SPAWN_MAX_ARGS || (flags & ~(u64)SPAWN_PRIVILEGED))
        return argc > SPAWN_MAX_ARGS ? E_2BIG : E_INVAL;
    if ((flags & SPAWN_PRIVILEGED) && !self_task()->privileged)
        return E_PERM;
    u64 ptrs[SPAWN_MAX_ARGS];
    if (copyin(ptrs, uargv, argc * sizeof(u64)))
        return E_FAULT;
    char strings[SPAWN_MAX_ARGLEN];
    char *argv[SPAWN_MAX_ARGS];
    size_t used = 0;
    for (u64 i = 0; i < argc; i++) {
        r = copyin_str(strings + used, ptrs[i], sizeof(strings) - used);
        if (r < 0)
            return r;
        argv[i] = strings + used;
        used += (size_t)r + 1;
    }
    return task_spawn(self_task(), prog, argv, (int)argc, flags & SPAWN_PRIVILEGED,
                      spawn_ceiling(flags & SPAWN_PRIVILEGED));
}

static long sys_task_wait(u64 id, u64 ustatus)
{
    if ((i64)id != -1 && (id == 0 || id > 0x7fffffff))
        return E_SRCH;
    if (ustatus && !user_range_ok(ustatus, sizeof(int)))
        return E_FAULT;
    int status = 0;
    long r = task_wait(self_task(), (int)id, &status);
    if (r > 0 && ustatus && copyout(ustatus, &status, sizeof(status)))
        return E_FAULT;
    return r;
}

static long sys_thread_create(u64 entry, u64 stack_top, u64 arg, u64 prio)
{
    struct thread *self = current_thread();
    if ((i64)prio == PRIO_INHERIT)
        prio = (u64)self->prio;
    if (prio > PRIO_MAX)
        return E_INVAL;
    if (prio > (u64)self_task()->max_prio)
        return E_PERM;
    if (!user_range_ok(entry, 1) || !user_range_ok(stack_top - 1, 1) || (stack_top & 7))
        return E_FAULT;
    struct thread *t = thread_create(self_task(), entry, stack_top, arg, 0, (int)prio);
    return t ? t->tid : E_NOMEM;
}

static long sys_thread_exit(u64 status) { thread_exit((int)status); }

/* The caller's FS base (TLS: libc points it at the thread's control block, docs/syscalls.md).
 * Loaded now and on every switch to the thread; a thread with one takes the general IPC
 * path (ipcfast.S). */
static long sys_thread_tls(u64 base)
{
    if (base >= USER_SPACE_END)
        return E_FAULT;
    struct thread *t = current_thread();
    thread_set_bases(t, base, t->gs_base);
    thread_user_context(this_cpu(), t);
    return 0;
}

/* The CPUs a thread of the caller's task, or of a task it controls (the UNIX server's
 * sched_setaffinity), may run on (sched.c): the old mask to uold (unless 0), then mask
 * (unless 0). The old mask is not the return value: with 64 CPUs a mask can be any u64,
 * an error code included. */
static long sys_thread_affinity(u64 tid, u64 mask, u64 uold)
{
    struct thread *t = tid ? thread_lookup((int)MIN(tid, 0x7fffffffull)) : current_thread();
    long err;
    if (!t || !t->task || t->state == T_ZOMBIE ||
        (t->task != self_task() && !task_controlled(self_task(), t->task->id, &err)))
        return E_SRCH;
    cpumask_t old = t->affinity & sched_cpus;
    if (uold && copyout(uold, &old, sizeof(old)))
        return E_FAULT;
    return mask ? sched_set_affinity(t, mask) : 0;
}

static long sys_thread_join(u64 tid, u64 ustatus)
{
    if (tid > 0x7fffffff)
        return E_SRCH;
    if (ustatus && !user_range_ok(ustatus, sizeof(int)))
        return E_FAULT;
    int status = 0;
    long r = thread_join((int)tid, &status);
    if (r == 0 && ustatus && copyout(ustatus, &status, sizeof(status)))
        return E_FAULT;
    return r;
}

static long sys_yield(void)
{
    schedule();
    return 0;
}

static long sys_sleep(u64 ticks)
{
    int r = thread_sleep(ticks == SLEEP_FOREVER ? WAIT_FOREVER : ticks);
    return r == WAIT_KILLED ? E_DEAD : 0;
}

static long sys_futex_wait(u64 addr, u64 expected, u64 timeout)
{
    return futex_wait(addr, (u32)expected, timeout);
}

static long sys_futex_wake(u64 addr, u64 n) { return futex_wake(addr, n); }

#define PROT_ALL (PROT_READ | PROT_WRITE | PROT_EXEC)

/* Page-aligned [addr, addr + len rounded up) inside user space, len > 0. */
static bool vm_range_ok(u64 addr, u64 len)
{
    return !(addr & (PAGE_SIZE - 1)) && len > 0 && len <= USER_TOP &&
           user_range_ok(addr, ALIGN_UP(len, PAGE_SIZE));
}

/* The object a new mapping maps: anonymous memory (private or shared), or (privileged) a
 * physical range or a new file object (a server's page cache, fileobj.h). */
static struct memobj *new_object(u64 len, u64 flags, u64 phys, long *err)
{
    *err = E_NOMEM;
    u64 kind = flags & (VM_MMAP_SHARED | VM_MMAP_PHYS | VM_MMAP_FILE);
    if (kind & (kind - 1))                       /* more than one kind */
        *err = E_INVAL;
    else if ((flags & VM_MMAP_FILE) && !self_task()->privileged)
        *err = E_PERM;
    else if (flags & VM_MMAP_FILE)
        return memobj_file(len);
    else if (flags & VM_MMAP_SHARED)
        return memobj_shared(len);
    else if (!(flags & VM_MMAP_PHYS))
        return memobj_anon(len);
    else if (!self_task()->privileged)
        *err = E_PERM;
    else if ((phys & (PAGE_SIZE - 1)) || phys >= (1ull << 52) || len > (1ull << 52) - phys)
        *err = E_INVAL;
    else
        return memobj_phys(phys, len);
    return NULL;
}

/* mmu=off: a private anonymous mapping gets its frames now, as on uClinux (no demand
 * paging): the frame cost moves from the first touch into the mapping call. An
 * unprivileged task may not take the frames kept for the kernel and the servers, as in
 * its page faults (trap.c). On running out, the mapping goes again and the call fails
 * with E_NOMEM. */
static long populate(struct task *t, long addr, u64 len, u64 prot, u64 flags)
{
    if (addr < 0 || !t->as->shared || !prot || (flags & (VM_MMAP_SHARED | VM_MMAP_PHYS)))
        return addr;
    frame_reserve_guard(!t->privileged);
    u64 off = 0, pa;
    while (off < len && vm_resolve(t->as, (u64)addr + off, VM_ACCESS_READ, &pa) == 0)
        off += PAGE_SIZE;
    frame_reserve_guard(false);
    if (off >= len)
        return addr;
    region_unmap(t->as, t->id, (u64)addr, (u64)addr + len);
    return E_NOMEM;
}

/* The memory calls work on any task's address space: the caller's own, or (SYS_VM_CTL)
 * that of a task it controls; the regions they make are that task's, `owner`
 * (region.h). The mapping itself: its address, or an E_* code (or VM_NEEDS_LOCK). */
static long map_in(struct aspace *as, int owner, u64 addr, u64 len, u64 prot, u64 flags, u64 phys)
{
    if (len == 0 || len > (1ull << 32) || (prot & ~(u64)PROT_ALL) ||
        (flags & ~(u64)(VM_MMAP_FIXED | VM_MMAP_PHYS | VM_MMAP_SHARED | VM_MMAP_FILE)))
        return E_INVAL;
    len = ALIGN_UP(len, PAGE_SIZE);
    if ((flags & VM_MMAP_FILE) && len > VM_FILE_WINDOW)
        return E_INVAL;
    long err;
    struct memobj *obj = new_object(len, flags, phys, &err);
    if (!obj)
        return err;
    u64 span = flags & VM_MMAP_FILE ? VM_FILE_WINDOW : len;   /* a window never moves */
    return region_map(as, owner, addr, span, (unsigned)prot, (unsigned)flags, obj);
}

static long mmap_in(struct task *t, u64 addr, u64 len, u64 prot, u64 flags, u64 phys)
{
    long at = map_in(t->as, t->id, addr, len, prot, flags, phys);
    return populate(t, at, ALIGN_UP(len, PAGE_SIZE), prot, flags);
}

static long unmap_in(struct aspace *as, int owner, u64 addr, u64 len)
{
    if (!vm_range_ok(addr, len))
        return E_INVAL;
    return region_unmap(as, owner, addr, addr + ALIGN_UP(len, PAGE_SIZE));
}

static long protect_in(struct aspace *as, int owner, u64 addr, u64 len, u64 prot)
{
    if (!vm_range_ok(addr, len) || (prot & ~(u64)PROT_ALL))
        return E_INVAL;
    return region_protect(as, owner, addr, addr + ALIGN_UP(len, PAGE_SIZE), (unsigned)prot);
}

static long discard_in(struct aspace *as, int owner, u64 addr, u64 len)
{
    if (!vm_range_ok(addr, len))
        return E_INVAL;
    return region_discard(as, owner, addr, addr + ALIGN_UP(len, PAGE_SIZE));
}

/* ---- the memory calls without the kernel lock (docs/smp.md "mmap and munmap without
 * the BKL") ----------------------------------------------------------------------------
 * Map, unmap and protect need only their address space's lock (region.c) and the
 * objects' own (a shared anonymous object's directory, a file object's end): the kernel
 * lock, taken on entry, goes around the work and is taken again for the exit checks and
 * the release in exit_to_user. The work sees the address space and the owner's id, never
 * the task: a controlled task may go meanwhile (its address space is held: aspace_hold);
 * the caller's own stays while this thread runs. A range over VM_DEFER_MAX pages, or the
 * reverse-map checker's gate closed, answers VM_NEEDS_LOCK with nothing changed, and the
 * call runs again under the lock; so does every call in the one shared address space of
 * mmu=off (its owners, populate). */
struct vm_req {
    u64 addr, len, prot, flags;
    struct memobj *obj;       /* VM_CTL_MAP_FILE: the file object (the caller holds a
                                 reference), mapped from byte offset off */
    u64 off;
    struct aspace *from;      /* VM_CLONE: the address space copied (held by the caller) */
    u64 local;                /* SYS_TASK_COPY: the caller's buffer (addr, len: the
                                 task's range; flags: the direction); vm_copy_from: a
                                 kernel buffer */
};

typedef long vm_call(struct aspace *as, int owner, const struct vm_req *q);

/* fn's work on address space as (held by the caller: aspace_hold), without the kernel
 * lock; the hold is the caller's to drop. */
static long run_unlocked(vm_call *fn, struct aspace *as, int owner, const struct vm_req *q)
{
    long r = VM_NEEDS_LOCK;
    if (vm_unlocked_enter()) {
        r = fn(as, owner, q);
        vm_unlocked_leave();
    }
    return r;
}

/* From under the lock: task t's address space held and the lock let go; NULL (the lock
 * kept) for the one shared address space of mmu=off. */
static struct aspace *hold_and_unlock(struct task *t)
{
    struct aspace *as = t->as;
    if (as->shared)
        return NULL;
    aspace_hold(as);
    kernel_unlock();
    return as;
}

/* For a caller that goes on under the lock: fn without it, the lock taken again, and
 * the frames and objects fn let go freed under it. */
static long without_bkl(vm_call *fn, struct task *t, const struct vm_req *q)
{
    struct aspace *as = hold_and_unlock(t);
    if (!as)
        return VM_NEEDS_LOCK;
    long r = run_unlocked(fn, as, t->id, q);
    kernel_lock();
    vm_free_deferred();
    memobj_free_deferred();
    aspace_unhold(as);
    return r;
}

/* The end of a call that ends with its work's result r, on as held by the caller (the
 * hold is dropped here), the lock not held: what the work let go is freed after the
 * lock's grace period (vm_free_deferred_unlocked; docs/smp.md "Frees without the BKL"),
 * and the lock is taken only for VM_NEEDS_LOCK, for the call to run again under it. The
 * exit skips a lock that is not held (sched_leave_kernel). */
static long end_unlocked(struct aspace *as, long r)
{
    vm_free_deferred_unlocked();
    memobj_free_deferred_unlocked();
    aspace_unhold(as);
    if (r == VM_NEEDS_LOCK)
        kernel_lock();
    return r;
}

/* fn's work, ended so. */
static long ending_unlocked(vm_call *fn, struct aspace *as, int owner, const struct vm_req *q)
{
    return end_unlocked(as, run_unlocked(fn, as, owner, q));
}

/* fn on task `task`, which self controls, from a caller without the BKL: the task found
 * under the task table's lock with a hold on its address space (task_hold_aspace), the
 * work as ending_unlocked's. No fn, or a lookup that needs the BKL (mmu=off), answers
 * VM_NEEDS_LOCK with the lock taken. */
static long controlled_from_entry(struct task *self, int task, vm_call *fn,
                                  const struct vm_req *q)
{
    long err = 0;
    int owner;
    struct aspace *as = fn && task > 0 ? task_hold_aspace(self, task, &owner, &err, NULL) : NULL;
    if (!as && err)
        return err;
    if (!as) {
        kernel_lock();
        return VM_NEEDS_LOCK;
    }
    return ending_unlocked(fn, as, owner, q);
}

/* The same from under the lock, on task t's address space. */
static long ending_without_bkl(vm_call *fn, struct task *t, const struct vm_req *q)
{
    struct aspace *as = hold_and_unlock(t);
    return as ? ending_unlocked(fn, as, t->id, q) : VM_NEEDS_LOCK;
}

/* Anonymous memory, private or shared, fixed or not (unlocked_call checks the flags). */
static long map_call(struct aspace *as, int owner, const struct vm_req *q)
{
    return map_in(as, owner, q->addr, q->len, q->prot, q->flags, 0);
}

static long unmap_call(struct aspace *as, int owner, const struct vm_req *q)
{
    return unmap_in(as, owner, q->addr, q->len);
}

static long protect_call(struct aspace *as, int owner, const struct vm_req *q)
{
    return protect_in(as, owner, q->addr, q->len, q->prot);
}

/* madvise(MADV_DONTNEED) of the UNIX server's processes: the pages go, the regions stay
 * (region_discard: the address space's lock, VM_NEEDS_LOCK over VM_DEFER_MAX pages). */
static long discard_call(struct aspace *as, int owner, const struct vm_req *q)
{
    return discard_in(as, owner, q->addr, q->len);
}

static long map_file_call(struct aspace *as, int owner, const struct vm_req *q)
{
    return fileobj_map(as, owner, q->addr, q->len, (unsigned)q->prot, (unsigned)q->flags,
                       q->obj, q->off);
}

/* The call that may run without the kernel lock for a map, unmap, protect or discard of
 * op's kind (VM_CTL_*) with these flags, or NULL. */
static vm_call *unlocked_call(u64 op, u64 flags)
{
    if (op == VM_CTL_MAP)
        return flags & ~(u64)(VM_MMAP_FIXED | VM_MMAP_SHARED) ? NULL : map_call;
    return op == VM_CTL_UNMAP     ? unmap_call
           : op == VM_CTL_PROTECT ? protect_call
           : op == VM_CTL_DISCARD ? discard_call
                                  : NULL;
}

/* SYS_VM_CTL's map, unmap, protect and discard on a controlled task (syscall.h): the work
 * without the kernel lock when it may; VM_NEEDS_LOCK when it must run under it. */
long vm_ctl_unlocked(struct task *t, u64 op, u64 addr, u64 len, u64 prot, u64 flags)
{
    vm_call *fn = unlocked_call(op, flags);
    const struct vm_req q = {.addr = addr, .len = len, .prot = prot, .flags = flags};
    return fn ? without_bkl(fn, t, &q) : VM_NEEDS_LOCK;
}

/* The same under the kernel lock throughout (syscall.h). */
long vm_ctl_locked(struct task *t, u64 op, u64 addr, u64 len, u64 prot, u64 flags)
{
    if (op == VM_CTL_MAP && !(flags & VM_MMAP_PHYS))
        return mmap_in(t, addr, len, prot, flags, 0);
    if (op == VM_CTL_UNMAP)
        return unmap_in(t->as, t->id, addr, len);
    if (op == VM_CTL_PROTECT)
        return protect_in(t->as, t->id, addr, len, prot);
    if (op == VM_CTL_DISCARD)
        return discard_in(t->as, t->id, addr, len);
    return E_INVAL;
}

/* The BKL for the rest of a SYSCALL_UNLOCKED call (with probes on the dispatch holds it). */
static void bkl_take(void)
{
    if (!kernel_lock_held())
        kernel_lock();
}

/* On the caller's own task, from a SYSCALL_UNLOCKED entry (docs/smp.md "Done: memory
 * calls from their entry without the BKL"): the work without the kernel lock when it
 * may (ending_unlocked; the task's address space is ours while this thread runs: no
 * lookup), else the call under it. With probes on, the dispatch's lock is let go around
 * the work, as for the calls that take it on entry. */
static long own_call(u64 op, u64 addr, u64 len, u64 prot, u64 flags)
{
    struct task *t = self_task();
    vm_call *fn = unlocked_call(op, flags);
    const struct vm_req q = {.addr = addr, .len = len, .prot = prot, .flags = flags};
    long r = VM_NEEDS_LOCK;
    if (fn && !t->as->shared) {
        if (kernel_lock_held())
            kernel_unlock();
        aspace_hold(t->as);
        r = ending_unlocked(fn, t->as, t->id, &q);    /* the BKL held after VM_NEEDS_LOCK */
    }
    if (r != VM_NEEDS_LOCK)
        return r;
    bkl_take();
    if (op == VM_CTL_MAP)
        return mmap_in(t, addr, len, prot, flags, 0);
    return op == VM_CTL_UNMAP ? unmap_in(t->as, t->id, addr, len)
                              : protect_in(t->as, t->id, addr, len, prot);
}

static long sys_vm_mmap(u64 addr, u64 len, u64 prot, u64 flags, u64 phys)
{
    if (flags & VM_MMAP_PHYS) {
        bkl_take();
        return mmap_in(self_task(), addr, len, prot, flags, phys);
    }
    return own_call(VM_CTL_MAP, addr, len, prot, flags);
}

static long sys_vm_map(u64 len, u64 prot) { return own_call(VM_CTL_MAP, 0, len, prot, 0); }
static long sys_vm_unmap(u64 addr, u64 len) { return own_call(VM_CTL_UNMAP, addr, len, 0, 0); }

/* The UNIX server's root archive (the boot's second module), read-only in the caller:
 * privileged, since it is a mapping of physical memory; the frames stay reserved for
 * the whole run (pmm_init), so any number of mappings may share them. */
static long sys_rootfs_map(u64 ulen)
{
    if (!self_task()->privileged)
        return E_PERM;
    if (!rootfs_len)
        return E_NOENT;
    if (rootfs_pa & (PAGE_SIZE - 1))
        return E_INVAL;
    if (!user_range_ok(ulen, sizeof(u64)))
        return E_FAULT;
    long addr = mmap_in(self_task(), 0, rootfs_len, PROT_READ, VM_MMAP_PHYS, rootfs_pa);
    if (addr < 0)
        return addr;
    if (copyout(ulen, &rootfs_len, sizeof(u64))) {
        unmap_in(self_task()->as, self_task()->id, (u64)addr, rootfs_len);
        return E_FAULT;
    }
    return addr;
}

static long sys_vm_protect(u64 addr, u64 len, u64 prot)
{
    return own_call(VM_CTL_PROTECT, addr, len, prot, 0);
}

/* ---- task control for servers (docs/memory.md): the caller controls the tasks it created */

/* SYSCALL_UNLOCKED: the address space and the task without the BKL (task.h); under it
 * when there is no address space of its own to give (mmu=off, or none made). */
static long sys_task_create(u64 uname)
{
    char name[NAME_LEN];
    long r = copyin_str(name, uname, sizeof(name));
    if (r < 0)
        return r;
    struct aspace *as = task_aspace_unlocked();
    if (!as)
        bkl_take();
    return task_create_empty(self_task(), name, spawn_ceiling(false), as);
}

/* Threads of the task may not run while its memory is replaced. */
static bool task_quiet(struct task *t, struct task *self) { return t != self && t->live_threads == 0; }

/* A task id argument, saturated (negative and 0 name no task). */
static int task_arg(u64 id) { return (int)MIN(id, 0x7fffffffull); }

/* The copy of a clone (docs/smp.md "Done: clone without the BKL"): under the two address
 * spaces' locks; it maps frames again and frees none. */
static long clone_call(struct aspace *as, int owner, const struct vm_req *q)
{
    (void)owner;
    return regions_clone(as, q->from);
}

/* The tasks `id` and `from_id` (0: the caller) of a clone, or NULL with *err set. */
static struct task *clone_pair(u64 id, u64 from_id, struct task **from, long *err)
{
    struct task *t = task_controlled(self_task(), task_arg(id), err);
    *from = from_id == 0 ? self_task() : task_controlled(self_task(), task_arg(from_id), err);
    return t && *from ? t : NULL;
}

/* Both address spaces are held while the lock is let go (either task may go meanwhile:
 * a controlled source too). */
long vm_clone_unlocked(struct task *t, struct task *from)
{
    const struct vm_req q = {.from = from->as};
    aspace_hold(q.from);
    long r = without_bkl(clone_call, t, &q);
    aspace_unhold(q.from);
    return r;
}

/* E_NOMEM's partial copy is destroyed under the lock (its frames' last mappings may go
 * with it). */
long vm_clone_locked(struct task *t, struct task *from, long unlocked)
{
    long r = unlocked;
    if (r == VM_NEEDS_LOCK)
        r = task_quiet(t, self_task()) && t != from ? regions_clone(t->as, from->as) : E_INVAL;
    if (r == E_NOMEM)
        regions_destroy(t->as);
    return r;
}

/* The source of a clone from the entry, held: task from_id's address space (0: the
 * caller's own, which stays while this thread runs), or NULL with *err (0: the caller
 * goes under the BKL). */
static struct aspace *clone_source_held(struct task *self, u64 from_id, long *err)
{
    int owner;
    if (from_id != 0)
        return task_hold_aspace(self, task_arg(from_id), &owner, err, NULL);
    struct aspace *own = self->as;
    *err = 0;
    if (own->shared)
        return NULL;
    aspace_hold(own);
    return own;
}

/* A clone from a caller without the BKL (SYS_VM_CLONE's entry, the IK server): both
 * address spaces found and held under the task table's lock (task_hold_aspace; the
 * target's lack of threads read there), the copy as clone_call's. Its result, or
 * VM_NEEDS_LOCK and E_NOMEM (whose partial copy goes under it, vm_clone_locked) with the
 * BKL taken. Errors as clone_pair's: the source's when both lookups fail. */
long vm_clone_from(struct task *self, u64 id, u64 from_id)
{
    long err, from_err;
    int owner;
    bool quiet;
    struct aspace *as = task_hold_aspace(self, task_arg(id), &owner, &err, &quiet);
    struct aspace *from = clone_source_held(self, from_id, &from_err);
    long r = !from && from_err ? from_err : !as && err ? err : !as || !from ? VM_NEEDS_LOCK
             : !quiet || as == from || as == self->as ? E_INVAL
                                                      : 0;
    if (r == 0) {
        const struct vm_req q = {.from = from};
        r = run_unlocked(clone_call, as, owner, &q);
        vm_free_deferred_unlocked();       /* a clone frees nothing; should it ever */
        memobj_free_deferred_unlocked();
    }
    if (from)
        aspace_unhold(from);
    if (as)
        aspace_unhold(as);
    if (r == VM_NEEDS_LOCK || r == E_NOMEM)
        kernel_lock();
    return r;
}

/* SYSCALL_UNLOCKED: vm_clone_from, and under the BKL what it leaves (with probes on,
 * the whole call, its copy without the BKL as before: vm_clone_unlocked). */
static long sys_vm_clone(u64 id, u64 from_id)
{
    long err, r = VM_NEEDS_LOCK;
    if (!kernel_lock_held() && (r = vm_clone_from(self_task(), id, from_id)) != VM_NEEDS_LOCK &&
        r != E_NOMEM)
        return r;
    struct task *from, *t = clone_pair(id, from_id, &from, &err);
    if (!t)
        return err;
    if (r == VM_NEEDS_LOCK) {
        if (!task_quiet(t, self_task()) || t == from)
            return E_INVAL;
        r = vm_clone_unlocked(t, from);
        if (r != VM_NEEDS_LOCK && r != E_NOMEM)
            return r;
        if (!(t = clone_pair(id, from_id, &from, &err)))    /* they may have gone meanwhile */
            return err;
    }
    return vm_clone_locked(t, from, r);
}

static struct task *controlled(u64 id, long *err)
{
    return task_controlled(self_task(), task_arg(id), err);
}

/* The file object whose window in `as` holds the page at va, and va's byte offset in it;
 * NULL when va is in no window. */
static struct memobj *window_object(struct aspace *as, u64 va, u64 *off)
{
    struct region r;
    if (!region_lookup(as, va, &r) || r.obj->kind != MEMOBJ_FILE || r.bound)
        return NULL;
    *off = r.off + (ALIGN_DOWN(va, PAGE_SIZE) - r.start);
    return r.obj;
}

/* The page-cache ops on the caller's own windows (task 0). */
static long vm_ctl_file(u64 op, u64 window, u64 len)
{
    u64 off;
    struct memobj *obj = window_object(self_task()->as, window, &off);
    if (!obj || off || (window & (PAGE_SIZE - 1)))
        return E_INVAL;
    if (op == VM_CTL_FILE_EOF)
        return fileobj_set_eof(obj, len);
    if (len > VM_FILE_WINDOW)
        return E_INVAL;
    int err = fileobj_grow(obj, ALIGN_UP(len, PAGE_SIZE));
    return err ? err : (long)window;
}

long vm_map_file_unlocked(struct task *t, u64 addr, u64 len, u64 prot, u64 flags,
                          struct memobj *obj, u64 off)
{
    const struct vm_req q = {.addr = addr, .len = len, .prot = prot, .flags = flags,
                             .obj = obj, .off = off};
    return without_bkl(map_file_call, t, &q);
}

long vm_map_file_from(struct task *self, int id, u64 addr, u64 len, u64 prot, u64 flags,
                      struct memobj *obj, u64 off)
{
    const struct vm_req q = {.addr = addr, .len = len, .prot = prot, .flags = flags,
                             .obj = obj, .off = off};
    return controlled_from_entry(self, id, map_file_call, &q);
}

long vm_map_file_locked(struct task *t, u64 addr, u64 len, u64 prot, u64 flags,
                        struct memobj *obj, u64 off)
{
    return fileobj_map(t->as, t->id, addr, len, (unsigned)prot, (unsigned)flags, obj, off);
}

/* VM_CTL_MAP_FILE into task `id` (t): flags holds the source window page and the
 * VM_MMAP_* bits. The window's object is found under the kernel lock and held by a
 * reference of the call's meanwhile (the window may go at once). */
static long map_file_in(u64 id, struct task *t, u64 addr, u64 len, u64 prot, u64 flags)
{
    u64 bits = flags & (PAGE_SIZE - 1), off;
    struct memobj *obj = window_object(self_task()->as, flags & ~(PAGE_SIZE - 1), &off);
    if (!obj || len == 0 || len > (1ull << 32) || (prot & ~(u64)PROT_ALL) ||
        (bits & ~(u64)(VM_MMAP_FIXED | VM_MMAP_SHARED)))
        return E_INVAL;
    len = ALIGN_UP(len, PAGE_SIZE);
    memobj_get(obj);
    long err, r = vm_map_file_unlocked(t, addr, len, prot, bits, obj, off);
    if (r == VM_NEEDS_LOCK)       /* t may have gone meanwhile */
        r = (t = controlled(id, &err)) ? vm_map_file_locked(t, addr, len, prot, bits, obj, off) : err;
    memobj_put(obj);
    return r;
}

/* VM_CTL_MAP_CALLER: part of a window of a caller waiting for our reply, shared, into
 * our own address space where the kernel chooses. Privileged callers only, which may map
 * any physical memory already: it gives no new power, only a way to find the frames. */
static long map_from_caller(u64 tid, u64 window, u64 len, u64 prot)
{
    struct task *t = ipc_caller_task(current_thread(), tid);
    if (!t || !self_task()->privileged)
        return E_PERM;
    u64 off;
    struct memobj *obj = window_object(t->as, window, &off);
    if (!obj || (window & (PAGE_SIZE - 1)) || len == 0 || len > (1ull << 32) ||
        (prot & ~(u64)PROT_ALL))
        return E_INVAL;
    return fileobj_map(self_task()->as, self_task()->id, 0, ALIGN_UP(len, PAGE_SIZE),
                       (unsigned)prot, VM_MMAP_SHARED, obj, off);
}

/* Whether a caller waiting for our reply calls with privilege (ipc.c): a server's check
 * before an op that changes what every task sees (docs/servers.md, "Privileged ops"). */
static long sys_caller_privileged(u64 tid) { return ipc_caller_privileged(current_thread(), tid); }

/* VM_CTL_CALLER: the task of thread tid, which waits for our reply, by its id; E_PERM
 * when it waits for none (the task must still be one we control: sys_vm_ctl). */
static long caller_task_id(u64 tid, u64 op)
{
    if (op != VM_CTL_UNMAP && op != VM_CTL_PROTECT && op != VM_CTL_DISCARD)
        return E_INVAL;
    struct task *t = ipc_caller_task(current_thread(), tid);
    return t ? t->id : E_PERM;
}

/* The file object of the caller's window that holds page `window`, with a reference
 * taken under its address space's lock (the window may go at once), and the page's byte
 * offset in it; NULL when it is in no window. Without the BKL (window_object's twin). */
static struct memobj *window_object_get(u64 window, u64 *off)
{
    struct region r;
    if (!region_lookup_get(self_task()->as, window, &r))
        return NULL;
    if (r.obj->kind != MEMOBJ_FILE || r.bound) {
        memobj_put(r.obj);
        return NULL;
    }
    *off = r.off + (ALIGN_DOWN(window, PAGE_SIZE) - r.start);
    return r.obj;
}

/* VM_CTL_MAP_FILE from the call's entry without the BKL: map_file_in's work, the task
 * found and held as vm_ctl_from_entry's, the window's object by a reference taken under
 * the caller's address-space lock (window_object_get). Its result, or VM_NEEDS_LOCK with
 * the BKL taken. */
static long map_file_from_entry(u64 id, u64 addr, u64 len, u64 prot, u64 flags)
{
    long err;
    int owner;
    struct aspace *as = task_hold_aspace(self_task(), task_arg(id), &owner, &err, NULL);
    if (!as) {
        if (err)
            return err;
        kernel_lock();
        return VM_NEEDS_LOCK;
    }
    u64 bits = flags & (PAGE_SIZE - 1), off;
    struct memobj *obj = window_object_get(flags & ~(PAGE_SIZE - 1), &off);
    long r = !obj || len == 0 || len > (1ull << 32) || (prot & ~(u64)PROT_ALL) ||
                     (bits & ~(u64)(VM_MMAP_FIXED | VM_MMAP_SHARED))
                 ? E_INVAL
                 : 0;
    if (r == 0) {
        const struct vm_req q = {.addr = addr, .len = ALIGN_UP(len, PAGE_SIZE), .prot = prot,
                                 .flags = bits, .obj = obj, .off = off};
        r = run_unlocked(map_file_call, as, owner, &q);
    }
    if (obj)
        memobj_put(obj);                       /* the last one waits for end_unlocked */
    return end_unlocked(as, r);
}

/* SYS_VM_CTL's map, unmap, protect, discard and file map from the call's entry without
 * the BKL (docs/smp.md "Done: memory calls from their entry without the BKL"): the task
 * named by its id, or by its thread waiting for our reply (VM_CTL_CALLER), found under
 * the task table's lock with a hold on its address space (task_hold_aspace), the work as
 * ending_unlocked's. Anything else, or a lookup that needs the BKL, answers VM_NEEDS_LOCK
 * with the lock taken, and the call runs as before under it. */
static long vm_ctl_from_entry(u64 id, u64 op, u64 addr, u64 len, u64 prot, u64 flags)
{
    if (op == VM_CTL_MAP_FILE && !(flags & VM_CTL_CALLER))
        return map_file_from_entry(id, addr, len, prot, flags);
    vm_call *fn = unlocked_call(op, flags & ~(u64)VM_CTL_CALLER);
    int task = task_arg(id);
    if (fn && (flags & VM_CTL_CALLER)) {
        if (op == VM_CTL_MAP)
            fn = NULL;                               /* E_INVAL, under the lock */
        else if ((task = ipc_caller_task_unlocked(current_thread(), id)) == 0)
            return E_PERM;
        flags &= ~(u64)VM_CTL_CALLER;
    }
    const struct vm_req q = {.addr = addr, .len = len, .prot = prot, .flags = flags};
    return controlled_from_entry(self_task(), task, fn, &q);
}

long vm_ctl_from(struct task *self, int id, u64 op, u64 addr, u64 len, u64 prot, u64 flags)
{
    const struct vm_req q = {.addr = addr, .len = len, .prot = prot, .flags = flags};
    return controlled_from_entry(self, id, unlocked_call(op, flags), &q);
}

/* SYSCALL_UNLOCKED: from vm_ctl_from_entry, else (or with probes on, which hold the lock
 * from the dispatch) under the lock throughout but for the work (ending_without_bkl). */
static long sys_vm_ctl(u64 id, u64 op, u64 addr, u64 len, u64 prot, u64 flags)
{
    if (!kernel_lock_held()) {
        long r = vm_ctl_from_entry(id, op, addr, len, prot, flags);
        if (r != VM_NEEDS_LOCK)
            return r;
    }
    long err;
    if (id == 0 && (op == VM_CTL_FILE_EOF || op == VM_CTL_FILE_GROW))
        return vm_ctl_file(op, addr, len);
    if (op == VM_CTL_MAP_CALLER)
        return map_from_caller(id, addr, len, prot);
    if (flags & VM_CTL_CALLER) {
        long task = caller_task_id(id, op);
        if (task < 0)
            return task;
        id = (u64)task;
        flags &= ~(u64)VM_CTL_CALLER;
    }
    struct task *t = controlled(id, &err);
    if (!t)
        return err;
    if (op == VM_CTL_MAP_FILE)
        return map_file_in(id, t, addr, len, prot, flags);
    vm_call *fn = unlocked_call(op, flags);
    const struct vm_req q = {.addr = addr, .len = len, .prot = prot, .flags = flags};
    long r = fn ? ending_without_bkl(fn, t, &q) : VM_NEEDS_LOCK;
    if (r != VM_NEEDS_LOCK)
        return r;
    if (!(t = controlled(id, &err)))           /* it may have gone meanwhile */
        return err;
    return vm_ctl_locked(t, op, addr, len, prot, flags);
}

/* One page's worth of a copy between our memory and the page of `as` at va. */
static long copy_page(struct aspace *as, u64 va, u64 local, size_t n, bool to_task)
{
    u64 pa;
    if (!to_task) {
        if (vm_resolve(as, va, VM_ACCESS_READ, &pa))
            return E_FAULT;
        return copyout(local, (u8 *)phys_to_virt(pa) + (va & (PAGE_SIZE - 1)), n);
    }
    vm_kwrite_begin(as);              /* no clone shares the frame meanwhile */
    long r = vm_resolve(as, va, VM_ACCESS_WRITE, &pa)
                 ? E_FAULT
                 : copyin((u8 *)phys_to_virt(pa) + (va & (PAGE_SIZE - 1)), local, n);
    vm_kwrite_end();
    return r;
}

/* SYS_TASK_COPY without the BKL (without_bkl): each piece of the task's pages resolved
 * and copied under its address space's lock (vm_copy_unlocked), the caller's side through
 * a buffer on this stack outside that lock (a fault on the caller's memory takes the
 * caller's own address space's lock). 0, an E_* code, or VM_NEEDS_LOCK (a file page
 * being dropped): then the whole copy is made again under the BKL, which is harmless
 * (the same bytes land again; a copy was never atomic). */
#define TASK_COPY_PIECE 512            /* the kernel stack is KSTACK_SIZE (8 KiB) */
static long task_copy_call(struct aspace *as, int owner, const struct vm_req *q)
{
    (void)owner;
    u8 piece[TASK_COPY_PIECE];
    bool to_task = q->flags == TASK_COPY_TO;
    for (u64 done = 0; done < q->len;) {
        u64 va = q->addr + done;
        size_t n = MIN(MIN(q->len - done, TASK_COPY_PIECE), PAGE_SIZE - (va & (PAGE_SIZE - 1)));
        if (to_task && copyin(piece, q->local + done, n))
            return E_FAULT;
        int err = vm_copy_unlocked(as, va, piece, n, to_task);
        if (err)
            return err;
        if (!to_task && copyout(q->local + done, piece, n))
            return E_FAULT;
        done += n;
    }
    return 0;
}

/* A copy between a kernel buffer (q->local, a kernel address) and the task's range,
 * page by page under its address space's lock (vm_copy_unlocked): the IK server's. */
static long kernel_copy_call(struct aspace *as, int owner, const struct vm_req *q)
{
    (void)owner;
    if (!user_range_ok(q->addr, q->len))
        return E_FAULT;
    u8 *local = (u8 *)q->local;
    for (u64 done = 0; done < q->len;) {
        u64 va = q->addr + done;
        size_t n = MIN(q->len - done, PAGE_SIZE - (va & (PAGE_SIZE - 1)));
        int err = vm_copy_unlocked(as, va, local + done, n, q->flags == TASK_COPY_TO);
        if (err)
            return err;
        done += n;
    }
    return 0;
}

long vm_copy_from(struct task *self, int id, u64 addr, void *kbuf, u64 len, bool to_task)
{
    const struct vm_req q = {.addr = addr, .len = len, .local = (u64)kbuf,
                             .flags = to_task ? TASK_COPY_TO : TASK_COPY_FROM};
    return controlled_from_entry(self, id, kernel_copy_call, &q);
}

static long task_copy_args(u64 dir, u64 remote, u64 local, u64 len)
{
    if ((dir != TASK_COPY_TO && dir != TASK_COPY_FROM) || len > TASK_COPY_MAX)
        return E_INVAL;
    if (!user_range_ok(remote, len) || !user_range_ok(local, len))
        return E_FAULT;
    return 0;
}

/* The copy under the lock throughout: probes on, a shared address space (mmu=off), or a
 * file page being dropped (task_copy_call's VM_NEEDS_LOCK). */
static long task_copy_locked(u64 id, u64 dir, u64 remote, u64 local, u64 len)
{
    long err;
    struct task *t = controlled(id, &err);
    if (!t)
        return err;
    if ((err = task_copy_args(dir, remote, local, len)))
        return err;
    for (u64 done = 0; done < len;) {
        size_t n = MIN(len - done, PAGE_SIZE - ((remote + done) & (PAGE_SIZE - 1)));
        if ((err = copy_page(t->as, remote + done, local + done, n, dir == TASK_COPY_TO)))
            return err;
        done += n;
    }
    return (long)len;
}

/* SYSCALL_UNLOCKED: the task found and its address space held under the task table's
 * lock (task_hold_aspace), the copy as task_copy_call's, all without the BKL. */
static long sys_task_copy(u64 id, u64 dir, u64 remote, u64 local, u64 len)
{
    if (kernel_lock_held())
        return task_copy_locked(id, dir, remote, local, len);
    long err;
    int owner;
    struct aspace *as = task_hold_aspace(self_task(), task_arg(id), &owner, &err, NULL);
    if (!as && err)
        return err;
    if (as && (err = task_copy_args(dir, remote, local, len))) {
        aspace_unhold(as);
        return err;
    }
    struct vm_req q = {.addr = remote, .len = len, .flags = dir, .local = local};
    if (as && (err = ending_unlocked(task_copy_call, as, owner, &q)) != VM_NEEDS_LOCK)
        return err ? err : (long)len;
    if (!as)
        kernel_lock();
    return task_copy_locked(id, dir, remote, local, len);
}

static long sys_task_thread(u64 id, u64 entry, u64 stack_top, u64 arg, u64 prio)
{
    long err;
    struct task *t = task_controlled(self_task(), (int)MIN(id, 0x7fffffffull), &err);
    if (!t)
        return err;
    if ((i64)prio == PRIO_INHERIT)
        prio = (u64)current_thread()->prio;
    if (prio > PRIO_MAX)
        return E_INVAL;
    if (prio > (u64)t->max_prio)
        return E_PERM;                          /* above the task's ceiling (docs/syscalls.md) */
    if (!user_range_ok(entry, 1) || !user_range_ok(stack_top - 1, 1) || (stack_top & 7))
        return E_FAULT;
    struct thread *th = thread_create(t, entry, stack_top, arg, 0, (int)prio);
    return th ? th->tid : E_NOMEM;
}

/* Linux tasks (kernel/ipc/fwd.c, docs/unix.md) */
/* SYSCALL_UNLOCKED: the marking under the task table's lock (fwd_task_linux), or, when
 * that declines, under the BKL. */
static long sys_task_linux(u64 task, u64 server)
{
    long r = fwd_task_linux(self_task(), task, server);
    if (r != FWD_DECLINED)
        return r;
    bkl_take();
    return fwd_task_linux(self_task(), task, server);
}
static long sys_fwd_helper(u64 cpu, u64 helper, u64 calls)
{
    return fwd_helper(current_thread(), cpu, helper, calls);
}

/* The address space SYS_VM_PAGER maps into: the caller's (task 0) or a controlled task's. */
static struct task *pager_target(u64 id, long *err)
{
    return id == 0 ? self_task() : controlled(id, err);
}

/* A region whose pages a thread of the caller's own task supplies (mm/pager.c): naming
 * only its own threads, a task cannot direct fault calls at anyone else. */
static long sys_vm_pager(u64 id, u64 addr, u64 len, u64 prot, u64 flags, u64 pager)
{
    long err;
    struct task *t = pager_target(id, &err);
    if (!t)
        return err;
    struct thread *p = thread_lookup((int)MIN(pager, 0x7fffffffull));
    if (!p || p->task != self_task() || p->state == T_ZOMBIE)
        return E_SRCH;
    if (len == 0 || len > (1ull << 32) || (prot & ~(u64)PROT_ALL) || (flags & ~(u64)VM_MMAP_FIXED))
        return E_INVAL;
    len = ALIGN_UP(len, PAGE_SIZE);
    struct memobj *obj = memobj_pager(len, p->tid, p->task->id);
    if (!obj)
        return E_NOMEM;
    return region_map(t->as, t->id, addr, len, (unsigned)prot, (unsigned)flags, obj);
}

static long sys_task_handover(u64 id, u64 to)
{
    return task_handover(self_task(), (int)MIN(id, 0x7fffffffull), (int)MIN(to, 0x7fffffffull));
}

/* SYSCALL_UNLOCKED: the register ops from their entry when they may (fwd_regs_unlocked:
 * fork reads its parent's, execve and signals write a thread's), every other op and every
 * declined one under the BKL. */
static long sys_thread_ctl(u64 tid, u64 op, u64 uregs)
{
    if (!kernel_lock_held() && (op == THREAD_CTL_GET_REGS || op == THREAD_CTL_SET_REGS)) {
        long r = fwd_regs_unlocked(self_task(), tid, op, uregs);
        if (r != FWD_DECLINED)
            return r;
    }
    bkl_take();
    return fwd_thread_ctl(self_task(), tid, op, uregs);
}

static long sys_task_thread_regs(u64 task, u64 uregs, u64 prio)
{
    return fwd_task_thread_regs(self_task(), task, uregs, prio);
}

static void check_task(struct task *t, void *stats)
{
    if (t->as)
        rmap_check_aspace(t->as, stats);
}

static void check_doomed(struct aspace *as, void *stats) { rmap_check_aspace(as, stats); }

/* The reverse-map checker (rmap.c): every anonymous PTE of every task against the map,
 * and of every address space whose task went while a call without the kernel lock held it
 * (its entries are still in the map until that call ends). */
void vm_check_all(struct vm_check *out)
{
    static u64 gen;
    struct rmap_check_stats st = {.gen = ++gen};
    vm_faults_stop();                 /* a stop-the-world reader (docs/smp.md) */
    tasks_each(check_task, &st);
    aspaces_doomed_each(check_doomed, &st);
    rmap_check_frames(&st);
    vm_faults_resume();
    *out = (struct vm_check){st.mappings, st.entries, st.errors};
}

static long sys_vm_check(u64 uout)
{
    struct vm_check out;
    vm_check_all(&out);
    return copyout(uout, &out, sizeof(out));
}

static long sys_self(u64 uout)
{
    struct thread *t = current_thread();
    struct self_info info = {t->tid, t->task->id, t->prio, this_cpu()->id};
    if (uout && copyout(uout, &info, sizeof(info)))
        return E_FAULT;
    return t->tid;
}

static long sys_ps(u64 uout, u64 max)
{
    _Static_assert(PS_MAX == 1 << THREAD_ID_BITS, "SYS_PS covers every thread slot");
    if (max > PS_MAX || !user_range_ok(uout, max * sizeof(struct ps_entry)))
        return max > PS_MAX ? E_INVAL : E_FAULT;
    u64 n = 0;
    for (int i = 0; n < max && i < PS_MAX; i++) {
        struct thread *t = thread_at(i);
        if (!t)
            continue;
        struct ps_entry e = {.tid = t->tid, .task = t->task ? t->task->id : 0, .prio = t->prio,
                             .state = t->state, .ticks = t->ticks};
        memcpy(e.name, t->task ? t->task->name : "idle", NAME_LEN);
        e.name[NAME_LEN - 1] = 0;
        if (copyout(uout + n * sizeof(e), &e, sizeof(e)))
            return E_FAULT;
        n++;
    }
    return (long)n;
}

extern u64 kobj_count_of(const char *name);

void kernel_meminfo(struct meminfo *m)
{
    rmap_sync();        /* pending logged entries are counted as they will be */
    struct rmap_stats r;
    rmap_stats(&r);
    *m = (struct meminfo){
        .frames_total = frames_total(), .frames_free = frames_free(),
        .kernel_frames = frames_kernel(), .tasks = task_count(),
        .threads = (u64)thread_count(), .aspaces = kobj_count_of("aspace"),
        .kobj_bytes = kobj_bytes_in_use(), .kobj_frames = kobj_frames(),
        .rmap_inserts = r.inserts, .rmap_removes = r.removes,
        .rmap_cancelled = r.cancelled, .rmap_applied = r.applied,
        .rmap_probe_ticks = r.probe_ticks, .rmap_families = rmap_families(),
        .rmap_full_passes = r.full_passes, .rmap_foreign = r.foreign,
    };
    for (unsigned i = 0; i < cpus_running && i < MAX_CPUS; i++) {
        m->moves_wake += cpus[i].moves[MOVE_WAKE];
        m->moves_steal += cpus[i].moves[MOVE_STEAL];
        m->moves_balance += cpus[i].moves[MOVE_BALANCE];
        m->move_ticks += cpus[i].move_tsc;
    }
}

static long sys_meminfo(u64 uout)
{
    struct meminfo m;
    kernel_meminfo(&m);
    return copyout(uout, &m, sizeof(m));
}

/* SYS_FRAMES, without the BKL: two counters the frame allocator keeps with atomics. What
 * a server's memory budget needs on every buffer it grows (servers/unix/budget.c), where
 * SYS_MEMINFO would take the BKL and sync the reverse map's logs each time. */
static long sys_frames(u64 uout)
{
    const u64 f[2] = {frames_total(), frames_free()};
    return copyout(uout, f, sizeof(f));
}

static long sys_time(u64 uout)
{
    struct time_info ti = {.ticks = ticks_now(), .hz = timer_hz, .tsc = rdtsc(),
                           .tsc_hz = tsc_hz(), .cpus = cpus_scheduling(),
                           .cpu = (u32)this_cpu()->id};
    cpu_switch_counts(&ti.thread_switches, &ti.as_switches);
    for (unsigned i = 0; i < cpus_running && i < TIME_CPUS; i++) {
        ti.cpu_thread_switches[i] = cpus[i].switches_same + cpus[i].switches_cross;
        for (unsigned k = 0; k < TIME_TICK_KINDS; k++)
            ti.cpu_ticks[i][k] = cpus[i].ticks_in[k];
    }
    for (unsigned i = 0; i < cpus_running && i < MAX_CPUS; i++) {
        ti.idle_tsc += cpus[i].idle_tsc;
        ti.interrupts += cpus[i].irqs;
    }
    return copyout(uout, &ti, sizeof(ti));
}

static long sys_poweroff(void)
{
    if (!self_task()->privileged)
        return E_PERM;
    printk("ondol: powering off\n");
    power_off_or_halt();
}

/* Only user threads that can still run take a new priority: kernel threads (idle, with
 * its priority below every queue) and zombies are E_SRCH. Never above the caller's
 * ceiling (E_PERM), whose thread it is. */
static long sys_set_priority(u64 tid, u64 prio)
{
    if (prio > PRIO_MAX)
        return E_INVAL;
    struct thread *t = tid == 0 ? current_thread() : thread_lookup((int)MIN(tid, 0x7fffffffull));
    if (!t || !t->task || t->state == T_ZOMBIE)
        return E_SRCH;
    if (t->task != self_task() && !self_task()->privileged)
        return E_PERM;
    if (prio > (u64)self_task()->max_prio)
        return E_PERM;
    sched_set_priority(t, (int)prio);
    return 0;
}

static long sys_kopt(u64 ukey, u64 ubuf, u64 len)
{
    char key[64];
    long r = copyin_str(key, ukey, sizeof(key));
    if (r < 0)
        return r;
    const char *v = opt_get(key);
    if (!v)
        return E_NOENT;
    size_t vlen = strlen(v);
    if (len > 0) {
        size_t n = MIN(vlen, len - 1);
        if (copyout(ubuf, v, n) || copyout(ubuf + n, "", 1))
            return E_FAULT;
    }
    return (long)vlen;
}

/* Run-time mechanism switches for benchmarks: the options of scope RUN in options.def
 * (the boot-time value is their initial one; docs/options.md). Privileged. */
static long sys_kset(u64 ukey, u64 uvalue)
{
    if (!self_task()->privileged)
        return E_PERM;
    char key[32], value[32];
    long r = copyin_str(key, ukey, sizeof(key));
    if (r >= 0)
        r = copyin_str(value, uvalue, sizeof(value));
    if (r < 0)
        return r;
    return options_set(key, value);
}

static void model_marker(void *arg) { marker_model(arg != NULL); }

/* Every CPU that runs threads marks its model clock paused or resumed (a window begins
 * with all paused: tools/cacheplugin). The others answer by IPI; we hold the kernel lock. */
static void model_all(bool running)
{
    for (unsigned c = 0; c < cpus_running; c++) {
        if ((int)c == this_cpu()->id)
            model_marker(running ? (void *)1 : NULL);
        else
            ipi_call_locked((int)c, model_marker, running ? (void *)1 : NULL);
    }
}

long kernel_measure(u64 op, u64 arg)
{
    if (arg > 0xfff || (op == MEASURE_MODEL && arg > 1))
        return E_INVAL;
    if (op == MEASURE_WINDOW_BEGIN)
        marker(MARK_WINDOW_BEGIN, (unsigned)arg);
    else if (op == MEASURE_WINDOW_END)
        marker(MARK_WINDOW_END, (unsigned)arg);
    else if (op == MEASURE_MODEL)
        model_all(arg == 1);
    else
        return E_INVAL;
    return 0;
}

static long sys_measure(u64 op, u64 arg) { return kernel_measure(op, arg); }

static long sys_pcnt(u64 cmd, u64 a, u64 b, u64 c)
{
    return pcnt_syscall(cmd, a, b, c, self_task()->privileged);
}

static long sys_srv_lookup(u64 iface) { return srv_lookup(iface); }

static long sys_task_kill(u64 task)
{
    return task_kill_other(self_task(), (int)MIN(task, 0x7fffffffull));
}

/* ---- device access for drivers (kernel/dev/dev.c, docs/drivers.md) ---- */
static long sys_dev_find(u64 vendor, u64 device, u64 index, u64 uout)
{
    return dev_find(self_task(), vendor, device, index, uout);
}
static long sys_dev_cfg_read(u64 dev, u64 offset, u64 size) { return dev_cfg_read(self_task(), dev, offset, size); }
static long sys_dma_alloc(u64 len, u64 uphys) { return dev_dma_alloc(self_task(), len, uphys); }
static long sys_irq_wait(u64 dev, u64 timeout) { return dev_irq_wait(self_task(), dev, timeout); }

/* The handler table, one entry per line of syscalls.def: sys_<name> for ordinary calls;
 * IPC numbers stay NULL because syscall_dispatch hands them to ipc_syscall first. */
#define H(f) ((syscall_fn)(void (*)(void))(f))
#define SYSCALL(num, NAME, name, ...) [SYS_##NAME] = H(sys_##name),
#define SYSCALL_NORETURN SYSCALL
#define SYSCALL_UNLOCKED SYSCALL
#define SYSCALL_IPC(num, NAME, ...) [SYS_##NAME] = NULL,
static const syscall_fn handlers[NSYSCALLS] = {
#include <ondol/syscalls.def>
};
#undef SYSCALL
#undef SYSCALL_NORETURN
#undef SYSCALL_UNLOCKED
#undef SYSCALL_IPC

/* The SYSCALL_UNLOCKED calls as a mask of their numbers (each below 64: asserted), which
 * the dispatch tests with a bit test. Asserted too: every IPC number is in the range the
 * dispatch hands to ipc_syscall, so every other number below NSYSCALLS has a handler. */
#define SYSCALL(...)
#define SYSCALL_NORETURN(...)
#define SYSCALL_IPC(...)
#define SYSCALL_UNLOCKED(num, ...) | (1ull << (num))
static const u64 unlocked_calls = 0
#include <ondol/syscalls.def>
    ;
#undef SYSCALL_UNLOCKED
#undef SYSCALL_IPC
#define SYSCALL_UNLOCKED(num, ...) _Static_assert((num) < 64, "unlocked_calls: a u64 mask");
#define SYSCALL_IPC(num, ...)                                                            \
    _Static_assert((num) >= SYS_IPC_FIRST && (num) <= SYS_IPC_LAST,                      \
                   "syscall_dispatch: an IPC number outside the range has no handler");
#include <ondol/syscalls.def>
#undef SYSCALL
#undef SYSCALL_NORETURN
#undef SYSCALL_UNLOCKED
#undef SYSCALL_IPC

/* An unknown number: E_NOSYS, under the BKL as every locked call (the exit expects
 * either). */
static __attribute__((noinline, cold)) struct trapframe *no_such_call(struct trapframe *tf)
{
    kernel_lock();
    tf->rax = (u64)E_NOSYS;
    return tf;
}

/* Returns the trapframe to leave the kernel through (entry.S): the caller's own, or after
 * an IPC direct switch the partner's. Exit checks and unlocking follow in exit_to_user.
 * A SYSCALL_UNLOCKED call runs without the BKL unless probes are on (their accounting
 * assumes it, as IPC's unlocked paths do). The number is checked once, before the bit
 * test (the null call 116, was 117 with the check after the lock; icount, exact). */
struct trapframe *syscall_dispatch(struct trapframe *tf)
{
    u64 n = tf->rax;
    if (n >= SYS_IPC_FIRST && n <= SYS_IPC_LAST)
        return ipc_syscall(tf);            /* it takes the BKL when it needs it */
    if (n >= NSYSCALLS)
        return no_such_call(tf);
    if ((n < 64 && (unlocked_calls >> n & 1)) && !pcnt_probes_on) {
        tf->rax = (u64)handlers[n](tf->rdi, tf->rsi, tf->rdx, tf->r10, tf->r8, tf->r9);
        return tf;
    }
    kernel_lock_for((long)n);
    pcnt_probe_start(PROBE_SYSCALL, n);
    tf->rax = (u64)handlers[n](tf->rdi, tf->rsi, tf->rdx, tf->r10, tf->r8, tf->r9);
    return tf;
}
