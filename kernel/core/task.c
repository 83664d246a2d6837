/*
 * Tasks: an address space plus threads, created from an ELF program in the boot archive.
 * A task ends when its last thread exits (or on SYS_EXIT, which kills the other threads);
 * its memory is released at once, and the task object stays as a zombie holding the exit
 * status until the parent collects it with task_wait (or at once if it has no parent).
 */
#include "arch.h"
#include "bootfs.h"
#include "elf.h"
#include "idtable.h"
#include "kernel.h"
#include "klock.h"
#include "kobj.h"
#include "marker.h"
#include "region.h"
#include "memlayout.h"
#include "options.h"
#include "sched.h"
#include "task.h"
#include "thread.h"
#include "vm.h"
#include "waitq.h"

static struct kcache task_cache = KCACHE_INIT("task", sizeof(struct task));
IDTABLE(tasks, 10);
/* Class tasks: the table's slots, each task's as, parent, list of children, list of
 * threads, live count, exiting and zombie flags, and its queue of waits for a child's
 * end (lockclass.def), so that a lookup under it alone finds a task object that is not
 * freed meanwhile and an address space it still has (task_hold_aspace), and creations,
 * thread starts and waits run without the BKL. Readers under the BKL alone (a kill's
 * walk of the threads and of the table, tasks_each) see a new task or thread only once
 * it is whole: it is published last, its fields set before. */
static struct spinlock table_lock = SPINLOCK_INIT(TASKS);

struct task *task_lookup(int id) { return idtable_get(&tasks, id); }
u64 task_count(void) { return (u64)tasks.count; }

/* Each task's children are a list (children, through sibling), so a wait, an orphaning
 * and the UNIX server's reaping look at a task's own children, not at the whole table.
 * Under the table's lock, which every walk of the list takes. */
static void child_link_locked(struct task *parent, struct task *t)
{
    t->parent = parent;
    if (parent) {
        t->sibling = parent->children;
        parent->children = t;
    }
}

/* Under the table's lock: t leaves its parent's children (if it has a parent). */
static void child_unlink_locked(struct task *t)
{
    if (!t->parent)
        return;
    struct task **pp = &t->parent->children;
    while (*pp != t)
        pp = &(*pp)->sibling;
    *pp = t->sibling;
    t->parent = NULL;
    t->sibling = NULL;
}

/* Under the table's lock: t leaves its parent's children and the table, so that no
 * lookup under the lock finds it from here on. */
static void task_unlist_locked(struct task *t)
{
    child_unlink_locked(t);
    idtable_free(&tasks, t->id);
}

/* t, unlisted, goes. A holder of the BKL may still use it when the lock is not ours
 * (it found t by id, or its thread runs on toward its switch after its task ended), so
 * without the lock we free after its grace period (klock.h). */
static void task_release(struct task *t)
{
    struct bkl_grace g;
    if (!kernel_lock_held() && !bkl_grace_start(&g))
        bkl_grace_wait(&g);
    kobj_free(&task_cache, t);
}

static void task_free(struct task *t)
{
    spin_lock(&table_lock);
    task_unlist_locked(t);
    spin_unlock(&table_lock);
    task_release(t);
}

/* A task's memory goes: its whole address space, or in the shared one (mmu=off) the
 * regions it owns. */
static void task_memory_release(struct task *t)
{
    spin_lock(&table_lock);
    struct aspace *as = t->as;
    t->as = NULL;                    /* task_hold_aspace finds none from here on */
    spin_unlock(&table_lock);
    if (as->shared)
        regions_destroy_owned(as, t->id);
    else
        aspace_destroy(as);
}

/* Where the main stack ends: USER_STACK_TOP in a task's own address space; in the shared
 * one each task's stack is a free range of the map area, with guard pages. 0: no room. */
static u64 stack_top_for(struct task *t)
{
    if (!t->as->shared)
        return USER_STACK_TOP;
    u64 at = region_free_range(t->as, USER_STACK_SIZE);
    return at ? at + USER_STACK_SIZE : 0;
}

