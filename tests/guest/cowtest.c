/*
 * cowtest MODE [N]: copy-on-write clones (SYS_TASK_CREATE + SYS_VM_CLONE + SYS_TASK_THREAD,
 * the fork of a future UNIX server; docs/memory.md).
 *
 *   iso      parent and child write different values over 64 pages; each reads its own
 *   deep N   a chain of N clones, each writing its own values before cloning the next
 *   wide N   N clones of one parent alive at once, each writing its own values
 *   last     after the only sharer exits, the parent's writes take no new frame
 *   cycles N N times: a clone writes the 64 pages and exits (the host checks meminfo)
 *   errors   rights and arguments of the three calls
 *   ctl      a server's view: map, protect, unmap and copy in a controlled task
 *            (SYS_VM_CTL, SYS_TASK_COPY), then a thread there reads what was copied
 *   shared   VM_MMAP_SHARED memory stays shared across clones (MAP_SHARED|MAP_ANONYMOUS):
 *            a child's writes are the parent's, private pages beside it still copy, and
 *            its frames come back when the last mapper unmaps it
 *   family   rmap=family's fork families (docs/memory.md): prints meminfo's rmap_families
 *            before, with 4 clones alive (each joined ours), with 3 fresh tasks beside
 *            them (an exec's: each starts one), after one of those is cloned from us and
 *            another from a third (each joins its source's); the host checks the counts
 * Prints "cowtest ok" when every check passed (children report failures themselves).
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <ondol/sys.h>
#include <ondol/thread.h>

#define PAGE 4096ul
#define NPAGES 64
#define STACK_SIZE (64 * 1024ul)

static volatile uint64_t *pages;     /* NPAGES pages, cloned with everything else */
static uint8_t *child_stack;         /* every child runs on its copy of this region */
static int failures;

#define CHECK(cond, what)                                                          \
    do {                                                                           \
        if (!(cond)) {                                                             \
            printf("cowtest: FAIL %s (line %d)\n", what, __LINE__);                \
            failures++;                                                            \
        }                                                                          \
    } while (0)

static uint64_t value(uint64_t who, int page) { return who * 1000003u + (uint64_t)page; }

static void fill(uint64_t who)
{
    for (int i = 0; i < NPAGES; i++)
        pages[i * PAGE / 8 + (uint64_t)i % 8] = value(who, i);
}

static int holds(uint64_t who)
{
    for (int i = 0; i < NPAGES; i++)
        if (pages[i * PAGE / 8 + (uint64_t)i % 8] != value(who, i))
            return 0;
    return 1;
}

/* A clone of this task running fn(arg) on its copy of child_stack: task id or E_*. */
static long clone_run(void (*fn)(void *), uint64_t arg)
{
    return task_clone_run("cowchild", fn, child_stack + STACK_SIZE - 8, (void *)(uintptr_t)arg);
}

static int wait_ok(long task)
{
    int status = -1;
    return task > 0 && sys_task_wait((int)task, &status) == task && status == 0;
}

/* Child of iso and wide: sees the parent's values as of the clone, then only its own. */
static void child_writes(void *arg)
{
    uint64_t who = (uint64_t)(uintptr_t)arg;
    int ok = holds(1);
    fill(who);
    ok = ok && holds(who);
    sys_exit(ok ? 0 : 1);
}

static uint64_t chain_len;

/* Link `level` (1..chain_len) of a chain: check the values of the link before, write its
 * own, clone the next link and wait for it, and check its own values are still there. */
static void chain_link(void *arg)
{
    uint64_t level = (uint64_t)(uintptr_t)arg;
    int ok = holds(level - 1);
    fill(level);
    if (ok && level < chain_len)
        ok = wait_ok(clone_run(chain_link, level + 1));
    sys_exit(ok && holds(level) ? 0 : 1);
}

static void child_exits(void *arg)
{
    (void)arg;
    sys_exit(0);
}

static void child_sleeps(void *arg)
{
    sys_sleep((uint64_t)(uintptr_t)arg);
    sys_exit(0);
}

static uint64_t frames_free(void)
{
    struct meminfo m;
    sys_meminfo(&m);
    return m.frames_free;
}

static void iso(void)
{
    fill(1);
    long t = clone_run(child_writes, 2);
    CHECK(t > 0, "clone");
    fill(3);
    CHECK(wait_ok(t), "child saw the parent's values, then its own");
    CHECK(holds(3), "parent keeps its own values");
}

static void deep(int n)
{
    chain_len = (uint64_t)n;
    fill(0);
    CHECK(wait_ok(clone_run(chain_link, 1)), "every link saw its parent's values, then its own");
    CHECK(holds(0), "the first parent is unchanged");
}

