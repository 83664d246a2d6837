/*
 * The UNIX server's IK runtime (docs/unix.md, "The IK form"): the files of servers/unix compiled
 * with the kernel's flags and linked into the kernel, with runtime.h's rt_* calls made
 * here of kernel functions on the same objects the MK runtime reaches by system calls.
 *
 * Entry: a Linux task served in IK form has linux_server == FWD_SERVER_IK, so its threads
 * are ENTRY_LINUX_IK (thread.c) and their `syscall` enters linux_ik_syscall_entry
 * (entry.S), which calls unix_ik_syscall on the trapping thread's kernel stack: no IPC,
 * no forwarding fastpath, no address-space switch. The thread is marked as in a
 * forwarded call (thread->fwd, as in MK, so the register controls apply); a call that
 * has its answer at once is answered there (fwd_answer sets rax), a later one by
 * unix_answer. A call left unanswered (UNIX_BLOCKED) puts the
 * thread to sleep here until another thread's call, a timer or console input answers it.
 *
 * Two kernel threads: `unix` starts the server (unix_start), then runs the timers and
 * reaps ended tasks, sleeping until the next deadline or a task's end; `unixcons` reads
 * the console and hands the bytes to unix_console_input.
 *
 * What protects the server's data: the server lock (below), a sleeping lock held by
 * whichever thread runs the server's code (a Linux thread in its call, or one of the
 * kernel threads), from the entry (unix_syscall ..) to the end of its step
 * (unix_run_woken ..), across the one sleep in the middle (a call to an MK server, the
 * network server with net=mk). A waiting call is a record on a wait list, re-run from the
 * start. The kernel's objects the rt_* calls reach stay the big kernel lock's: each takes
 * it (KERNEL_SCOPE) unless its caller holds it already. A Linux thread's system call
 * runs the server without the BKL (docs/smp.md "The IK UNIX server's own lock"), so on
 * several CPUs the server's code of one call runs beside the kernel's work for others
 * (page faults, IPC, another process's memory calls); the other entries (a fault, an
 * interrupted call, the kernel threads) arrive holding the BKL and keep it. The calls
 * without server state (syscalls.def LX_UNLOCKED: munmap, mprotect, madvise) take no
 * server lock at all (syscall_unlocked), as the MK form's helper threads serve them.
 */
#include <ondol/abi.h>
#include "arch.h"
#include "console.h"
#include "fault.h"
#include "fileobj.h"
#include "fwd.h"
#include "ipc.h"
#include "kernel.h"
#include "kheap.h"
#include "marker.h"
#include "klock.h"
#include "memlayout.h"
#include "multiboot.h"
#include "options.h"
#include "pcnt.h"
#include "pmm.h"
#include "region.h"
#include "sched.h"
#include "srv.h"
#include "syscall.h"
#include "task.h"
#include "thread.h"
#include "unix_ik.h"
#include "usercopy.h"
#include "waitq.h"

#include "net_server.h"              /* NET_IFACE, NET_WAITEVENTS (generated) */
#include "../../servers/unix/runtime.h"
#include "../../servers/unix/signal.h"

#define CONSOLE_CHUNK 64
/* Linux threads run at the native default priority; the server's kernel threads above
 * it, so timers and Ctrl-C reach a process that spins. */
#define LINUX_PRIO PRIO_DEFAULT
#define SERVICE_PRIO (PRIO_DEFAULT + 10)

static struct task *holder;            /* parent of every Linux task (as unixsrv in MK) */
static struct waitq answer_waiters;    /* Linux threads sleeping until answered */
static struct thread *service;         /* the `unix` kernel thread */
static u64 service_deadline = UNIX_NO_DEADLINE;   /* when it wakes next */

/* ---- time, memory, log ---------------------------------------------------------------- */
/* Nanoseconds per TSC tick in 32.32 fixed point (0: no calibrated TSC): every call reads
 * the clock once (ucall.started_ns), so it is a multiply, not two divisions. */
static u64 ns_per_tsc_q32;

uint64_t unix_now_ns(void)
{
    if (ns_per_tsc_q32)
        return (u64)(((unsigned __int128)rdtsc() * ns_per_tsc_q32) >> 32);
    return ticks_now() * (1000000000ull / timer_hz);
}

void *unix_alloc(size_t n) { return kheap_alloc(n); }
void unix_free(void *p) { kheap_free(p); }
void unix_log(const char *msg) { printk("%s\n", msg); }
/* console_write is the kernel's own (console.c), with the signature devices.h declares. */

/* ---- the kernel lock for the server's calls into the kernel ---------------------------
 * KERNEL_SCOPE at the top of a function: the BKL is held from there to every return,
 * taken there unless this CPU holds it already (the entries other than a system call
 * arrive holding it) and let go at the return if taken there (GCC's cleanup attribute). */
static inline void kernel_scope_end(const bool *took) { kernel_unlock_if(*took); }

