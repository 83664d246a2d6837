/*
 * The scheduler: 256 priorities (255 highest), round-robin within a priority, a time slice
 * of `slice` ticks, preemption when a slice ends or a higher-priority thread wakes. The
 * kernel is non-preemptive: switches happen only at explicit points (blocking, yield, and
 * just before returning to user mode).
 */
#include "arch.h"
#include "kernel.h"
#include "klock.h"
#include "pcnt.h"
#include "fwd.h"
#include "sched.h"
#include "task.h"
#include "thread.h"
#include "vm.h"
#include "waitq.h"

static struct thread *rq_head[PRIO_MAX + 1], *rq_tail[PRIO_MAX + 1];
u64 rq_bitmap[(PRIO_MAX + 1) / 64];
u64 rq_words;                        /* bit w set when rq_bitmap[w] != 0: O(1) lookup */
static struct thread *sleepers;      /* unsorted; scanned each tick */
static volatile u64 ticks;
u64 slice_ticks = 1;

/* ---- ready queues ------------------------------------------------------------------ */
/* Queue indices come from t->prio; only user and server threads (0..PRIO_MAX) are ever
 * queued. The idle thread (prio -1) never is: an index outside would write next to the
 * arrays and shift the bitmap by a negative amount. */
static void rq_push(struct thread *t)
{
    int p = t->prio;
    ASSERT(p >= 0 && p <= PRIO_MAX);
    t->q_next = NULL;
    t->q_prev = rq_tail[p];
    if (rq_tail[p])
        rq_tail[p]->q_next = t;
    else
        rq_head[p] = t;
    rq_tail[p] = t;
    rq_bitmap[p / 64] |= 1ull << (p % 64);
    rq_words |= 1ull << (p / 64);
}

static void rq_remove(struct thread *t)
{
    int p = t->prio;
    ASSERT(p >= 0 && p <= PRIO_MAX && rq_head[p]);
    if (t->q_prev)
        t->q_prev->q_next = t->q_next;
    else
        rq_head[p] = t->q_next;
    if (t->q_next)
        t->q_next->q_prev = t->q_prev;
    else
        rq_tail[p] = t->q_prev;
    t->q_next = t->q_prev = NULL;
    if (!rq_head[p]) {
        rq_bitmap[p / 64] &= ~(1ull << (p % 64));
        if (!rq_bitmap[p / 64])
            rq_words &= ~(1ull << (p / 64));
    }
}

void rq_add(struct thread *t)
{
    t->state = T_READY;
    rq_push(t);
}

struct thread *current_thread(void) { return this_cpu()->current; }

void make_ready(struct thread *t)
{
    t->state = T_READY;
    rq_push(t);
    struct thread *cur = current_thread();
    if (cur && (cur == this_cpu()->idle || t->prio > cur->prio))
        this_cpu()->need_resched = true;
}

/* A new priority for a user thread (never idle: it is READY without being queued). */
void sched_set_priority(struct thread *t, int prio)
{
    ASSERT(t != this_cpu()->idle && prio >= 0 && prio <= PRIO_MAX);
    if (t->state == T_READY) {
        rq_remove(t);
        t->prio = prio;
        rq_push(t);
    } else {
        t->prio = prio;
    }
    int top = rq_highest_prio();
    if (top > current_thread()->prio)
        this_cpu()->need_resched = true;
}

/* ---- switching ---------------------------------------------------------------------- */
extern void swtch(u64 *save_rsp, u64 new_rsp);

static void finish_switch(struct cpu *c, struct thread *prev)
{
    pcnt_probe_stop(PROBE_CTXSW);
    if (prev)
        prev->on_cpu = false;
    if (c->dead) {
        struct thread *d = c->dead;
        c->dead = NULL;
        thread_free(d);
    }
}

extern void thread_start(void);

/* A switch frame just below a thread's trapframe: swtch() "returns" into thread_start,
 * which leaves the kernel through the frame. Built only when the thread is switched to,
 * because while it ran, its stack below tf held live kernel frames. */