/* The initial stack: argument strings at the top, then argv[], 16-byte aligned. */
static int setup_stack(struct task *t, char *const argv[], int argc, u64 *sp_out, u64 *argv_out)
{
    u64 top = stack_top_for(t);
    int err = top ? region_map_anon_fixed(t->as, t->id, top - USER_STACK_SIZE, USER_STACK_SIZE,
                                          PROT_READ | PROT_WRITE) : E_NOMEM;
    if (err)
        return err;
    t->stack_top = top;
    u64 sp = top;
    u64 ptrs[SPAWN_MAX_ARGS + 1];
    for (int i = argc - 1; i >= 0; i--) {
        size_t len = strlen(argv[i]) + 1;
        sp -= len;
        if ((err = copy_to_aspace(t->as, sp, argv[i], len)))
            return err;
        ptrs[i] = sp;
    }
    ptrs[argc] = 0;
    sp = ALIGN_DOWN(sp, 16) - ALIGN_UP((u64)(argc + 1) * 8, 16);
    if ((err = copy_to_aspace(t->as, sp, ptrs, (u64)(argc + 1) * 8)))
        return err;
    *argv_out = sp;
    *sp_out = sp;
    return 0;
}

struct aspace *task_aspace_unlocked(void) { return mmu_on ? aspace_create() : NULL; }

/* A new task's address space that got no task goes, under the BKL, which
 * aspace_destroy needs (taken here when not held: a creation without it that ran out of
 * memory or ids). */
static void aspace_discard(struct aspace *as)
{
    if (as->shared)
        return;
    bool took = kernel_lock_unless_held();
    aspace_destroy(as);
    kernel_unlock_if(took);
}

/* A task object with an id and an empty address space (as, made beforehand by
 * task_aspace_unlocked, or NULL: made here, under the BKL), named `name` (cut to
 * NAME_LEN - 1), a child of `parent`, its threads capped at `max_prio`; its id, or
 * E_NOMEM when memory or ids run out (as then goes). With an address space given, the
 * BKL is not needed: the task is whole before the table's lock publishes it (its id and
 * its place among its parent's children), and is not touched after, for it may be
 * killed and freed as soon as it is published (task_kill_other). */
static long task_new(struct task *parent, const char *name, int max_prio, struct aspace *as)
{
    if (!as)
        as = aspace_for_task();
    struct task *t = as ? kobj_alloc(&task_cache) : NULL;
    if (!t) {
        if (as)
            aspace_discard(as);
        return E_NOMEM;
    }
    t->as = as;
    memcpy(t->name, name, strnlen(name, NAME_LEN - 1));
    t->max_prio = max_prio;
    t->parent = parent;              /* before the table has it (task_kill_other) */
    marker_define(as->asid, DOMAIN_USER, t->name);
    spin_lock(&table_lock);
    int id = idtable_alloc(&tasks, t, &t->id);
    if (id > 0)
        child_link_locked(parent, t);
    spin_unlock(&table_lock);
    if (id > 0)
        return id;
    kobj_free(&task_cache, t);
    aspace_discard(as);
    return E_NOMEM;
}

/* A new task from boot-archive program `prog`; its threads may run at most at `max_prio`
 * (the caller computes it from the creator, sys_spawn: never above the creator's own). */
long task_spawn(struct task *parent, const char *prog, char *const argv[], int argc, bool privileged,
                int max_prio)
{
    u64 size;
    const void *image = bootfs_find(prog, &size);
    if (!image)
        return E_NOENT;
    /* As on Unix, the task is named by argv[0] (the program when there is none): a
     * program can start copies of itself under names that ps and the cache model show. */
    long id = task_new(parent, argc > 0 && argv[0][0] ? argv[0] : prog, max_prio, NULL);
    if (id < 0)
        return id;
    struct task *t = task_lookup((int)id);   /* under the BKL: no kill has ended it */
    t->privileged = privileged;
    u64 sp, uargv;
    int err = elf_load(t->as, t->id, image, size, &t->entry);
    if (!err)
        err = setup_stack(t, argv, argc, &sp, &uargv);
    int prio = MIN(PRIO_DEFAULT, max_prio);
    struct thread *main = err ? NULL : thread_create(t, t->entry, sp, (u64)argc, uargv, prio);
    if (!main) {
        task_memory_release(t);
        task_free(t);
        return err ? err : E_NOMEM;
    }
    return id;
}

