/*
 * The reverse map. Each anonymous user frame, and each file object's frame (fileobj.c),
 * has a list of entries, one per PTE mapping it (frame_meta(pa)->rmap); the PTE's slot
 * in the second frame of its page table points at its entry, so updates never search for
 * it. Four update modes from the same code (rmap= boot option; docs/memory.md says why
 * each is correct):
 *   global  one lock for the whole structure (the baseline, as in L4Ka::Pistachio's
 *           mapping database);
 *   lock    a lock per frame;
 *   family  the locking of P4's Linux: the lists of anonymous frames under one lock per
 *           fork family of address spaces (Linux's anon_vma root lock), a file object's
 *           frame under its own lock as in lock mode (Linux's i_mmap lock per file; a file
 *           is mapped across families). Correct because every mapper of an anonymous frame
 *           is in one family: a frame starts with one mapping, in the address space that
 *           took it; the only call that maps an existing anonymous frame again is a
 *           clone's (regions_clone), into a destination it first empties and then joins to
 *           its source's family; and an address space leaves a family only so, emptied.
 *           So the family of the address space whose PTE an entry is, which the updater's
 *           address-space lock keeps stable, names the one lock of the entry's list;
 *   log     P4: an insert or remove is appended to the running CPU's log and touches no
 *           shared cache line. Before anything reads the map, rmap_sync applies all logs
 *           in order under the global lock on one CPU. An insert sets the entry's insert
 *           mark; a remove atomically swaps it clear: if it was set, the insert is still in
 *           a log and both cancel (the applier skips and frees the entry), else the insert
 *           is applied and the remove is logged. A full log is applied at once.
 * The logs are single-producer rings, one per CPU. Each CPU counts its own inserts, removes
 * and cancellations on its log's lines (rmap_stats; no shared line is written for them),
 * and every lock carries MARK_LOCK markers so the coherence model replays its hand-offs.
 */
#include "arch.h"
#include "kernel.h"
#include "kobj.h"
#include "marker.h"
#include "pcnt.h"
#include "pmm.h"
#include "region.h"
#include "rmap.h"
#include "spinlock.h"

int rmap_mode = RMAP_LOCK;

#define LOG_OPS 256

struct rmap_op {
    struct rmap_entry *e;
    bool insert;
};

/* One CPU appends at tail; the applier (any CPU, holding global_lock) consumes to head.
 * The counters are the owning CPU's updates of every mode (rmap_stats). */
struct rmap_log {
    u32 head, tail;
    u64 inserts, removes, cancelled;
    struct rmap_op ops[LOG_OPS];
} __attribute__((aligned(64)));

static struct rmap_log logs[MAX_CPUS];
static struct spinlock global_lock = SPINLOCK_INIT(RMAP_GLOBAL);  /* global: the map; log: applying the logs */
static u64 applied;                     /* log entries applied, under global_lock */

/* The coherence model's lock ids (marker.h): the global lock, and the frame locks hashed
 * by frame number (two frames may share an id: the model then orders them as one lock). */
#define LOCK_ID_FRAME0 (LOCK_ID_RMAP_GLOBAL + 1)
#define LOCK_ID_FRAMES 256
/* Then the family locks, by the family's serial number (tools/ondol/aim.py counts ids up
 * to LOCK_ID_FAMILY0 + LOCK_ID_FAMILIES as the reverse map's). */
#define LOCK_ID_FAMILY0 (LOCK_ID_FRAME0 + LOCK_ID_FRAMES)
#define LOCK_ID_FAMILIES 256

/* rmap=family: a fork family of address spaces (rmap_family_start). 64 bytes, so that its
 * used part has a cache line to itself (kobj puts objects 48 bytes into a line: lock, refs
 * and serial fill its last 16 bytes, the previous object's padding the rest) and the
 * model sees only the lock's own contention. */
struct rmap_family {
    struct spinlock lock;        /* class rmap_family: its anonymous frames' lists */
    u32 refs;                    /* member address spaces (atomic) */
    u32 serial;                  /* order of creation: its lock id in the model */
    u8 pad[48];
};
_Static_assert(sizeof(struct rmap_family) == 64, "a family is one cache line");

static unsigned lock_id(const struct spinlock *l, u64 pa)
{
    if (l == &global_lock)
        return LOCK_ID_RMAP_GLOBAL;
    if (l->cls == LOCK_RMAP_FAMILY) {
        const struct rmap_family *f = container_of(l, struct rmap_family, lock);
        return LOCK_ID_FAMILY0 + f->serial % LOCK_ID_FAMILIES;
    }
    return LOCK_ID_FRAME0 + (unsigned)((pa >> 12) % LOCK_ID_FRAMES);
}