static u64 continuation_from_tf(struct thread *t)
{
    u64 *sp = (u64 *)t->tf;
    *--sp = (u64)thread_start;
    for (int i = 0; i < 6; i++)
        *--sp = 0;
    return (u64)sp;
}

static void switch_to(struct thread *prev, struct thread *next)
{
    struct cpu *c = this_cpu();
    u64 discard;
    c->current = next;
    next->on_cpu = true;
    cpu_set_kernel_stack(c, next->kstack + KSTACK_SIZE);
    if (next->resume_via_tf) {
        next->resume_via_tf = false;
        next->ksp = continuation_from_tf(next);
    }
    cpu_count_switch(next->task && aspace_switch(next->task->as));
    thread_user_context(c, next);
    thread_fpu_switch(c, next);
    if (pcnt_probes_on) {
        pcnt_abort(PROBE_SYSCALL);
        pcnt_abort(PROBE_IPC_SLOW);
        pcnt_abort(PROBE_VM_MAP);
        pcnt_abort(PROBE_VM_UNMAP);
        pcnt_start(PROBE_CTXSW, (u64)next->tid);
    }
    /* A thread blocked without a continuation is never resumed on this stack. */
    swtch(prev->resume_via_tf ? &discard : &prev->ksp, next->ksp);
    /* back on prev's stack: whoever switched to us left its own thread in `prev` slot */
    finish_switch(c, c->switched_from);
}

void schedule(void)
{
    struct cpu *c = this_cpu();
    struct thread *prev = c->current;
    c->need_resched = false;
    if (prev->state == T_RUNNING) {
        prev->state = T_READY;
        if (prev != c->idle)          /* idle is never queued: it runs when nothing else can */
            rq_push(prev);
    }
    int p = rq_highest_prio();
    struct thread *next = p >= 0 ? rq_head[p] : c->idle;
    if (p >= 0)
        rq_remove(next);
    next->state = T_RUNNING;
    if (next->slice_left == 0)
        next->slice_left = (u32)slice_ticks;
    if (next == prev)
        return;
    c->switched_from = prev;
    switch_to(prev, next);
}

/* Called by thread_start (entry.S) when a thread without a kernel continuation runs. */
void thread_first_run(void)
{
    struct cpu *c = this_cpu();
    finish_switch(c, c->switched_from);
}

/* Last kernel step of every system call (entry.S exit_to_user), on the returning thread's
 * own stack, just before its registers are restored. */
void kernel_exit_to_user(struct trapframe *tf)
{
    (void)tf;
    sched_leave_kernel();
}

static void idle_loop(void)
{
    struct cpu *c = this_cpu();
    finish_switch(c, c->switched_from);
    for (;;) {
        if (rq_highest_prio() >= 0) {
            schedule();
            continue;
        }
        kernel_unlock();
        wait_for_interrupt();
        kernel_lock();
    }
}

void sched_init(void)
{
    struct cpu *c = this_cpu();
    c->idle = thread_create_kernel(idle_loop, -1);
    ASSERT(c->idle);
}

void sched_start(void)
{
    struct cpu *c = this_cpu();
    u64 boot_sp;                       /* the boot stack is abandoned here */
    c->current = c->idle;
    c->idle->state = T_RUNNING;
    c->idle->on_cpu = true;
    c->switched_from = NULL;
    cpu_set_kernel_stack(c, c->idle->kstack + KSTACK_SIZE);
    swtch(&boot_sp, c->idle->ksp);
    panic("sched_start returned");
}

/* THREAD_CTL_STOP reached t at its return to user mode: it waits there, its registers
 * complete in its frame (the controller may read and write them), until THREAD_CTL_RESUME
 * or a kill wakes it; then the exit checks run again. */
static void stop_here(struct thread *t)
{
    t->killed = false;
    t->interrupt = KILL_EXIT;
    t->stopped = true;
    t->state = T_BLOCKED;
    schedule();
    t->stopped = false;
}

/* A killed thread exits, unless `killed` carries an interrupt of a Linux thread (fwd.c),
 * which makes its forwarded "interrupted" call instead (in IK form it returns here once
 * answered, and the thread goes on to user mode unless the answer killed it), or a stop.
 * Out of line: the exit check is one test on every return to user mode. */