#define KERNEL_SCOPE \
    const bool kernel_scope_ __attribute__((cleanup(kernel_scope_end))) = kernel_lock_unless_held()

/* ---- answers -------------------------------------------------------------------------- */
/* End thread tid's forwarded call with `value` (fwd_answer: rax for a system call, a kill
 * for a refused fault) and let it run. A thread gone or not in a call: nothing. */
static void answer_thread(int tid, long value)
{
    KERNEL_SCOPE;
    struct thread *t = thread_lookup(tid);
    if (!t || t->state == T_ZOMBIE || t->fwd == FWD_NONE)
        return;
    t->tf->rax = (u64)fwd_answer(t, (u64)value);
    if (t != current_thread())
        thread_wake(t, 0);
}

/* The call's result goes back (entry.c decides what and whether, as in MK). */
void unix_answer(struct ucall *c, long result)
{
    if (unix_answer_value(c, &result))
        answer_thread(c->thread->tid, result);
}

/* ---- the rt_* calls as kernel functions ----------------------------------------------- */
/* A task this server created and that has not ended, or NULL. */
static struct task *linux_task(int id)
{
    long err;
    return task_controlled(holder, id, &err);
}

/* A task found under the task table's lock that is not this server's answers E_PERM
 * there (task_hold_aspace, task_controlled_call); here E_SRCH, as linux_task has it. */
static long ours(long r) { return r == E_PERM ? E_SRCH : r; }

/* A live thread of a Linux task of this server, or NULL. */
static struct thread *linux_thread(int tid)
{
    struct thread *t = thread_lookup(tid);
    if (!t || t->state == T_ZOMBIE || !t->task || t->task->parent != holder)
        return NULL;
    return t->task->linux_server == FWD_SERVER_IK ? t : NULL;
}

/* Without the BKL (task.h), but with mmu=off (one shared address space). */
static long task_create_shared(const char *name)
{
    KERNEL_SCOPE;
    return task_create_empty(holder, name, LINUX_PRIO, NULL);
}

long rt_task_create(const char *name)
{
    struct aspace *as = task_aspace_unlocked();
    return as ? task_create_empty(holder, name, LINUX_PRIO, as) : task_create_shared(name);
}

static long mark_linux_ik(struct task *t, void *arg)
{
    (void)arg;
    if (__atomic_load_n(&t->live_threads, __ATOMIC_RELAXED))
        return E_INVAL;
    t->linux_server = FWD_SERVER_IK;
    return 0;
}

/* Under the task table's lock, with or without the BKL (task_controlled_call). */
long rt_task_linux(int id)
{
    return ours(task_controlled_call(holder, id, mark_linux_ik, NULL));
}

/* Every thread is marked killed (the caller's own too, when it ends its own process: it
 * exits on its way back to user mode). */
long rt_task_kill(int id)
{
    KERNEL_SCOPE;
    struct task *t = linux_task(id);
    if (!t)
        return E_SRCH;
    task_kill_except(t, KILLED_STATUS, NULL);
    return 0;
}

/* Free an ended task now; one still ending is reaped by the service thread. Without
 * the BKL (task_reap). */
long rt_task_reap(int id)
{
    long r = id > 0 ? task_reap(holder, id) : 0;
    return r == E_SRCH ? 0 : r;
}

/* ---- memory calls from a system call without the BKL (syscall.h's *_from forms) ----
 * vm_op, rt_file_map and rt_vm_clone, called from a Linux thread's system call, do
 * their work as the MK server's calls do from their entry: the task found and held under
 * the task table's lock, no BKL at all. When the work must run under the BKL, the
 * *_from call answers so with the BKL taken, and locked_after lets it go after the
 * locked form. Other entries hold the BKL already and take the locked forms. */
static long locked_after(long r)
{
    kernel_unlock();
    return r;
}

/* The end of a clone under the BKL, after a copy without it answered r (VM_NEEDS_LOCK:
 * nothing copied; E_NOMEM: a part to clean up): both tasks looked up again, as either may
 * have gone meanwhile. */
static long vm_clone_end_locked(int id, int from_id, long r)
{
    struct task *t = linux_task(id), *from = linux_task(from_id);
    return t && from ? vm_clone_locked(t, from, r) : E_SRCH;
}

/* The whole clone from an entry that holds the BKL: the copy without it when it may. */
static long vm_clone_ik_locked(int id, int from_id)
{
    struct task *t = linux_task(id), *from = linux_task(from_id);
    if (!t || !from)
        return E_SRCH;
    if (t->live_threads || t == from)
        return E_INVAL;
    long r = vm_clone_unlocked(t, from);
    return r == VM_NEEDS_LOCK || r == E_NOMEM ? vm_clone_end_locked(id, from_id, r) : r;
}

/* The copy as the MK server's SYS_VM_CLONE: from a system call without the BKL when it
 * may (vm_clone_from), else under it. */
