/*
 * Threads: creation (user and kernel), exit, join, and the thread table. A thread id
 * carries a generation in its upper bits (id = generation << 12 | slot), so a stale id
 * never names a newer thread that reuses the slot.
 */
#include "arch.h"
#include "fwd.h"
#include "idtable.h"
#include "ipc.h"
#include "kernel.h"
#include "kobj.h"
#include "memlayout.h"
#include "pmm.h"
#include "sched.h"
#include "srv.h"
#include "task.h"
#include "thread.h"
#include "waitq.h"

#define STACK_CANARY 0x6f6e646f6c535441ull   /* "ondolSTA": detects kernel stack overflow */

static void grace_nop(void *arg) { (void)arg; }

/* Before a thread slab's frame goes back (kobj.c), with the BKL (thread_free): every
 * other CPU that schedules threads has left any IPC fastpath that may have read a thread
 * of it from the table, since the fastpath runs with interrupts off from its entry to its
 * sysret and never answers a call-function request. False (the frame is kept) if one
 * did not answer. Nothing to wait for on one CPU. All at once (ipi_call_locked_many):
 * the BKL is held throughout, so the machine waits as long as this does. */
static bool thread_slab_grace(void)
{
    return ipi_call_locked_many(sched_cpus, grace_nop, NULL) == 0;
}

/* Type-stable from ipc_lock on: the IPC fastpath (ipcfast.S) takes the lock of a thread it
 * read from the table without a lock, which may be freed and reused meanwhile; it finds
 * a lock there still, and the id cleared or another (thread_free); an empty slab's frame
 * goes back only after thread_slab_grace. */
static struct kcache thread_cache = KCACHE_STABLE_INIT(
    "thread", sizeof(struct thread), offsetof(struct thread, ipc_lock), thread_slab_grace);
void *thread_objs[1 << THREAD_ID_BITS];   /* global for the IPC fastpath's lookup (ipcfast.S) */
static u32 thread_gens[1 << THREAD_ID_BITS];
struct idtable thread_ids = {THREAD_ID_BITS, thread_objs, thread_gens, 1, 0};

/* The IPC fastpath's copy of the table's slots (ipcfast.S): each live thread, and in an
 * empty slot thread_none, whose ipc lock is always held, so that the fastpath's taking of
 * its partner's lock also turns an empty slot away, with no test of its own. */
struct thread thread_none = {.ipc_lock = {.locked = 1, .cls = LOCK_IPC}};
#define SLOT_OF(tid) ((tid) & ((1 << THREAD_ID_BITS) - 1))
struct thread *thread_fast[1 << THREAD_ID_BITS] = {[0 ...(1 << THREAD_ID_BITS) - 1] = &thread_none};

int thread_count(void) { return thread_ids.count; }
struct thread *thread_at(int slot)
{
    return slot >= 0 && slot < idtable_capacity(&thread_ids) ? idtable_at(&thread_ids, slot) : NULL;
}

/* Class threads: the thread table's slots and the IPC fastpath's copy of them, so that
 * a thread is published (thread_publish) without the BKL while another is freed under it
 * (thread_free). Taken with nothing inside it. */
static struct spinlock ids_lock = SPINLOCK_INIT(THREADS);

/* A TCB and its kernel stack (KSTACK_PAGES frames), with a canary in the stack's lowest
 * word that thread_free checks for overflow; no id yet (thread_publish). NULL when memory
 * runs out. */
static struct thread *thread_new(int prio)
{
    struct thread *t = kobj_alloc(&thread_cache);
    if (!t)
        return NULL;
    u64 pa = frame_alloc_contig(KSTACK_PAGES);
    if (!pa) {
        kobj_free(&thread_cache, t);
        return NULL;
    }
    t->kstack = (u64)phys_to_virt(pa);
    *(u64 *)t->kstack = STACK_CANARY;
    t->prio = prio;
    t->state = T_BLOCKED;                 /* until make_ready, which queues only the blocked */
    t->cpu = (u8)this_cpu()->id;          /* starts where it is made (make_ready balances;
                                             make_ready_new spreads) */
    t->affinity = ~0ull;
    t->ipc_lock.cls = LOCK_IPC;           /* not `locked`: a fastpath may hold it (above) */
    return t;
}

bool thread_publish(struct thread *t)
{
    spin_lock(&ids_lock);
    bool ok = idtable_alloc(&thread_ids, t, &t->tid) > 0;
    if (ok)
        __atomic_store_n(&thread_fast[SLOT_OF(t->tid)], t, __ATOMIC_RELEASE);   /* thread_slot */
    spin_unlock(&ids_lock);
    return ok;
}

