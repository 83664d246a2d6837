/*
 * Page tables. The kernel half (PML4 entries 256..511) is built once by vm_init and shared
 * by every address space: each new PML4 copies those entries, and since all of them point
 * to tables that exist from boot, later kernel mappings show up everywhere. Kernel-half
 * mappings are global (G) and use 2 MiB pages; user mappings use 4 KiB pages, never global.
 * A last-level table (PT) is two contiguous frames: the 512 PTEs, then 512 slots, one per
 * PTE, for the reverse-map entry of the mapping (rmap.c; pte_rmap_slot in vm.h), so the
 * code that changes a PTE finds its entry in O(1).
 */
#include <ondol/abi.h>
#include "arch.h"
#include "kernel.h"
#include "klock.h"
#include "kobj.h"
#include "marker.h"
#include "memlayout.h"
#include "options.h"
#include "pmm.h"
#include "region.h"
#include "rmap.h"
#include "task.h"
#include "thread.h"
#include "vm.h"

u64 kernel_pml4_pa;
u64 marker_zero_frame;
static struct kcache aspace_cache = KCACHE_INIT("aspace", sizeof(struct aspace));
static u64 asid_bitmap[4096 / 64];
static struct spinlock asid_lock = SPINLOCK_INIT(ASID);

static u64 *table(u64 pa) { return phys_to_virt(pa & PTE_ADDR); }

static u64 nx(void) { return cpu_features.nx ? PTE_NX : 0; }

/* Frames of a page table one level below `level` (a PT under a PD entry has two). */
static size_t table_frames(int level) { return level == 1 ? 2 : 1; }

/* Walk to the PTE for va, allocating intermediate tables when create is set. */
static u64 *walk(u64 pml4_pa, u64 va, bool create, u64 table_flags)
{
    u64 *t = table(pml4_pa);
    for (int level = 3; level > 0; level--) {
        u64 *e = &t[(va >> (12 + 9 * level)) & 511];
        if (!(*e & PTE_P)) {
            if (!create)
                return NULL;
            u64 pa = frame_alloc_contig(table_frames(level));
            if (!pa)
                return NULL;
            *e = pa | table_flags;
        }
        if (*e & PTE_PS)
            return NULL;    /* large page: not walkable to 4 KiB */
        t = table(*e);
    }
    return &t[(va >> 12) & 511];
}

static u64 *kernel_pd_for(u64 pml4_pa, u64 va)
{
    u64 *pml4 = table(pml4_pa);
    u64 *pdpt = table(pml4[(va >> 39) & 511]);
    u64 *e = &pdpt[(va >> 30) & 511];
    if (!(*e & PTE_P)) {
        u64 pa = frame_alloc();
        ASSERT(pa);
        *e = pa | PTE_P | PTE_W;
    }
    return table(*e);
}

void vm_init(u64 max_phys)
{
    kernel_pml4_pa = frame_alloc();
    ASSERT(kernel_pml4_pa);
    u64 *pml4 = table(kernel_pml4_pa);
    for (int i = 256; i < 512; i++) {   /* every kernel-half PDPT exists from the start */
        u64 pa = frame_alloc();
        ASSERT(pa);
        pml4[i] = pa | PTE_P | PTE_W;
    }
    u64 g = cpu_features.pge ? PTE_G : 0;
    /* PHYSMAP: all of RAM and the low 4 GiB (device MMIO lives in [3 GiB, 4 GiB): uncached). */
    u64 physmap_end = ALIGN_UP(MAX(max_phys, 4ull << 30), 2ull << 20);
    for (u64 pa = 0; pa < physmap_end; pa += 2ull << 20) {
        u64 va = PHYSMAP_BASE + pa;
        u64 *pd = kernel_pd_for(kernel_pml4_pa, va);
        u64 cache = (pa >= (3ull << 30) && pa < (4ull << 30)) ? PTE_PCD | PTE_PWT : 0;
        pd[(va >> 21) & 511] = pa | PTE_P | PTE_W | PTE_PS | g | nx() | cache;
    }
    /* Kernel image: the first 1 GiB of physical memory at KERNEL_VMA (2 MiB pages). */
    for (u64 pa = 0; pa < (1ull << 30); pa += 2ull << 20) {
        u64 va = KERNEL_VMA + pa;
        u64 *pd = kernel_pd_for(kernel_pml4_pa, va);
        pd[(va >> 21) & 511] = pa | PTE_P | PTE_W | PTE_PS | g;
    }
    /* Marker window: 16 read-only 4 KiB pages, all backed by one zero frame. */
    marker_zero_frame = frame_alloc();
    ASSERT(marker_zero_frame);
    for (u64 off = 0; off < MARKER_SIZE; off += PAGE_SIZE) {
        u64 *pte = walk(kernel_pml4_pa, MARKER_BASE + off, true, PTE_P | PTE_W);
        ASSERT(pte);
        *pte = marker_zero_frame | PTE_P | g | nx();
    }
    write_cr3(kernel_pml4_pa);
    asid_bitmap[0] |= 1;   /* asid 0 is the kernel */
}

