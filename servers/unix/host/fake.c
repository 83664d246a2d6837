/* The fake core and runtime for hosted unit tests (fake.h). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "fake.h"
#include "runtime.h"
#include "signal.h"

#define USER_BASE 0x10000u

struct fake_mem {
    struct proc proc;             /* first: a struct proc * is a struct fake_mem * */
    unsigned char *bytes;
    size_t len;
    struct sig_handlers hand;     /* fake_proc's dispositions (proc_create allocates them) */
};

int fake_blocked, fake_wakes, fake_checks, fake_failures;
struct waitlist *fake_blocked_on;
uint64_t fake_blocked_deadline, fake_now_ns;

struct proc *fake_proc(size_t len)
{
    struct fake_mem *m = calloc(1, sizeof(*m));
    m->bytes = calloc(1, len ? len : 1);
    m->len = len;
    m->proc.pid = 1;
    m->proc.sig_hand = &m->hand;
    m->hand.refs = 1;
    return &m->proc;
}

void fake_proc_free(struct proc *p)
{
    struct fake_mem *m = (struct fake_mem *)p;
    free(m->bytes);
    free(m);
}

uint64_t fake_user(struct proc *p, size_t offset)
{
    (void)p;
    return USER_BASE + offset;
}

/* The host address of [uaddr, uaddr + n) if all of it is the process's memory. */
static unsigned char *range(struct proc *p, uint64_t uaddr, size_t n)
{
    struct fake_mem *m = (struct fake_mem *)p;
    if (uaddr < USER_BASE || uaddr - USER_BASE > m->len || n > m->len - (uaddr - USER_BASE))
        return NULL;
    return m->bytes + (uaddr - USER_BASE);
}

void *fake_host(struct proc *p, uint64_t uaddr)
{
    return range(p, uaddr, 0);
}

struct ucall fake_call(struct proc *p, long nr, uint64_t a0, uint64_t a1, uint64_t a2,
                       uint64_t a3)
{
    return (struct ucall){.proc = p, .task = p ? p->task : 0, .nr = nr, .a = {a0, a1, a2, a3}};
}

long copy_in(struct proc *p, void *dst, uint64_t uaddr, size_t n)
{
    unsigned char *src = range(p, uaddr, n);
    if (!src)
        return -EFAULT;
    memcpy(dst, src, n);
    return 0;
}

long copy_out(struct proc *p, uint64_t uaddr, const void *src, size_t n)
{
    unsigned char *dst = range(p, uaddr, n);
    if (!dst)
        return -EFAULT;
    memcpy(dst, src, n);
    return 0;
}

long copy_in_str(struct proc *p, char *dst, uint64_t uaddr, size_t cap)
{
    for (size_t i = 0; i < cap; i++) {
        unsigned char *c = range(p, uaddr + i, 1);
        if (!c)
            return -EFAULT;
        dst[i] = (char)*c;
        if (!*c)
            return (long)i;
    }
    return -ENAMETOOLONG;
}

__attribute__((weak)) long ucall_block(struct ucall *c, struct waitlist *w, uint64_t deadline_ns)
{
    (void)c;
    fake_blocked++;
    fake_blocked_on = w;
    fake_blocked_deadline = deadline_ns;
    return UNIX_BLOCKED;
}

__attribute__((weak)) void waitlist_wake(struct waitlist *w)
{
    (void)w;
    fake_wakes++;
}

/* The server's heap is the host's (LeakSanitizer checks that every block comes back);
 * fake_alloc_fail_after, when >= 0, makes the allocation after that many fail;
 * fake_alloc_max, when not 0, fails every larger block (a bounded heap). */
long fake_alloc_fail_after = -1;
size_t fake_alloc_max;

size_t fake_proc_mem_next;

/* A process made by the real table (proc_create) with user memory, as fake_proc's, in
 * one block: unix_free of the process frees its memory too. */
