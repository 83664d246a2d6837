/*
 * pagertest MODE: regions whose pages a user pager supplies (SYS_VM_PAGER, docs/memory.md
 * "Pagers"). A thread of this task is the pager: it receives the fault calls, checks
 * their words and answers with a page of its own memory that holds the offset's pattern.
 *
 *   basic    faults reach the pager once a page (counted), with the right words; the
 *            supplied pages hold the pattern; kernel accesses to an unsupplied page are
 *            E_FAULT; unmapped pages are asked for again
 *   clone    a copy-on-write clone of a task with a pager region: supplied pages are
 *            copied on write, unsupplied ones are asked for by the clone; the reverse
 *            map agrees with the page tables (SYS_VM_CHECK)
 *   refuse   the pager refuses a page: a clone touching it is killed (report), the
 *            pages around it still work
 *   exit     the pager exits while a clone waits for a page: the clone is killed
 *   bad      answers with a wrong label, an unaligned, unmapped or kernel address are not
 *            taken: the thread asks again, word 7 saying why (E_INVAL / E_FAULT)
 *   kill     the pager never answers: killing the waiting clone works
 *   errors   SYS_VM_PAGER's arguments and rights
 * Prints "pagertest ok" when every check passed.
 */
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <ondol/ipc.h>
#include <ondol/sys.h>
#include <ondol/thread.h>

#define PAGE 4096ul
#define NPAGES 8
#define STACK_SIZE (64 * 1024ul)

static int failures;

#define CHECK(cond, what)                                                          \
    do {                                                                           \
        if (!(cond)) {                                                             \
            printf("pagertest: FAIL %s (line %d)\n", what, __LINE__);              \
            failures++;                                                            \
        }                                                                          \
    } while (0)

enum behaviour { SUPPLY, REFUSE_PAGE3, EXIT_ON_FAULT, BAD_ANSWERS, NEVER_ANSWER };

static volatile uint8_t *region;          /* NPAGES pages backed by the pager */
static uint8_t source[PAGE] __attribute__((aligned(4096)));   /* the page the pager hands out */
static volatile enum behaviour behaviour;
static volatile int faults;               /* fault calls the pager received */
static volatile uint64_t last_words[IPC_MRS];
static volatile int bad_results_ok = 1;   /* BAD_ANSWERS: every bad answer was refused */
static struct thread pager_thread;
static uint8_t *child_stack;

static uint8_t pattern(uint64_t off, size_t i) { return (uint8_t)(off / PAGE * 31 + i * 7 + 1); }

static void fill_source(uint64_t off)
{
    for (size_t i = 0; i < PAGE; i++)
        source[i] = pattern(off, i);
}

static int page_holds(int page)
{
    for (size_t i = 0; i < PAGE; i += 97)
        if (region[page * PAGE + i] != pattern(page * PAGE, i))
            return 0;
    return region[page * PAGE + PAGE - 1] == pattern(page * PAGE, PAGE - 1);
}

/* BAD_ANSWERS: each is not taken; the thread asks again with the reason in word 7. */
static const struct { uint64_t label, addr; long why; } bad_answers[] = {
    {0x1234, 0, E_INVAL},
    {PAGER_SUPPLY, 1, E_INVAL},                       /* unaligned */
    {PAGER_SUPPLY, 0x10000, E_FAULT},                 /* not mapped in the pager */
    {PAGER_SUPPLY, 0xffffffff80000000ull, E_FAULT},   /* the kernel's */
    {PAGER_SUPPLY, 0x0000800000000000ull, E_FAULT},   /* not canonical */
};
#define NBAD (int)(sizeof(bad_answers) / sizeof(bad_answers[0]))

/* The answer to fault call number `n` (from 1), after checking the reason the previous
 * bad answer was not taken; then a good one. */
static void bad_answer(struct ipc_msg *m, int n)
{
    long why = (long)m->w[7];
    if (why != (n == 1 ? 0 : bad_answers[n - 2].why)) {
        printf("pagertest: call %d: word 7 is %ld\n", n, why);
        bad_results_ok = 0;
    }
    if (n <= NBAD) {
        m->w[0] = bad_answers[n - 1].label;
        m->w[1] = bad_answers[n - 1].addr;
    }
}