/* Per CPU, the asids whose TLB entries (PCID) must go at their next load there: see
 * aspace_load_tagged */
static u64 asid_stale[MAX_CPUS][4096 / 64];

/* Atomic: another CPU may set a mark while this one clears its own (aspace_load_tagged),
 * now that page tables change outside the kernel lock. */
static void asid_mark_stale_on(int cpu, int asid)
{
    __atomic_or_fetch(&asid_stale[cpu][asid / 64], 1ull << (asid % 64), __ATOMIC_SEQ_CST);
}

static void asid_mark_stale(int asid)
{
    for (int cpu = 0; cpu < MAX_CPUS; cpu++)
        asid_mark_stale_on(cpu, asid);
}

/* A fresh asid: a previous owner's entries may still be tagged with it. */
static int asid_alloc(void)
{
    spin_lock(&asid_lock);
    for (int i = 1; i < 4096; i++) {
        if (!(asid_bitmap[i / 64] & (1ull << (i % 64)))) {
            asid_bitmap[i / 64] |= 1ull << (i % 64);
            asid_mark_stale(i);
            spin_unlock(&asid_lock);
            return i;
        }
    }
    spin_unlock(&asid_lock);
    return -1;
}

static void asid_free(int asid)
{
    spin_lock(&asid_lock);
    asid_bitmap[asid / 64] &= ~(1ull << (asid % 64));
    spin_unlock(&asid_lock);
}

struct aspace *aspace_create(void)
{
    struct aspace *as = kobj_alloc(&aspace_cache);
    if (!as)
        return NULL;
    as->pml4_pa = frame_alloc();
    as->asid = asid_alloc();
    if (!as->pml4_pa || as->asid < 0 || !rmap_family_start(as)) {
        if (as->pml4_pa)
            frame_free(as->pml4_pa);
        if (as->asid > 0)
            asid_free(as->asid);
        kobj_free(&aspace_cache, as);
        return NULL;
    }
    spin_lock_init(&as->lock, LOCK_ASPACE);
    as->batch = NULL;
    as->cr3 = as->pml4_pa | (pcid_active ? (u64)as->asid : 0);
    memcpy(table(as->pml4_pa) + 256, table(kernel_pml4_pa) + 256, 256 * sizeof(u64));
    as->map_next = USER_MAP_BASE;
    return as;
}

/* mmu=off (P2's uClinux): one address space for every task. With one page table there is
 * no CR3 to load between tasks: aspace_switch finds it loaded, the IPC fastpath skips it
 * (one_aspace, in its CR3 gate). */
bool mmu_on = true;            /* option mmu */
static struct aspace *shared_as;

struct aspace *aspace_for_task(void)
{
    if (mmu_on)
        return aspace_create();
    if (!shared_as && (shared_as = aspace_create())) {
        shared_as->shared = true;
        one_aspace = true;
    }
    return shared_as;
}

void aspace_lock_pair(struct aspace *a, struct aspace *b)
{
    struct aspace *first = a < b ? a : b, *second = a < b ? b : a;
    aspace_lock(first);
    if (second != first)
        spin_lock_nested(&second->lock);
}

void aspace_unlock_pair(struct aspace *a, struct aspace *b)
{
    aspace_unlock(a);
    if (b != a)
        aspace_unlock(b);
}

/* The other CPUs with as loaded: each CPU publishes the CR3 it loads (loaded_cr3, written
 * before every load: aspace_load, the IPC fastpath, TLB_LEAVE). Not stable without the
 * kernel lock (a page fault changes PTEs under its address space's lock only while other
 * CPUs switch): the CR3 load serialises after the store, and the initiator fences
 * between its PTE stores and this scan (flush_pages), so a CPU the scan misses loads CR3
 * only after the new PTEs are visible to its page walks. No pointer is followed: another
 * CPU's thread or task may be freed meanwhile. */
