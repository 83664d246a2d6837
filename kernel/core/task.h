/* Tasks (task.c): an address space plus threads, spawned from a boot-archive program. */
#ifndef TASK_H
#define TASK_H
#include <ondol/abi.h>
#include "thread.h"
#include "types.h"
#include "vm.h"

struct task {
    int id;
    char name[NAME_LEN];
    struct aspace *as;
    struct task *parent;
    struct thread *threads;            /* list through task_next, zombies included */
    int live_threads;
    bool exiting, privileged, zombie;
    int exit_status;
    int max_prio;                      /* priority ceiling (L4's MCP): no thread above it */
    struct waitq child_exit;           /* the parent waits here for any child */
    u64 entry, stack_top;
    int grants[32];                    /* threads this task may send to (docs/ipc.md) */
    int ngrants;
    int linux_server;                  /* 0: native; else the thread its Linux system calls
                                          and faults are forwarded to (docs/unix.md) */
    int fwd_fast_server;               /* Linux: the thread the IPC fastpath sends its calls
                                          to, linux_server; 0 when it has routed calls
                                          (fwd.c), which sends them to the fastpath's
                                          routing branch: unrouted ones pay nothing */
    u64 fwd_routed;                    /* Linux: its call numbers (< 64) that go to its
                                          server's helper on the calling CPU (fwd.c) */
    struct task *children, *sibling;   /* the tasks it controls (task.c); after the fields
                                          the IPC fastpath reads (fastpath_layout.h) */
    u64 fwd_helper_calls;              /* a Linux server's calls for its helpers (fwd.c) */
};

/* Load the user context t needs on CPU c (syscall entry, FS and GS bases) before it runs:
 * on every switch except the IPC fastpath's, which never involves a native thread with
 * bases (user_bases) and switches a Linux thread's on its forwarded-call routes. Between
 * native threads without bases (both 0, ondol's entry) it costs one test. */
static inline void thread_user_context(struct cpu *c, const struct thread *t)
{
    if (t->user_ctx | c->user_ctx)
        cpu_load_user_context(c, t->linux, t->fs_base, t->gs_base, t->user_ctx);
}

long task_spawn(struct task *parent, const char *prog, char *const argv[], int argc, bool privileged,
                int max_prio);
/* Task creation's two halves (docs/smp.md "Done: task creation and file objects without
 * the BKL", "Done: task creation, thread starts and waits without the BKL"):
 * task_aspace_unlocked makes the new task's address space without the kernel lock (the
 * frame allocator, the asid table and the object caches have their own locks, and nothing
 * else sees it yet); NULL when memory runs out or with mmu=off. task_create_empty makes
 * an empty task (no threads, no memory) on that address space, without the kernel lock
 * too (the task table's lock publishes it whole), or, under the lock, on one it makes
 * when given NULL (the one shared address space of mmu=off); a child of parent whose
 * threads may run at most at max_prio: its id, or E_NOMEM (the address space given then
 * goes). The caller must not reach the task but by its id: it may be killed as soon as
 * it exists. */
struct aspace *task_aspace_unlocked(void);
long task_create_empty(struct task *parent, const char *name, int max_prio, struct aspace *as);
/* Task `id` if `self` controls it (created it), else NULL with *err E_SRCH or E_PERM. */
struct task *task_controlled(struct task *self, int id, long *err);
struct aspace *task_hold_aspace(struct task *self, int id, int *owner, long *err, bool *quiet);
/* Without the kernel lock: fn(t, arg) under the task table's lock for task `id`, if self
 * controls it (task_hold_aspace's test), and fn's result; else E_SRCH or E_PERM. fn must
 * not sleep (it may take the locks listed after tasks, lockclass.def); what it reads of t
 * that the BKL still writes (live_threads) is read once,
 * as task_hold_aspace's quiet. */
long task_controlled_call(struct task *self, int id, long (*fn)(struct task *, void *), void *arg);
void tasks_each(void (*fn)(struct task *, void *), void *arg);   /* every task, zombies too */
/* SYS_TASK_WAIT, with or without the BKL: child `id` of parent (-1: any) that has ended,
 * collected (its id, *status its exit status), waiting for one to end if none has;
 * E_SRCH when id names no child, E_DEAD when the waiter is killed meanwhile. The waits
 * sleep on parent's child_exit under the task table's lock, which every waker takes:
 * a child's end, a handover, and through task_child_waits_lock a kill and the clock. */
long task_wait(struct task *parent, int id, int *status);
/* task_wait that never sleeps: 0 when child id (-1: any) has not ended yet. */
long task_reap(struct task *parent, int id);
/* Sleep until a child of parent ends or timeout ticks pass (waitq_sleep's results), at
 * once (0) when one has ended already: the IK server's service thread. */
int task_child_exit_sleep(struct task *parent, u64 timeout);
/* Held by a waker that may find its thread in a wait for a child's end (ipc.c, inside
 * the thread's ipc locks: a kill, the clock's timeout). */
void task_child_waits_lock(void);
void task_child_waits_unlock(void);
/* SYS_TASK_HANDOVER: task `id`, which self controls, becomes a child of task `to_id`, with
 * every right that gives (control, waiting for it, sending to its threads); self keeps
 * none. Its priority ceiling becomes at most to's. E_SRCH / E_PERM (not controlled, or a
 * privileged task to an unprivileged one) / E_INVAL (to is the task or its descendant,
 * or has no threads yet). */
long task_handover(struct task *self, int id, int to_id);
void task_thread_exited(struct thread *t);
/* A task's list of threads (task_next) and its live count, under the task table's lock
 * (task_thread_link_locked: held by the caller, as task_controlled_call's fn holds it),
 * beside readers under the BKL: a new thread joins at the head; thread_join unlinks a
 * zombie, under the BKL. */
void task_thread_link_locked(struct task *task, struct thread *t);
void task_thread_link(struct task *task, struct thread *t);
void task_thread_unlink(struct task *task, struct thread *t);
void task_kill(struct task *task, int status);
/* task_kill, sparing thread `spare` (which the caller ends itself) instead of the caller */
void task_kill_except(struct task *task, int status, struct thread *spare);
long task_kill_other(struct task *killer, int id);
struct task *task_lookup(int id);
u64 task_count(void);
#endif