static __attribute__((noinline, cold)) void leave_killed(struct thread *t)
{
    if (t->interrupt == KILL_STOP) {
        stop_here(t);
        return;
    }
    if (t->interrupt) {
        fwd_interrupt(t);
        if (!t->killed)
            return;
    }
    thread_exit(t->task ? t->task->exit_status : 0);
}

int thread_stop(struct thread *t)
{
    if (t->stopped)
        return 1;
    if (t->killed && t->interrupt != KILL_STOP)
        return E_INVAL;               /* being killed or interrupted */
    t->killed = true;
    t->interrupt = KILL_STOP;
    return 0;
}

void thread_resume(struct thread *t)
{
    if (t->stopped)
        thread_wake(t, 0);
    else if (t->killed && t->interrupt == KILL_STOP) {   /* the stop had not happened yet */
        t->killed = false;
        t->interrupt = KILL_EXIT;
    }
}

/* The exit checks once there is something to do: a kill (or stop, or interrupt) of the
 * running thread, or a reschedule; each may leave the other to do. */
/* Out of line even here, so that the exit of every system call (kernel_exit_to_user)
 * keeps its two-byte test without the loop's frame. */
__attribute__((noinline)) void sched_exit_checks_loop(struct cpu *c)
{
    for (;;) {
        struct thread *t = c->current;
        if (t->killed)
            leave_killed(t);
        else if (c->need_resched)
            schedule();
        else
            return;
    }
}

/* ---- sleeping and timeouts ----------------------------------------------------- */
u64 ticks_now(void) { return ticks; }

static void sleep_add(struct thread *t, u64 wake_tick)
{
    t->wake_tick = wake_tick;
    t->sleeping = true;
    t->sleep_prev = NULL;
    t->sleep_next = sleepers;
    if (sleepers)
        sleepers->sleep_prev = t;
    sleepers = t;
}

static void sleep_remove(struct thread *t)
{
    if (!t->sleeping)
        return;
    if (t->sleep_prev)
        t->sleep_prev->sleep_next = t->sleep_next;
    else
        sleepers = t->sleep_next;
    if (t->sleep_next)
        t->sleep_next->sleep_prev = t->sleep_prev;
    t->sleeping = false;
    t->sleep_next = t->sleep_prev = NULL;
}

void thread_unblock(struct thread *t)
{
    if (t->waiting_on)
        waitq_remove(t->waiting_on, t);
    sleep_remove(t);
}

void sleep_until(struct thread *t, u64 timeout)
{
    if (timeout != WAIT_FOREVER)
        sleep_add(t, ticks + MIN(timeout, UINT64_MAX - ticks));   /* saturate, never wrap */
}

/* Wake a blocked or sleeping thread with `result` as the value its wait returns. A thread
 * blocked without a kernel continuation (IPC) gets the result straight in its rax. */
void thread_wake(struct thread *t, int result)
{
    if (t->state != T_BLOCKED && t->state != T_SLEEPING)
        return;
    thread_unblock(t);
    t->wait_result = result;
    if (t->resume_via_tf) {
        t->tf->rax = (u64)(i64)result;
        t->ipc_state = 0;
    }
    make_ready(t);
}

int thread_sleep(u64 n)
{
    struct thread *t = current_thread();
    if (n == 0) {
        schedule();
        return 0;
    }
    if (thread_dying(t))
        return WAIT_KILLED;
    sleep_until(t, n);
    t->state = T_SLEEPING;
    schedule();
    return thread_dying(t) ? WAIT_KILLED : 0;
}

/* Timer interrupt, kernel lock held. */
void sched_tick(void)
{
    struct cpu *c = this_cpu();
    ticks++;
    struct thread *cur = c->current;
    if (cur != c->idle) {
        cur->ticks++;
        if (cur->slice_left > 0 && --cur->slice_left == 0)
            c->need_resched = true;
    }
    for (struct thread *t = sleepers, *next; t; t = next) {
        next = t->sleep_next;
        if (t->wake_tick <= ticks)
            thread_wake(t, t->state == T_BLOCKED ? E_TIMEOUT : 0);
    }
}
