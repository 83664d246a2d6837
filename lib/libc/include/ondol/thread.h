/*
 * User threads on top of SYS_THREAD_CREATE / SYS_THREAD_JOIN.
 *
 * thread_start() maps a stack with SYS_VM_MAP, starts `fn(arg)` on it at priority
 * `prio` (PRIO_INHERIT for the caller's) and fills *t. When fn returns, its return
 * value becomes the thread's exit status. thread_join() waits for the thread and
 * unmaps its stack. thread_start_on() uses a caller-provided stack instead (which
 * thread_join then leaves alone).
 *
 * Thread-local storage: `__thread` variables work in native programs. Every thread libc
 * starts (the main thread, thread_start/_on, task_clone_run's clone) has its own copy of
 * the program's TLS template, at the top of its stack (the main thread's in a static
 * area, or mapped when larger), and its FS base points at it (SYS_THREAD_TLS). A thread
 * made with the raw SYS_THREAD_CREATE / SYS_TASK_THREAD has none: it must not touch
 * `__thread` variables (or malloc with malloc_lock=lock-free). Threads with TLS take the
 * general IPC path (docs/ipc.md).
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

/* Calls fn(arg) when the calling thread ends through libc (fn returns from a thread
 * started by thread_start/_on); one registration a thread. 0, E_NOTSUP (the program
 * has no TLS) or E_INVAL (already registered). */
int thread_at_exit(void (*fn)(void *), void *arg);

/* The task of live thread tid, any task's (0: a kernel thread), or E_SRCH once it has
 * exited or never was: a scan of the kernel's threads (SYS_PS), for rare use. */
long thread_task_of(int tid);

/* Thread id of the caller (SYS_SELF). */
int thread_self(void);

/* A fork for native programs: a new task `name` whose memory is a copy-on-write clone of
 * the caller's (SYS_TASK_CREATE, SYS_VM_CLONE, SYS_TASK_THREAD), running fn(arg) on its
 * copy of the caller's stack region whose top is stack_top (which the caller must not be
 * running on). Returns the new task's id, or a negative E_* code. */
long task_clone_run(const char *name, void (*fn)(void *), void *stack_top, void *arg);

#endif