/* spin_lock / spin_unlock with the model's markers: a wait only when the lock is seen
 * busy just before it is taken (the model counts waits; a release in between makes a
 * wait of no length), then acquire; release. Through spin_lock, so the lock checker sees
 * every acquisition. */
static void lock_marked(struct spinlock *l, u64 pa)
{
    if (__atomic_load_n(&l->locked, __ATOMIC_RELAXED))
        marker_lock(LOCK_EV_WAIT, lock_id(l, pa));
    spin_lock(l);
    marker_lock(LOCK_EV_ACQUIRE, lock_id(l, pa));
}

static void unlock_marked(struct spinlock *l, u64 pa)
{
    marker_lock(LOCK_EV_RELEASE, lock_id(l, pa));
    spin_unlock(l);
}
static struct kcache rmap_cache = KCACHE_INIT("rmap", sizeof(struct rmap_entry));

struct rmap_entry *rmap_entry_alloc(void) { return kobj_alloc(&rmap_cache); }
void rmap_entry_discard(struct rmap_entry *e) { kobj_free(&rmap_cache, e); }

static void link(struct rmap_entry *e)
{
    struct frame_meta *m = frame_meta(e->pa);
    e->next = m->rmap;
    m->rmap = e;
}

static void unlink(struct rmap_entry *e)
{
    struct rmap_entry **pp = &frame_meta(e->pa)->rmap;
    while (*pp != e) {
        ASSERT(*pp);
        pp = &(*pp)->next;
    }
    *pp = e->next;
}

/* The lock guarding the list of e's frame: in log mode lists change only while logs are
 * applied; in family mode an anonymous frame's is the family of e's address space (the
 * caller holds that address space's lock, or stops the world: the family stays). */
static struct spinlock *lock_for(const struct rmap_entry *e)
{
    if (rmap_mode == RMAP_LOCK || (rmap_mode == RMAP_FAMILY && e->file))
        return &frame_meta(e->pa)->lock;
    return rmap_mode == RMAP_FAMILY ? &e->as->family->lock : &global_lock;
}

/* The lock guarding the list of a file object's frame at pa. */
static struct spinlock *file_lock_for(u64 pa)
{
    return rmap_mode == RMAP_LOCK || rmap_mode == RMAP_FAMILY ? &frame_meta(pa)->lock
                                                                : &global_lock;
}

/* One logged operation. */
static void apply_op(struct rmap_op op)
{
    if (!op.insert) {
        unlink(op.e);
        rmap_entry_discard(op.e);
        applied++;
    } else if (__atomic_exchange_n(&op.e->insert_mark, 0, __ATOMIC_ACQ_REL)) {
        link(op.e);
        applied++;
    } else {
        rmap_entry_discard(op.e);    /* removed before it was applied */
    }
}

/* apply_op under the rmap_apply probe (para: 1 insert, 0 remove): the deferred half of a
 * log-mode update, so log's cost is an insert or remove plus this. */
static PCNT_COLD void apply_op_probed(struct rmap_op op)
{
    pcnt_probe_start(PROBE_RMAP_APPLY, op.insert);
    apply_op(op);
    pcnt_probe_stop(PROBE_RMAP_APPLY);
}

static void apply_log(struct rmap_log *l)
{
    u32 tail = __atomic_load_n(&l->tail, __ATOMIC_ACQUIRE);
    for (u32 i = l->head; i != tail; i++) {
        if (pcnt_probed())
            apply_op_probed(l->ops[i % LOG_OPS]);
        else
            apply_op(l->ops[i % LOG_OPS]);
    }
    __atomic_store_n(&l->head, tail, __ATOMIC_RELEASE);
}

/* Only the started CPUs' logs: the others are empty (a CPU logs once the scheduler runs
 * threads on it, after the bootstrap CPU counted every CPU started), and with MAX_CPUS 64
 * reading every log's tail cost each pass 64 cache lines on a machine of a few CPUs. */
static void apply_logs(void)
{
    for (unsigned c = 0; c < cpus_running; c++)
        apply_log(&logs[c]);
}

void rmap_sync(void)
{
    if (rmap_mode != RMAP_LOG)
        return;
    lock_marked(&global_lock, 0);
    apply_logs();
    unlock_marked(&global_lock, 0);
}

/* Read under the list's lock (in log mode after the logs are applied, under the same
 * lock): an entry on a list is freed only after it is unlinked under that lock. */
