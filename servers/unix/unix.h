/*
 * The UNIX server's internal interface (docs/unix.md): what its parts (processes, files,
 * signals, memory, devices) share. The server is reached through the Linux x86-64
 * system-call ABI: the kernel forwards each `syscall` of a Linux process to it (MK: one IPC
 * call to the server task; IK: a function call on the trapping thread's kernel stack), and
 * it answers with the value Linux would put in rax.
 *
 * The same source is built as a user task (MK) and into the kernel (IK) and does not know
 * which (the server runtime, <ondol/srv.h>, hides the difference). It is also built on the
 * host for unit tests (servers/unix/host/), with a fake runtime.
 *
 * A call that must wait (read of an empty pipe, wait4, nanosleep) never blocks the server:
 * its handler queues the call on a wait list with ucall_block() and returns UNIX_BLOCKED.
 * When the condition may have changed, the code that changed it calls waitlist_wake(), and
 * each waiting call is run again from the start (handlers are written so that this is
 * correct: they change nothing before deciding to block). A signal ends the wait with
 * -EINTR (or runs the call again for SA_RESTART). MK: the server keeps the caller's reply
 * right and answers later; IK: the thread sleeps in the kernel and re-runs its own call
 * when woken.
 *
 * Errors are Linux's: a handler returns a value >= 0 or -errno (linux.h), never ondol's
 * E_* codes.
 */
#ifndef UNIX_H
#define UNIX_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "linux.h"

struct proc;
struct uthread;
struct file;
struct inode;

/* ---- one forwarded system call ------------------------------------------------------- */
struct ucall {
    struct proc *proc;           /* the calling process (NULL in an LX_UNLOCKED call) */
    struct uthread *thread;      /* the calling thread (NULL in an LX_UNLOCKED call) */
    int task;                    /* the calling process's task as the rt_vm_* calls name it:
                                    the only thing an LX_UNLOCKED handler may use of it */
    long nr;                     /* Linux system-call number (rax) */
    uint64_t a[6];               /* rdi, rsi, rdx, r10, r8, r9 */
    /* Kept by the core across the re-runs of a blocked call: started_ns is unix_now_ns()
     * at the call's first ucall_start_ns (0 until then: most calls never need the time),
     * so a timeout's absolute deadline stays the same on every re-run (sleeps, poll,
     * select, futex, the tty's VTIME: each asks for it in its first run); done starts
     * at 0 and is the progress of a call that blocks part-way (a pipe write larger than
     * PIPE_BUF): a call ended by a signal with done > 0 returns done, not -EINTR. */
    uint64_t started_ns;
    uint64_t done;
};

/* Handler results outside Linux's -4095..-1 error range. */
#define UNIX_BLOCKED  (-4096L - 1)   /* queued with ucall_block: no reply yet */
#define UNIX_NOREPLY  (-4096L - 2)   /* the calling thread is gone or replaced (exit, execve) */

/* Every Linux system call the server implements is one line of syscalls.def:
 *   LX(number, name)   handled by long lx_name(struct ucall *c)
 *   LX_UNLOCKED(number, name)   the same, for a call without server state (below)
 * Any other number returns -ENOSYS and is counted. */
#define LX(nr, name) long lx_##name(struct ucall *c);
#include "syscalls.def"
#undef LX

/* ---- memory --------------------------------------------------------------------------
 * The server's heap (inodes, file data, processes): NULL when exhausted. */
void *unix_alloc(size_t n);
void unix_free(void *p);

/* ---- waiting --------------------------------------------------------------------------
 * A wait list holds calls that wait for one condition (data in a pipe, a child's exit). */
struct ucall_wait;
struct wait_link;
struct waitlist {
    struct wait_link *head;           /* wait.c; a zeroed list is empty */
};
/* Queue c on w (and on the timer when deadline_ns is not UNIX_NO_DEADLINE: the call then
 * runs again at that time, and sees that it is past). Returns UNIX_BLOCKED. */
