/*
 * vmtest MODE: regions, demand paging, partial unmap and protect (docs/memory.md).
 *
 *   demand   untouched pages of a mapping hold no frame; each first touch takes exactly one
 *   split    unmap and protect of part of a region split it; contents survive elsewhere,
 *            read-only and PROT_NONE ranges keep their pages
 *   place    fixed, hint and anywhere placement; errors (alignment, range, flags, rights)
 *   all      the three above; prints "vmtest ok" when every check passed
 * Modes that must kill the program (the kernel prints a report line):
 *   ro       write to a page made read-only with SYS_VM_PROTECT
 *   nx       execute a page mapped without PROT_EXEC
 *   guard    touch the guard page after a SYS_VM_MAP mapping
 *   none     read a PROT_NONE region
 *   hole     read a page unmapped from the middle of a region
 *   oom      write to every page of 1 GiB, more than the machine has: out of memory
 * A fault mode that returns prints "vmtest: MODE survived" and exits 1.
 */
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <ondol/sys.h>

#define PAGE 4096ul
#define RW (PROT_READ | PROT_WRITE)

static int failures;

#define CHECK(cond, what)                                                          \
    do {                                                                           \
        if (!(cond)) {                                                             \
            printf("vmtest: FAIL %s (line %d)\n", what, __LINE__);                 \
            failures++;                                                            \
        }                                                                          \
    } while (0)

/* Free frames, counting those the kernel-object allocator holds as free: the reverse-map
 * entries of newly touched pages may take a new kernel-object frame now and then, which is
 * not a page of this program's. */
static uint64_t frames_free(void)
{
    struct meminfo m;
    sys_meminfo(&m);
    return m.frames_free + m.kobj_frames;
}

static volatile uint8_t *map(size_t pages, unsigned prot)
{
    long a = sys_vm_map(pages * PAGE, prot);
    if (a < 0) {
        printf("vmtest: map failed %ld\n", a);
        failures++;
        return NULL;
    }
    return (volatile uint8_t *)(uintptr_t)a;
}

static void demand(void)
{
    volatile uint8_t *p = map(64, RW);
    if (!p)
        return;
    p[0] = 1;                                  /* page tables for the range now exist */
    uint64_t before = frames_free();
    for (int i = 1; i < 64; i++)
        CHECK(p[i * PAGE] == 0, "fresh page is zero");   /* reads take frames too */
    CHECK(before - frames_free() == 63, "one frame per touched page");
    for (int i = 0; i < 64; i++)
        p[i * PAGE + 7] = (uint8_t)i;
    CHECK(before - frames_free() == 63, "writes after reads take no frame");
    CHECK(sys_vm_unmap((void *)p, 64 * PAGE) == 0, "unmap");
    CHECK(frames_free() > before, "unmap frees the frames and the tables");
}

static void fill(volatile uint8_t *p, int pages)
{
    for (int i = 0; i < pages; i++)
        p[i * PAGE + 100] = (uint8_t)(0xa0 + i);
}

static int holds(volatile uint8_t *p, int page)
{
    return p[page * PAGE + 100] == (uint8_t)(0xa0 + page);
}

static void split(void)
{
    volatile uint8_t *p = map(8, RW);
    if (!p)
        return;
    fill(p, 8);
    CHECK(sys_vm_unmap((void *)(p + 3 * PAGE), PAGE) == 0, "unmap page 3");
    CHECK(holds(p, 2) && holds(p, 4), "neighbours of the hole keep their data");
    CHECK(sys_vm_protect((void *)(p + 5 * PAGE), 2 * PAGE, PROT_READ) == 0, "protect 5-6 ro");
    CHECK(holds(p, 5) && holds(p, 6) && holds(p, 7), "read-only pages keep their data");
    p[7 * PAGE] = 1;                                       /* page 7 is still writable */
    CHECK(sys_vm_protect((void *)(p + 5 * PAGE), PAGE, PROT_NONE) == 0, "protect 5 none");
    CHECK(sys_vm_protect((void *)(p + 5 * PAGE), 2 * PAGE, RW) == 0, "protect 5-6 rw");
    CHECK(holds(p, 5) && holds(p, 6), "PROT_NONE kept the page");
    p[5 * PAGE] = 2;
    CHECK(sys_vm_protect((void *)(p + 2 * PAGE), 3 * PAGE, PROT_READ) == E_FAULT,
          "protect over the hole is E_FAULT");
    CHECK(sys_vm_protect((void *)(p + PAGE), PAGE, 8) == E_INVAL, "bad prot");
    CHECK(sys_vm_unmap((void *)p, 8 * PAGE) == 0, "unmap all, hole included");
}