long rt_vm_clone(int id, int from_id)
{
    if (kernel_lock_held())
        return vm_clone_ik_locked(id, from_id);
    long r = vm_clone_from(holder, (u64)id, (u64)from_id);
    if (r != VM_NEEDS_LOCK && r != E_NOMEM)
        return ours(r);
    return locked_after(vm_clone_end_locked(id, from_id, r));
}

/* vm_op's call under the BKL: the work without it when it may, the task looked up again
 * after (it may have gone while the lock was let go). */
static long vm_op_locked(int id, u64 op, u64 addr, u64 len, u64 prot, u64 flags)
{
    struct task *t = linux_task(id);
    if (!t)
        return E_SRCH;
    long r = vm_ctl_unlocked(t, op, addr, len, prot, flags);
    if (r != VM_NEEDS_LOCK)
        return r;
    t = linux_task(id);
    return t ? vm_ctl_locked(t, op, addr, len, prot, flags) : E_SRCH;
}

/* A memory call on Linux task id, as the MK server's SYS_VM_CTL. */
static long vm_op(int id, u64 op, u64 addr, u64 len, u64 prot, u64 flags)
{
    if (kernel_lock_held())
        return vm_op_locked(id, op, addr, len, prot, flags);
    long r = vm_ctl_from(holder, id, op, addr, len, prot, flags);
    if (r != VM_NEEDS_LOCK)
        return ours(r);
    return locked_after(vm_op_locked(id, op, addr, len, prot, flags));
}

long rt_vm_map(int id, uint64_t addr, uint64_t len, unsigned prot, unsigned flags)
{
    if (flags & VM_MMAP_PHYS)
        return E_INVAL;
    return vm_op(id, VM_CTL_MAP, addr, len, prot, flags);
}

long rt_vm_unmap(int id, uint64_t addr, uint64_t len)
{
    return vm_op(id, VM_CTL_UNMAP, addr, len, 0, 0);
}

long rt_vm_protect(int id, uint64_t addr, uint64_t len, unsigned prot)
{
    return vm_op(id, VM_CTL_PROTECT, addr, len, prot, 0);
}

long rt_vm_discard(int id, uint64_t addr, uint64_t len)
{
    return vm_op(id, VM_CTL_DISCARD, addr, len, 0, 0);
}

void rt_vm_check(uint64_t out[3])
{
    KERNEL_SCOPE;
    struct vm_check c;
    vm_check_all(&c);
    out[0] = c.mappings;
    out[1] = c.entries;
    out[2] = c.errors;
}

/* The page cache: the file object itself is the handle, its run is read and written
 * through the physical map. A new object is the caller's alone until it returns: it is
 * made without the BKL (the frame allocator and the object cache have their own locks). */
long rt_file_new(uint64_t cap, uint64_t *handle, unsigned char **data)
{
    struct memobj *obj = memobj_file(cap);
    if (!obj)
        return E_NOMEM;
    *handle = (uint64_t)obj;
    *data = phys_to_virt(obj->phys_base);
    return 0;
}

long rt_file_grow(uint64_t *handle, uint64_t cap, unsigned char **data)
{
    KERNEL_SCOPE;
    struct memobj *obj = (struct memobj *)*handle;
    int err = fileobj_grow(obj, cap);
    if (!err)
        *data = phys_to_virt(obj->phys_base);
    return err;
}

/* An end that drops no page needs no BKL (fileobj_set_eof_unlocked); a truncation walks
 * the mappings under it. */
long rt_file_eof(uint64_t handle, uint64_t size)
{
    struct memobj *obj = (struct memobj *)handle;
    long r = fileobj_set_eof_unlocked(obj, size);
    if (r != VM_NEEDS_LOCK)
        return r;
    KERNEL_SCOPE;
    return fileobj_set_eof(obj, size);
}

/* The server's reference goes without the BKL; when it was the last (the object then
 * waits on this CPU's list: memobj_put), the object is freed after the BKL's grace
 * period (memobj_free_deferred_unlocked). */
void rt_file_free(uint64_t handle)
{
    memobj_put((struct memobj *)handle);
    memobj_free_deferred_unlocked();
}

/* rt_file_map under the BKL: the work without it when it may, the task looked up again
 * after. */
static long file_map_locked(int id, u64 addr, u64 len, unsigned prot, unsigned flags,
                            struct memobj *obj, u64 off)
{
    struct task *t = linux_task(id);
    if (!t)
        return E_SRCH;
    long r = vm_map_file_unlocked(t, addr, len, prot, flags, obj, off);
    if (r != VM_NEEDS_LOCK)
        return r;
    t = linux_task(id);
    return t ? vm_map_file_locked(t, addr, len, prot, flags, obj, off) : E_SRCH;
}

/* The server's own reference keeps the object while the BKL is not held: it frees its
 * files under its lock, which the caller holds. */