static void *proc_with_memory(void)
{
    struct fake_mem *m = calloc(1, sizeof(*m) + fake_proc_mem_next);
    m->bytes = (unsigned char *)(m + 1);
    m->len = fake_proc_mem_next;
    fake_proc_mem_next = 0;
    return m;
}

void *unix_alloc(size_t n)
{
    if (fake_alloc_fail_after == 0 || (fake_alloc_max && n > fake_alloc_max))
        return NULL;
    if (fake_alloc_fail_after > 0)
        fake_alloc_fail_after--;
    if (fake_proc_mem_next && n == sizeof(struct proc))
        return proc_with_memory();
    return calloc(1, n ? n : 1);     /* zeroed, as the runtime's */
}

void unix_free(void *p)
{
    free(p);
}

uint64_t unix_now_ns(void)
{
    return fake_now_ns;
}

int fake_answers, fake_answer_tid, fake_logs;
long fake_answer;
char fake_log[128];

void unix_answer(struct ucall *c, long result)
{
    fake_answers++;
    fake_answer = result;
    fake_answer_tid = c->thread ? c->thread->tid : 0;
}

void unix_log(const char *msg)
{
    fake_logs++;
    snprintf(fake_log, sizeof(fake_log), "%s", msg);
}

void fake_check(bool ok, const char *what, const char *file, int line)
{
    fake_checks++;
    if (!ok) {
        fake_failures++;
        printf("%s:%d: FAILED: %s\n", file, line, what);
    }
}

void fake_check_eq(long a, long b, const char *sa, const char *sb, const char *file, int line)
{
    fake_checks++;
    if (a != b) {
        fake_failures++;
        printf("%s:%d: FAILED: %s == %s (%ld != %ld)\n", file, line, sa, sb, a, b);
    }
}

int fake_done(void)
{
    printf("%d checks, %d failed\n", fake_checks, fake_failures);
    return fake_failures ? 1 : 0;
}

/* ---- unix-dev's needs (fake.h), weak so that real definitions win ---- */
#define WEAK __attribute__((weak))

void fake_fds(struct proc *p)
{
    p->fds = fdtable_new();
}

void fake_fds_free(struct proc *p)
{
    fdtable_put(p->fds);
    p->fds = NULL;
}

int fake_sigpipes, fake_pgrp_signals, fake_last_pgrp, fake_last_sig;
char fake_console[8192];
size_t fake_console_len;

WEAK void signal_send_pipe(struct proc *p)
{
    (void)p;
    fake_sigpipes++;
}

WEAK void signal_send_pgrp(int pgid, int sig)
{
    fake_pgrp_signals++;
    fake_last_pgrp = pgid;
    fake_last_sig = sig;
}


WEAK void console_write(const char *buf, size_t n)
{
    size_t room = sizeof fake_console - fake_console_len;
    n = n < room ? n : room;
    memcpy(fake_console + fake_console_len, buf, n);
    fake_console_len += n;
}

int fake_tty_background_calls, fake_tty_background_sig;
long fake_tty_background_result;

WEAK long signal_tty_background(struct proc *p, int sig)
{
    (void)p;
    fake_tty_background_calls++;
    fake_tty_background_sig = sig;
    return fake_tty_background_result;
}

/* ---- /proc's providers (procfs.h), weak so that unix-run's real ones win ---- */
const char *fake_view_exe = "/bin/fake";
const char *fake_view_comm = "fake";
const char *fake_view_args = "fake\0-x";
size_t fake_view_args_len = 8;
uint64_t fake_thread_switches = 7, fake_as_switches = 3;

WEAK void proc_view_of(struct proc *p, struct proc_view *v)
{
    v->task.comm = fake_view_comm;
    v->task.utime = (uint64_t)p->pid;
    v->exe = p->zombie ? NULL : fake_view_exe;
    v->args = p->zombie ? NULL : fake_view_args;
    v->args_len = p->zombie ? 0 : fake_view_args_len;
}