bool rmap_first(u64 pa, struct aspace **as, u64 *va)
{
    struct spinlock *l = file_lock_for(pa);
    lock_marked(l, pa);
    if (rmap_mode == RMAP_LOG)
        apply_logs();
    const struct rmap_entry *e = frame_meta(pa)->rmap;
    ASSERT(!e || e->file);
    if (e) {
        *as = e->as;
        *va = e->va;
    }
    unlock_marked(l, pa);
    return e != NULL;
}

static void log_append(struct rmap_entry *e, bool insert)
{
    struct rmap_log *l = &logs[this_cpu()->id];
    if (l->tail - __atomic_load_n(&l->head, __ATOMIC_ACQUIRE) == LOG_OPS)
        rmap_sync();
    l->ops[l->tail % LOG_OPS] = (struct rmap_op){e, insert};
    __atomic_store_n(&l->tail, l->tail + 1, __ATOMIC_RELEASE);
}

static void insert_entry(struct rmap_entry *e, struct aspace *as, u64 va, u64 frame, u64 *pte)
{
    u64 pa = frame & PTE_ADDR;
    *e = (struct rmap_entry){.as = as, .va = va, .pa = pa, .file = (frame & PTE_FILE) != 0};
    *pte_rmap_slot(pte) = e;
    logs[this_cpu()->id].inserts++;
    if (rmap_mode == RMAP_LOG) {
        e->insert_mark = 1;
        log_append(e, true);
        return;
    }
    struct spinlock *l = lock_for(e);
    lock_marked(l, pa);
    link(e);
    unlock_marked(l, pa);
}

static void remove_entry(u64 *pte)
{
    struct rmap_entry *e = *pte_rmap_slot(pte);
    ASSERT(e);
    *pte_rmap_slot(pte) = NULL;
    struct rmap_log *own = &logs[this_cpu()->id];
    own->removes++;
    if (rmap_mode == RMAP_LOG) {
        if (__atomic_exchange_n(&e->insert_mark, 0, __ATOMIC_ACQ_REL))
            own->cancelled++;           /* the insert still waits in a log: both cancel */
        else
            log_append(e, false);
        return;
    }
    u64 pa = e->pa;
    struct spinlock *l = lock_for(e);
    lock_marked(l, pa);
    unlink(e);
    unlock_marked(l, pa);
    rmap_entry_discard(e);
}

/* The updates under their probes (para: the virtual page); a full log applied inside an
 * insert or remove is counted in both it and rmap_apply. */
static PCNT_COLD void insert_probed(struct rmap_entry *e, struct aspace *as, u64 va, u64 frame,
                                    u64 *pte)
{
    pcnt_probe_start(PROBE_RMAP_INSERT, va);
    insert_entry(e, as, va, frame, pte);
    pcnt_probe_stop(PROBE_RMAP_INSERT);
}

static PCNT_COLD void remove_probed(u64 *pte)
{
    const struct rmap_entry *e = *pte_rmap_slot(pte);
    ASSERT(e);
    pcnt_probe_start(PROBE_RMAP_REMOVE, e->va);
    remove_entry(pte);
    pcnt_probe_stop(PROBE_RMAP_REMOVE);
}

void rmap_insert(struct rmap_entry *e, struct aspace *as, u64 va, u64 frame, u64 *pte)
{
    if (pcnt_probed())
        insert_probed(e, as, va, frame, pte);
    else
        insert_entry(e, as, va, frame, pte);
}

void rmap_remove(u64 *pte)
{
    if (pcnt_probed())
        remove_probed(pte);
    else
        remove_entry(pte);
}

void rmap_stats(struct rmap_stats *st)
{
    *st = (struct rmap_stats){.applied = applied};
    for (int c = 0; c < MAX_CPUS; c++) {
        st->inserts += logs[c].inserts;
        st->removes += logs[c].removes;
        st->cancelled += logs[c].cancelled;
        for (int p = PROBE_RMAP_INSERT; p <= PROBE_RMAP_APPLY; p++)
            st->probe_ticks += pcnt_pool[c][p].sum;
    }
}

/* ---- fork families (rmap=family) ----------------------------------------------------- */

static struct kcache family_cache = KCACHE_INIT("rmap_family", sizeof(struct rmap_family));
static u32 families_made;

bool rmap_family_start(struct aspace *as)
{
    if (rmap_mode != RMAP_FAMILY)
        return true;
    struct rmap_family *f = kobj_alloc(&family_cache);
    if (!f)
        return false;
    spin_lock_init(&f->lock, LOCK_RMAP_FAMILY);
    f->refs = 1;
    f->serial = __atomic_fetch_add(&families_made, 1, __ATOMIC_RELAXED);
    as->family = f;
    return true;
}