long rt_file_map(int id, uint64_t addr, uint64_t len, unsigned prot, unsigned flags,
                 uint64_t handle, uint64_t off)
{
    struct memobj *obj = (struct memobj *)handle;
    len = ALIGN_UP(len, PAGE_SIZE);
    if (kernel_lock_held())
        return file_map_locked(id, addr, len, prot, flags, obj, off);
    long r = vm_map_file_from(holder, id, addr, len, prot, flags, obj, off);
    if (r != VM_NEEDS_LOCK)
        return ours(r);
    return locked_after(file_map_locked(id, addr, len, prot, flags, obj, off));
}

/* Bytes between kernel memory and task t's pages, one page at a time through the
 * physical map; vm_resolve brings in a page first touched and breaks copy-on-write. */
static long copy_pages(struct task *t, u64 uaddr, u8 *local, size_t n, bool to_task)
{
    if (!user_range_ok(uaddr, n))
        return E_FAULT;
    if (to_task)
        vm_kwrite_begin(t->as);       /* no clone shares a frame meanwhile (vm.h) */
    long err = 0;
    for (size_t done = 0; !err && done < n;) {
        u64 va = uaddr + done;
        size_t chunk = MIN(n - done, PAGE_SIZE - (va & (PAGE_SIZE - 1)));
        u64 pa;
        if (vm_resolve(t->as, va, to_task ? VM_ACCESS_WRITE : VM_ACCESS_READ, &pa)) {
            err = E_FAULT;
            break;
        }
        u8 *k = (u8 *)phys_to_virt(pa) + (va & (PAGE_SIZE - 1));
        memcpy(to_task ? k : local + done, to_task ? local + done : k, chunk);
        done += chunk;
    }
    if (to_task)
        vm_kwrite_end();
    return err;
}

/* Whether task id is the calling thread's own (a Linux process of this server, not
 * ending: linux_task's tests, without the BKL: the caller runs in it, so it stays). */
static bool own_task(int id)
{
    struct task *t = current_thread()->task;
    return t && t->id == id && t->parent == holder && !t->zombie && !t->exiting;
}

/* Another task's memory, through its pages, under the BKL. */
static long copy_other_locked(int id, u64 uaddr, u8 *local, size_t n, bool to_task)
{
    struct task *t = linux_task(id);
    return t ? copy_pages(t, uaddr, local, n, to_task) : E_SRCH;
}

/* From a system call without the BKL when it may (vm_copy_from), else under it. */
static long copy_other(int id, u64 uaddr, u8 *local, size_t n, bool to_task)
{
    if (kernel_lock_held())
        return copy_other_locked(id, uaddr, local, n, to_task);
    long r = vm_copy_from(holder, id, uaddr, local, n, to_task);
    if (r != VM_NEEDS_LOCK)
        return ours(r);
    return locked_after(copy_other_locked(id, uaddr, local, n, to_task));
}

/* The calling process's own memory is the current address space: the fault-safe user
 * copy reaches it directly, without the BKL (a fault in it takes the BKL, trap.c). */
long rt_copy_to(int id, uint64_t uaddr, const void *src, size_t n)
{
    if (own_task(id))
        return copyout(uaddr, src, n) ? E_FAULT : 0;
    return copy_other(id, uaddr, (u8 *)src, n, true);
}

long rt_copy_from(int id, void *dst, uint64_t uaddr, size_t n)
{
    if (own_task(id))
        return copyin(dst, uaddr, n) ? E_FAULT : 0;
    return copy_other(id, uaddr, dst, n, false);
}

/* The calling thread, when it is thread tid of a Linux process of this server
 * (own_task's tests): fork reads its own registers, execve and a signal's delivery and
 * return write them. It stays while it runs here, so it needs no lookup and no BKL (its
 * frame is under its own lock: fwd_regs_get, fwd_regs_set). */
static struct thread *own_thread(int tid)
{
    struct thread *t = current_thread();
    return t->tid == tid && t->task && own_task(t->task->id) &&
                   t->task->linux_server == FWD_SERVER_IK
               ? t
               : NULL;
}

long rt_regs_get(int tid, struct user_regs *r)
{
    struct thread *own = own_thread(tid);
    if (own)
        return fwd_regs_get(own, r);
    KERNEL_SCOPE;
    struct thread *t = linux_thread(tid);
    return t ? fwd_regs_get(t, r) : E_SRCH;
}

long rt_regs_set(int tid, const struct user_regs *r)
{
    struct thread *own = own_thread(tid);
    if (own)
        return fwd_regs_set(own, r);
    KERNEL_SCOPE;
    struct thread *t = linux_thread(tid);
    return t ? fwd_regs_set(t, r) : E_SRCH;
}

/* Without the BKL (fwd_thread_start). */
long rt_thread_start(int id, const struct user_regs *r)
{
    return ours(fwd_thread_start(holder, id, r, LINUX_PRIO));
}

long rt_thread_end(int tid)
{
    KERNEL_SCOPE;
    struct thread *t = linux_thread(tid);
    if (!t)
        return E_SRCH;
    fwd_thread_end(t);
    return 0;
}