static cpumask_t cpus_with_loaded(const struct aspace *as)
{
    cpumask_t mask = 0;
    int self = this_cpu()->id;
    for (unsigned i = 0; i < cpus_running; i++)
        if ((int)i != self && __atomic_load_n(&cpus[i].loaded_cr3, __ATOMIC_RELAXED) == as->cr3)
            mask |= cpu_bit(i);
    return mask;
}

/* Free the user page tables below the table at `pa` (level 3 = PML4 ... 0 = PT). The
 * pages themselves went with the regions (regions_destroy), so every leaf is empty. */
static void free_level(u64 pa, int level)
{
    u64 *t = table(pa);
    int n = level == 3 ? 256 : 512;
    for (int i = 0; i < n; i++) {
        ASSERT(level > 0 || !t[i]);
        if (level > 0 && (t[i] & PTE_P))
            free_level(t[i] & PTE_ADDR, level - 1);
    }
    frame_free_contig(pa, level == 0 ? 2 : 1);
}

/* Per CPU, a line each (the coherence model counts shared lines). The mark is stored
 * before vm_resolve takes the address space's lock and cleared (release) after the last
 * byte: a clone that takes the lock after a marked resolve sees the mark; one that held
 * it before makes the resolve break copy-on-write. */
static struct {
    struct aspace *as;
} __attribute__((aligned(64))) kwriting[MAX_CPUS];

void vm_kwrite_begin(struct aspace *as)
{
    __atomic_store_n(&kwriting[this_cpu()->id].as, as, __ATOMIC_RELAXED);
}

void vm_kwrite_end(void)
{
    __atomic_store_n(&kwriting[this_cpu()->id].as, NULL, __ATOMIC_RELEASE);
}

bool vm_kwrite_busy(const struct aspace *as)
{
    for (unsigned i = 0; i < cpus_running; i++)
        if (__atomic_load_n(&kwriting[i].as, __ATOMIC_ACQUIRE) == as)
            return true;
    return false;
}

static struct aspace *doomed_list;   /* under the kernel lock */

void aspace_hold(struct aspace *as) { __atomic_add_fetch(&as->holds, 1, __ATOMIC_RELAXED); }

static void destroy_now(struct aspace *as);

void aspace_unhold(struct aspace *as)
{
    u32 left = __atomic_sub_fetch(&as->holds, 1, __ATOMIC_ACQ_REL);
    ASSERT((left & ~ASPACE_DOOMED) != ~ASPACE_DOOMED);      /* no unhold without a hold */
    if (left != ASPACE_DOOMED)
        return;
    bool took = kernel_lock_unless_held();
    struct aspace **pp = &doomed_list;
    while (*pp != as)
        pp = &(*pp)->doomed_next;
    *pp = as->doomed_next;
    destroy_now(as);
    kernel_unlock_if(took);
}

void aspaces_doomed_each(void (*fn)(struct aspace *as, void *arg), void *arg)
{
    for (struct aspace *as = doomed_list; as; as = as->doomed_next)
        fn(as, arg);
}

void aspace_leave_all(struct aspace *as)
{
    if (read_cr3() == as->cr3 && aspace_switch(NULL))
        cpu_count_cr3_load();
    cpumask_t others = cpus_with_loaded(as);    /* idle CPUs that last ran one of its threads */
    if (others && tlb_shootdown(others, as->cr3, NULL, 0, TLB_LEAVE) != 0)
        panic("vm: a CPU did not leave an address space being destroyed");
}

/* The mark and the last unhold's test are one atomic word: exactly one of them
 * destroys it. Under the kernel lock, which the doomed list needs, and which an unhold
 * that must destroy waits for, so the list holds the address space before it looks. */
void aspace_destroy(struct aspace *as)
{
    ASSERT(!as->shared);
    if (__atomic_fetch_or(&as->holds, ASPACE_DOOMED, __ATOMIC_ACQ_REL) != 0) {
        as->doomed_next = doomed_list;
        doomed_list = as;
        return;
    }
    destroy_now(as);
}

static void destroy_now(struct aspace *as)
{
    aspace_leave_all(as);
    regions_teardown(as);
    rmap_family_leave(as);
    free_level(as->pml4_pa, 3);
    asid_free(as->asid);
    kobj_free(&aspace_cache, as);
}