WEAK void proc_system_view(struct proc_system_view *v)
{
    static const struct procfs_cpu cpus[2] = {{1, 2, 3, 4, 0, 0, 0, 0},
                                              {5, 6, 7, 8, 0, 0, 0, 0}};
    v->mem.total_kib = 131072;
    v->mem.free_kib = 65536;
    v->mem.available_kib = 65536;
    v->uptime_ns = fake_now_ns;
    v->stat.total = (struct procfs_cpu){6, 8, 10, 12, 0, 0, 0, 0};
    v->stat.cpu = cpus;
    v->stat.ncpu = 2;
}

WEAK uint64_t unix_idle_ns(void) { return 0; }
WEAK long rt_thread_affinity(int tid, uint64_t mask, uint64_t *old)
{
    (void)tid;
    if (old)
        *old = 1;                                     /* one CPU */
    return mask && !(mask & 1) ? E_INVAL : 0;
}

WEAK void rt_cpu_times(struct rt_cpu_times *t)
{
    *t = (struct rt_cpu_times){.ncpu = 1, .hz = 100};
}

WEAK void unix_switch_counts(uint64_t *thread_switches, uint64_t *as_switches)
{
    *thread_switches = fake_thread_switches;
    *as_switches = fake_as_switches;
}

/* ---- signals' needs (signal.h, runtime.h), weak so that real definitions win ---- */
struct user_regs fake_regs;
int fake_regs_sets, fake_interrupts, fake_interrupt_tid;
int fake_parent_wakes;

WEAK long rt_regs_get(int tid, struct user_regs *r)
{
    (void)tid;
    *r = fake_regs;
    return 0;
}

/* As the kernel's SET_REGS: rip and rsp must lie in the user half. */
WEAK long rt_regs_set(int tid, const struct user_regs *r)
{
    (void)tid;
    if (r->rip >= 0x800000000000ull || r->rsp >= 0x800000000000ull)
        return E_INVAL;
    fake_regs_sets++;
    fake_regs = *r;
    return 0;
}

WEAK long rt_thread_interrupt(int tid)
{
    fake_interrupts++;
    fake_interrupt_tid = tid;
    return 0;
}

WEAK void proc_exit(struct proc *p, int wait_status)
{
    p->zombie = true;
    p->exit_status = wait_status;
}

WEAK void proc_wake_parent(struct proc *p)
{
    (void)p;
    fake_parent_wakes++;
}

WEAK int thread_linux_tid(const struct uthread *t)
{
    return t->tid;
}
/* ---- the rest of signal.h and the runtime (runtime.h), for the handlers dispatch.c
 * links: weak, and failing or doing nothing, since hosted tests do not run processes ---- */
WEAK void signal_send(struct proc *p, int sig) { (void)p; (void)sig; }
WEAK void signal_send_to_thread(struct uthread *t, int sig) { (void)t; (void)sig; }
WEAK bool signal_deliver_pending(struct uthread *t, long result) { (void)t; (void)result; return false; }
WEAK void signal_fault(struct uthread *t, unsigned v, uint64_t e, uint64_t a, uint64_t r)
{
    (void)t; (void)v; (void)e; (void)a; (void)r;
}
WEAK bool signal_child_exited(struct proc *parent, struct proc *child)
{
    (void)parent; (void)child;
    return false;
}
WEAK void signal_fork(struct proc *c, const struct proc *p, bool share, struct uthread *ct,
                      const struct uthread *pt)
{
    (void)c; (void)p; (void)share; (void)ct; (void)pt;
}
WEAK long signal_exec(struct proc *p) { (void)p; return 0; }
WEAK void signal_exit(struct proc *p) { (void)p; }
WEAK void signal_thread_exit(struct uthread *t) { (void)t; }