long rt_thread_affinity(int tid, uint64_t mask, uint64_t *old)
{
    KERNEL_SCOPE;
    struct thread *t = linux_thread(tid);
    if (!t)
        return E_SRCH;
    if (old)
        *old = t->affinity & sched_cpus;
    return mask ? sched_set_affinity(t, mask) : 0;
}

long rt_thread_interrupt(int tid)
{
    KERNEL_SCOPE;
    struct thread *t = linux_thread(tid);
    if (!t)
        return E_SRCH;
    fwd_thread_interrupt(t);
    return 0;
}

void rt_memory(uint64_t *total, uint64_t *free)
{
    *total = frames_total() * PAGE_SIZE;
    *free = frames_free() * PAGE_SIZE;
}

void rt_poweroff(void)
{
    KERNEL_SCOPE;
    printk("ondol: powering off\n");
    power_off_or_halt();
}

void rt_result_write(const char *buf, size_t n)
{
    KERNEL_SCOPE;
    serial_write(COM2, buf, n);
}
void rt_kernel_counters(struct meminfo *m)
{
    KERNEL_SCOPE;
    kernel_meminfo(m);
}
long rt_measure(unsigned op, unsigned arg)
{
    KERNEL_SCOPE;
    return kernel_measure(op, arg);
}

/* The kernel's switch counters (runtime.h), summed over CPUs. */
void unix_switch_counts(uint64_t *thread_switches, uint64_t *as_switches)
{
    u64 threads, spaces;
    cpu_switch_counts(&threads, &spaces);
    *thread_switches = threads;
    *as_switches = spaces;
}

void rt_cpu_times(struct rt_cpu_times *out)
{
    u64 spaces;
    out->ncpu = cpus_scheduling() < TIME_CPUS ? cpus_scheduling() : TIME_CPUS;
    out->hz = timer_hz;
    out->interrupts = 0;
    for (unsigned i = 0; i < out->ncpu; i++)
        for (unsigned k = 0; k < TIME_TICK_KINDS; k++)
            out->ticks[i][k] = cpus[i].ticks_in[k];
    for (unsigned i = 0; i < cpus_running && i < MAX_CPUS; i++)
        out->interrupts += cpus[i].irqs;
    cpu_switch_counts(&out->switches, &spaces);
}

uint64_t unix_idle_ns(void)
{
    u64 idle = 0, hz = tsc_hz();
    for (unsigned i = 0; i < cpus_running && i < MAX_CPUS; i++)
        idle += cpus[i].idle_tsc;
    return hz ? idle / hz * 1000000000ull + idle % hz * 1000000000ull / hz : 0;
}

const void *rt_rootfs(size_t *len)
{
    *len = rootfs_len;
    return rootfs_len ? phys_to_virt(rootfs_pa) : NULL;
}

long rt_option(const char *key, char *buf, size_t cap)
{
    const char *v = opt_get(key);
    if (!v)
        return E_NOENT;
    size_t vlen = strlen(v);
    if (cap > 0) {
        size_t n = MIN(vlen, cap - 1);
        memcpy(buf, v, n);
        buf[n] = 0;
    }
    return (long)vlen;
}

/* ---- the server lock -----------------------------------------------------------------
 * One thread at a time runs the server's code, as unix.h requires and as the MK form
 * does with its one thread. A sleeping lock (a holder may sleep in call_mk_server), in one
 * word: 0 free, 1 held, 2 held and a thread may sleep for it. Taking it free is one
 * compare-exchange and letting it go one exchange, without the BKL (the system call's
 * path). A thread that finds it held marks it 2 and sleeps on server_waiters, under the
 * BKL; the holder that lets go of a 2 wakes one sleeper under the BKL, which cannot come
 * between the sleeper's mark and its sleep (it holds the BKL from the one to the other),
 * so no wake-up is lost. A woken thread marks 2 again, as it cannot know whether others
 * sleep: at worst one needless wake. The lock is not in the lock checker's order: waiting
 * for it sleeps, which lets go of the BKL, so it cannot deadlock with the BKL or any
 * spinlock (none is held at an entry). A kill wakes a sleeper too: it waits on. */
static u32 server_word;
static struct waitq server_waiters;

static __attribute__((noinline)) void server_lock_slow(void)
{
    KERNEL_SCOPE;
    struct thread *t = current_thread();
    while (__atomic_exchange_n(&server_word, 2, __ATOMIC_ACQUIRE) != 0) {
        t->state = T_BLOCKED;               /* before a waker can find it (sched.c) */
        waitq_append(&server_waiters, t);
        schedule();
    }
}

static inline void server_lock(void)
{
    u32 free = 0;
    if (!__atomic_compare_exchange_n(&server_word, &free, 1, false, __ATOMIC_ACQUIRE,
                                     __ATOMIC_RELAXED))
        server_lock_slow();
}

static __attribute__((noinline)) void server_wake_one(void)
{
    KERNEL_SCOPE;
    waitq_wake_one(&server_waiters, 0);
}