/* Under the BKL, which an emptied slab's grace needs (thread_slab_grace): taken here if
 * the caller does not hold it. */
void thread_discard(struct thread *t)
{
    bool took = kernel_lock_unless_held();
    frame_free_contig(virt_to_phys((void *)t->kstack), KSTACK_PAGES);
    kobj_free(&thread_cache, t);
    kernel_unlock_if(took);
}

/* thread_new and thread_publish: NULL when memory or thread ids run out. */
static struct thread *thread_alloc(int prio)
{
    struct thread *t = thread_new(prio);
    if (t && !thread_publish(t)) {
        thread_discard(t);
        return NULL;
    }
    return t;
}

/* #NM: thread t, running on c in user mode, used x87/SSE with CR0.TS set. Save the owner's
 * state (if another thread's) and load t's; t owns the registers until another takes them.
 * Without the BKL (trap.c): c's fpu_lock keeps the owner from being freed meanwhile
 * (fpu_release). */
void thread_fpu_claim(struct cpu *c, struct thread *t)
{
    spin_lock(&c->fpu_lock);
    fpu_trap_off();
    c->fpu_ts = false;
    if (c->fpu_owner != t) {
        if (c->fpu_owner)
            fpu_save(&c->fpu_owner->fpu);
        fpu_restore(&t->fpu);
        c->fpu_owner = t;
    }
    spin_unlock(&c->fpu_lock);
}

/* On the CPU that holds t's x87/SSE registers (or any): save them to t->fpu and leave
 * the registers ownerless, CR0.TS set. t is compared under the lock: a t read without it
 * (thread_fpu_idle) may have been freed since, and is then no longer the owner. */
static void fpu_evict_here(void *arg)
{
    struct thread *t = arg;
    struct cpu *c = this_cpu();
    spin_lock(&c->fpu_lock);
    if (c->fpu_owner == t) {
        fpu_trap_off();
        fpu_save(&t->fpu);
        c->fpu_owner = NULL;
        fpu_trap_on();
        c->fpu_ts = true;
    }
    spin_unlock(&c->fpu_lock);
}

/* This CPU is about to halt in its idle loop: the x87/SSE state it holds goes back to its
 * owner's TCB, so that a thread blocked while this CPU idles can be moved without an IPI
 * here (sched_pull_blocked, thread_fpu_evict). One save per idle entry with an owner. */
void thread_fpu_idle(struct cpu *c)
{
    struct thread *owner = __atomic_load_n(&c->fpu_owner, __ATOMIC_RELAXED);
    if (owner)
        fpu_evict_here(owner);
}

bool thread_fpu_evict(struct thread *t)
{
    if (cpus[t->cpu].fpu_owner != t)
        return true;
    if (t->cpu == this_cpu()->id) {
        fpu_evict_here(t);
        return true;
    }
    return ipi_call_locked(t->cpu, fpu_evict_here, t) == 0 && cpus[t->cpu].fpu_owner != t;
}

/* A freed thread owns no registers: its state is dropped, not saved. (It is never the
 * running thread here, so CR0.TS is already set on the CPU it ran on.) Under that CPU's
 * fpu_lock, which its #NM and idle entry hold while they save the owner's state (no CPU
 * can make t the owner again: it never runs). */
static void fpu_release(struct thread *t)
{
    for (int i = 0; i < MAX_CPUS; i++) {
        struct cpu *c = &cpus[i];
        if (__atomic_load_n(&c->fpu_owner, __ATOMIC_RELAXED) != t)
            continue;
        spin_lock(&c->fpu_lock);
        if (c->fpu_owner == t)
            c->fpu_owner = NULL;
        spin_unlock(&c->fpu_lock);
    }
}

void thread_set_bases(struct thread *t, u64 fs_base, u64 gs_base)
{
    t->fs_base = fs_base;
    t->gs_base = gs_base;
    if (t->linux)
        return;                       /* USER_CTX_LINUX loads a Linux thread's bases */
    t->user_bases = (fs_base | gs_base) != 0;
    t->user_ctx = t->user_bases ? t->user_ctx | USER_CTX_BASES : t->user_ctx & ~USER_CTX_BASES;
}

/* Under the BKL (also when finish_switch frees an exited thread: the CPU that switched
 * holds it across the switch), which covers a task's thread list and an emptied slab's
 * grace; the table's slots under their own lock (thread_publish). */