WEAK long rt_task_create(const char *name) { (void)name; return E_NOSYS; }
WEAK long rt_task_linux(int task) { (void)task; return E_NOSYS; }
WEAK long rt_task_kill(int task) { (void)task; return E_NOSYS; }
WEAK long rt_task_reap(int task) { (void)task; return E_NOSYS; }
WEAK long rt_vm_clone(int task, int from) { (void)task; (void)from; return E_NOSYS; }
WEAK long rt_vm_map(int task, uint64_t addr, uint64_t len, unsigned prot, unsigned flags)
{
    (void)task; (void)addr; (void)len; (void)prot; (void)flags;
    return E_NOSYS;
}
WEAK long rt_vm_unmap(int task, uint64_t addr, uint64_t len)
{
    (void)task; (void)addr; (void)len;
    return E_NOSYS;
}
WEAK long rt_vm_protect(int task, uint64_t addr, uint64_t len, unsigned prot)
{
    (void)task; (void)addr; (void)len; (void)prot;
    return E_NOSYS;
}
WEAK long rt_vm_discard(int task, uint64_t addr, uint64_t len)
{
    (void)task; (void)addr; (void)len;
    return E_NOSYS;
}
WEAK void rt_vm_check(uint64_t out[3]) { out[0] = out[1] = out[2] = 0; }
/* The page cache: the host tests map nothing (as rt_vm_map). */
WEAK long rt_file_new(uint64_t cap, uint64_t *handle, unsigned char **data)
{
    (void)cap; (void)handle; (void)data;
    return E_NOSYS;
}
WEAK long rt_file_grow(uint64_t *handle, uint64_t cap, unsigned char **data)
{
    (void)handle; (void)cap; (void)data;
    return E_NOSYS;
}
WEAK long rt_file_eof(uint64_t handle, uint64_t size) { (void)handle; (void)size; return 0; }
WEAK void rt_file_free(uint64_t handle) { (void)handle; }
WEAK long rt_file_map(int task, uint64_t addr, uint64_t len, unsigned prot, unsigned flags,
                      uint64_t handle, uint64_t off)
{
    (void)task; (void)addr; (void)len; (void)prot; (void)flags; (void)handle; (void)off;
    return E_NOSYS;
}
WEAK long rt_copy_to(int task, uint64_t uaddr, const void *src, size_t n)
{
    (void)task; (void)uaddr; (void)src; (void)n;
    return E_FAULT;
}
WEAK long rt_copy_from(int task, void *dst, uint64_t uaddr, size_t n)
{
    (void)task; (void)dst; (void)uaddr; (void)n;
    return E_FAULT;
}
WEAK long rt_thread_start(int task, const struct user_regs *r) { (void)task; (void)r; return E_NOSYS; }
WEAK long rt_thread_end(int tid) { (void)tid; return E_SRCH; }
WEAK void rt_poweroff(void) {}
WEAK void rt_result_write(const char *buf, size_t n) { (void)buf; (void)n; }
WEAK long rt_option(const char *key, char *buf, size_t cap)
{
    (void)key; (void)buf; (void)cap;
    return E_NOENT;
}
/* No other server on the host: socket() is -EAFNOSUPPORT (socket.c). */
WEAK long rt_srv_call(unsigned iface, uint64_t w[IPC_MRS], const void *in, size_t in_len,
                      void *out, size_t out_cap, size_t *out_len)
{
    (void)iface; (void)w; (void)in; (void)in_len; (void)out; (void)out_cap;
    if (out_len)
        *out_len = 0;
    return E_NOENT;
}
WEAK long rt_net_watch(void) { return E_NOSYS; }   /* socket.c pulses */
WEAK void rt_srv_words(unsigned iface, long tid) { (void)iface, (void)tid; }
WEAK int rt_task_self(void) { return 0; }
WEAK void rt_memory(uint64_t *total, uint64_t *free) { *total = 256u << 20; *free = 128u << 20; }
WEAK void rt_kernel_counters(struct meminfo *m) { *m = (struct meminfo){0}; }
WEAK long rt_measure(unsigned op, unsigned arg) { (void)op, (void)arg; return 0; }
WEAK long rt_errno(long e) { return e >= 0 ? e : -EIO; }