static inline void server_unlock(void)
{
    if (__atomic_exchange_n(&server_word, 0, __ATOMIC_RELEASE) == 2)
        server_wake_one();
}

/* ---- the guard (docs/net.md, "Mixed forms") -----------------------------------------
 * A call to an MK server ends only with its answer or its death (ipc_kernel_call), and the
 * server lock is held across it: a server that takes the call and never answers would hold
 * every entry, and so every process and the console, for ever. A kernel thread looks every
 * quarter of net_timeout at the sleeping call; when the same call has waited that long it
 * ends the called server's task, whose death wakes the call with E_DEAD and fails every
 * later one. A call pays two stores and a test. (The event thread's waitevents waits by
 * design, outside the lock, and is not watched.) Under the kernel lock (call_mk_server's
 * KERNEL_SCOPE): the guard's look and the call's marks never overlap. */
static u32 guard_seq;                  /* odd while call_mk_server sleeps for the server */
static int guard_dest;                 /* the thread it called */

static void guard_end_server(u64 seconds)
{
    struct thread *d = thread_lookup(guard_dest);
    if (!d || !d->task || d->state == T_ZOMBIE)
        return;
    printk("unix: the network server did not answer for %lu s: ending it\n",
           (unsigned long)seconds);
    task_kill(d->task, KILLED_STATUS);
}

static void guard_main(void)
{
    thread_first_run();
    u64 seconds = unix_net_timeout_s(), limit = seconds * timer_hz;
    u64 step = limit / 4 ? limit / 4 : 1;
    struct net_guard_watch watch = {0};
    for (;;) {
        thread_sleep(step);
        if (net_guard_expired(&watch, guard_seq, step, limit))
            guard_end_server(seconds);
    }
}

/* Once, at the server's first call to an MK server (net_timeout=0: no guard). */
static void guard_start(void)
{
    static bool started;
    if (started || !unix_net_timeout_s())
        return;
    started = true;
    struct thread *t = thread_create_kernel(guard_main, SERVICE_PRIO);
    if (t)
        make_ready(t);
}

/* ---- calls to other servers (runtime.h) ----------------------------------------------
 * The connector of each pair of placements (docs/net.md, "Mixed forms"): to an IK
 * server, a direct call of its dispatch with the server's own buffers (kernel memory);
 * to an MK one, an IPC call the kernel makes for the current thread (ipc_kernel_call:
 * the words, the buffers copied between kernel memory and the server's UTCB buffers),
 * which sleeps until the server answers or exits. Sleeping in the middle of the server's
 * code is safe because the current thread holds the server lock (above) across it: no
 * other entry runs the server meanwhile (they sleep for the lock), as in the MK form,
 * whose one thread waits in the same call. The MK server is not trusted: a reply longer than out_cap is E_2BIG, a
 * dead server E_DEAD, and the caller (socket.c) makes either an error of the Linux call.
 * (An MK UNIX server reaches an IK one by IPC: kernel/ipc/ipc.c, call_no_thread.) */
static long call_mk_server(unsigned iface, uint64_t w[IPC_MRS], const void *in, size_t in_len,
                           void *out, size_t out_cap, size_t *out_len, bool in_server)
{
    KERNEL_SCOPE;
    long err;
    struct thread *d = srv_mk_server(iface, &err);
    if (!d)
        return err;
    if (in_len > IPC_BUF_MAX)
        return E_2BIG;                 /* as the IPC call of the MK form */
    struct ipc_kcall k;
    k.utcb = (struct ipc_utcb){.send_buf = in, .send_len = in_len,
                               .recv_buf = out, .recv_cap = MIN(out_cap, IPC_BUF_MAX)};
    if (in_server) {
        guard_start();
        guard_dest = d->tid;
        guard_seq++;
    }
    long r = ipc_kernel_call(d, w, &k);
    if (in_server)
        guard_seq++;
    if (out_len)
        *out_len = r < 0 ? 0 : k.utcb.recv_len;
    return r < 0 ? r : (long)w[0];
}

/* A call from the server's code (in_server: the server lock is taken across a sleep), or
 * from the event thread, outside it. */
static long srv_call(unsigned iface, uint64_t w[IPC_MRS], const void *in, size_t in_len,
                     void *out, size_t out_cap, size_t *out_len, bool in_server)
{
    const struct srv_iface *s = srv_ik_server((int)((u64)iface << THREAD_ID_BITS));
    if (!s)
        return call_mk_server(iface, w, in, in_len, out, out_cap, out_len, in_server);
    KERNEL_SCOPE;                      /* the IK server's state is the BKL's */
    struct srv_call call = {.in = in, .in_len = in_len, .out = out,
                            .out_cap = MIN(out_cap, srv_label_cap(w[0])),
                            .client = current_thread()->tid, .by_kernel = true};
    memcpy(call.w, w, sizeof call.w);
    srv_handle(s, &call);
    memcpy(w, call.w, sizeof call.w);
    if (out_len)
        *out_len = call.out_len;
    return (long)w[0];
}