void thread_free(struct thread *t)
{
    kernel_lock_assert_held();
    if (*(u64 *)t->kstack != STACK_CANARY)
        panic("kernel stack overflow in thread %d", t->tid);
    fpu_release(t);
    spin_lock(&ids_lock);
    thread_fast[SLOT_OF(t->tid)] = &thread_none;
    idtable_free(&thread_ids, t->tid);
    spin_unlock(&ids_lock);
    spin_lock(&t->ipc_lock);              /* a fastpath that found t in the table finds no id */
    t->tid = 0;
    spin_unlock(&t->ipc_lock);
    frame_free_contig(virt_to_phys((void *)t->kstack), KSTACK_PAGES);
    kobj_free(&thread_cache, t);
}

/* Lay out the initial switch frame so swtch() "returns" into `resume`. */
static void prepare_switch_frame(struct thread *t, u64 top, void (*resume)(void))
{
    u64 *sp = (u64 *)top;
    *--sp = (u64)resume;                      /* return address of swtch */
    for (int i = 0; i < 6; i++)
        *--sp = 0;                            /* rbp rbx r12 r13 r14 r15 */
    t->ksp = (u64)sp;
}

struct thread *thread_prepare(u64 entry, u64 user_sp, u64 arg0, u64 arg1, int prio)
{
    struct thread *t = thread_new(prio);
    if (!t)
        return NULL;
    u64 top = t->kstack + KSTACK_SIZE;
    struct trapframe *tf = (struct trapframe *)(top - sizeof(*tf));
    memset(tf, 0, sizeof(*tf));
    tf->rip = entry;
    tf->cs = SEL_UCODE;
    tf->rflags = RFLAGS_IF | 0x2;
    tf->rsp = user_sp;
    tf->ss = SEL_UDATA;
    tf->rdi = arg0;
    tf->rsi = arg1;
    t->tf = tf;
    t->resume_via_tf = true;             /* first run: leave through tf */
    fpu_init(&t->fpu);
    return t;
}

void thread_attach(struct thread *t, struct task *task)
{
    t->task = task;
    /* fixed: a task is marked before it has threads (fwd_task_linux) */
    t->linux = !task->linux_server                  ? ENTRY_ONDOL
               : task->linux_server == FWD_SERVER_IK ? ENTRY_LINUX_IK
                                                     : ENTRY_LINUX_FWD;
    t->user_ctx = t->linux ? USER_CTX_LINUX : 0;
}

struct thread *thread_create_blocked(struct task *task, u64 entry, u64 user_sp, u64 arg0,
                                     u64 arg1, int prio)
{
    struct thread *t = thread_prepare(entry, user_sp, arg0, arg1, prio);
    if (!t)
        return NULL;
    thread_attach(t, task);
    if (!thread_publish(t)) {
        thread_discard(t);
        return NULL;
    }
    task_thread_link(task, t);
    return t;
}

struct thread *thread_create(struct task *task, u64 entry, u64 user_sp, u64 arg0, u64 arg1, int prio)
{
    struct thread *t = thread_create_blocked(task, entry, user_sp, arg0, arg1, prio);
    if (t)
        make_ready(t);
    return t;
}

struct thread *thread_create_kernel(void (*fn)(void), int prio)
{
    struct thread *t = thread_alloc(prio < 0 ? 0 : prio);
    if (!t)
        return NULL;
    t->prio = prio;
    prepare_switch_frame(t, t->kstack + KSTACK_SIZE - 16, fn);
    return t;
}

/* The current thread stops. Its stack is freed after the switch away (cpu->after) unless it
 * stays a zombie for a joiner; task.c decides and tears the task down with its last thread. */
void thread_exit(int status)
{
    struct thread *t = current_thread();
    t->exit_status = status;
    t->state = T_ZOMBIE;
    ipc_thread_exited(t);
    srv_thread_exited(t);
    waitq_wake_all(&t->joiners, 0);
    task_thread_exited(t);
    schedule();
    panic("zombie thread %d ran again", t->tid);
}

int thread_join(int tid, int *status)
{
    struct thread *self = current_thread();
    struct thread *t = thread_lookup(tid);
    if (!t || t->task != self->task)
        return E_SRCH;
    if (t == self)
        return E_DEADLK;
    while (t->state != T_ZOMBIE) {
        int r = waitq_sleep(&t->joiners, WAIT_FOREVER);
        if (r == WAIT_KILLED)
            return E_DEAD;
        t = thread_lookup(tid);              /* another joiner may have reaped it */
        if (!t)
            return E_SRCH;
    }
    sched_wait_off_cpu(t);                   /* its CPU may still be leaving its stack */
    *status = t->exit_status;
    task_thread_unlink(self->task, t);
    thread_free(t);
    return 0;
}