static void place(void)
{
    uintptr_t at = 0x300000000000ul;
    long a = sys_vm_mmap((void *)at, 4 * PAGE, RW, VM_MMAP_FIXED, 0);
    CHECK(a == (long)at, "fixed address taken");
    volatile uint8_t *p = (volatile uint8_t *)at;
    fill(p, 4);
    a = sys_vm_mmap((void *)(at + PAGE), PAGE, PROT_READ, VM_MMAP_FIXED, 0);
    CHECK(a == (long)(at + PAGE), "fixed over a mapping");
    CHECK(p[PAGE + 100] == 0 && holds(p, 0) && holds(p, 2), "fixed replaced one page only");
    a = sys_vm_mmap((void *)(at + 2 * PAGE), PAGE, RW, 0, 0);
    CHECK(a > 0 && a != (long)(at + 2 * PAGE), "a hint at a used address goes elsewhere");
    if (a > 0)
        sys_vm_unmap((void *)a, PAGE);
    a = sys_vm_mmap((void *)(at + 8 * PAGE + 5), PAGE, RW, 0, 0);
    CHECK(a == (long)(at + 8 * PAGE), "a free hint is taken, rounded down");
    CHECK(sys_vm_mmap((void *)0x1000, PAGE, RW, VM_MMAP_FIXED, 0) == E_INVAL, "fixed below 64 KiB");
    CHECK(sys_vm_mmap((void *)(at + 1), PAGE, RW, VM_MMAP_FIXED, 0) == E_INVAL, "fixed unaligned");
    CHECK(sys_vm_mmap((void *)0x7ffffffff000ul, 2 * PAGE, RW, VM_MMAP_FIXED, 0) == E_INVAL,
          "fixed past the user half");
    CHECK(sys_vm_mmap((void *)0x7ffffffff000ul, PAGE, RW | PROT_EXEC, VM_MMAP_FIXED, 0) == E_INVAL,
          "the top user page stays unmapped (sysret to 2^47 faults in ring 0 on Intel)");
    CHECK(sys_vm_mmap(NULL, PAGE, RW, 0x80, 0) == E_INVAL, "unknown flag");
    CHECK(sys_vm_mmap(NULL, 0, RW, 0, 0) == E_INVAL, "zero length");
    CHECK(sys_vm_mmap(NULL, PAGE, RW, VM_MMAP_PHYS, 0xb8000) == E_PERM, "phys needs privilege");
    CHECK(sys_vm_unmap((void *)(at + 1), PAGE) == E_INVAL, "unmap unaligned");
    CHECK(sys_vm_unmap((void *)at, 16 * PAGE) == 0, "unmap fixed and hinted");
}

typedef void (*fn_t)(void);

static void fault(const char *mode)
{
    volatile uint8_t *p = map(4, RW);
    if (!p)
        return;
    p[0] = 0xc3;                                          /* ret */
    if (strcmp(mode, "ro") == 0) {
        p[PAGE + 8] = 0;                                  /* present, then read-only */
        sys_vm_protect((void *)(p + PAGE), PAGE, PROT_READ);
        p[PAGE + 8] = 1;
    } else if (strcmp(mode, "nx") == 0) {
        ((fn_t)(uintptr_t)p)();
    } else if (strcmp(mode, "guard") == 0) {
        (void)p[4 * PAGE];
    } else if (strcmp(mode, "none") == 0) {
        sys_vm_protect((void *)(p + 2 * PAGE), PAGE, PROT_NONE);
        (void)p[2 * PAGE + 16];
    } else if (strcmp(mode, "hole") == 0) {
        sys_vm_unmap((void *)(p + PAGE), PAGE);
        (void)p[PAGE + 24];
    } else if (strcmp(mode, "oom") == 0) {
        long a = sys_vm_map(1ul << 30, RW);
        for (uint64_t off = 0; a > 0 && off < (1ul << 30); off += PAGE)
            ((volatile uint8_t *)a)[off] = 1;
    } else {
        printf("vmtest: unknown mode %s\n", mode);
        return;
    }
    printf("vmtest: %s survived\n", mode);
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        printf("usage: vmtest demand|split|place|all|ro|nx|guard|none|hole|oom\n");
        return 2;
    }
    const char *mode = argv[1];
    int all = strcmp(mode, "all") == 0;
    if (all || strcmp(mode, "demand") == 0)
        demand();
    if (all || strcmp(mode, "split") == 0)
        split();
    if (all || strcmp(mode, "place") == 0)
        place();
    if (!all && strcmp(mode, "demand") && strcmp(mode, "split") && strcmp(mode, "place")) {
        fflush(stdout);
        fault(mode);
        return 1;
    }
    printf(failures ? "vmtest: %d failures\n" : "vmtest ok\n", failures);
    return failures ? 1 : 0;
}
