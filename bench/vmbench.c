/*
 * vmbench [N] | vmbench probes [N]: what the memory mechanisms of issue 9 cost
 * (`./ondol bench vm`, docs/memory.md), N samples per row (default 500). Each sample is one
 * counter read before and one after; under QEMU icount they count guest instructions.
 * Rows (test):
 *   clone0     fork as the UNIX server will do it: SYS_TASK_CREATE + SYS_VM_CLONE +
 *              SYS_TASK_THREAD, the child exits at once, SYS_TASK_WAIT collects it
 *   clone64    the same, the child first writing each of 64 pages the parent wrote
 *              (64 copy-on-write breaks, and 64 copies freed at its exit)
 *   pagefault  the first write to an untouched anonymous page (demand-zero fault)
 *   cowfault   a write to an anonymous page shared with a live clone (the copy)
 *   map16      map 16 pages anywhere, write each, unmap them
 * The Linux peer runs the same operations (tools/peer/vm_ops.c). The rmap mode is the
 * boot option; the host records it with every row.
 * `probes` runs the same operations unmeasured under `pcnt stat` (which switches the
 * kernel's probes on) and reports the reverse map's probes instead: rmap_insert,
 * rmap_remove and rmap_apply (log mode's deferred half), net of the probe's own cost.
 */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <ondol/result.h>
#include <ondol/sys.h>
#include <ondol/thread.h>
#include <ondol/timing.h>

#define PAGE 4096ul
#define TOUCHED 64                       /* pages the clone64 child writes */
#define MAP_PAGES 16
#define STACK_SIZE (16 * 1024ul)

static volatile uint64_t *buffer;        /* TOUCHED pages, written before any clone */
static uint8_t *child_stack;             /* each clone runs on its copy of this region */
static uint64_t *samples;
static int failures;

static void write_pages(volatile uint64_t *p, int pages, uint64_t value)
{
    for (int i = 0; i < pages; i++)
        p[(uint64_t)i * PAGE / 8] = value;
}

static void child_exits(void *arg)
{
    (void)arg;
    sys_exit(0);
}

static void child_writes(void *arg)
{
    write_pages(buffer, TOUCHED, (uint64_t)(uintptr_t)arg);
    sys_exit(0);
}

static void child_sleeps(void *arg)
{
    (void)arg;
    sys_sleep(SLEEP_FOREVER);
    sys_exit(0);
}

/* A copy-on-write clone of this task running fn: its task id, or E_*. */
static long clone_run(void (*fn)(void *), uint64_t arg)
{
    return task_clone_run("vmchild", fn, child_stack + STACK_SIZE - 8, (void *)(uintptr_t)arg);
}

static void expect(int ok, const char *what)
{
    if (!ok) {
        printf("vmbench: FAIL %s\n", what);
        failures++;
    }
}

static void clone_wait(void (*fn)(void *))
{
    int status = -1;
    long t = clone_run(fn, 7);
    expect(t > 0 && sys_task_wait((int)t, &status) == t && status == 0, "clone, exit, wait");
}

/* One row: the sorted samples' median (lower middle), extremes and count. */
static void report(const char *test, int n, int pages)
{
    sort_u64(samples, (size_t)n);
    result_printf("{\"type\":\"result\",\"bench\":\"vm\",\"test\":\"%s\",\"unit\":\"tsc\","
                  "\"median\":%llu,\"min\":%llu,\"max\":%llu,\"n\":%d,\"pages\":%d}",
                  test, (unsigned long long)samples[(n - 1) / 2], (unsigned long long)samples[0],
                  (unsigned long long)samples[n - 1], n, pages);
}

static void bench_clone(const char *test, void (*fn)(void *), int n, int pages)
{
    for (int i = 0; i < n / 10 + 1; i++)             /* warm-up: kernel object caches */
        clone_wait(fn);
    for (int i = 0; i < n; i++) {
        uint64_t t0 = rdtsc();
        clone_wait(fn);
        samples[i] = rdtsc() - t0;
    }
    report(test, n, pages);
}

/* n first writes to untouched pages of one fresh region. */
static void bench_pagefault(int n)
{
    long a = sys_vm_map((size_t)n * PAGE, PROT_READ | PROT_WRITE);
    expect(a > 0, "map the fault region");
    if (a <= 0)
        return;
    volatile uint64_t *p = (volatile uint64_t *)(uintptr_t)a;
    for (int i = 0; i < n; i++) {
        uint64_t t0 = rdtsc();
        p[(uint64_t)i * PAGE / 8] = 1;
        samples[i] = rdtsc() - t0;
    }
    expect(sys_vm_unmap((void *)a, (size_t)n * PAGE) == 0, "unmap the fault region");
    report("pagefault", n, 1);
}

/* n timed writes to pages shared with a clone that sleeps until it is killed. */
static bool cow_writes(int n)
{
    long a = sys_vm_map((size_t)n * PAGE, PROT_READ | PROT_WRITE);
    expect(a > 0, "map the COW region");
    if (a <= 0)
        return false;
    volatile uint64_t *p = (volatile uint64_t *)(uintptr_t)a;
    write_pages(p, n, 1);
    long t = clone_run(child_sleeps, 0);
    expect(t > 0, "clone a sleeper");
    for (int i = 0; i < n; i++) {
        uint64_t t0 = rdtsc();
        p[(uint64_t)i * PAGE / 8] = 2;
        samples[i] = rdtsc() - t0;
    }
    int status = 0;
    expect(t > 0 && sys_task_kill((int)t) == 0 && sys_task_wait((int)t, &status) == t &&
           status == KILLED_STATUS, "kill and wait for the sleeper");
    expect(sys_vm_unmap((void *)a, (size_t)n * PAGE) == 0, "unmap the COW region");
    return true;
}

