/* Threads, tasks, the scheduler and wait queues. */
#ifndef SCHED_H
#define SCHED_H
#include <ondol/abi.h>
#include "cpu.h"
#include "idtable.h"
#include "mm.h"
#include "trap.h"
#include "types.h"

#define KSTACK_PAGES 2
#define KSTACK_SIZE (KSTACK_PAGES * PAGE_SIZE)
#define WAIT_FOREVER UINT64_MAX
#define WAIT_KILLED  (-1000)          /* internal: the waiter's task is being torn down */

enum thread_state { T_READY = TS_READY, T_RUNNING = TS_RUNNING, T_BLOCKED = TS_BLOCKED,
                    T_SLEEPING = TS_SLEEPING, T_ZOMBIE = TS_ZOMBIE };

struct thread;
struct waitq {
    struct thread *head, *tail;
};

struct task;

/* x87/SSE state as saved by fxsave: 512 bytes, 16-byte aligned. */
struct fpu_state {
    u8 bytes[512];
} __attribute__((aligned(16)));

struct thread {
    struct fpu_state fpu;              /* first: keeps the 16-byte alignment fxsave needs */
    int tid;
    enum thread_state state;
    int prio;
    struct task *task;                 /* NULL for kernel threads (idle) */
    u64 kstack;                        /* lowest address of the kernel stack */
    u64 ksp;                           /* saved stack pointer while switched out */
    u32 slice_left;
    u64 ticks;                         /* timer ticks spent running */
    bool killed;                       /* exit at the next kernel exit or wake-up */
    bool on_cpu;                       /* still running on its stack (SMP-safe freeing) */
    int exit_status;
    /* exactly one of: ready queue, wait queue, nothing */
    struct thread *q_next, *q_prev;
    struct waitq *waiting_on;
    int wait_result;
    /* sleep / timeout list */
    struct thread *sleep_next, *sleep_prev;
    bool sleeping;
    u64 wake_tick;
    struct waitq joiners;
    struct thread *task_next;          /* all threads of the task */

    struct trapframe *tf;              /* user registers, at the top of the kernel stack */
    bool resume_via_tf;                /* switched out with no kernel continuation: it
                                          resumes by leaving the kernel through tf */
    /* IPC state; docs/ipc.md maps these to P1's TCB fields */
    u8 ipc_state;                      /* IPC_IDLE / IPC_SENDING / IPC_RECEIVING */
    bool ipc_call;                     /* the pending send is the first half of a call */
    int send_to;                       /* P1 sbtid: receiver this blocked sender waits for */
    int recv_from;                     /* P1 rbtid: sender this receiver waits for (0 = any) */
    int rwtid;                         /* P1 rwtid: who satisfied the last receive-from-any */
    int reply_to;                      /* one-shot reply right: the last sender received */
    u64 utcb;                          /* user address of struct ipc_utcb, or 0 */
    u64 ipc_flags;                     /* IPC_SEND_BUF / IPC_RECV_BUF of the pending op */
    struct waitq senders;              /* senders blocked on this thread, FIFO */
    struct waitq receivers;            /* receivers waiting for a message from this thread */
};

struct task {
    int id;
    char name[NAME_LEN];
    struct aspace *as;
    struct task *parent;
    struct thread *threads;            /* list through task_next, zombies included */
    int live_threads;
    bool exiting, privileged, zombie;
    int exit_status;
    struct waitq child_exit;           /* the parent waits here for any child */
    u64 entry, stack_top;
    int grants[32];                    /* threads this task may send to (docs/ipc.md) */
    int ngrants;
};

/* Big kernel lock: the kernel is non-preemptive and serialised (see docs/architecture.md).
 * Inline: it is taken and released on every system call. */
extern struct spinlock kernel_bkl;
extern volatile int kernel_bkl_owner;
static inline void kernel_lock(void)
{
    spin_lock(&kernel_bkl);
    kernel_bkl_owner = this_cpu()->id;
}
static inline void kernel_unlock(void)
{
    kernel_bkl_owner = -1;
    spin_unlock(&kernel_bkl);
}
static inline bool kernel_lock_held(void) { return kernel_bkl_owner == this_cpu()->id; }