#define UNIX_NO_DEADLINE UINT64_MAX
long ucall_block(struct ucall *c, struct waitlist *w, uint64_t deadline_ns);
/* Run every call waiting on w again (later, not from inside this function). */
void waitlist_wake(struct waitlist *w);
/* Now, in nanoseconds since boot (CLOCK_MONOTONIC; under icount it repeats exactly). */
uint64_t unix_now_ns(void);
uint64_t unix_boot_time_s(void);                 /* REALTIME at boot, in s (time.c) */

/* ---- signal state (signal*.c) ---------------------------------------------------------
 * A pending signal's siginfo, compactly (signal_frame.c writes Linux's 128-byte form). */
struct sig_info {
    int32_t signo, code, pid, status;     /* status: SIGCHLD's si_status */
    uint32_t uid;
    uint64_t value;                       /* si_addr of a fault, si_value of a queued one */
    uint64_t trapno, error;               /* a fault's vector and error code (sigcontext) */
};
struct sig_queued {
    struct sig_queued *next;
    struct sig_info info;
};
/* A pending set: the signals, and the siginfo of the first of each standard signal and
 * of every queued real-time one (at most SIG_QUEUE_MAX entries; beyond, or without
 * memory, the signal is pending with SI_USER's info). */
#define SIG_QUEUE_MAX 64
struct sig_pending {
    uint64_t set;
    struct sig_queued *queue;             /* in arrival order */
    unsigned queued;
};

/* ---- the core: dispatch, waiting calls, the runtime (unix-core) -----------------------
 * A thread of a process, as the server knows it. */
struct uthread {
    int tid;                          /* its ondol thread: the caller of forwarded calls */
    struct proc *proc;
    struct ucall_wait *wait;          /* the call it waits in (ucall_block), or NULL */
    /* signals (signal*.c; signal.h) */
    bool in_call;                     /* the runtime sets it from unix_syscall until the
                                         answer: a signal then needs no interrupt */
    uint64_t sig_blocked;             /* blocked set (bit sig-1; never SIGKILL/SIGSTOP) */
    struct sig_pending sig_pending;   /* sent to this thread (tgkill, faults) */
    uint64_t sig_saved_mask;          /* rt_sigsuspend: the mask to restore... */
    bool sig_restore_mask;            /* ...after the handler (or at once if none runs) */
    uint64_t ss_sp, ss_size;          /* alternate stack (sigaltstack); ss_size 0: none */
    uint32_t ss_flags;                /* its SS_AUTODISARM bit */
    uint64_t sig_wait_set;            /* rt_sigtimedwait: the signals it waits for */
    struct waitlist sig_waiters;      /* rt_sigtimedwait waits here */
    bool sig_held;                    /* stopped: its answer waits for SIGCONT */
    long sig_held_result;             /* the answer it will get (signal_deliver's input) */
    bool sig_interrupting;            /* rt_thread_interrupt sent, not yet come in */
    struct uthread *sig_next;         /* in proc->sig_threads */
    /* lifecycle (thread.c, lifecycle.c) */
    int ltid;                         /* its Linux thread id (the main thread's is the pid) */
    uint64_t clear_child_tid;         /* set_tid_address / CLONE_CHILD_CLEARTID, or 0 */
    struct uthread *next_in_proc;     /* the process's threads */
    struct uthread *next_hash;        /* uthread_find's bucket; the graveyard once gone */
    bool gone;                        /* ended: no answer reaches it any more */
    uint64_t affinity;                /* sched_setaffinity's mask; 0: never set (every CPU) */
};

/* One forwarded call (dispatch.c): the handler's result, UNIX_BLOCKED or UNIX_NOREPLY.
 * An unknown number is -ENOSYS, counted, and reported once when unix_report_unknown.
 * unix_dispatch runs a new call (counted); unix_dispatch_again re-runs a woken one (wait.c:
 * the same call, not counted again). */
long unix_dispatch(struct ucall *c);
long unix_dispatch_again(struct ucall *c);
/* A dispatch starts a new run: ucall_block's record of the running call (wait.c) is
 * forgotten. Inline: every call runs it. */
