/*
 * What the rest of the server reads about processes and the system (procfs.h's providers,
 * signal.h's process hooks), from the process table (process.c, lifecycle.c) and the
 * runtime; the argument area and the executable from the process's image (exec.c). Not
 * kept yet, and shown as 0: per-process CPU times and memory sizes. The kernel's switch
 * counts (unix_switch_counts) and per-CPU times (rt_cpu_times) come from the runtimes
 * (rt_mk.c, kernel/srv/unix_ik.c).
 */
#include "procfs.h"
#include "runtime.h"
#include "signal.h"
#include "unix.h"

static int thread_count(const struct proc *p)
{
    int n = 0;
    for (const struct uthread *t = p->threads; t; t = t->next_in_proc)
        n++;
    return n;
}

/* Linux's R or S: a process with a thread that runs (in user mode, or in the call being
 * served, as the reader of its own /proc/self/stat is) is running; one whose threads all
 * wait in calls is sleeping. */
static char run_state(const struct proc *p)
{
    for (const struct uthread *t = p->threads; t; t = t->next_in_proc)
        if (!unix_wait_call(t))
            return 'R';
    return 'S';
}

/* Threads that run or are runnable (not waiting in a call): /proc/stat's procs_running,
 * the reader's own thread included, as on Linux. */
static unsigned threads_running(void)
{
    unsigned n = 0;
    for (const struct proc *p = proc_next(NULL); p; p = proc_next(p))
        for (const struct uthread *t = p->threads; t; t = t->next_in_proc)
            n += !unix_wait_call(t);
    return n;
}

void proc_view_of(struct proc *p, struct proc_view *v)
{
    v->task.pid = p->pid;
    v->task.ppid = p->ppid;
    v->task.pgid = p->pgid;
    v->task.sid = p->sid;
    v->task.threads = p->zombie ? 1 : thread_count(p);
    v->task.state = p->zombie ? 'Z' : p->sig_stopped ? 'T' : run_state(p);
    v->task.comm = p->comm;
    for (int k = 0; k < ID_KINDS; k++) {
        v->task.uid[k] = p->uid[k];
        v->task.gid[k] = p->gid[k];
    }
    v->task.umask = p->fs ? p->fs->umask : 022;
    v->task.fd_slots = UNIX_MAX_FDS;
    static char exe_path[4096];
    v->exe = NULL;
    if (p->image && p->fs) {
        procfs_inode_path(p, p->image->exe, exe_path, sizeof(exe_path));
        v->exe = exe_path;
    }
    v->args = p->image ? p->image->args : NULL;
    v->args_len = p->image ? p->image->args_len : 0;
}

/* A count of timer ticks at hz in /proc/stat's clock ticks (USER_HZ, 1/100 s). */
static uint64_t user_ticks(uint64_t ticks, uint64_t hz)
{
    return hz ? ticks / hz * 100 + ticks % hz * 100 / hz : 0;
}

/* /proc/stat's CPU lines: the kernel's tick-sampled times of each CPU and their sum. */
static void cpu_times_view(struct proc_system_view *v)
{
    static struct procfs_cpu per_cpu[TIME_CPUS];
    static struct rt_cpu_times k;
    rt_cpu_times(&k);
    vfs_memset(&v->stat.total, 0, sizeof(v->stat.total));
    for (unsigned i = 0; i < k.ncpu; i++) {
        struct procfs_cpu *c = &per_cpu[i];
        vfs_memset(c, 0, sizeof(*c));
        c->user = user_ticks(k.ticks[i][TIME_TICK_USER], k.hz);
        c->system = user_ticks(k.ticks[i][TIME_TICK_SYSTEM], k.hz);
        c->idle = user_ticks(k.ticks[i][TIME_TICK_IDLE], k.hz);
        v->stat.total.user += c->user;
        v->stat.total.system += c->system;
        v->stat.total.idle += c->idle;
    }
    v->stat.cpu = per_cpu;
    v->stat.ncpu = k.ncpu ? k.ncpu : 1;       /* per_cpu[0] is zero when none is known */
    v->stat.interrupts = k.interrupts;
    v->stat.context_switches = k.switches;
}

void proc_system_view(struct proc_system_view *v)
{
    uint64_t total = 0, free = 0;
    rt_memory(&total, &free);
    v->mem.total_kib = total / 1024;
    v->mem.free_kib = free / 1024;
    v->mem.available_kib = free / 1024;
    v->mem.cached_kib = page_cache_bytes() / 1024;
    v->uptime_ns = unix_now_ns();
    v->idle_ns = unix_idle_ns();
    cpu_times_view(v);
    v->stat.running = threads_running();
    v->stat.boot_time_s = unix_boot_time_s();
    v->stat.forks = proc_forks();
}

/* A child changed state: its parent's wait4/waitid calls run again. */
void proc_wake_parent(struct proc *p)
{
    struct proc *parent = proc_find(p->ppid);
    if (parent)
        waitlist_wake(&parent->child_exit);
}

int thread_linux_tid(const struct uthread *t)
{
    return t->ltid;
}
