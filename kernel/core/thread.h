/* Threads (thread.c): the TCB, creation, exit, join and the thread-id table. */
#ifndef THREAD_H
#define THREAD_H
#include <ondol/abi.h>
#include "arch.h"
#include "idtable.h"
#include "spinlock.h"
#include "types.h"

#define KSTACK_PAGES 2
#define KSTACK_SIZE (KSTACK_PAGES * PAGE_SIZE)

enum thread_state { T_READY = TS_READY, T_RUNNING = TS_RUNNING, T_BLOCKED = TS_BLOCKED,
                    T_SLEEPING = TS_SLEEPING, T_ZOMBIE = TS_ZOMBIE };

struct thread;
struct task;

/* A FIFO of threads linked through their q_next/q_prev; the operations are in waitq.h.
 * Defined here because every thread embeds wait queues (joiners, IPC senders/receivers). */
struct waitq {
    struct thread *head, *tail;
};

struct thread {
    struct fpu_state fpu;              /* first: keeps the 16-byte alignment fpu_save needs */
    int tid;
    enum thread_state state;
    int prio;
    struct task *task;                 /* NULL for kernel threads (idle) */
    u64 kstack;                        /* lowest address of the kernel stack */
    u64 ksp;                           /* saved stack pointer while switched out */
    u32 slice_left;
    u64 ticks;                         /* timer ticks spent running */
    bool killed;                       /* exit at the next kernel exit or wake-up */
    bool user_bases;                   /* a native thread with an FS or GS base of its own
                                          (TLS): the IPC fastpath leaves it to the general
                                          path, which loads the bases (one 16-bit compare
                                          tests it with killed, another with sleeping:
                                          fastpath_layout.h) */
    u8 sleeping;                       /* SLEEP_*: its timed wait's entry (below) */
    u8 cpu;                            /* the CPU it runs on, or is queued or woken on
                                          (sched.c); changed only while it does not run.
                                          The IPC fastpath compares the four bytes killed,
                                          user_bases, sleeping, cpu of both partners at once */
    u8 interrupt;                      /* with killed, what to do instead of exiting (KILL_*):
                                          make a forwarded "interrupted" call (fwd.c; Linux
                                          threads only), or stop (THREAD_CTL_STOP) */
    int exit_status;
    /* exactly one of: ready queue, wait queue, nothing */
    struct thread *q_next, *q_prev;
    struct waitq *waiting_on;
    int wait_result;
    u32 wait_gen;                      /* changes each time a timed wait ends (sched.c):
                                          the clock, having taken a due entry, ends the
                                          wait only if it is the same (in a hole: the
                                          fastpath's offsets stay) */
    /* sleep / timeout list */
    struct thread *sleep_next, *sleep_prev;
    u64 wake_tick;
    u64 futex_addr;                    /* the user word it waits on in SYS_FUTEX_WAIT, or 0 */
    struct waitq joiners;
    struct thread *task_next;          /* all threads of the task */

