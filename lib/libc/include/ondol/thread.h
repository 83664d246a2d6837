/*
 * User threads on top of SYS_THREAD_CREATE / SYS_THREAD_JOIN.
 *
 * thread_start() maps a stack with SYS_VM_MAP, starts `fn(arg)` on it at priority
 * `prio` (PRIO_INHERIT for the caller's) and fills *t. When fn returns, its return
 * value becomes the thread's exit status. thread_join() waits for the thread and
 * unmaps its stack. thread_start_on() uses a caller-provided stack instead (which
 * thread_join then leaves alone).
 */
#ifndef ONDOL_THREAD_H
#define ONDOL_THREAD_H

#include <stddef.h>

#define THREAD_STACK_DEFAULT (64 * 1024)

struct thread {
    int tid;
    void *stack;          /* base of the stack mapping */
    size_t stack_size;
    int owns_stack;       /* 1 if thread_join must unmap it */
};

typedef int (*thread_fn)(void *arg);

/* Both return the thread id (> 0) or a negative E_* code. */
int thread_start(struct thread *t, thread_fn fn, void *arg, int prio, size_t stack_size);
int thread_start_on(struct thread *t, thread_fn fn, void *arg, int prio, void *stack,
                    size_t stack_size);
/* Returns 0 or a negative E_* code; *status (if non-NULL) gets the exit status. */
int thread_join(struct thread *t, int *status);

/* Thread id of the caller (SYS_SELF). */
int thread_self(void);

/* A fork for native programs: a new task `name` whose memory is a copy-on-write clone of
 * the caller's (SYS_TASK_CREATE, SYS_VM_CLONE, SYS_TASK_THREAD), running fn(arg) on its
 * copy of the caller's stack region whose top is stack_top (which the caller must not be
 * running on). Returns the new task's id, or a negative E_* code. */
long task_clone_run(const char *name, void (*fn)(void *), void *stack_top, void *arg);

#endif
