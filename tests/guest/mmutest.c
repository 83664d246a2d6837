/*
 * mmutest share: the no-MMU configuration (boot option mmu=off, docs/alloc.md), where
 * every task lives in one address space. The program maps a page, writes a word in it and
 * starts a copy of itself (`mmutest child ADDR`) that
 *   - reads the word at ADDR and answers in the same page (the tasks share the space),
 *   - reports where its own image, stack and a page it mapped are (a second copy of the
 *     program is loaded elsewhere: static PIE, relocated by the kernel),
 *   - tries to unmap, protect and map over the parent's page (each must be E_PERM).
 * Then the parent checks the answers, that its page is intact and still writable, that
 * the child's memory went with the child (protect of it: E_FAULT, nothing mapped), and
 * that SYS_VM_CLONE is E_NOTSUP; mapping takes its frames at once (no demand paging).
 * Prints "mmutest ok" when every check passed. Under mmu=on the checks fail (the child
 * cannot see the parent's page): the program is for mmu=off only.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <ondol/sys.h>

#define PAGE 4096ul
#define RW (PROT_READ | PROT_WRITE)
#define MAGIC 0x6d6d756f6666ull     /* "mmuoff" */

/* The shared page: the parent's word, then the child's answers. */
struct page {
    uint64_t magic, seen;
    uint64_t child_image, child_stack, child_map;
    long unmap, protect, fixed;
};

static int failures;
static int image_marker;           /* its address tells where the program's image is */

#define CHECK(cond, what)                                                          \
    do {                                                                           \
        if (!(cond)) {                                                             \
            printf("mmutest: FAIL %s (line %d)\n", what, __LINE__);                \
            failures++;                                                            \
        }                                                                          \
    } while (0)

static uint64_t frames_free(void)
{
    struct meminfo m;
    sys_meminfo(&m);
    return m.frames_free + m.kobj_frames;
}

static int child(const char *addr)
{
    volatile struct page *p = (volatile struct page *)(uintptr_t)strtoll(addr, NULL, 0);
    int local = 0;
    long mine = sys_vm_map(PAGE, RW);
    p->seen = p->magic;
    p->child_image = (uint64_t)(uintptr_t)&image_marker;
    p->child_stack = (uint64_t)(uintptr_t)&local;
    p->child_map = (uint64_t)mine;
    p->unmap = sys_vm_unmap((void *)p, PAGE);
    p->protect = sys_vm_protect((void *)p, PAGE, PROT_READ);
    p->fixed = sys_vm_mmap((void *)p, PAGE, RW, VM_MMAP_FIXED, 0);
    return 0;
}

static void check_eager(void)
{
    uint64_t before = frames_free();
    long a = sys_vm_map(16 * PAGE, RW);
    uint64_t after = frames_free();
    CHECK(a > 0, "map");
    CHECK(before - after >= 16, "a mapping takes its frames at once");
    if (a > 0)
        sys_vm_unmap((void *)a, 16 * PAGE);
}

static void check_clone(void)
{
    long t = sys_task_create("mmuclone");
    CHECK(t > 0, "task_create");
    CHECK(sys_vm_clone((int)t, 0) == E_NOTSUP, "vm_clone is E_NOTSUP");
    if (t > 0)
        sys_task_kill((int)t);
}

static void check_answers(volatile struct page *p)
{
    int local = 0;
    CHECK(p->seen == MAGIC, "the child read the parent's word");
    CHECK(p->child_image != (uint64_t)(uintptr_t)&image_marker, "the copies' images differ");
    CHECK(p->child_stack >> 12 != (uint64_t)(uintptr_t)&local >> 12, "the stacks differ");
    CHECK((long)p->child_map > 0, "the child mapped a page");
    CHECK(p->unmap == E_PERM, "unmap of another task's page");
    CHECK(p->protect == E_PERM, "protect of another task's page");
    CHECK(p->fixed == E_PERM, "fixed map over another task's page");
    p->magic = MAGIC + 1;                             /* still ours, still writable */
    CHECK(p->magic == MAGIC + 1, "the page is intact");
    CHECK(sys_vm_protect((void *)(uintptr_t)p->child_map, PAGE, RW) == E_FAULT,
          "the child's page went with it");
    CHECK(sys_vm_protect((void *)(uintptr_t)(p->child_stack & ~(PAGE - 1)), PAGE, RW) == E_FAULT,
          "the child's stack went with it");
}

static int share(void)
{
    long a = sys_vm_map(PAGE, RW);
    if (a < 0) {
        printf("mmutest: map failed %ld\n", a);
        return 1;
    }
    volatile struct page *p = (volatile struct page *)(uintptr_t)a;
    p->magic = MAGIC;
    char arg[32];
    snprintf(arg, sizeof(arg), "%#lx", a);
    const char *argv[] = { "mmutest", "child", arg, NULL };
    long task = sys_spawn("mmutest", argv, 3, 0);
    int status = -1;
    CHECK(task > 0 && sys_task_wait((int)task, &status) == task && status == 0, "child ran");
    check_answers(p);
    check_eager();
    check_clone();
    if (failures)
        return 1;
    printf("mmutest ok\n");
    return 0;
}

int main(int argc, char **argv)
{
    if (argc == 3 && strcmp(argv[1], "child") == 0)
        return child(argv[2]);
    if (argc == 2 && strcmp(argv[1], "share") == 0)
        return share();
    printf("usage: mmutest share\n");
    return 2;
}