extern struct ucall_wait *ucall_blocking;
static inline void ucall_run_begin(void) { ucall_blocking = NULL; }
/* The call's start time (ucall.started_ns), read from the clock at the first use. */
static inline uint64_t ucall_start_ns(struct ucall *c)
{
    if (!c->started_ns)
        c->started_ns = unix_now_ns();
    return c->started_ns;
}
#define UNIX_NR_MAX 512                   /* numbers the table and the counters cover */
uint64_t unix_call_count(long nr);        /* calls of nr so far (unknown ones too) */
uint64_t unix_unknown_count(void);        /* calls of unknown numbers */
uint64_t unix_total_count(void);          /* every call so far */
const char *unix_call_name(long nr);      /* "read"..., NULL when not implemented */
extern bool unix_report_unknown;          /* option: print each unknown number once */

/* Calls without the server lock (syscalls.def LX_UNLOCKED; docs/unix.md "Calls without
 * the server lock"). unix_unlocked_calls: bit n set when call n runs so (option
 * unix_unlocked, default on; 0 when off), set once by unix_unlocked_init before
 * unix_start. unix_syscall_unlocked runs such a call, nr passing unix_call_unlocked, for
 * the process whose task is `task` (as the rt_vm_* calls name it), on any thread, with or
 * without the server lock held by another: the handler's result, counted by number
 * (unix_call_count) and in unix_unlocked_count, never per process. The answer is the
 * runtime's, at once; a signal meanwhile interrupts the thread (no in_call is set). */
extern uint64_t unix_unlocked_calls;
void unix_unlocked_init(void);
static inline bool unix_call_unlocked(long nr)
{
    return (unsigned long)nr < 64 && (unix_unlocked_calls >> nr & 1);
}
long unix_syscall_unlocked(int task, struct ucall *c);
uint64_t unix_unlocked_count(void);

/* Waiting calls (wait.c). The runtime runs the woken ones with unix_run_woken after each
 * call it handles (both forms: a re-run works for any process), hands the timer the earliest
 * deadline, and calls unix_timers_expire when it passes. unix_wait_end ends thread t's
 * wait with `result` (a signal: -EINTR) and answers it; unix_wait_drop forgets it (the
 * thread is gone). */
void unix_run_woken(void);
uint64_t unix_next_deadline(void);        /* UNIX_NO_DEADLINE when no call has one */
/* Set when a step left work for the runtime's end of step: a woken call (waitlist_wake),
 * a freed thread (uthread_free), a deadline set (ucall_block's, unix_timer_arm). The
 * runtime tests only this after a call; when set it runs unix_run_woken and
 * uthread_collect, clears it, and looks at unix_next_deadline again. */
extern bool unix_step_pending;
void unix_timers_expire(uint64_t now_ns);
bool unix_wait_end(struct uthread *t, long result);
void unix_wait_drop(struct uthread *t);
/* The call thread t waits in (its copy, kept across re-runs), or NULL: signals read its
 * number and progress to choose the result that ends the wait. */
const struct ucall *unix_wait_call(const struct uthread *t);

/* Timers of the server's own (wait.c): an armed timer's fire() runs once from
 * unix_timers_expire when its deadline has passed (unix_next_deadline counts it). A zeroed
 * timer is disarmed; arming an armed timer moves it. Used by alarm/setitimer. */
struct unix_timer {
    uint64_t deadline_ns;
    bool armed;
    void (*fire)(struct unix_timer *t);
    struct unix_timer *next;          /* on the armed list, by deadline */
};
void unix_timer_arm(struct unix_timer *t, uint64_t deadline_ns);
void unix_timer_disarm(struct unix_timer *t);

/* What the runtime provides to the core (MK: servers/unix runtime over IPC; IK: the
 * kernel; hosted: host/fake.c). */
void unix_answer(struct ucall *c, long result);   /* the call's result reaches its thread */
void unix_log(const char *msg);                   /* a line on the console */
void *unix_alloc(size_t n);                       /* zeroed, or NULL */
void unix_free(void *p);
/* A buffer whose size a client chooses or multiplies (file data, pipe buffers): zeroed,
 * or NULL when it would leave less than UNIX_MEM_KEEP of the machine's memory free
 * (budget.c; docs/unix.md "Reliability"). */