    struct trapframe *tf;              /* user registers, at the top of the kernel stack */
    bool resume_via_tf;                /* switched out with no kernel continuation: it
                                          resumes by leaving the kernel through tf */
    /* IPC state; docs/ipc.md maps these to P1's TCB fields */
    u8 ipc_state;                      /* IPC_IDLE / IPC_SENDING / IPC_RECEIVING */
    bool ipc_call;                     /* the pending send is the first half of a call */
    u8 on_cpu;                         /* some CPU runs it or is still on its kernel stack:
                                          set when it becomes a CPU's current thread, cleared
                                          (release) once that CPU has left its stack; no
                                          other CPU takes it or switches to it meanwhile
                                          (sched.c: a waker moving it waits, a thief skips
                                          it).
                                          Next to the IPC bytes: the fastpath writes it with
                                          them (fastpath_layout.h) */
    int send_to;                       /* P1 sbtid: receiver this blocked sender waits for */
    int recv_from;                     /* P1 rbtid: sender this receiver waits for (0 = any) */
    int rwtid;                         /* P1 rwtid: who satisfied the last receive-from-any */
    int reply_to;                      /* one-shot reply right: the last sender received */
    u64 utcb;                          /* user address of struct ipc_utcb, or 0 */
    u64 ipc_flags;                     /* IPC_SEND_BUF / IPC_RECV_BUF of the pending op */
    struct waitq senders;              /* senders blocked on this thread, FIFO */
    struct waitq receivers;            /* closed receives waiting for a message from it */
    /* Linux forwarding (kernel/ipc/fwd.c, docs/unix.md) */
    u8 linux;                          /* of a Linux task (nonzero): its syscall entry,
                                          ENTRY_LINUX_FWD or ENTRY_LINUX_IK (cpu.h) */
    u8 fwd;                            /* FWD_NONE, or the kind of forwarded call pending */
    u64 fwd_words[IPC_MRS];            /* its message, built at the trap */
    u64 fs_base;                       /* user FS base: a Linux thread's (arch_prctl), a
                                          native thread's TLS (SYS_THREAD_TLS), else 0 */
    u64 gs_base;                       /* user GS base */
    u8 user_ctx;                       /* USER_CTX_*: what thread_user_context loads */
    bool stopped;                      /* held at its return to user mode (THREAD_CTL_STOP) */
    u64 pager_refused;                 /* page | 1 its pager refused: the next fault on
                                          it is the thread's own (mm/pager.c) */
    long pager_error;                  /* why its pager's last answer was not taken */
    cpumask_t affinity;                /* the CPUs it may run on, bit n = cpus[n]
                                          (SYS_THREAD_AFFINITY); all by default */
    int kill_task;                     /* nonzero: the status of a kill of its whole task
                                          that it makes itself on its way out (sched.c
                                          leave_killed): set by an IPC operation that ends
                                          it so (fwd.c), which holds ipc locks the kill's
                                          wake-ups of the other threads would take */
    struct thread *reply_head;         /* the callers waiting for its reply (it took their
                                          calls, deferred or not), the latest first, linked
                                          through their reply_next (ipc.c await_reply) */
    struct thread *reply_next;         /* on the reply_head list of the thread whose reply
                                          it waits for (recv_from): the next; meaningful
                                          only while it is on it */
    struct spinlock ipc_lock;          /* class ipc: its IPC rendezvous state (ipc_state,
                                          ipc_call, send_to, recv_from, rwtid, reply_to,
                                          ipc_flags, fwd), its senders and receivers
                                          queues and reply_head list with the links of
                                          the threads on them, and while it is blocked
                                          in IPC its frame's message registers and rax
                                          and its resume_via_tf
                                          (ipc.c; docs/smp.md). Last, and type-stable
                                          (thread.c): the fastpath takes it on a thread
                                          it read from the table without a lock */
};

/* thread->sleeping: the entry of a timed wait (sleep or timeout). Any value but NONE makes
 * the IPC fastpath leave the thread to the general path, which ends the wait through
 * thread_unblock. */
enum { SLEEP_NONE = 0, SLEEP_LISTED = 1, SLEEP_DUE = 2 /* taken off by the clock, which
                                                          has yet to act on it */ };

/* thread->interrupt: what `killed` asks for. Every kill sets KILL_EXIT, so a kill wins. */
enum { KILL_EXIT = 0, KILL_INTERRUPT = 1, KILL_STOP = 2 };
/* Whether t runs (or is still leaving its stack) on its CPU: it runs only on cpus[t->cpu],
 * and that CPU's current changes only under the kernel lock, as the switch finishes. */
static inline bool thread_on_cpu(const struct thread *t) { return cpus[t->cpu].current == t; }

/* Whether the thread is really being killed (a pending stop or interrupt is not): waits
 * in the kernel end early only for this. */
static inline bool thread_dying(const struct thread *t) { return t->killed && t->interrupt != KILL_STOP; }

/* thread->user_ctx: a Linux thread (its syscall entry, FS and GS bases), or a native thread
 * with an FS or GS base of its own (SYS_THREAD_CTL). 0: ondol's entry and zero bases. */
#define USER_CTX_LINUX 0x1u
#define USER_CTX_BASES 0x2u
/* Set t's user FS and GS bases (user addresses), loaded when it next runs. A native thread
 * with a non-zero base is user_bases: the assembly IPC fastpath leaves it to the general
 * path (it switches without loading bases). */
void thread_set_bases(struct thread *t, u64 fs_base, u64 gs_base);

/* A user thread of task starting at entry (arg0, arg1 in rdi, rsi), made ready at once
 * (make_ready: on the caller's CPU when that has nothing queued). NULL when out of memory. */
struct thread *thread_create(struct task *task, u64 entry, u64 user_sp, u64 arg0, u64 arg1, int prio);
/* The same, left blocked: the caller finishes its frame, then makes it ready (make_ready,
 * or make_ready_new for a thread made in another task, sched.h). */
struct thread *thread_create_blocked(struct task *task, u64 entry, u64 user_sp, u64 arg0,
                                     u64 arg1, int prio);