/* fpu.c-style helpers (sched.c): eager save/restore on every switch */
void fpu_init_template(void);
void fpu_init_thread(struct thread *t);

/* sched.c */
void sched_init(void);
__attribute__((noreturn)) void sched_start(void);
void schedule(void);
void make_ready(struct thread *t);
struct thread *current_thread(void);
void sched_set_priority(struct thread *t, int prio);
void sched_tick(void);
void sched_kernel_exit_checks(void);        /* resched / killed, before returning to user */
extern u64 slice_ticks;

/* waitq / sleeping */
int waitq_sleep(struct waitq *q, u64 timeout_ticks);   /* 0, E_TIMEOUT, or WAIT_KILLED */
void waitq_wake_all(struct waitq *q, int result);
bool waitq_wake_one(struct waitq *q, int result);
int thread_sleep(u64 ticks);
void thread_wake(struct thread *t, int result);           /* from any blocked state */
void thread_unblock(struct thread *t);     /* off wait queue and sleep list, state kept */

/* Wait queues are FIFO lists through q_next/q_prev; a thread is on at most one. */
static inline void waitq_append(struct waitq *q, struct thread *t)
{
    t->q_next = NULL;
    t->q_prev = q->tail;
    if (q->tail)
        q->tail->q_next = t;
    else
        q->head = t;
    q->tail = t;
    t->waiting_on = q;
}

static inline void waitq_remove(struct waitq *q, struct thread *t)
{
    if (t->q_prev)
        t->q_prev->q_next = t->q_next;
    else
        q->head = t->q_next;
    if (t->q_next)
        t->q_next->q_prev = t->q_prev;
    else
        q->tail = t->q_prev;
    t->q_next = t->q_prev = NULL;
    t->waiting_on = NULL;
}
/* The highest priority with a ready thread, or -1: inline for the IPC priority rule. */
extern u64 rq_words, rq_bitmap[(PRIO_MAX + 1) / 64];
static inline int rq_highest_prio(void)
{
    if (!rq_words)
        return -1;
    int w = 63 - __builtin_clzll(rq_words);
    return w * 64 + 63 - __builtin_clzll(rq_bitmap[w]);
}
void rq_add(struct thread *t);
void sleep_until(struct thread *t, u64 timeout_ticks);

/* thread.c */
struct thread *thread_create(struct task *task, u64 entry, u64 user_sp, u64 arg0, u64 arg1, int prio);
struct thread *thread_create_kernel(void (*fn)(void), int prio, const char *why);
__attribute__((noreturn)) void thread_exit(int status);
/* Thread ids: inline because every IPC looks its partner up. */
#define THREAD_ID_BITS 12
extern struct idtable thread_ids;
static inline struct thread *thread_lookup(int tid)
{
    return idtable_lookup(&thread_ids, tid, THREAD_ID_BITS);
}
int thread_join(int tid, int *status);
void thread_free(struct thread *t);
int thread_count(void);
struct thread *thread_at(int index);      /* for ps: NULL for an empty slot */
void thread_first_run(void);

/* task.c */
long task_spawn(struct task *parent, const char *prog, char *const argv[], int argc, bool privileged);
long task_wait(struct task *parent, int id, int *status);
void task_thread_exited(struct thread *t);
void task_kill(struct task *task, int status);
struct task *task_lookup(int id);
u64 task_count(void);
u64 ticks_now(void);
/* Eager x87/SSE switch: the kernel never touches these registers (-mgeneral-regs-only),
 * so a user thread's state stays live in the CPU until another user thread runs. */
static inline void fpu_switch(struct thread *prev, struct thread *next)
{
    if (prev->task)
        __asm__ volatile("fxsave %0" : "=m"(prev->fpu));
    if (next->task)
        __asm__ volatile("fxrstor %0" : : "m"(next->fpu));
}
#endif