#define UNIX_MEM_KEEP (24ull << 20)
void *unix_alloc_big(size_t n);
bool unix_budget_ok(uint64_t n);                  /* may n more bytes be taken so? */

/* ---- a process's memory ---------------------------------------------------------------
 * Copies between the server and process p's address space. They check every address (a
 * bad one is -EFAULT, never a fault of the server) and work whether or not p is the
 * process whose call is running. */
long copy_in(struct proc *p, void *dst, uint64_t uaddr, size_t n);          /* 0 or -EFAULT */
long copy_out(struct proc *p, uint64_t uaddr, const void *src, size_t n);   /* 0 or -EFAULT */
/* A NUL-terminated string of at most cap bytes including the NUL: its length, -EFAULT, or
 * -ENAMETOOLONG when no NUL comes within cap bytes. */
long copy_in_str(struct proc *p, char *dst, uint64_t uaddr, size_t cap);

/* ---- open files -----------------------------------------------------------------------
 * An open file description (shared by dup and fork). Each kind of file (tmpfs file or
 * directory, pipe end, tty, /dev/null...) supplies its operations; a missing operation
 * means the call does not apply (the VFS returns the error Linux gives: read of a
 * directory -EISDIR, lseek of a pipe -ESPIPE, ioctl -ENOTTY...). */
struct file_ops {
    /* Read or write n bytes at *off (the ops advance it) between the file and process
     * c->proc's memory at uaddr. May block (ucall_block) when nothing can be transferred
     * yet and the file is not O_NONBLOCK (then -EAGAIN). */
    long (*read)(struct file *f, struct ucall *c, uint64_t uaddr, size_t n, uint64_t *off);
    long (*write)(struct file *f, struct ucall *c, uint64_t uaddr, size_t n, uint64_t *off);
    /* POLLIN/POLLOUT/POLLHUP/POLLERR bits ready now; w, if not NULL, receives the list to
     * wait on for a change. */
    unsigned (*poll)(struct file *f, struct waitlist **w);
    long (*ioctl)(struct file *f, struct ucall *c, unsigned long cmd, uint64_t arg);
    void (*release)(struct file *f);     /* the last reference is gone */
    /* Optional (sendfile's destination): write n bytes from the server's own memory at
     * *off, as write does from the process's (and may block as it does). NULL: sendfile
     * to this file is -EINVAL (a program then falls back to read and write). */
    long (*write_buf)(struct file *f, struct ucall *c, const void *buf, size_t n,
                      uint64_t *off);
};

struct file {
    const struct file_ops *ops;
    int refs;
    unsigned flags;              /* O_ACCMODE | O_APPEND | O_NONBLOCK ... as opened */
    uint64_t off;
    struct inode *inode;         /* NULL for pipes and sockets */
    void *priv;                  /* the kind's own state (pipe, tty) */
};

struct file *file_get(struct file *f);      /* one more reference */
void file_put(struct file *f);              /* one less; releases at zero */

/* Character devices, by Linux major/minor (devices.c): the ops of an open of the device
 * node, or NULL (ENXIO). open may set f->priv. */
struct chardev {
    unsigned major, minor;
    const struct file_ops *ops;
    long (*open)(struct file *f, struct ucall *c);
};
const struct chardev *chardev_lookup(unsigned major, unsigned minor);

/* ---- processes ------------------------------------------------------------------------
 * A process and the parts its threads may share (CLONE_FILES, CLONE_FS). process.c owns
 * creation and teardown; each part of the server adds the fields it keeps per process
 * here, with a comment. */
#define UNIX_MAX_FDS 256
struct fdtable {
    int refs;                         /* shared by CLONE_FILES threads */
    struct file *fd[UNIX_MAX_FDS];
    uint64_t cloexec[UNIX_MAX_FDS / 64];
};

struct fs_context {                   /* cwd and umask */
    int refs;
    struct inode *cwd, *root;
    unsigned umask;
};

/* What /proc shows of the program a process runs (exec.c): the executable (a reference
 * to its inode, so /proc/PID/exe follows a rename as Linux's d_path does) and the bytes
 * of the argument area, argv's strings each with its NUL, as /proc/PID/cmdline reads
 * them. Immutable once made; counted because fork's child shares its parent's. */