long rt_srv_call(unsigned iface, uint64_t w[IPC_MRS], const void *in, size_t in_len,
                 void *out, size_t out_cap, size_t *out_len)
{
    return srv_call(iface, w, in, in_len, out, out_cap, out_len, true);
}

void rt_srv_words(unsigned iface, long tid)
{
    (void)iface;
    (void)tid;
}

int rt_task_self(void) { return 0; }

/* ---- the entries from fwd.c ----------------------------------------------------------- */
/* The service thread computes its deadline and goes to sleep holding the BKL, so this
 * wake, under the BKL, finds it either asleep or yet to read the new deadline. */
static __attribute__((noinline)) void wake_service(void)
{
    KERNEL_SCOPE;
    thread_wake(service, 0);
}

/* After every entry, when it left work (unix_step_pending: one test in the common case):
 * the calls it woke run, freed threads go, and the service thread is woken early when a
 * call now has an earlier deadline than the one it sleeps until. */
static void step_work(void)
{
    unix_run_woken();
    uthread_collect();
    unix_step_pending = false;
    if (unix_next_deadline() < service_deadline && service)
        wake_service();
}

static inline void step_end(void)
{
    if (unix_step_pending)
        step_work();
}

/* Sleep until the forwarded call of the current thread is answered, or it is killed (it
 * then exits on its way out). An interrupt request does not end the sleep: it is served
 * at the return to user mode, after the answer. (A thread that sets its own FS base,
 * arch_prctl or a signal frame, has it loaded by fwd_regs_set at once.) */
static void await_answer(struct thread *t)
{
    kernel_lock_assert_held();               /* t->fwd: its answerer writes it under it */
    while (t->fwd != FWD_NONE && !(t->killed && t->interrupt == KILL_EXIT)) {
        t->state = T_BLOCKED;               /* before a waker can find it (sched.c) */
        waitq_append(&answer_waiters, t);
        schedule();
    }
}

/* A system call's answer, when it did not come at once: waits for it under the BKL (its
 * answerer writes t->fwd and rax under it, answer_thread). */
static __attribute__((noinline)) void syscall_wait(struct thread *t, struct trapframe *tf,
                                                   long value)
{
    KERNEL_SCOPE;
    if (value != UNIX_NO_ANSWER && t->fwd != FWD_NONE)
        tf->rax = (u64)fwd_answer(t, (u64)value);
    step_end();
    server_unlock();
    if (t->fwd != FWD_NONE)
        await_answer(t);
}

/* The exit checks need the BKL only when they have work (a kill, an interrupt, a
 * reschedule), as after a page fault without it (trap.c). */
static __attribute__((noinline)) void syscall_exit_work(void)
{
    kernel_lock();
    sched_kernel_exit_checks();
    kernel_unlock();
}

/* A call without server state (syscalls.def LX_UNLOCKED, option unix_unlocked): on the
 * thread's own stack without the server lock, beside whatever call holds it, answered at
 * once (the MK form's helper threads do the same on their CPU). */
static __attribute__((noinline)) void syscall_unlocked(struct thread *t, struct trapframe *tf,
                                                       struct ucall *c)
{
    tf->rax = (u64)unix_syscall_unlocked(t->task->id, c);
}

/* A Linux thread's system call under the server lock, without the BKL (the rt_* calls
 * take it); answered at once in the common case. */
static inline void syscall_locked(struct thread *t, struct trapframe *tf, struct ucall *c)
{
    server_lock();
    t->fwd = FWD_SYSCALL;              /* under the server lock: the server's view of it */
    long value = unix_syscall(t->tid, c);
    /* Answered now, registers untouched (the common case): rax = the value. Else it was
     * answered already, its registers were set (FWD_REGS: fwd_answer keeps them), or it
     * waits; once answered, nothing makes it wait again. */
    if (value != UNIX_NO_ANSWER && t->fwd == FWD_SYSCALL) {
        tf->rax = (u64)fwd_answer_syscall(t, (u64)value);
        step_end();
        server_unlock();
    } else {
        syscall_wait(t, tf, value);
    }
}

/* A Linux thread's system call: the server's code, on the thread's kernel stack. */
struct trapframe *unix_ik_syscall(struct trapframe *tf)
{
    pcnt_probe_start(PROBE_SYSCALL, tf->rax);
    struct thread *t = this_cpu()->current;
    /* built in place, field by field: one copy, no zeroing loop (rep stos) first */
    struct ucall c;                   /* proc, thread, task: unix_syscall sets them */
    c.nr = (long)tf->rax;
    c.a[0] = tf->rdi, c.a[1] = tf->rsi, c.a[2] = tf->rdx;
    c.a[3] = tf->r10, c.a[4] = tf->r8, c.a[5] = tf->r9;
    c.started_ns = c.done = 0;
    if (unix_call_unlocked(c.nr))
        syscall_unlocked(t, tf, &c);
    else
        syscall_locked(t, tf, &c);
    pcnt_probe_stop(PROBE_SYSCALL);
    struct cpu *cpu = this_cpu();
    if (cpu->current->killed | cpu->exit_work)
        syscall_exit_work();
    this_cpu()->kernel_work_rip = tf->rip;    /* a tick pending meanwhile is system time */
    return tf;                                /* entry.S leaves by exit_checked */
}