/* ---- CR3 and PCID -----------------------------------------------------------------------
 * With PCID (pcid=on, CPU support: pcid_active) CR3 carries the address space's asid as
 * its PCID and is loaded with the no-flush bit: every address space's translations stay
 * in the TLB, tagged, so switching back to a task finds them (an IPC round trip between
 * two tasks no longer refills ITLB and DTLB). An asid's entries can be stale only when
 * its page tables changed while it was not loaded (aspace_tlb_stale) or the asid was
 * given to a new address space; it is marked, and its next load drops its own entries
 * (no-flush bit clear: that PCID only). The marks are per CPU.
 * Without PCID every CR3 load drops all non-global entries, as before. */
void aspace_tlb_stale(struct aspace *as) { asid_mark_stale(as->asid); }


/* cr3: an aspace's cr3 (PCID in its low bits) or kernel_pml4_pa (PCID 0). */
void aspace_load_tagged(u64 cr3, int asid)
{
    marker_asid_switch(asid);
    struct cpu *c = this_cpu();
    unsigned a = (unsigned)asid;          /* never negative: shifts, not divisions */
    u64 bit = 1ull << (a % 64);
    /* locked: orders aspace_load's store of loaded_cr3 before the mark's read (flush_pages) */
    bool stale = __atomic_fetch_and(&asid_stale[c->id][a / 64], ~bit, __ATOMIC_SEQ_CST) & bit;
    marker_cr3_pcid(stale);
    write_cr3(cr3 | (stale ? 0 : CR3_NOFLUSH));
}

u64 *vm_pte(struct aspace *as, u64 va, bool create)
{
    return walk(as->pml4_pa, va, create, PTE_P | PTE_W | PTE_U);
}

u64 vm_next_candidate(struct aspace *as, u64 va)
{
    u64 *t = table(as->pml4_pa);
    for (int level = 3; level > 0; level--) {
        u64 e = t[(va >> (12 + 9 * level)) & 511];
        if (!(e & PTE_P)) {
            u64 span = 1ull << (12 + 9 * level);
            return ALIGN_DOWN(va, span) + span;
        }
        t = table(e);
    }
    return va;
}

/* ---- flushing (docs/smp.md "TLB shootdown") -------------------------------------------
 * Drop any cached translation of the pages va[0..n) on every CPU, before the caller may
 * reuse their frames: here and on every other CPU that has the address space loaded at
 * once (shootdown IPI, waited for), on the others at their next load of it (with PCID
 * its tagged entries outlive the switch away, so every other CPU gets the stale mark,
 * set before the scan: a CPU switching to it concurrently either is seen or sees the
 * mark; without PCID a load drops them). */
static void flush_pages(struct aspace *as, const u64 *va, u32 n)
{
    int self = this_cpu()->id;
    if (read_cr3() == as->cr3) {
        for (u32 i = 0; i < n; i++) {
            marker_invlpg(va[i]);
            invlpg(va[i]);
        }
    } else {
        asid_mark_stale_on(self, as->asid);
    }
    if (cpus_running == 1)
        return;
    if (pcid_active)
        for (unsigned i = 0; i < cpus_running; i++)
            if ((int)i != self)
                asid_mark_stale_on((int)i, as->asid);
    __atomic_thread_fence(__ATOMIC_SEQ_CST);       /* the PTE stores before the scan */
    cpumask_t loaded = cpus_with_loaded(as);
    if (loaded && tlb_shootdown(loaded, as->cr3, va, n, TLB_PAGES) != 0)
        panic("vm: a CPU did not answer a TLB shootdown");
}

static struct defer_list {
    u32 n;
    u64 frames[VM_DEFER_MAX];
} __attribute__((aligned(64))) deferred[MAX_CPUS];

/* An anonymous frame without mappings: freed now under the kernel lock, else deferred
 * (vm.h). Per CPU without a lock: interrupts are off and the adder frees them before it
 * leaves the kernel. */
static void free_anon(u64 pa)
{
    if (kernel_lock_held()) {
        frame_free(pa);
        return;
    }
    struct defer_list *d = &deferred[this_cpu()->id];
    ASSERT(d->n < VM_DEFER_MAX);
    d->frames[d->n++] = pa;
}

bool vm_frames_deferred(void) { return deferred[this_cpu()->id].n != 0; }

static void free_all(struct defer_list *d)
{
    while (d->n)
        frame_free(d->frames[--d->n]);
}

void vm_free_deferred(void)
{
    ASSERT(kernel_lock_held());
    free_all(&deferred[this_cpu()->id]);
}

