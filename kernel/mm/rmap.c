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
 *           in order. An insert sets the entry's insert mark; a remove atomically swaps it
 *           clear: if it was set, the insert is still in a log and both cancel (the
 *           applier skips and frees the entry), else the insert is applied and the remove
 *           is logged. A full log is applied at once by its writer, and only that log (P4
 *           applies the others on read). A log is applied under its own lock (one applier
 *           at a time, in order), each operation under its frame's lock as in lock mode
 *           (P4 applies per object), so CPUs apply their logs in parallel. A remove is
 *           logged only after its insert's swap, which an applier makes in the same hold
 *           of the frame's lock as the link, so whichever CPU applies the remove, from
 *           whichever log, takes that lock after the link: one entry's two operations
 *           keep their order, and a list changes only under its frame's lock.
 * The logs are single-producer rings, one per CPU. Each CPU counts its own inserts, removes,
 * cancellations, full-log passes and entries it applied from other CPUs' logs on its log's
 * lines (rmap_stats; no shared line is written for them), and every lock carries
 * MARK_LOCK markers so the coherence model replays its hand-offs.
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

/* One CPU appends at tail; an applier (any CPU, holding the log's lock) consumes to head
 * and counts the operations it applied (applied). The other counters are the owning CPU's
 * (rmap_stats): its updates of every mode, then in log mode its passes over its own full
 * log and the entries it applied from other CPUs' logs (as a reader: a full log's pass
 * applies its own only). */
struct rmap_log {
    u32 head, tail;
    struct spinlock lock;        /* class rmap_log: applying this log */
    u64 applied;
    u64 inserts, removes, cancelled;
    u64 full_passes, foreign;
    struct rmap_op ops[LOG_OPS];
} __attribute__((aligned(64)));

static struct rmap_log logs[MAX_CPUS] = {[0 ... MAX_CPUS - 1] = {.lock = SPINLOCK_INIT(RMAP_LOG)}};
static struct spinlock global_lock = SPINLOCK_INIT(RMAP_GLOBAL);  /* rmap=global: the map */

/* The coherence model's lock ids (marker.h): the global lock, and the frame locks hashed
 * by frame number (two frames may share an id: the model then orders them as one lock). */
#define LOCK_ID_FRAME0 (LOCK_ID_RMAP_GLOBAL + 1)
#define LOCK_ID_FRAMES 256
/* Then the family locks, by the family's serial number, and the logs' locks, by CPU
 * (tools/ondol/aim.py counts ids up to LOCK_ID_LOG0 + MAX_CPUS as the reverse map's). */
#define LOCK_ID_FAMILY0 (LOCK_ID_FRAME0 + LOCK_ID_FRAMES)
#define LOCK_ID_FAMILIES 256
#define LOCK_ID_LOG0 (LOCK_ID_FAMILY0 + LOCK_ID_FAMILIES)

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
    if (l->cls == LOCK_RMAP_LOG)
        return LOCK_ID_LOG0 + (unsigned)(container_of(l, struct rmap_log, lock) - logs);
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

/* The lock guarding the list of e's frame: in log mode (where lists change only while logs
 * are applied) and lock mode the frame's; in family mode an anonymous frame's is the
 * family of e's address space (the caller holds that address space's lock, or stops the
 * world: the family stays). */
static struct spinlock *lock_for(const struct rmap_entry *e)
{
    if (rmap_mode == RMAP_GLOBAL)
        return &global_lock;
    if (rmap_mode == RMAP_FAMILY && !e->file)
        return &e->as->family->lock;
    return &frame_meta(e->pa)->lock;
}

/* The lock guarding the list of a file object's frame at pa. */
static struct spinlock *file_lock_for(u64 pa)
{
    return rmap_mode == RMAP_GLOBAL ? &global_lock : &frame_meta(pa)->lock;
}

/* One logged operation of l, under its frame's lock: an insert's swap and link are one
 * hold, so its remove, logged only after the swap, is applied after the link. An insert
 * whose mark is already clear was cancelled by its remove (a mark never turns on again):
 * nothing to link, no lock. */
static void apply_op(struct rmap_log *l, struct rmap_op op)
{
    struct rmap_entry *e = op.e;
    bool keep = false;
    if (!op.insert || __atomic_load_n(&e->insert_mark, __ATOMIC_ACQUIRE)) {
        u64 pa = e->pa;
        struct spinlock *fl = &frame_meta(pa)->lock;
        lock_marked(fl, pa);
        keep = op.insert && __atomic_exchange_n(&e->insert_mark, 0, __ATOMIC_ACQ_REL);
        if (keep)
            link(e);
        else if (!op.insert)
            unlink(e);
        unlock_marked(fl, pa);
        l->applied += keep || !op.insert;
    }
    if (!keep)
        rmap_entry_discard(e);      /* removed, or removed before its insert was applied */
}

/* apply_op under the rmap_apply probe (para: 1 insert, 0 remove): the deferred half of a
 * log-mode update, so log's cost is an insert or remove plus this. */
static PCNT_COLD void apply_op_probed(struct rmap_log *l, struct rmap_op op)
{
    pcnt_probe_start(PROBE_RMAP_APPLY, op.insert);
    apply_op(l, op);
    pcnt_probe_stop(PROBE_RMAP_APPLY);
}

/* The operations l holds, in order, under its lock; how many. */
static u32 apply_log(struct rmap_log *l)
{
    lock_marked(&l->lock, 0);
    u32 head = l->head, tail = __atomic_load_n(&l->tail, __ATOMIC_ACQUIRE);
    for (u32 i = head; i != tail; i++) {
        if (pcnt_probed())
            apply_op_probed(l, l->ops[i % LOG_OPS]);
        else
            apply_op(l, l->ops[i % LOG_OPS]);
    }
    __atomic_store_n(&l->head, tail, __ATOMIC_RELEASE);
    unlock_marked(&l->lock, 0);
    return tail - head;
}

/* A full log, by its writer: only its own, so a CPU whose log fills often (the MK UNIX
 * server's, of the munmaps' removes) does not become every CPU's applier, reading their
 * logs' lines; theirs wait until they fill or a reader comes (the file comment says why
 * the order of each entry's operations holds). */
static void apply_full(struct rmap_log *l)
{
    apply_log(l);
    l->full_passes++;
}

/* For a reader: every log. Only the started CPUs' logs: the others are empty (a CPU logs
 * once the scheduler runs threads on it, after the bootstrap CPU counted every CPU
 * started), and with MAX_CPUS 64 reading every log's tail cost each pass 64 cache lines on
 * a machine of a few CPUs. */
void rmap_sync(void)
{
    if (rmap_mode != RMAP_LOG)
        return;
    struct rmap_log *own = &logs[this_cpu()->id];
    for (unsigned c = 0; c < cpus_running; c++) {
        u32 n = apply_log(&logs[c]);
        if (&logs[c] != own)
            own->foreign += n;
    }
}

/* Read under the list's lock (in log mode after the logs are applied): an entry on a list
 * is freed only after it is unlinked under that lock. */
bool rmap_first(u64 pa, struct aspace **as, u64 *va)
{
    rmap_sync();
    struct spinlock *l = file_lock_for(pa);
    lock_marked(l, pa);
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
        apply_full(l);
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
    *st = (struct rmap_stats){0};
    for (int c = 0; c < MAX_CPUS; c++) {
        st->applied += logs[c].applied;
        st->inserts += logs[c].inserts;
        st->removes += logs[c].removes;
        st->cancelled += logs[c].cancelled;
        st->full_passes += logs[c].full_passes;
        st->foreign += logs[c].foreign;
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