/* Once the clone is gone the parent is the last sharer: its writes copy nothing. */
static void last(void)
{
    fill(1);
    CHECK(wait_ok(clone_run(child_exits, 0)), "clone ran");
    uint64_t before = frames_free();
    fill(2);
    CHECK(frames_free() == before, "the last sharer writes in place");
    CHECK(holds(2), "and sees its writes");
}

static int init_task(void)
{
    static struct ps_entry ps[64];
    long n = sys_ps(ps, 64);
    for (long i = 0; i < n; i++)
        if (strcmp(ps[i].name, "init") == 0)
            return ps[i].task;
    return 0;
}

static void errors(void)
{
    struct self_info me;
    sys_self(&me);
    CHECK(sys_vm_clone(me.task, 0) == E_PERM, "clone into self (not ours)");
    CHECK(sys_vm_clone(0x7fff0000, 0) == E_SRCH, "clone into nobody");
    CHECK(sys_task_thread(init_task(), child_exits, child_stack + STACK_SIZE - 8, 0, 100) == E_PERM,
          "thread in init");
    CHECK(sys_task_create((const char *)0xffffffff80000000ul) == E_FAULT, "bad name");
    long t = sys_task_create("cowempty");
    CHECK(t > 0, "create");
    CHECK(sys_vm_clone((int)t, (int)t) == E_INVAL, "clone from itself");
    CHECK(sys_vm_clone((int)t, me.task) == E_PERM, "clone from a task we do not control");
    CHECK(sys_task_thread((int)t, (void (*)(void *))0xffffffff80000000ul, child_stack + 64, 0, 100) ==
          E_FAULT, "kernel entry");
    CHECK(sys_task_thread((int)t, child_exits, child_stack + 64, 0, 300) == E_INVAL, "priority");
    long busy = clone_run(child_sleeps, 5);
    CHECK(busy > 0, "clone");
    CHECK(sys_vm_clone((int)busy, 0) == E_INVAL, "clone into a running task");
    CHECK(wait_ok(busy), "sleeper exits");
    /* t never runs: it goes when we exit (the host test checks meminfo) */
}

static void cycles(int n)
{
    fill(1);
    int ok = 0;
    for (int i = 0; i < n; i++)
        ok += wait_ok(clone_run(child_writes, 2));
    CHECK(ok == n, "every clone saw the parent's values, then its own");
    CHECK(holds(1), "parent unchanged");
}

#define CTL_AT 0x500000000000ul

/* Runs in the controlled task: the bytes the parent copied in must be at CTL_AT. */
static void child_reads(void *arg)
{
    const char *want = "written by the controlling task";
    sys_exit(memcmp((const void *)CTL_AT, want, strlen(want) + 1) == 0 && arg == (void *)7 ? 0 : 1);
}

/* VM_CTL_DISCARD drops the two mapped pages at `at` (they read back as zeros) and keeps
 * the region; a range reaching past it is E_FAULT, after dropping what is mapped. */
static void discard(long t, void *at)
{
    char back[8] = "x";
    static const char zeros[8];
    CHECK(sys_vm_ctl((int)t, VM_CTL_DISCARD, at, 2 * PAGE, 0, 0) == 0, "discard");
    CHECK(sys_task_copy((int)t, TASK_COPY_FROM, (char *)at + PAGE - 4, back, 8) == 8 &&
          memcmp(back, zeros, 8) == 0, "discarded pages read as zeros");
    CHECK(sys_vm_ctl((int)t, VM_CTL_DISCARD, at, 3 * PAGE, 0, 0) == E_FAULT, "discard past the region");
    CHECK(sys_vm_ctl((int)t, VM_CTL_DISCARD, (char *)at + 1, PAGE, 0, 0) == E_INVAL, "discard unaligned");
}

