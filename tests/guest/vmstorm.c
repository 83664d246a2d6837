/*
 * vmstorm SEED N: a randomised storm of map, touch, unmap, protect, clone and exit, with
 * the reverse-map checker (SYS_VM_CHECK) run after every few operations, in this task and
 * in its clones (docs/memory.md). Every check must find the map equal to the page tables.
 * Prints "vmstorm ok checks=C" (or the failures); exits 1 on any failure.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <ondol/sys.h>

#define PAGE 4096ul
#define NREG 8
#define MAXPAGES 32
#define MAXKIDS 4
#define STACK_SIZE (64 * 1024ul)

static struct {
    uint8_t *base;                /* NULL: slot free */
    int pages;
    uint8_t prot[MAXPAGES];       /* per page: 0 unmapped or PROT_NONE alike (never touched) */
    uint8_t mapped[MAXPAGES];
} reg[NREG];
static uint64_t rng;
static long kids[MAXKIDS];
static int nkids, failures, checks, is_child;
static uint8_t *child_stack;

static uint64_t below(uint64_t n) { return rand64(&rng) % n; }

static void check(const char *after)
{
    struct vm_check c;
    long r = sys_vm_check(&c);
    checks++;
    if (r != 0 || c.errors || c.mappings != c.entries) {
        failures++;
        if (failures <= 5)
            printf("vmstorm: FAIL after %s%s: r=%ld mappings=%llu entries=%llu errors=%llu\n",
                   after, is_child ? " (clone)" : "", r, (unsigned long long)c.mappings,
                   (unsigned long long)c.entries, (unsigned long long)c.errors);
    }
}

static void op_map(int i)
{
    int pages = 1 + (int)below(MAXPAGES);
    long a = sys_vm_map((size_t)pages * PAGE, PROT_READ | PROT_WRITE);
    if (a < 0)
        return;
    reg[i].base = (uint8_t *)(uintptr_t)a;
    reg[i].pages = pages;
    for (int p = 0; p < pages; p++) {
        reg[i].prot[p] = PROT_READ | PROT_WRITE;
        reg[i].mapped[p] = 1;
    }
}

static void op_touch(int i)
{
    for (int n = (int)below(8); n >= 0; n--) {
        int p = (int)below((uint64_t)reg[i].pages);
        if (!reg[i].mapped[p] || !(reg[i].prot[p] & PROT_READ))
            continue;
        if (reg[i].prot[p] & PROT_WRITE)
            reg[i].base[p * PAGE + below(PAGE)] = (uint8_t)rng;
        else
            (void)*(volatile uint8_t *)&reg[i].base[p * PAGE + below(PAGE)];
    }
}

/* A random sub-range [first, first + n) of region i. */
static void pick(int i, int *first, int *n)
{
    *first = (int)below((uint64_t)reg[i].pages);
    *n = 1 + (int)below((uint64_t)(reg[i].pages - *first));
}

static void op_unmap(int i)
{
    int first, n;
    pick(i, &first, &n);
    if (sys_vm_unmap(reg[i].base + first * PAGE, (size_t)n * PAGE) != 0)
        failures++;
    int left = 0;
    for (int p = 0; p < reg[i].pages; p++) {
        if (p >= first && p < first + n)
            reg[i].mapped[p] = 0;
        left += reg[i].mapped[p];
    }
    if (!left)
        reg[i].base = NULL;     /* the slot can map again */
}

static void op_protect(int i)
{
    int first, n;
    pick(i, &first, &n);
    static const uint8_t prots[] = {PROT_NONE, PROT_READ, PROT_READ | PROT_WRITE};
    uint8_t prot = prots[below(3)];
    int whole = 1;
    for (int p = first; p < first + n; p++)
        whole &= reg[i].mapped[p];
    long r = sys_vm_protect(reg[i].base + first * PAGE, (size_t)n * PAGE, prot);
    if (r != (whole ? 0 : E_FAULT))
        failures++;
    for (int p = first; whole && p < first + n; p++)
        reg[i].prot[p] = prot;
}

static void storm(long ops);

static void child_main(void *arg)
{
    is_child = 1;
    nkids = 0;
    rng = (uint64_t)(uintptr_t)arg;
    storm(40);
    sys_exit(failures ? 1 : 0);
}

static void op_clone(void)
{
    if (is_child || nkids == MAXKIDS)
        return;
    long t = sys_task_create("vmstormkid");
    long r = t > 0 ? sys_vm_clone((int)t, 0) : t;
    if (r == 0)
        r = sys_task_thread((int)t, child_main, child_stack + STACK_SIZE - 8,
                            (void *)(uintptr_t)(rng | 1), PRIO_INHERIT);
    if (r < 0) {
        printf("vmstorm: clone failed %ld\n", r);
        failures++;
        return;
    }
    kids[nkids++] = t;
}

static void op_reap(void)
{
    if (nkids == 0)
        return;
    int status = -1;
    long t = kids[--nkids];
    if (sys_task_wait((int)t, &status) != t || status != 0)
        failures++;
}

static void storm(long ops)
{
    static const char *const names[] = {"map", "touch", "unmap", "protect", "clone", "exit"};
    for (long n = 0; n < ops; n++) {
        int i = (int)below(NREG), what = (int)below(6);
        if (!reg[i].base)
            what = 0;
        switch (what) {
        case 0: if (!reg[i].base) op_map(i); break;
        case 1: op_touch(i); break;
        case 2: op_unmap(i); break;
        case 3: op_protect(i); break;
        case 4: op_clone(); break;
        default: op_reap(); break;
        }
        if (n % 4 == 0)
            check(names[what]);
    }
    while (nkids > 0)
        op_reap();
    check("the end");
}

int main(int argc, char **argv)
{
    if (argc < 3) {
        printf("usage: vmstorm SEED N\n");
        return 2;
    }
    rng = strtoull(argv[1], NULL, 0) | 1;
    long s = sys_vm_map(STACK_SIZE, PROT_READ | PROT_WRITE);
    if (s < 0)
        return 1;
    child_stack = (uint8_t *)(uintptr_t)s;
    fflush(stdout);
    storm(strtol(argv[2], NULL, 0));
    if (failures)
        printf("vmstorm: %d failures, checks=%d\n", failures, checks);
    else
        printf("vmstorm ok checks=%d\n", checks);
    return failures ? 1 : 0;
}