/* An empty task (task control for servers): an address space without threads, a child
 * of `parent`, which controls it. It runs once the parent gives it a thread. */
long task_create_empty(struct task *parent, const char *name, int max_prio, struct aspace *as)
{
    return task_new(parent, name, max_prio, as);
}

void tasks_each(void (*fn)(struct task *, void *), void *arg)
{
    for (int i = 1; i < idtable_capacity(&tasks); i++) {
        struct task *t = idtable_at(&tasks, i);
        if (t)
            fn(t, arg);
    }
}

/* Under the table's lock: task_controlled's test of task t (NULL: none) for self, the
 * memory standing for zombie (it goes under this lock before the task is one). */
static long controlled_unlocked(const struct task *t, const struct task *self)
{
    return !t || !t->as || __atomic_load_n(&t->exiting, __ATOMIC_RELAXED) ? E_SRCH
           : t->parent != self                                             ? E_PERM
                                                                           : 0;
}

/* Without the kernel lock: task_controlled's answer under the table's lock, and with
 * it a hold on the task's address space (aspace_hold), which the caller drops; *quiet
 * (if asked) whether it has no live thread, as read then (a clone's test: the caller
 * controls the task, and only it starts its threads). The task
 * object may go as soon as the lock does; the address space stays until the hold goes.
 * exiting is read as a hint: a task whose last thread is leaving (memory_release_unlocked)
 * may be found, as a call under way when it began would be. NULL for the one shared
 * address space of mmu=off (*err = 0: the caller goes under the kernel lock). */
struct aspace *task_hold_aspace(struct task *self, int id, int *owner, long *err, bool *quiet)
{
    spin_lock(&table_lock);
    struct task *t = id > 0 ? task_lookup(id) : NULL;
    struct aspace *as = t ? t->as : NULL;
    *err = controlled_unlocked(t, self);
    if (*err || as->shared)
        as = NULL;
    else
        aspace_hold(as);
    *owner = id;
    if (quiet)
        *quiet = as && __atomic_load_n(&t->live_threads, __ATOMIC_RELAXED) == 0;
    spin_unlock(&table_lock);
    return as;
}

long task_controlled_call(struct task *self, int id, long (*fn)(struct task *, void *), void *arg)
{
    spin_lock(&table_lock);
    struct task *t = id > 0 ? task_lookup(id) : NULL;
    long err = controlled_unlocked(t, self);
    if (!err)
        err = fn(t, arg);
    spin_unlock(&table_lock);
    return err;
}

struct task *task_controlled(struct task *self, int id, long *err)
{
    struct task *t = id > 0 ? task_lookup(id) : NULL;
    *err = !t || t->zombie || t->exiting ? E_SRCH : t->parent != self ? E_PERM : 0;
    return *err ? NULL : t;
}

/* Children of a dying task lose their parent; zombies among them are freed now, and so
 * are children that never got a thread (nothing else could ever end them). */
static void orphan_children(struct task *dying)
{
    spin_lock(&table_lock);
    struct task *children = dying->children;
    dying->children = NULL;
    for (struct task *c = children; c; c = c->sibling)
        c->parent = NULL;
    spin_unlock(&table_lock);
    for (struct task *c = children, *next; c; c = next) {
        next = c->sibling;
        c->sibling = NULL;
        if (!c->zombie && !c->threads) {
            task_memory_release(c);
            c->zombie = true;
        }
        if (c->zombie)
            task_free(c);
    }
}

/* A task without live threads: its memory goes, its parent is told (or it is freed). */
static void task_ended(struct task *task)
{
    task_memory_release(task);
    orphan_children(task);
    spin_lock(&table_lock);          /* a wait sees it a zombie, or sleeps and is woken */
    task->zombie = true;
    struct task *parent = task->parent;
    if (parent)
        waitq_wake_all(&parent->child_exit, 0);
    spin_unlock(&table_lock);
    if (!parent) {
        printk("ondol: task %d (%s) exited with status %d\n", task->id, task->name, task->exit_status);
        task_free(task);
    }
}