bool unix_ik_fault(struct trapframe *tf, u64 vector, u64 addr)
{
    struct thread *t = current_thread();
    server_lock();
    t->fwd = FWD_FAULT;
    t->fwd_words[1] = vector;          /* fwd_answer's exit status for a refused fault */
    unix_fault(t->tid, (unsigned)vector, tf->error, addr, tf->rip);
    step_end();
    server_unlock();
    await_answer(t);
    return true;
}

void unix_ik_interrupted(struct thread *t)
{
    server_lock();
    t->fwd = FWD_INTERRUPT;
    unix_interrupted(t->tid);
    step_end();
    server_unlock();
    await_answer(t);
}

/* ---- the kernel threads --------------------------------------------------------------- */
/* Ticks from now until deadline_ns (rounded up): 0 when it has passed. */
static u64 ticks_until(u64 deadline_ns)
{
    if (deadline_ns == UNIX_NO_DEADLINE)
        return WAIT_FOREVER;
    u64 now = unix_now_ns();
    if (deadline_ns <= now)
        return 0;
    u64 ns_per_tick = 1000000000ull / timer_hz;
    return (deadline_ns - now + ns_per_tick - 1) / ns_per_tick;
}

/* Free every ended Linux task whose end the server has already seen. */
static void reap_ended_tasks(void)
{
    while (task_reap(holder, -1) > 0)
        ;
}

static void service_main(void)
{
    thread_first_run();
    server_lock();
    unix_start();
    unix_step_pending = true;           /* whatever the start left: a full step */
    step_end();
    server_unlock();
    for (;;) {
        reap_ended_tasks();
        kernel_lock_assert_held();      /* a kernel thread holds it while it runs */
        server_lock();
        service_deadline = unix_next_deadline();
        server_unlock();
        task_child_exit_sleep(holder, ticks_until(service_deadline));   /* BKL held since */
        server_lock();
        service_deadline = UNIX_NO_DEADLINE;
        unix_timers_expire(unix_now_ns());
        step_end();
        server_unlock();
    }
}

static void console_main(void)
{
    thread_first_run();
    for (;;) {
        char buf[CONSOLE_CHUNK];
        size_t n = console_read(buf, sizeof(buf));
        if (n == 0)
            continue;
        server_lock();
        unix_console_input(buf, n);
        step_end();
        server_unlock();
    }
}

/* The network event thread (runtime.h, rt_net_watch): sleeps in the network server's op
 * waitevents (IK: a direct call; the op sleeps this thread; MK: a kernel call, which the
 * server defers), without the server lock, and passes each new count to the server. When
 * the network server fails it passes UNIX_NET_GONE and ends. */
static void net_watch_main(void)
{
    thread_first_run();
    uint64_t since = 0;
    for (;;) {
        uint64_t w[IPC_MRS] = {SRV_LABEL(NET_IFACE, NET_WAITEVENTS, 0), since};
        bool failed = srv_call(NET_IFACE, w, NULL, 0, NULL, 0, NULL, false) != 0;
        since = failed ? UNIX_NET_GONE : w[1];
        server_lock();
        unix_net_event(since);
        step_end();
        server_unlock();
        if (failed)
            break;
    }
    thread_exit(0);
}

static struct thread *start_kernel_thread(void (*fn)(void))
{
    struct thread *t = thread_create_kernel(fn, SERVICE_PRIO);
    if (!t)
        panic("unix: no memory for the server's kernel threads");
    make_ready(t);
    return t;
}

long rt_net_watch(void)
{
    KERNEL_SCOPE;
    struct thread *t = thread_create_kernel(net_watch_main, SERVICE_PRIO);
    if (!t)
        return E_NOMEM;
    make_ready(t);
    return 0;
}

void unix_ik_boot(void)
{
    const char *placement = opt_get("unix");
    if (!placement || strcmp(placement, "ik") != 0)
        return;
    char opt[8];
    unix_report_unknown = rt_option("unix_unknown", opt, sizeof(opt)) > 0 &&
                          strcmp(opt, "on") == 0;
    unix_unlocked_init();
    ns_per_tsc_q32 = tsc_hz() ? (1000000000ull << 32) / tsc_hz() : 0;
    long id = task_create_empty(NULL, "unix", LINUX_PRIO, NULL);
    if (id < 0)
        panic("unix: no memory for the server");
    holder = task_lookup((int)id);
    service = start_kernel_thread(service_main);
    start_kernel_thread(console_main);
}