void vm_free_deferred_unlocked(void)
{
    ASSERT(!kernel_lock_held());            /* its holder would wait for itself */
    struct defer_list *d = &deferred[this_cpu()->id];
    struct bkl_grace g;
    if (d->n && !bkl_grace_start(&g))
        bkl_grace_wait(&g);
    free_all(d);
}

/* One mapping of a counted frame fewer (old: its PTE), or page-table frames (address |
 * their count, vm_prune) back to the allocator. */
static void release(u64 item)
{
    u64 pa = item & PTE_ADDR;
    if (item & 3)
        frame_free_contig(pa, item & 3);
    else if (item & PTE_ANON) {
        if (frame_map_dec(pa) == 0)
            free_anon(pa);
    } else if (item & PTE_FILE) {
        frame_map_dec(pa);
    }
}

void vm_batch_flush(struct aspace *as)
{
    struct vm_batch *b = as->batch;
    if (!b)
        return;
    if (b->pages)
        flush_pages(as, b->va, b->pages);
    for (u32 i = 0; i < b->puts; i++)
        release(b->put[i]);
    b->pages = b->puts = 0;
}

static void flush_page(struct aspace *as, u64 va)
{
    struct vm_batch *b = as->batch;
    if (!b) {
        flush_pages(as, &va, 1);
        return;
    }
    if (b->pages == VM_BATCH)
        vm_batch_flush(as);
    b->va[b->pages++] = va;
}

/* A release after the flush of the PTEs changed so far. */
static void release_later(struct aspace *as, u64 item)
{
    struct vm_batch *b = as->batch;
    if (!b) {
        release(item);
        return;
    }
    if (b->puts == VM_BATCH)
        vm_batch_flush(as);
    b->put[b->puts++] = item;
}

void vm_frame_put(struct aspace *as, u64 old) { release_later(as, old & (PTE_ADDR | PTE_COUNTED)); }

void vm_batch_begin(struct aspace *as, struct vm_batch *b)
{
    spin_assert_held(&as->lock);
    ASSERT(!as->batch);
    b->pages = b->puts = 0;
    as->batch = b;
}

void vm_batch_end(struct aspace *as)
{
    vm_batch_flush(as);
    as->batch = NULL;
}

void vm_set_pte(struct aspace *as, u64 va, u64 *pte, u64 val)
{
    spin_assert_held(&as->lock);
    u64 old = *pte;
    *pte = val;
    if (!old && val)
        as->pages++;
    if (old & PTE_P)
        flush_page(as, va);
}

static bool table_empty(const u64 *t)
{
    for (int i = 0; i < 512; i++)
        if (t[i])
            return false;
    return true;
}

u64 *vm_pt(struct aspace *as, u64 va, bool create)
{
    u64 *pte = vm_pte(as, va, create);
    return pte ? pte - vm_pt_index(va) : NULL;
}

u64 vm_take_pte(struct aspace *as, u64 va, u64 *pte)
{
    spin_assert_held(&as->lock);
    u64 old = *pte;
    *pte = 0;
    if (old)
        as->pages--;
    if (old & PTE_P)
        flush_page(as, va);
    return old;
}

/* Page-table pages left empty are freed too, so that map/unmap cycles return the frame
 * count exactly to where it was; with a batch, after its flush (paging-structure caches
 * of other CPUs may still point at them until then). */
void vm_prune(struct aspace *as, u64 va)
{
    u64 *path[4];
    u64 *t = table(as->pml4_pa);
    for (int level = 3; level >= 1; level--) {
        u64 *e = &t[(va >> (12 + 9 * level)) & 511];
        if (!*e)
            return;
        path[level] = e;
        t = table(*e);
    }
    for (int level = 1; level <= 3; level++) {      /* PT, PD, then PDPT */
        if (!table_empty(table(*path[level])))
            break;
        u64 pa = *path[level] & PTE_ADDR;
        *path[level] = 0;
        release_later(as, pa | table_frames(level));
    }
}

u64 vm_lookup(struct aspace *as, u64 va, u64 *flags)
{
    u64 *pte = walk(as->pml4_pa, va, false, 0);
    if (!pte || !(*pte & PTE_P))
        return 0;
    if (flags)
        *flags = *pte & ~PTE_ADDR;
    return *pte & PTE_ADDR;
}

u64 pte_flags_for_prot(unsigned prot)
{
    u64 f = 0;
    if (prot & PROT_WRITE)
        f |= PTE_W;
    if (!(prot & PROT_EXEC))
        f |= nx();
    return f;
}