static void ctl(void)
{
    static const char msg[] = "written by the controlling task";
    char back[64] = "";
    long t = sys_task_create("cowctl");
    CHECK(t > 0 && sys_vm_clone((int)t, 0) == 0, "create and clone");
    void *at = (void *)CTL_AT;
    CHECK(sys_vm_ctl((int)t, VM_CTL_MAP, at, 2 * PAGE, PROT_READ | PROT_WRITE, VM_MMAP_FIXED) ==
          (long)CTL_AT, "map there");
    CHECK(sys_task_copy((int)t, TASK_COPY_TO, at, (void *)msg, sizeof msg) == sizeof msg, "copy to");
    CHECK(sys_task_copy((int)t, TASK_COPY_FROM, at, back, sizeof msg) == sizeof msg &&
          memcmp(back, msg, sizeof msg) == 0, "copy back");
    CHECK(sys_task_copy((int)t, TASK_COPY_TO, (char *)at + PAGE - 4, (void *)msg, 8) == 8,
          "copy across a page boundary");
    discard(t, at);
    CHECK(sys_task_copy((int)t, TASK_COPY_TO, at, (void *)msg, sizeof msg) == sizeof msg,
          "copy to after the discard");
    CHECK(sys_vm_ctl((int)t, VM_CTL_PROTECT, (char *)at + PAGE, PAGE, PROT_READ, 0) == 0, "protect");
    CHECK(sys_task_copy((int)t, TASK_COPY_TO, (char *)at + PAGE, (void *)msg, 8) == E_FAULT,
          "copy into a read-only page");
    CHECK(sys_vm_ctl((int)t, VM_CTL_UNMAP, (char *)at + PAGE, PAGE, 0, 0) == 0, "unmap");
    CHECK(sys_task_copy((int)t, TASK_COPY_FROM, (char *)at + PAGE, back, 8) == E_FAULT,
          "copy from an unmapped page");
    CHECK(sys_task_copy((int)t, TASK_COPY_FROM, at, (void *)0xffffffff80000000ul, 8) == E_FAULT,
          "copy into a kernel address");
    CHECK(sys_task_copy((int)t, 9, at, back, 8) == E_INVAL, "direction");
    CHECK(sys_task_copy((int)t, TASK_COPY_FROM, at, back, (1u << 20) + 1) == E_INVAL, "too long");
    CHECK(sys_vm_ctl((int)t, 9, at, PAGE, 0, 0) == E_INVAL, "op");
    CHECK(sys_vm_ctl((int)t, VM_CTL_MAP, at, PAGE, PROT_READ, VM_MMAP_PHYS) == E_INVAL, "phys");
    CHECK(sys_vm_ctl(init_task(), VM_CTL_UNMAP, at, PAGE, 0, 0) == E_PERM, "not controlled");
    CHECK(sys_task_copy(init_task(), TASK_COPY_FROM, at, back, 8) == E_PERM, "not controlled");
    long th = sys_task_thread((int)t, child_reads, child_stack + STACK_SIZE - 8, (void *)7, PRIO_INHERIT);
    CHECK(th > 0 && wait_ok(t), "the task sees the copied bytes");
}

/* Child of shared: adds its number to every page of the shared region. */
static volatile uint64_t *shared_pages;
static void child_adds(void *arg)
{
    for (int i = 0; i < NPAGES; i++)
        shared_pages[i * PAGE / 8] += (uint64_t)(uintptr_t)arg;
    pages[0] = 77;                   /* private: the parent must not see it */
    sys_exit(0);
}

/* The shared region, mapped at the hint `at` (0: anywhere) and touched page by page. */
static long map_shared(long at)
{
    long a = sys_vm_mmap((void *)at, NPAGES * PAGE, PROT_READ | PROT_WRITE, VM_MMAP_SHARED, 0);
    shared_pages = (volatile uint64_t *)(uintptr_t)a;
    for (int i = 0; a > 0 && i < NPAGES; i++)
        shared_pages[i * PAGE / 8] = (uint64_t)i;
    return a;
}

static void shared(void)
{
    /* A first round leaves the page tables and kernel objects a mapping there needs, so
     * the frame count before and after the second round compares shared frames only. */
    long a = map_shared(0);
    CHECK(a > 0 && sys_vm_unmap((void *)a, NPAGES * PAGE) == 0, "map and unmap shared");
    fill(1);
    uint64_t before = frames_free();
    CHECK(map_shared(a) == a, "map shared again at the same place");
    if (shared_pages != (volatile uint64_t *)(uintptr_t)a)
        return;
    CHECK(wait_ok(clone_run(child_adds, 1000)), "first clone ran");
    CHECK(wait_ok(clone_run(child_adds, 1)), "second clone ran");
    int same = 0;
    for (int i = 0; i < NPAGES; i++)
        same += shared_pages[i * PAGE / 8] == (uint64_t)i + 1001;
    CHECK(same == NPAGES, "both children's writes are in the parent's shared pages");
    CHECK(holds(1), "private pages stayed private");
    CHECK(sys_vm_mmap(NULL, PAGE, PROT_READ, VM_MMAP_SHARED | VM_MMAP_PHYS, 0) == E_INVAL,
          "shared physical memory is not a thing");
    CHECK(sys_vm_mmap(NULL, (1ul << 30) + PAGE, PROT_READ, VM_MMAP_SHARED, 0) == E_NOMEM,
          "over 1 GiB shared");
    CHECK(sys_vm_unmap((void *)a, NPAGES * PAGE) == 0, "unmap");
    uint64_t after = frames_free();
    CHECK(after == before, "every shared frame came back");
    if (after != before)
        printf("cowtest: %lu frames before, %lu after\n", (unsigned long)before, (unsigned long)after);
}