struct proc_image {
    int refs;
    struct inode *exe;
    size_t args_len;
    char args[];
};
void proc_image_put(struct proc_image *img);    /* one reference less; NULL is fine */

/* Supplementary groups (setgroups; misc.c): sorted, immutable once set, counted because
 * fork's child shares its parent's, as Linux's group_info. */
struct unix_groups {
    int refs;
    int n;
    uint32_t gid[];
};
void groups_put(struct unix_groups *g);     /* one reference less; NULL is fine */
struct sig_handlers;
void sig_handlers_put(struct sig_handlers *h);   /* the same (process.c) */

/* Which of a process's user or group ids (credentials(7)): file creation and the file
 * access checks use the fs one (vfs_permitted), which follows the effective one unless
 * setfsuid/setfsgid moved it; signals and access(2) use the real one. */
enum id_kind { ID_REAL, ID_EFFECTIVE, ID_SAVED, ID_FS, ID_KINDS };

/* Signal dispositions (signal*.c). Each process has a table of its own, except that
 * clone(CLONE_SIGHAND) shares the creator's (threads share it through their process), as
 * Linux's sighand_struct: a sigaction by one is seen by all; execve unshares it. */
struct sig_handlers {
    int refs;
    struct linux_sigaction act[LINUX_NSIG];   /* index sig-1 */
};

struct proc {
    int pid, ppid, pgid, sid;
    int task;                         /* the ondol task that holds its memory and threads */
    struct fdtable *fds;
    struct fs_context *fs;
    struct tty *ctty;                 /* controlling terminal, or NULL */
    unsigned uid[4], gid[4];          /* indexed by enum id_kind (misc.c); 0, root, at boot */
    struct unix_groups *groups;       /* supplementary groups (misc.c), NULL: none */
    /* process table (process.c) */
    struct proc *next;                /* in the table, by creation */
    bool zombie;                      /* exited, not yet reaped */
    int exit_status;                  /* wait4 status encoding, once a zombie */
    uint64_t calls;                   /* system calls it made (dispatch.c; /proc/ondol) */
    /* signals (signal*.c; signal.h) */
    struct sig_handlers *sig_hand;    /* dispositions: its own, or shared (CLONE_SIGHAND) */
    struct sig_pending sig_pending;   /* sent to the process (kill) */
    struct uthread *sig_threads;      /* its threads (signal_thread_new/_exit) */
    bool sig_stopped;                 /* stopped by a stop signal until SIGCONT */
    int sig_wait_report;              /* for wait4 (process.c): 0, a stop's status
                                         (sig << 8 | 0x7f, WUNTRACED) or 0xffff (continued,
                                         WCONTINUED); wait4 clears it when it reports it */
    struct unix_timer sig_alarm;      /* ITIMER_REAL (alarm, setitimer) */
    uint64_t sig_alarm_interval_ns;
    struct linux_itimerval sig_itimer[2];   /* ITIMER_VIRTUAL, ITIMER_PROF: stored only */
    /* lifecycle (lifecycle.c, exec.c) */
    struct uthread *threads;          /* its live threads (none once a zombie) */
    struct waitlist child_exit;       /* wait4/waitid callers: a child changed state */
    char comm[16];                    /* the program's name (exec, PR_SET_NAME) */
    struct proc_image *image;         /* its program's file and argument area (exec.c;
                                         shared with fork's children until they exec;
                                         NULL once a zombie) */
    /* memory (mem.c) */
    uint64_t brk_start, brk_end;      /* the program break: [start, end) in use */
    uint64_t brk_mapped;              /* page-aligned end of what is mapped for it */
    uint64_t rlim[16][2];             /* setrlimit's values (cur, max) where rlim_set has */
    uint32_t rlim_set;                /* the bit; the default otherwise (mem.c) */
};

/* The process table (process.c). Pids count up from 1 and wrap to 2 after
 * UNIX_PID_MAX, skipping numbers in use as a pid, process group or session. */
#define UNIX_PID_MAX 32768
#define UNIX_MAX_PROCS 1024               /* the system-wide limit (fork: EAGAIN) */
struct proc *proc_create(struct proc *parent);   /* a child of parent (NULL: init); NULL
                                                    at the limit or out of memory */
