/*
 * The UNIX server's placement runtime (docs/unix.md, "Design"): what the server's code
 * asks of the place it runs in, and the entries through which that place drives it. The
 * server's files call only these (and unix.h's copy_in/copy_out, unix_answer, unix_log,
 * unix_alloc, unix_now_ns, console_write); three implementations exist:
 *   MK   a user task (unixsrv): the rt_* calls are ondol system calls on tasks the server
 *        created (SYS_TASK_CREATE, SYS_TASK_LINUX, SYS_VM_CLONE, SYS_VM_CTL,
 *        SYS_TASK_COPY, SYS_THREAD_CTL, SYS_TASK_THREAD_REGS, SYS_TASK_KILL...), and its
 *        main loop receives the forwarded calls as IPC and answers them with reply_recv;
 *   IK   linked into the kernel: the same rt_* names are kernel functions on the same
 *        objects, and a forwarded trap calls the entries below on the trapping thread's
 *        kernel stack;
 *   host the unit tests' fake (servers/unix/host/).
 * Results of rt_* calls are ondol's: >= 0, or an E_* code (<ondol/abi.h> values, all
 * negative); rt_errno() turns one into the Linux -errno a system call returns (entry.c:
 * one mapping for every placement).
 */
#ifndef UNIX_RUNTIME_H
#define UNIX_RUNTIME_H

#include <stddef.h>
#include <stdint.h>
#include <ondol/srv.h>     /* <ondol/abi.h>: struct user_regs, VM_MMAP_*, PROT_*, E_* */
#include "signal.h"
#include "unix.h"

/* ---- tasks and threads of Linux processes ------------------------------------------- */
long rt_task_create(const char *name);      /* an empty task the server controls: its id */
long rt_task_linux(int task);               /* its calls and faults now come to this server */
long rt_task_kill(int task);                /* ends it and every thread (exit_group, kill) */
long rt_task_reap(int task);                /* frees an ended task's ondol remains */
long rt_vm_clone(int task, int from);       /* task's memory := COW copy of from's (fork) */
/* VM_CTL in a controlled task. flags: VM_MMAP_FIXED, VM_MMAP_SHARED. Address or E_*. */
long rt_vm_map(int task, uint64_t addr, uint64_t len, unsigned prot, unsigned flags);
long rt_vm_unmap(int task, uint64_t addr, uint64_t len);
long rt_vm_protect(int task, uint64_t addr, uint64_t len, unsigned prot);
long rt_vm_discard(int task, uint64_t addr, uint64_t len);   /* MADV_DONTNEED: E_FAULT
                                                                when not all mapped */
/* The task argument of rt_vm_unmap, rt_vm_protect and rt_vm_discard may also be
 * rt_caller_task(tid): the task of Linux thread tid, whose forwarded call the current
 * thread holds (MK: a helper thread, which has no table of tasks; the kernel checks that
 * it holds the call, VM_CTL_CALLER). */
static inline int rt_caller_task(int tid) { return -tid; }
/* The page cache (docs/unix.md, "File mappings"): a file's bytes in a kernel file object
 * (kernel/mm/fileobj.h), held once however many processes map them. The server reads and
 * writes them at *data, cap bytes (MK: a window in its own address space; IK: the
 * physical map); *handle names the object (MK: the window; IK: the object). */
long rt_file_new(uint64_t cap, uint64_t *handle, unsigned char **data);   /* zeroed; 0/E_* */
/* A larger run (cap bytes, a page multiple): the bytes stay, *handle and *data may move;
 * every mapping follows. 0, or E_NOMEM with nothing changed. */
long rt_file_grow(uint64_t *handle, uint64_t cap, unsigned char **data);
long rt_file_eof(uint64_t handle, uint64_t size);  /* users' pages wholly past size go */
void rt_file_free(uint64_t handle);                /* the server's reference; mappings keep theirs */
/* Map [off, off + len) of the file into task at addr (flags: VM_MMAP_FIXED; VM_MMAP_SHARED,
 * else copy-on-write): the address or E_*. */
long rt_file_map(int task, uint64_t addr, uint64_t len, unsigned prot, unsigned flags,
                 uint64_t handle, uint64_t off);
/* Bytes between the server and a task's memory (copy_in/copy_out are built on these). */
long rt_copy_to(int task, uint64_t uaddr, const void *src, size_t n);
long rt_copy_from(int task, void *dst, uint64_t uaddr, size_t n);
/* Registers of a thread that waits in a forwarded call (or is interrupted). After
 * rt_regs_set the thread resumes with exactly those registers; its answer is ignored. */