static void bench_cowfault(int n)
{
    if (cow_writes(n))
        report("cowfault", n, 1);
}

static void map_touch_unmap(void)
{
    long a = sys_vm_map(MAP_PAGES * PAGE, PROT_READ | PROT_WRITE);
    expect(a > 0, "map 16 pages");
    if (a <= 0)
        return;
    write_pages((volatile uint64_t *)(uintptr_t)a, MAP_PAGES, 1);
    expect(sys_vm_unmap((void *)a, MAP_PAGES * PAGE) == 0, "unmap 16 pages");
}

static void bench_map16(int n)
{
    for (int i = 0; i < n / 10 + 1; i++)
        map_touch_unmap();
    for (int i = 0; i < n; i++) {
        uint64_t t0 = rdtsc();
        map_touch_unmap();
        samples[i] = rdtsc() - t0;
    }
    report("map16", n, MAP_PAGES);
}

/* ---- probes mode ---------------------------------------------------------------------- */
static struct pcnt_slot_info slots[64];
static const char *const rmap_probes[] = {"rmap_insert", "rmap_remove", "rmap_apply"};

static long pcnt(unsigned cmd, long a, long b, long c) { return SC4(SYS_PCNT, cmd, a, b, c); }

/* A probe's row: the median of its latest samples, min and max, each net of slot 0 (the
 * facility's own start+stop); n counts every sample. None when the probe never ran. */
static void report_probe(const struct pcnt_slot_info *s, uint64_t overhead)
{
    if (s->count == 0)
        return;
    uint32_t k = s->ring_len;
    for (uint32_t i = 0; i < k; i++)
        samples[i] = s->ring[i];
    sort_u64(samples, k);
    result_printf("{\"type\":\"result\",\"bench\":\"vm\",\"test\":\"%s\",\"unit\":\"tsc\","
                  "\"median\":%llu,\"min\":%llu,\"max\":%llu,\"n\":%llu,\"dropped\":%llu,"
                  "\"probe\":true}",
                  s->name, (unsigned long long)(samples[(k - 1) / 2] - overhead),
                  (unsigned long long)(s->min - overhead), (unsigned long long)(s->max - overhead),
                  (unsigned long long)s->count, (unsigned long long)s->dropped);
}

static void report_probes(void)
{
    long n = 64;                     /* the kernel's PCNT_SLOTS: the largest dump it takes */
    while (n > 1 && pcnt(PCNT_DUMP, (long)slots, n, 0) < 0)
        n--;
    for (size_t p = 0; p < sizeof(rmap_probes) / sizeof(rmap_probes[0]); p++)
        for (long i = 1; i < n; i++)
            if (strcmp(slots[i].name, rmap_probes[p]) == 0)
                report_probe(&slots[i], slots[0].tsc);
}

/* The operations of the measured rows, unmeasured, for the probes. */
static void run_for_probes(int n)
{
    for (int i = 0; i < n; i++) {
        clone_wait(child_writes);
        map_touch_unmap();
    }
    cow_writes(n);
}

static void progress(int done)
{
    result_printf("{\"type\":\"progress\",\"bench\":\"vm\",\"done\":%d,\"total\":5}", done);
}

static int finish(void)
{
    result_printf("{\"type\":\"end\",\"bench\":\"vm\",\"status\":%d}", failures ? 1 : 0);
    printf(failures ? "vmbench: %d failures\n" : "vmbench ok\n", failures);
    return failures ? 1 : 0;
}

int main(int argc, char **argv)
{
    bool probes = argc > 1 && strcmp(argv[1], "probes") == 0;
    int n = argc > 1 + probes ? atoi(argv[1 + probes]) : 500;
    if (n < 1 || n > 100000) {
        printf("usage: vmbench [probes] [N] (1..100000 samples per row)\n");
        return 2;
    }
    long b = sys_vm_map(TOUCHED * PAGE, PROT_READ | PROT_WRITE);
    long s = sys_vm_map(STACK_SIZE, PROT_READ | PROT_WRITE);
    samples = malloc(sizeof(uint64_t) * (size_t)(n > PCNT_RING ? n : PCNT_RING));
    if (b <= 0 || s <= 0 || !samples) {
        printf("vmbench: out of memory\n");
        return 1;
    }
    buffer = (volatile uint64_t *)(uintptr_t)b;
    child_stack = (uint8_t *)(uintptr_t)s;
    write_pages(buffer, TOUCHED, 1);
    write_pages(samples, (int)((sizeof(uint64_t) * (size_t)n + PAGE - 1) / PAGE), 0);
    if (probes) {
        run_for_probes(n);
        report_probes();
        return finish();
    }
    bench_clone("clone0", child_exits, n, 0);
    progress(1);
    bench_clone("clone64", child_writes, n, TOUCHED);
    progress(2);
    bench_pagefault(n);
    progress(3);
    bench_cowfault(n);
    progress(4);
    bench_map16(n);
    progress(5);
    return finish();
}