/* The pager: one answer per fault call, as `behaviour` says. */
static int pager(void *arg)
{
    (void)arg;
    struct ipc_msg m = {{0}};
    long from = ipc_recv(IPC_ANY, &m, IPC_FOREVER);
    for (;;) {
        if (from < 0)
            continue;
        faults++;
        for (int i = 0; i < IPC_MRS; i++)
            last_words[i] = m.w[i];
        uint64_t off = m.w[6];
        if (behaviour == EXIT_ON_FAULT)
            sys_thread_exit(0);
        if (behaviour == NEVER_ANSWER) {
            from = ipc_recv(IPC_ANY, &m, IPC_FOREVER);
            continue;
        }
        fill_source(off);
        m.w[0] = behaviour == REFUSE_PAGE3 && off == 3 * PAGE ? PAGER_REFUSE : PAGER_SUPPLY;
        m.w[1] = (uint64_t)(uintptr_t)source;
        if (behaviour == BAD_ANSWERS)
            bad_answer(&m, faults);
        from = ipc_reply_recv((int)from, IPC_ANY, &m, IPC_FOREVER);
    }
}

static void start_pager(enum behaviour b)
{
    behaviour = b;
    long tid = thread_start(&pager_thread, pager, NULL, PRIO_INHERIT, STACK_SIZE);
    CHECK(tid > 0, "pager thread");
    long addr = sys_vm_pager(0, 0, NPAGES * PAGE, PROT_READ | PROT_WRITE, 0, (int)tid);
    CHECK(addr > 0, "SYS_VM_PAGER");
    region = (volatile uint8_t *)addr;
}

static long clone_run(void (*fn)(void *), uint64_t arg)
{
    return task_clone_run("pagerchild", fn, child_stack + STACK_SIZE - 8, (void *)(uintptr_t)arg);
}

static int wait_status(long task)
{
    int status = -1;
    return task > 0 && sys_task_wait((int)task, &status) == task ? status : -1;
}

static void basic(void)
{
    start_pager(SUPPLY);
    CHECK(sys_time((struct time_info *)(region + 5 * PAGE)) == E_FAULT,
          "a kernel access to an unsupplied page is E_FAULT");
    CHECK(faults == 0, "a kernel access does not call the pager");
    for (int p = 0; p < NPAGES; p++)
        CHECK(page_holds(p), "supplied page holds the pager's bytes");
    CHECK(faults == NPAGES, "one fault call per page");
    CHECK(last_words[0] == PAGER_FAULT && last_words[2] == PROT_READ, "label, read access");
    CHECK(last_words[1] == (uint64_t)(uintptr_t)region + 7 * PAGE, "fault address");
    CHECK(last_words[3] != 0 && last_words[3] < 0x0000800000000000ull, "rip");
    struct self_info me;
    sys_self(&me);
    CHECK(last_words[4] == (uint64_t)me.tid && last_words[5] == (uint64_t)me.task,
          "faulting thread and task");
    CHECK(last_words[6] == 7 * PAGE, "object offset");
    for (int p = 0; p < NPAGES; p++)
        region[p * PAGE + 8] = 0x5a;
    CHECK(faults == NPAGES, "supplied pages are writable without asking again");
    CHECK(sys_time((struct time_info *)(region + 5 * PAGE + 2048)) == 0,
          "the kernel writes to a supplied page");
    CHECK(sys_vm_unmap((void *)(region + 2 * PAGE), PAGE) == 0, "unmap one page");
    CHECK(sys_vm_mmap((void *)(region + 2 * PAGE), PAGE, PROT_READ | PROT_WRITE, VM_MMAP_FIXED, 0) > 0,
          "anonymous page in the hole");
    CHECK(region[2 * PAGE] == 0 && faults == NPAGES, "the hole is anonymous now");
    CHECK(sys_vm_unmap((void *)region, NPAGES * PAGE) == 0, "unmap the region");
    long a = sys_vm_pager(0, (void *)region, PAGE, PROT_READ | PROT_WRITE, VM_MMAP_FIXED,
                          pager_thread.tid);
    CHECK(a == (long)(uintptr_t)region, "map again at the same place");
    region[1] = 9;
    CHECK(faults == NPAGES + 1 && last_words[2] == PROT_WRITE && region[0] == pattern(0, 0),
          "a new region asks again; write access");
}

/* The clone: supplied pages are its copies, page 4 is asked for by the clone itself. */
static void clone_child(void *arg)
{
    (void)arg;
    int ok = page_holds(0) && region[1 * PAGE] == 0x77 && faults == 3;
    region[1 * PAGE] = 0x66;                       /* copy on write */
    ok = ok && page_holds(4);   /* the pager's counters are the parent's: it checks them */
    sys_exit(ok ? 0 : 1);
}

/* The reverse map against the page tables (SYS_VM_CHECK): supplied pages are anonymous. */
static int rmap_consistent(void)
{
    struct vm_check c;
    return sys_vm_check(&c) == 0 && c.errors == 0 && c.mappings == c.entries;
}