void rmap_family_leave(struct aspace *as)
{
    struct rmap_family *f = as->family;
    as->family = NULL;
    if (f && __atomic_sub_fetch(&f->refs, 1, __ATOMIC_ACQ_REL) == 0)
        kobj_free(&family_cache, f);
}

/* Under both address spaces' locks, dst without a region (so without an entry: the
 * entries of its old family's frames went with its regions). src's family has src as a
 * member meanwhile, so it lives. */
void rmap_family_join(struct aspace *dst, struct aspace *src)
{
    if (!src->family || dst->family == src->family)
        return;
    ASSERT(!dst->regions);
    __atomic_add_fetch(&src->family->refs, 1, __ATOMIC_ACQ_REL);
    rmap_family_leave(dst);
    dst->family = src->family;
}

u64 rmap_families(void) { return __atomic_load_n(&family_cache.in_use, __ATOMIC_RELAXED); }

/* ---- the checker ---------------------------------------------------------------------- */

static bool on_list(const struct rmap_entry *e)
{
    for (const struct rmap_entry *x = frame_meta(e->pa)->rmap; x; x = x->next)
        if (x == e)
            return true;
    return false;
}

static void check_pte(struct aspace *as, u64 va, struct rmap_check_stats *st)
{
    u64 *pte = vm_pte(as, va, false);
    if (!pte || !*pte)
        return;
    const struct rmap_entry *e = *pte_rmap_slot(pte);
    if (!(*pte & PTE_COUNTED)) {
        st->errors += e != NULL;
        return;
    }
    st->mappings++;
    bool ok = e && e->as == as && e->va == va && e->pa == (*pte & PTE_ADDR) &&
              e->file == ((*pte & PTE_FILE) != 0);
    if (ok) {
        struct spinlock *l = lock_for(e);
        spin_lock(l);
        ok = on_list(e);
        spin_unlock(l);
    }
    st->errors += !ok;
}

void rmap_check_aspace(struct aspace *as, struct rmap_check_stats *st)
{
    rmap_sync();
    aspace_lock(as);
    as->check_gen = st->gen;
    for (const struct region *r = as->regions; r; r = r->next) {
        for (u64 va = r->start; va < r->end;) {
            u64 next = vm_next_candidate(as, va);
            if (next == va) {
                check_pte(as, va, st);
                next = va + PAGE_SIZE;
            }
            va = next;
        }
    }
    aspace_unlock(as);
}

/* An entry must be the one its (live) address space's PTE points at; of the same kind as
 * the list's first, and with rmap=family an anonymous frame's in the same family. */
static bool entry_ok(const struct rmap_entry *e, const struct rmap_entry *first, u64 pa, u64 gen)
{
    if (e->pa != pa || e->as->check_gen != gen || e->file != first->file)
        return false;
    if (rmap_mode == RMAP_FAMILY && !e->file && e->as->family != first->as->family)
        return false;
    u64 *pte = vm_pte(e->as, e->va, false);
    return pte && (*pte & PTE_COUNTED) && (*pte & PTE_ADDR) == pa && *pte_rmap_slot(pte) == e;
}

/* The errors of one frame's list, its length in *n. The world is stopped (vm_check_all),
 * so the list's first entry, read unlocked, names its lock (rmap=family) and stays. */
static u64 check_list(u64 pa, const struct rmap_entry *first, u64 gen, u32 *n)
{
    *n = 0;
    if (!first)
        return 0;
    struct spinlock *l = lock_for(first);
    spin_lock(l);
    u64 errors = 0;
    const struct rmap_entry *head = frame_meta(pa)->rmap;
    for (const struct rmap_entry *e = head; e; e = e->next, (*n)++)
        errors += !entry_ok(e, head, pa, gen);
    spin_unlock(l);
    return errors;
}

void rmap_check_frames(struct rmap_check_stats *st)
{
    rmap_sync();
    for (u64 f = 0; f < frames_span(); f++) {
        u64 pa = f * PAGE_SIZE;
        const struct frame_meta *m = frame_meta(pa);
        if (!m->rmap && !m->maps)
            continue;               /* the common case, read without the lock: quick */
        u32 n;
        st->errors += check_list(pa, m->rmap, st->gen, &n);
        st->entries += n;
        st->errors += n != frame_maps(pa);
    }
    st->errors += st->entries != st->mappings;
}