static uint64_t families(void)
{
    struct meminfo m;
    sys_meminfo(&m);
    return m.rmap_families;
}

/* Child of family: writes its own values (copy-on-write breaks, in our family's lists),
 * then waits until the parent has counted, through a word the clones share. */
static volatile uint64_t *go;
static void child_waits(void *arg)
{
    fill((uint64_t)(uintptr_t)arg);
    int ok = holds((uint64_t)(uintptr_t)arg);
    while (!*go)
        sys_sleep(1);
    sys_exit(ok ? 0 : 1);
}

static void family(void)
{
    long at = sys_vm_mmap(NULL, PAGE, PROT_READ | PROT_WRITE, VM_MMAP_SHARED, 0);
    CHECK(at > 0, "map the shared word");
    if (at <= 0)
        return;
    go = (volatile uint64_t *)(uintptr_t)at;
    *go = 0;
    fill(1);
    uint64_t before = families();
    long kids[4], fresh[3];
    for (int i = 0; i < 4; i++)
        CHECK((kids[i] = clone_run(child_waits, 10 + (uint64_t)i)) > 0, "clone");
    uint64_t clones = families();
    for (int i = 0; i < 3; i++)
        CHECK((fresh[i] = sys_task_create("cowfresh")) > 0, "create");
    uint64_t created = families();
    CHECK(sys_vm_clone((int)fresh[0], 0) == 0, "clone into a fresh task");
    CHECK(sys_vm_clone((int)fresh[1], (int)fresh[2]) == 0, "clone between fresh tasks");
    uint64_t joined = families();
    *go = 1;
    int ok = 0;
    for (int i = 0; i < 4; i++)
        ok += wait_ok(kids[i]);
    CHECK(ok == 4, "every clone saw its own values");
    CHECK(holds(1), "parent unchanged");
    printf("cowtest families before=%lu clones=%lu fresh=%lu joined=%lu\n",
           (unsigned long)before, (unsigned long)clones, (unsigned long)created,
           (unsigned long)joined);
    /* the fresh tasks never run: they go when we exit (the host test checks meminfo) */
}

static void wide(int n)
{
    fill(1);
    long *tasks = malloc(sizeof(long) * (size_t)n);
    for (int i = 0; i < n; i++) {
        tasks[i] = clone_run(child_writes, 100 + (uint64_t)i);
        CHECK(tasks[i] > 0, "clone");
    }
    int ok = 0;
    for (int i = 0; i < n; i++)
        ok += wait_ok(tasks[i]);
    CHECK(ok == n, "every clone saw its own values");
    CHECK(holds(1), "parent unchanged");
    free(tasks);
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        printf("usage: cowtest iso|deep N|wide N|cycles N|last|errors|ctl|shared|family\n");
        return 2;
    }
    long a = sys_vm_map(NPAGES * PAGE, PROT_READ | PROT_WRITE);
    long s = sys_vm_map(STACK_SIZE, PROT_READ | PROT_WRITE);
    if (a < 0 || s < 0) {
        printf("cowtest: map failed\n");
        return 1;
    }
    pages = (volatile uint64_t *)(uintptr_t)a;
    child_stack = (uint8_t *)(uintptr_t)s;
    int n = argc > 2 ? atoi(argv[2]) : 10;
    const char *mode = argv[1];
    fflush(stdout);
    if (strcmp(mode, "iso") == 0)
        iso();
    else if (strcmp(mode, "wide") == 0)
        wide(n);
    else if (strcmp(mode, "deep") == 0)
        deep(n);
    else if (strcmp(mode, "cycles") == 0)
        cycles(n);
    else if (strcmp(mode, "last") == 0)
        last();
    else if (strcmp(mode, "errors") == 0)
        errors();
    else if (strcmp(mode, "ctl") == 0)
        ctl();
    else if (strcmp(mode, "shared") == 0)
        shared();
    else if (strcmp(mode, "family") == 0)
        family();
    else {
        printf("cowtest: unknown mode %s\n", mode);
        return 2;
    }
    printf(failures ? "cowtest: %d failures\n" : "cowtest ok\n", failures);
    return failures ? 1 : 0;
}