/* thread_create_blocked's steps, for a creation without the BKL (fwd.c): thread_prepare
 * makes a user thread's TCB, kernel stack and first frame (entry; arg0, arg1 in rdi, rsi),
 * with no task and no id yet (NULL when out of memory); thread_attach gives it its task
 * and the entry its task's kind asks for; thread_publish gives it an id and makes it
 * findable (the IPC fastpath's slots included), whole: false when ids run out. A thread
 * never published goes with thread_discard (it takes the BKL if not held). */
struct thread *thread_prepare(u64 entry, u64 user_sp, u64 arg0, u64 arg1, int prio);
void thread_attach(struct thread *t, struct task *task);
bool thread_publish(struct thread *t);
void thread_discard(struct thread *t);
/* A kernel thread (no task) that starts in fn; prio -1 is below every user priority (idle). */
struct thread *thread_create_kernel(void (*fn)(void), int prio);
__attribute__((noreturn)) void thread_exit(int status);
int thread_join(int tid, int *status);
void thread_free(struct thread *t);
int thread_count(void);
struct thread *thread_at(int index);      /* for ps: NULL for an empty slot */
/* A kernel thread's first step (sched.c): the switch finished, the BKL taken (kernel
 * threads run holding it). */
void thread_first_run(void);

/* Thread ids: inline because every IPC looks its partner up. */
#define THREAD_ID_BITS 12
extern struct idtable thread_ids;
extern void *thread_objs[1 << THREAD_ID_BITS];   /* thread_ids' slots */
static inline struct thread *thread_lookup(int tid)
{
    return idtable_lookup(&thread_ids, tid, THREAD_ID_BITS);
}
/* The IPC fastpath's copy of the table's slots (thread.c): each live thread, thread_none
 * (its ipc lock always held) in an empty slot. Read without the BKL: a TCB found there may
 * be freed and reused meanwhile but stays a TCB from ipc_lock on, and its id is cleared
 * under that lock (thread_free), so a reader compares the id only under it. */
extern struct thread *thread_fast[1 << THREAD_ID_BITS];
extern struct thread thread_none;
static inline struct thread *thread_slot(int tid)
{
    return __atomic_load_n(&thread_fast[tid & ((1 << THREAD_ID_BITS) - 1)], __ATOMIC_ACQUIRE);
}

/* The live thread `tid` with its ipc lock held, found without the BKL as the IPC
 * fastpath finds a partner: its slot read, its id compared without the lock as a hint (an
 * empty slot takes no lock) and again under it. The lock is tried once, never waited for:
 * a wait answers IPI requests, among them the grace before an emptied thread slab's frame
 * goes back, so the TCB could be freed memory by the time the lock came (with interrupts
 * off and no wait it stays one meanwhile). NULL when the lock is busy (the caller's own
 * included) or the slot holds no live thread of this id. */
static inline struct thread *thread_trylock(int tid)
{
    struct thread *t = thread_slot(tid);
    if (__atomic_load_n(&t->tid, __ATOMIC_RELAXED) != tid || !spin_trylock(&t->ipc_lock))
        return NULL;
    if (t->tid == tid && t->task && t->state != T_ZOMBIE)
        return t;
    spin_unlock(&t->ipc_lock);
    return NULL;
}

/* Lazy x87/SSE switching. The registers hold the state of c->fpu_owner; CR0.TS is clear
 * only while the owner runs, so any other thread's first x87/SSE instruction traps (#NM)
 * into thread_fpu_claim, which moves the state. A switch costs two compares, and a CR0
 * write only when TS is clear and the next thread is not the owner; TS stays set when
 * the owner returns (it traps once if it uses the registers again), so threads that never
 * use them, like most IPC partners, switch without touching CR0. Kernel threads never
 * use them. A thread moving to another CPU first gets its state back (thread_fpu_evict). */
static inline void thread_fpu_switch(struct cpu *c, struct thread *next)
{
    if (!c->fpu_ts && c->fpu_owner != next) {
        fpu_trap_on();
        c->fpu_ts = true;
    }
}
void thread_fpu_claim(struct cpu *c, struct thread *t);   /* #NM from t in user mode */
/* Before t (not running) moves to another CPU: its x87/SSE state, if it still lives in the
 * registers of cpus[t->cpu], goes back to t->fpu (by a call IPI there when that is not this
 * CPU). False when that CPU did not answer: t must stay where it is. */
bool thread_fpu_evict(struct thread *t);
/* The idle loop, before it halts: the x87/SSE state this CPU holds back to its owner. */
void thread_fpu_idle(struct cpu *c);
#endif