/* The last thread is leaving: its task's memory goes without the kernel lock, in pieces
 * (regions_teardown_unlocked), before the rest of the exit. Meanwhile the task is
 * exiting (last_thread_left), so its server's calls find it gone (task_controlled: no new
 * thread, mapping or copy), and it is no zombie yet, so no wait collects it; its other
 * threads are zombies already. What is left (a call under way's mappings, the top page
 * table, the id) goes with aspace_destroy under the lock (task_ended). */
static void memory_release_unlocked(struct task *task)
{
    if (task->as->shared)
        return;
    aspace_leave_all(task->as);
    regions_teardown_unlocked(task->as);
}

void task_thread_link_locked(struct task *task, struct thread *t)
{
    t->task_next = task->threads;
    __atomic_store_n(&task->threads, t, __ATOMIC_RELEASE);   /* readers under the BKL */
    __atomic_store_n(&task->live_threads, task->live_threads + 1, __ATOMIC_RELAXED);
}

void task_thread_link(struct task *task, struct thread *t)
{
    spin_lock(&table_lock);
    task_thread_link_locked(task, t);
    spin_unlock(&table_lock);
}

void task_thread_unlink(struct task *task, struct thread *t)
{
    spin_lock(&table_lock);
    struct thread **pp = &task->threads;
    while (*pp != t)
        pp = &(*pp)->task_next;
    *pp = t->task_next;
    spin_unlock(&table_lock);
}

/* One live thread fewer; true when it was the last, the task then exiting: from here no
 * thread joins it (a creation without the BKL tests exiting under the same lock). */
static bool last_thread_left(struct task *task)
{
    spin_lock(&table_lock);
    int left = task->live_threads - 1;
    __atomic_store_n(&task->live_threads, left, __ATOMIC_RELAXED);
    if (!left)
        __atomic_store_n(&task->exiting, true, __ATOMIC_RELAXED);
    spin_unlock(&table_lock);
    return left == 0;
}

/* Called by thread_exit for every exiting thread, with the thread already a zombie. A
 * kernel thread (no task: the IK UNIX server's network event thread, when the network
 * server fails) has nothing to account; its stack is freed after the switch away. */
void task_thread_exited(struct thread *t)
{
    struct task *task = t->task;
    if (!task) {
        this_cpu()->after = t;
        return;
    }
    if (!task->exiting)
        task->exit_status = t->exit_status;
    if (!last_thread_left(task))
        return;
    memory_release_unlocked(task);
    /* Last thread: free the other (zombie) threads and the memory. Our own stack is in use,
     * so it goes to cpu->after and is freed right after the switch away. */
    for (struct thread *z = task->threads, *next; z; z = next) {
        next = z->task_next;
        if (z == t)
            continue;
        sched_wait_off_cpu(z);              /* its CPU may still be leaving its stack */
        thread_free(z);
    }
    task->threads = NULL;
    this_cpu()->after = t;
    task_ended(task);
}

/* Make every other thread of the task exit; the caller then exits itself. */
void task_kill(struct task *task, int status) { task_kill_except(task, status, current_thread()); }

void task_kill_except(struct task *task, int status, struct thread *self)
{
    spin_lock(&table_lock);          /* a creation without the BKL adds no thread after */
    if (!task->exiting) {
        __atomic_store_n(&task->exiting, true, __ATOMIC_RELAXED);
        task->exit_status = status;
    }
    spin_unlock(&table_lock);
    for (struct thread *t = task->threads; t; t = t->task_next) {
        if (t == self || t->state == T_ZOMBIE)
            continue;
        thread_kill(t);
    }
    if (!task->threads && !task->zombie)      /* an empty task (SYS_TASK_CREATE) ends now */
        task_ended(task);
}

static bool is_ancestor(const struct task *a, const struct task *t)
{
    for (const struct task *p = t->parent; p; p = p->parent)
        if (p == a)
            return true;
    return false;
}