static void clone_mode(void)
{
    start_pager(SUPPLY);
    for (int p = 0; p < 3; p++)
        CHECK(page_holds(p), "parent's pages");
    region[1 * PAGE] = 0x77;
    CHECK(rmap_consistent(), "reverse map with supplied pages");
    long t = clone_run(clone_child, 0);
    CHECK(wait_status(t) == 0, "clone sees copies and asks for page 4");
    CHECK(last_words[5] == (uint64_t)t && last_words[6] == 4 * PAGE, "the clone's fault words");
    CHECK(region[1 * PAGE] == 0x77, "parent keeps its own page after the clone's write");
    CHECK(faults == 4, "the clone's fault came to the pager");
    CHECK(page_holds(4) && faults == 5, "parent asks for page 4 itself");
    CHECK(rmap_consistent(), "reverse map after the clone");
}

static void touch_page(void *arg)
{
    uint64_t page = (uint64_t)(uintptr_t)arg;
    (void)region[page * PAGE];
    sys_exit(0);
}

static void refuse(void)
{
    start_pager(REFUSE_PAGE3);
    CHECK(wait_status(clone_run(touch_page, 3)) == KILLED_STATUS_BASE + 14,
          "a refused page kills the clone");
    CHECK(faults == 1, "the refusal was asked once");
    CHECK(wait_status(clone_run(touch_page, 2)) == 0, "another page is supplied");
    CHECK(page_holds(2) && page_holds(4), "the parent's pages");
}

static void exit_mode(void)
{
    start_pager(EXIT_ON_FAULT);
    CHECK(wait_status(clone_run(touch_page, 1)) == KILLED_STATUS_BASE + 14,
          "the pager's exit makes the waiting fault fatal");
    CHECK(thread_join(&pager_thread, NULL) == 0, "pager exited");
    CHECK(wait_status(clone_run(touch_page, 2)) == KILLED_STATUS_BASE + 14,
          "with no pager, a fault is fatal");
}

static void bad(void)
{
    start_pager(BAD_ANSWERS);
    CHECK(page_holds(6), "the good answer after the bad ones");
    CHECK(bad_results_ok, "each bad answer was not taken, for its reason");
    CHECK(faults == NBAD + 1, "the thread asked again after each bad answer");
}

static void kill_mode(void)
{
    start_pager(NEVER_ANSWER);
    long t = clone_run(touch_page, 0);
    while (faults == 0)
        sys_yield();
    CHECK(sys_task_kill((int)t) == 0, "kill the waiting clone");
    CHECK(wait_status(t) == KILLED_STATUS, "the killed clone ends");
}

static void errors(void)
{
    int me = thread_self();
    CHECK(sys_vm_pager(0, 0, PAGE, PROT_READ, 0, 0) == E_SRCH, "no pager thread");
    CHECK(sys_vm_pager(0, 0, PAGE, PROT_READ, 0, 1) == E_SRCH, "a thread of another task");
    CHECK(sys_vm_pager(0, 0, 0, PROT_READ, 0, me) == E_INVAL, "length 0");
    CHECK(sys_vm_pager(0, 0, PAGE, 0x100, 0, me) == E_INVAL, "bad protection");
    CHECK(sys_vm_pager(0, 0, PAGE, PROT_READ, VM_MMAP_SHARED, me) == E_INVAL, "bad flags");
    CHECK(sys_vm_pager(0, (void *)0x1000, PAGE, PROT_READ, VM_MMAP_FIXED, me) == E_INVAL,
          "below the lowest address");
    struct self_info self;
    sys_self(&self);
    CHECK(sys_vm_pager(self.task, 0, PAGE, PROT_READ, 0, me) == E_PERM,
          "a task we do not control (our own by id: 0 means the caller)");
    CHECK(sys_vm_pager(99999, 0, PAGE, PROT_READ, 0, me) == E_SRCH, "no such task");
    long t = sys_task_create("pagerctl");
    long a = sys_vm_pager((int)t, 0, PAGE, PROT_READ, 0, me);
    CHECK(a > 0, "a pager region in a controlled task");
    CHECK(sys_task_kill((int)t) == 0, "end it");
}

int main(int argc, char **argv)
{
    static const struct { const char *name; void (*run)(void); } modes[] = {
        {"basic", basic}, {"clone", clone_mode}, {"refuse", refuse}, {"exit", exit_mode},
        {"bad", bad},     {"kill", kill_mode},   {"errors", errors},
    };
    child_stack = (uint8_t *)sys_vm_map(STACK_SIZE, PROT_READ | PROT_WRITE);
    for (size_t i = 0; argc == 2 && i < sizeof(modes) / sizeof(modes[0]); i++) {
        if (strcmp(argv[1], modes[i].name) == 0) {
            modes[i].run();
            printf(failures ? "pagertest: %d failures\n" : "pagertest ok\n", failures);
            return failures != 0;
        }
    }
    printf("usage: pagertest basic|clone|refuse|exit|bad|kill|errors\n");
    return 2;
}