long rt_regs_get(int tid, struct user_regs *r);
long rt_regs_set(int tid, const struct user_regs *r);
long rt_thread_start(int task, const struct user_regs *r);   /* new thread's tid */
long rt_thread_end(int tid);
long rt_thread_interrupt(int tid);          /* a FWD_OP_INTERRUPT call at its next return */
/* The CPUs thread tid may run on (bit n: CPU n): the mask before the call to *old (unless
 * NULL), then mask (0: unchanged); 0, or E_INVAL when mask names no CPU that runs threads
 * (SYS_THREAD_AFFINITY). */
long rt_thread_affinity(int tid, uint64_t mask, uint64_t *old);
/* The kernel's reverse-map checker over every address space (SYS_VM_CHECK's struct
 * vm_check: mappings, entries, errors), for /proc/ondol/vmcheck. */
void rt_vm_check(uint64_t out[3]);
/* The machine's memory in bytes: all usable, and free now (sysinfo, /proc/meminfo). */
void rt_memory(uint64_t *total, uint64_t *free);
void rt_poweroff(void);                     /* reboot(2) with power off: QEMU exits 0 */
void rt_result_write(const char *buf, size_t n);   /* the result stream (COM2) */
/* The kernel's SYS_MEMINFO figures (/proc/ondol/kernel). */
void rt_kernel_counters(struct meminfo *m);
/* SYS_MEASURE (the cache and coherence model's markers): 0, or an ondol error. */
long rt_measure(unsigned op, unsigned arg);
/* The kernel's counters (issue 10, item 7; /proc/ondol/syscalls, the unix_calls record):
 * thread switches and address-space (CR3) switches since boot, all CPUs. */
void unix_switch_counts(uint64_t *thread_switches, uint64_t *as_switches);
/* Time every CPU spent halted with nothing to run, in ns since boot (/proc/stat's and
 * /proc/uptime's idle). */
uint64_t unix_idle_ns(void);
/* Each CPU's timer ticks by what it was doing (TIME_TICK_*: user mode, kernel, idle),
 * the interrupts and thread switches of all CPUs since boot: /proc/stat. */
struct rt_cpu_times {
    unsigned ncpu;                  /* CPUs that run threads, at most TIME_CPUS */
    uint64_t hz;                    /* timer ticks per second */
    uint64_t ticks[TIME_CPUS][TIME_TICK_KINDS];
    uint64_t interrupts, switches;
};
void rt_cpu_times(struct rt_cpu_times *t);

/* The root archive (build/rootfs.cpio, the boot's second module), read-only. */
const void *rt_rootfs(size_t *len);
/* A kernel option's value as text ("" when unset): the server's options (linux_init...). */
long rt_option(const char *key, char *buf, size_t cap);

/* One call to another server's op (socket.c: the network server, UNIX -> net only): w
 * holds the message words of <ondol/srv.h> (w[0] the label, then the arguments) and gets
 * the reply's (w[0] the result, 0 or E_*); `in` is the request buffer (in_len 0: none),
 * `out` receives at most out_cap bytes of reply buffer (*out_len). The op must not wait:
 * the UNIX server is one thread. E_NOENT when the interface is not served, E_DEAD when its
 * server has exited. MK: IPC to the server's task; IK: a direct call of its dispatch when
 * it too is IK, else an IPC call the kernel makes (kernel/srv/unix_ik.c). */
long rt_srv_call(unsigned iface, uint64_t w[IPC_MRS], const void *in, size_t in_len,
                 void *out, size_t out_cap, size_t *out_len);

/* Calls of iface without buffers go to thread tid from now on (a server's words thread,
 * whose calls take the IPC fastpath: srv.h srv_words_thread); tid 0: the server again.
 * MK; IK: nothing (calls are function calls). */
void rt_srv_words(unsigned iface, long tid);
/* The server's own task id (MK), to name it to another server; IK: 0. */
int rt_task_self(void);

/* The network server's events (socket.c, with net_thread): start a thread of the
 * runtime's own (MK: a thread of unixsrv; IK: a kernel thread) that waits in the network
 * server's op waitevents and hands every new activity count to unix_net_event, as an
 * entry (MK: an IPC call to the main thread). Called once; 0, or E_* when it could not
 * start (socket.c then pulses). When the network server fails, the thread passes
 * UNIX_NET_GONE and ends. */
