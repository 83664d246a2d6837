/*
 * mallocbench sizes: P2's per-layer cost of dynamic allocation on ondol (`./ondol bench
 * alloc`, docs/alloc.md). Linked with ondol's allocator (build/user/libondolmalloc.a), in
 * the lock kind the kernel option malloc_lock= names.
 *
 * For each size from 16 B to 1 MiB (powers of two) it allocates a batch of blocks, writes
 * one byte in every page of each, and frees them, twice: "cold" (the first blocks of that
 * size) and "warm" (again, on what the first round left in the allocator's caches). Each
 * malloc and free call is timed on its own with the TSC (under QEMU icount: exact guest
 * instructions) and split by layer:
 *   library   the call minus the page-layer system calls it made (user-side TSC around
 *             each SYS_VM_MAP / SYS_VM_UNMAP, kept by lib/malloc/platform_ondol.c);
 *   page      those system calls (count, ticks), and the kernel's part of them: the
 *             vm_map / vm_unmap probes' sums;
 *   frames    the frame_alloc probe: frames allocated in the phase and their ticks (the
 *             data pages' frames come in the "touch" phase, on first write).
 * The kernel probes are read from pcnt slots; they count only when the probes are on, so
 * `./ondol bench alloc` runs `pcnt stat mallocbench sizes`. Without probes the kernel
 * fields are left out of the rows.
 * One result row per size, round and phase (malloc, touch, free); then an "end" line.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <ondol/result.h>
#include <ondol/sys.h>
#include <ondol/timing.h>

#include "mallocbench.h"
#include "ondol_malloc.h"

#define MIN_SIZE 16u
#define MAX_SIZE (1u << 20)
#define MAX_BLOCKS 64
#define BATCH_BYTES (8u << 20)       /* the largest sizes get fewer blocks: guest RAM is small */
#define PAGE 4096u
#define PROBE_SLOTS 32               /* the most slots a dump reads (PCNT_SLOTS' default) */

/* The kernel's probe slots, by name from PCNT_LIST ("probe NAME SLOT" lines), so the
 * benchmark follows the kernel's numbering (docs/measuring.md). */
static int slot_vm_map, slot_vm_unmap, slot_frame, dump_slots;

static int probe_slot(const char *list, const char *name)
{
    size_t n = strlen(name);
    for (const char *l = list; *l; l = strchr(l, '\n') ? strchr(l, '\n') + 1 : l + strlen(l))
        if (strncmp(l, "probe ", 6) == 0 && strncmp(l + 6, name, n) == 0 && l[6 + n] == ' ')
            return atoi(l + 7 + n);
    return 0;
}

static void find_probe_slots(void)
{
    static char list[1024];
    long len = SC4(SYS_PCNT, PCNT_LIST, (long)list, sizeof(list) - 1, 0);
    list[len > 0 ? len : 0] = 0;
    slot_vm_map = probe_slot(list, "vm_map");
    slot_vm_unmap = probe_slot(list, "vm_unmap");
    slot_frame = probe_slot(list, "frame_alloc");
    int top = slot_vm_map > slot_vm_unmap ? slot_vm_map : slot_vm_unmap;
    dump_slots = (slot_frame > top ? slot_frame : top) + 1;
}

/* What one phase cost beyond the per-call samples, read before and after it. */
struct layers {
    struct ondol_malloc_pages pages;
    struct pcnt_slot_info slot[PROBE_SLOTS];
};

struct phase {
    const char *name;
    uint64_t t[MAX_BLOCKS];          /* per call (or per block touched) */
    int n;
    struct layers before, after;
};

static void read_layers(struct layers *l)
{
    struct ondol_malloc_info info;
    ondol_malloc_info(&info);
    l->pages = info.pages;
    if (probes_on)
        SC4(SYS_PCNT, PCNT_DUMP, (long)l->slot, dump_slots, 0);
}

static int blocks_for(size_t size)
{
    size_t n = BATCH_BYTES / size;
    return n > MAX_BLOCKS ? MAX_BLOCKS : (int)n;
}

static uint64_t slot_delta_sum(const struct phase *p, int slot)
{
    return p->after.slot[slot].sum - p->before.slot[slot].sum;
}

static uint64_t slot_delta_count(const struct phase *p, int slot)
{
    return p->after.slot[slot].count - p->before.slot[slot].count;
}

static uint64_t slot_delta_dropped(const struct phase *p, int slot)
{
    return p->after.slot[slot].dropped - p->before.slot[slot].dropped;
}