/* SYS_TASK_KILL: `killer` ends task `id` and every live descendant of it, as if each had
 * called SYS_EXIT(KILLED_STATUS) (like SIGINT to a UNIX process group: `pcnt stat prog`
 * must not leave prog running). Allowed on one's descendants, and for privileged tasks on
 * any other task; never on oneself (SYS_EXIT is for that). The threads die at their next
 * kernel exit or wake-up, so the call returns at once; parents collect the status with
 * task_wait as for any exit. */
long task_kill_other(struct task *killer, int id)
{
    struct task *t = id > 0 ? task_lookup(id) : NULL;
    if (!t || t->zombie)
        return E_SRCH;
    if (t == killer)
        return E_INVAL;
    if (!is_ancestor(killer, t) && !killer->privileged)
        return E_PERM;
    for (int i = 1; i < idtable_capacity(&tasks); i++) {
        struct task *d = idtable_at(&tasks, i);
        if (d && d != t && !d->zombie && d != killer && is_ancestor(t, d))
            task_kill(d, KILLED_STATUS);
    }
    task_kill(t, KILLED_STATUS);
    return 0;
}

long task_handover(struct task *self, int id, int to_id)
{
    long err;
    struct task *t = task_controlled(self, id, &err);
    if (!t)
        return err;
    struct task *to = to_id > 0 ? task_lookup(to_id) : NULL;
    if (!to || to->zombie || to->exiting)
        return E_SRCH;
    if (to == t || is_ancestor(t, to))
        return E_INVAL;               /* it would control itself: a cycle of parents */
    if (!to->live_threads)
        return E_INVAL;               /* a task freed unstarted (orphan_children) has no
                                         children to orphan: it must never get any */
    if (t->privileged && !to->privileged)
        return E_PERM;                /* control of a privileged task is privilege */
    spin_lock(&table_lock);
    child_unlink_locked(t);
    child_link_locked(to, t);
    t->max_prio = MIN(t->max_prio, to->max_prio);
    waitq_wake_all(&self->child_exit, 0);    /* a wait for it now finds it gone */
    spin_unlock(&table_lock);
    return 0;
}

/* Under the table's lock: parent's first child that id names (-1: any child), an
 * ended one (a zombie) if there is one; NULL if id names none. */
static struct task *child_named(struct task *parent, int id)
{
    struct task *named = NULL;
    for (struct task *c = parent->children; c; c = c->sibling) {
        if (id != -1 && c->id != id)
            continue;
        if (c->zombie)
            return c;
        named = named ? named : c;
    }
    return named;
}

/* task_wait, and task_reap when !wait (0 when no child id names has ended). */
static long collect(struct task *parent, int id, int *status, bool wait)
{
    for (;;) {
        spin_lock(&table_lock);
        struct task *c = child_named(parent, id);
        if (!c || (!c->zombie && !wait)) {
            spin_unlock(&table_lock);
            return c ? 0 : E_SRCH;
        }
        if (c->zombie) {
            int cid = c->id;
            *status = c->exit_status;
            task_unlist_locked(c);
            spin_unlock(&table_lock);
            task_release(c);
            return cid;
        }
        if (waitq_sleep_unlocking(&parent->child_exit, WAIT_FOREVER, &table_lock) == WAIT_KILLED)
            return E_DEAD;
    }
}

long task_wait(struct task *parent, int id, int *status)
{
    return collect(parent, id, status, true);
}

long task_reap(struct task *parent, int id)
{
    int status;
    return collect(parent, id, &status, false);
}

int task_child_exit_sleep(struct task *parent, u64 timeout)
{
    spin_lock(&table_lock);
    struct task *c = child_named(parent, -1);
    if (c && c->zombie) {
        spin_unlock(&table_lock);
        return 0;
    }
    return waitq_sleep_unlocking(&parent->child_exit, timeout, &table_lock);
}

void task_child_waits_lock(void) { spin_lock(&table_lock); }
void task_child_waits_unlock(void) { spin_unlock(&table_lock); }