long rt_net_watch(void);

/* Option net_timeout (socket.c): seconds a call of rt_srv_call may wait for the network
 * server's answer; past it the runtime's guard ends that server as hung (MK: a thread of
 * unixsrv; IK: a kernel thread), and its death fails the call and every later one. 0: no
 * limit. Default 20. */
uint64_t unix_net_timeout_s(void);

/* The guard's watch, one policy for both runtimes: the runtime counts a sequence word up
 * as a call to the network server starts and again as it ends (odd: a call in flight), and
 * the guard samples it every `step` ticks. True when one and the same call has been in
 * flight for `limit` ticks; the watch then starts over. */
struct net_guard_watch {
    uint32_t seen;
    uint64_t waited;
};
static inline bool net_guard_expired(struct net_guard_watch *w, uint32_t now, uint64_t step,
                                     uint64_t limit)
{
    if (!(now & 1) || now != w->seen) {
        w->seen = now;
        w->waited = 0;
        return false;
    }
    if ((w->waited += step) < limit)
        return false;
    w->waited = 0;
    return true;
}

/* An ondol E_* code as the Linux -errno of the same meaning. */
long rt_errno(long ondol_error);

/* ---- entries: how the runtime drives the server -------------------------------------- */
void unix_start(void);                      /* once: unpack the root archive, start init */
/* A forwarded system call of thread tid (FWD_OP_SYSCALL), in c: the runtime builds it in
 * place from where the call's registers are (IK: the trap frame; MK: the message), nr and
 * a[] copied once, started_ns and done 0; unix_syscall sets proc and thread. Returns the
 * value to answer it with now, when it ended with nothing else to do (the common case):
 * the runtime answers it itself, rax = the value, the short path of both forms. Else
 * UNIX_NO_ANSWER: it is answered through unix_answer (later, or after a signal's
 * delivery) or not at all (the thread is gone, replaced or stopped). */
#define UNIX_NO_ANSWER (-4096L - 4)
static inline long unix_syscall(int tid, struct ucall *c);
/* A fault the kernel could not resolve (FWD_OP_FAULT): a signal for the process. */
void unix_fault(int tid, unsigned vector, uint64_t error, uint64_t addr, uint64_t rip);
void unix_interrupted(int tid);             /* FWD_OP_INTERRUPT: deliver pending signals */
/* For a runtime's unix_answer: the call's result at its answer, after signal delivery
 * (signal.h): registers set by it make the value unused (0 is sent); SIGNAL_INTERRUPTED (a
 * thread that came from user mode) is answered 0, the kernel keeps its rax. False when
 * the thread gets no answer now: its process ended (gone), or it stopped (sig_held:
 * signal.c answers at SIGCONT). unix_syscall has it inline too. */
static inline bool unix_answer_value(struct ucall *c, long *result)
{
    struct uthread *t = c->thread;
    if (!t || t->gone)
        return false;
    t->in_call = false;
    if (signal_deliver(t, *result) || *result == SIGNAL_INTERRUPTED)
        *result = 0;
    return !t->gone && !t->sig_held;
}
void unix_console_input(const char *buf, size_t n);   /* bytes typed on the console */
/* The network server's activity count changed; UNIX_NET_GONE (never a count: counts are
 * 32-bit): the event thread's last, the network server failed. */
void unix_net_event(uint64_t gen);
#define UNIX_NET_GONE UINT64_MAX
/* After each entry, when unix_step_pending is set, the runtime runs the woken calls
 * (unix_run_woken) and frees the ended threads (uthread_collect); it waits for the next
 * event with unix_next_deadline() as its timeout and calls unix_timers_expire. */

/* unix_syscall, inline in both runtimes: the per-call path (docs/unix.md, "The IK form")
 * is a hash look-up, the dispatch and the answer check, with no call between. */
static inline long unix_syscall(int tid, struct ucall *c)
{
    struct uthread *t = uthread_find(tid);
    if (!t)
        return UNIX_NO_ANSWER;  /* not a thread of ours (cannot happen: only ours forward) */
    c->proc = t->proc;
    c->thread = t;
    c->task = t->proc->task;
    t->in_call = true;              /* until the answer: a signal needs no interrupt */
    long r = unix_dispatch(c);
    if (r == UNIX_BLOCKED || r == UNIX_NOREPLY || !unix_answer_value(c, &r))
        return UNIX_NO_ANSWER;
    return r;
}

#endif