/* The kernel probes' part of a row, or "" without probes. */
static void kernel_fields(const struct phase *p, char *buf, size_t len)
{
    if (!probes_on) {
        buf[0] = '\0';
        return;
    }
    snprintf(buf, len,
             ",\"kernel_vm\":%llu,\"frames\":%llu,\"frame_ticks\":%llu,\"probe_dropped\":%llu",
             (unsigned long long)(slot_delta_sum(p, slot_vm_map) + slot_delta_sum(p, slot_vm_unmap)),
             (unsigned long long)slot_delta_count(p, slot_frame),
             (unsigned long long)slot_delta_sum(p, slot_frame),
             (unsigned long long)(slot_delta_dropped(p, slot_vm_map) +
                                  slot_delta_dropped(p, slot_vm_unmap) +
                                  slot_delta_dropped(p, slot_frame)));
}

/* One result row: per-call statistics (TSC), the library's own mean, the page layer. */
static void report(const struct phase *p, size_t size, const char *round)
{
    uint64_t sorted[MAX_BLOCKS], total = 0;
    memcpy(sorted, p->t, sizeof(uint64_t) * (size_t)p->n);
    sort_u64(sorted, (size_t)p->n);
    for (int i = 0; i < p->n; i++)
        total += p->t[i];
    const struct ondol_malloc_pages *a = &p->after.pages, *b = &p->before.pages;
    uint64_t page_calls = (a->maps - b->maps) + (a->unmaps - b->unmaps);
    uint64_t page_ticks = (a->map_ticks - b->map_ticks) + (a->unmap_ticks - b->unmap_ticks);
    char kernel[160];
    kernel_fields(p, kernel, sizeof kernel);
    result_printf("{\"type\":\"result\",\"bench\":\"alloc\",\"test\":\"%s\",\"size\":%zu,"
                  "\"round\":\"%s\",\"lock_in_force\":\"%s\",\"unit\":\"tsc\",\"median\":%llu,\"min\":%llu,"
                  "\"max\":%llu,\"n\":%d,\"mean\":%llu,\"library\":%llu,\"page_calls\":%llu,"
                  "\"page_ticks\":%llu%s}",
                  p->name, size, round, lock_kind, (unsigned long long)sorted[p->n / 2],
                  (unsigned long long)sorted[0], (unsigned long long)sorted[p->n - 1], p->n,
                  (unsigned long long)(total / (uint64_t)p->n),
                  (unsigned long long)((total - page_ticks) / (uint64_t)p->n),
                  (unsigned long long)page_calls, (unsigned long long)page_ticks, kernel);
}

static void run_round(size_t size, const char *round)
{
    static struct phase alloc = {.name = "malloc"}, touch = {.name = "touch"},
                        release = {.name = "free"};
    static char *block[MAX_BLOCKS];
    int n = blocks_for(size);
    alloc.n = touch.n = release.n = n;

    read_layers(&alloc.before);
    for (int i = 0; i < n; i++) {
        uint64_t t0 = rdtsc();
        block[i] = malloc(size);
        alloc.t[i] = rdtsc() - t0;
    }
    read_layers(&alloc.after);
    for (int i = 0; i < n; i++) {
        if (block[i] == NULL) {
            bench_fail("malloc failed");
        }
    }
    touch.before = alloc.after;
    for (int i = 0; i < n; i++) {
        uint64_t t0 = rdtsc();
        for (size_t off = 0; off < size; off += PAGE)
            ((volatile char *)block[i])[off] = 1;
        touch.t[i] = rdtsc() - t0;
    }
    read_layers(&touch.after);
    release.before = touch.after;
    for (int i = 0; i < n; i++) {
        uint64_t t0 = rdtsc();
        free(block[i]);
        release.t[i] = rdtsc() - t0;
    }
    read_layers(&release.after);
    report(&alloc, size, round);
    report(&touch, size, round);
    report(&release, size, round);
}

int run_sizes(void)
{
    if (probes_on)
        find_probe_slots();
    int total = 0, done = 0;
    for (size_t s = MIN_SIZE; s <= MAX_SIZE; s *= 2)
        total++;
    for (size_t s = MIN_SIZE; s <= MAX_SIZE; s *= 2) {
        run_round(s, "cold");
        run_round(s, "warm");
        result_printf("{\"type\":\"progress\",\"bench\":\"alloc\",\"done\":%d,\"total\":%d}",
                      ++done, total);
    }
    return 0;
}
