/* The scheduler (sched.c): ready queues, switching, ticks, sleeping and waking threads. */
#ifndef SCHED_H
#define SCHED_H
#include <ondol/abi.h>
#include "klock.h"
#include "pcnt.h"
#include "thread.h"
#include "types.h"

void sched_init(void);
__attribute__((noreturn)) void sched_start(void);
void schedule(void);
/* t (blocked, sleeping, or new) is queued where it should run; from any CPU, with or
 * without the BKL; nothing when another waker made it ready already. */
void make_ready(struct thread *t);
/* t, new and never run, made in another task than the caller's (the UNIX server's new
 * Linux process or thread: fwd_thread_start), is queued on an idle CPU it may use, else as
 * make_ready. A thread a task makes for itself starts with make_ready, on its maker's CPU
 * when that has nothing queued, for the IPC direct switch between them (docs/smp.md,
 * "Scheduling"). */
void make_ready_new(struct thread *t);
/* Until no CPU runs t or is still on its kernel stack (t->on_cpu clear): before moving
 * it to another CPU (a waker's placement), or freeing it; never inside a switch, and never
 * for a thread on the caller's own CPU. Called with no run-queue lock held. */
void sched_wait_off_cpu(const struct thread *t);
/* IPC's wake-up and switch (ipc.c): the current thread, blocked, switches away after t is
 * made ready, with one acquisition of the run-queue lock when t stays on this CPU. The
 * ipc locks of both threads, held on entry, are let go once t is ready, before the
 * switch. */
void make_ready_and_schedule(struct thread *t);
struct thread *current_thread(void);
void sched_set_priority(struct thread *t, int prio);
/* A blocked thread t (its ipc lock held) moved to this CPU if its own idles: IPC's
 * forwarded calls switch to it directly then instead of waking it there (sched.c). */
bool sched_pull_blocked(struct thread *t);
void sched_tick(void);
/* THREAD_CTL_STOP: t stops at its next return to user mode (a thread blocked in the
 * kernel first finishes its call). 1 when it is stopped already, 0 when pending, E_INVAL
 * when it is being killed or interrupted. */
int thread_stop(struct thread *t);
/* t is killed: it exits at its next exit check, woken if it waits, at once (by the
 * reschedule IPI) if it runs on another CPU. */
void thread_kill(struct thread *t);
/* The reschedule IPI to t's CPU if t runs on another one (it has a kill, stop or
 * interrupt to act on). */
void thread_poke(const struct thread *t);
/* THREAD_CTL_RESUME: a stopped thread goes on; a pending stop is cancelled. */
void thread_resume(struct thread *t);
/* Resched / killed / a direct IPC switch to finish, before returning to user: one test
 * of the thread's byte and the CPU's two when there is nothing to do (inline: every
 * system call runs it), the loop out of line. */
void sched_exit_checks_loop(struct cpu *c);
static inline void sched_kernel_exit_checks(void)
{
    struct cpu *c = this_cpu();
    if (c->current->killed | c->exit_work)
        sched_exit_checks_loop(c);
}
/* The exit checks, then the BKL let go if this CPU holds it: sched_leave_kernel's work
 * when there is more than a plain release (out of line). */
void sched_leave_slow(struct cpu *c);
/* The last kernel step of a system call, on the returning thread's own stack: the probe
 * stops, the exit checks, the lock goes if held (a call may have run without it, or
 * switched to a thread that never took it). One test for all: the exit work and the
 * CPU's BKL byte are one word (struct cpu's leave_work), 0 when the lock is held plainly
 * and nothing else is to do. kernel_exit_to_user (entry.S's exit_to_user) is this. */
static inline void sched_leave_kernel(void)
{
    pcnt_probe_stop(PROBE_SYSCALL);
    struct cpu *c = this_cpu();
    if (c->current->killed | c->leave_work)
        sched_leave_slow(c);
    else
        kernel_unlock_plain(c);
}
extern u64 slice_ticks;
u64 ticks_now(void);

int thread_sleep(u64 ticks);                /* 0 or WAIT_KILLED; 0 ticks: just yield */
void thread_wake(struct thread *t, int result);           /* from any blocked state */
/* t off its wait queue and the sleep list, its state kept. The tests without a lock are
 * hints (sched.c tests again under the locks): inline, so that a thread on no queue and
 * without a timeout (an IPC partner, on the DTS-off path twice a round trip) costs no
 * call. */
void thread_unblock_slow(struct thread *t);
static inline void thread_unblock(struct thread *t)
{
    if ((uintptr_t)t->waiting_on | __atomic_load_n(&t->sleeping, __ATOMIC_RELAXED))
        thread_unblock_slow(t);
}

/* The highest priority with a thread ready on this CPU, or -1 (the IPC priority rule). */
int rq_highest_prio(void);
/* SYS_THREAD_AFFINITY: 0, or E_INVAL when mask names no CPU that schedules threads. */
int sched_set_affinity(struct thread *t, cpumask_t mask);
extern bool smp_sched;                      /* option smp_sched */
extern cpumask_t sched_cpus;                     /* CPUs that schedule threads, bit n = cpus[n] */
unsigned cpus_scheduling(void);             /* CPUs that run (or will run) threads */
void sched_release_aps(void);    /* the bootstrap CPU: the others join; returns once they have */
__attribute__((noreturn)) void sched_ap_main(void);   /* a started CPU (smp.c) */
void rq_add(struct thread *t);
void sleep_until(struct thread *t, u64 timeout_ticks);    /* no-op for WAIT_FOREVER */
#endif