struct proc *proc_find(int pid);                 /* a live or zombie process, or NULL */
uint64_t proc_rlimit_cur(const struct proc *p, unsigned res);   /* mem.c: soft limit */
#define LINUX_RLIMIT_NPROC 6
struct proc *proc_next(const struct proc *after); /* the one after (NULL: the first) */
uint64_t proc_forks(void);                       /* processes created since boot */
void proc_orphan_children(struct proc *p);       /* p exits: init (pid 1) adopts them */
void proc_free(struct proc *p);                  /* out of the table; reaped */
/* Visit every process (live or zombie) in the table; fn may not free. */
void proc_for_each(void (*fn)(struct proc *p, void *arg), void *arg);

/* Threads of processes (thread.c): the one of an ondol thread id, a new one (tid is its
 * ondol thread, added to p's list), one freed (its wait dropped). */
#define UTHREAD_BUCKETS 64
extern struct uthread *uthread_buckets[UTHREAD_BUCKETS];   /* by tid; thread.c keeps them */
static inline struct uthread *uthread_find(int tid)      /* inline: every call does it */
{
    for (struct uthread *t = uthread_buckets[(unsigned)tid % UTHREAD_BUCKETS]; t;
         t = t->next_hash)
        if (t->tid == tid)
            return t;
    return NULL;
}
struct uthread *uthread_new(struct proc *p, int tid, int ltid);
/* t, new (fork, clone, exec), runs on the CPUs `from` may run on, as on Linux (mem.c);
 * from NULL: on every CPU. */
void thread_inherit_affinity(struct uthread *t, const struct uthread *from);
void uthread_free(struct uthread *t);
/* A freed thread stays readable (gone is set) until the runtime calls uthread_collect
 * after the entry that freed it, so a handler that ended its own thread can still return. */
void uthread_collect(void);

/* futex.c: a thread's waits are forgotten when it goes (uthread_free); at a thread's exit
 * its clear_child_tid word becomes 0 and one waiter there wakes. */
void futex_forget(struct uthread *t);
void futex_clear_child_tid(struct uthread *t);
/* The Linux tid of a thread other than a process's first: above every pid. */
#define UNIX_TID_BASE (UNIX_PID_MAX + 1)
void proc_end_task(struct proc *p);
/* Is c a vfork (or clone with CLONE_VFORK) whose caller waits for its child? Signals do
 * not end that wait (Linux waits killably): they are delivered when it returns. */
bool proc_vfork_call(const struct ucall *c);
/* Statistics (stats.c): a reaped process's calls are kept in a total; the record of
 * every count goes to the result stream (before a power-off). */
void stats_reaped(const struct proc *p);
void unix_stats_write(void);     /* every thread and the task end (exec, exit) */
/* The lifecycle (lifecycle.c, exec.c). exec_image: replace p's program by the ELF file
 * (static, or dynamic with its interpreter: exec_interp.c) at path with these argument
 * and environment strings (each an array of pointers into the server's memory,
 * NULL-terminated): a new task with one thread, p's old task ended.
 * The new thread keeps caller's blocked signals (execve keeps the mask; NULL for init:
 * none). 0 or -errno; on error p is unchanged. */
long exec_image(struct proc *p, const struct uthread *caller, const char *path,
                const char *const *argv, const char *const *envp);
/* exec_image's steps: run `file` for execve(execfn, argv, envp), `depth` interpreters
 * deep (exec.c; above EXEC_MAX_DEPTH, -ELOOP as Linux's exec_binprm), and a "#!" script's
 * part (exec_script.c): exec_file of its interpreter with Linux's argv. */
#define EXEC_MAX_DEPTH 5
long exec_file(struct proc *p, const struct uthread *caller, const char *file,
               const char *execfn, const char *const *argv, const char *const *envp,
               int depth);
bool exec_is_script(const struct inode *ino);
long exec_script(struct proc *p, const struct uthread *caller, const struct inode *script,
                 const char *file, const char *execfn, const char *const *argv,
                 const char *const *envp, int depth);

#endif
