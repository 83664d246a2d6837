/* User threads, see ondol/thread.h. */
#include <stddef.h>
#include <stdint.h>

#include <ondol/sys.h>
#include <ondol/thread.h>

#include "tls.h"

/*
 * First instructions of a thread libc starts (thread_start_on, task_clone_run). The kernel
 * enters with rdi = the start block (at the top of the new stack, or in the cloned
 * caller's frame): align the stack as a call expects and go on in C.
 */
__asm__(".text\n"
        ".globl __libc_thread_entry\n"
        ".type __libc_thread_entry, @function\n"
        "__libc_thread_entry:\n"
        "    xorl %ebp, %ebp\n"
        "    andq $-16, %rsp\n"
        "    call __libc_thread_main\n"
        "    ud2\n"
        ".size __libc_thread_entry, . - __libc_thread_entry\n");
void __libc_thread_entry(void *start_block);

/* What a new thread needs, written by its starter. */
struct start_block {
    thread_fn fn;
    void *arg;
    void *tp;            /* its TLS thread pointer, or NULL */
    uint64_t pad;        /* keeps the block a multiple of 16 bytes */
};

/* A thread's life: its TLS, fn(arg), the thread_at_exit registration, the end with fn's
 * return value as status. */
__attribute__((noreturn, used)) void __libc_thread_main(struct start_block *b);
void __libc_thread_main(struct start_block *b)
{
    __libc_tls_install(b->tp);
    int status = b->fn(b->arg);
    __libc_tls_exit();
    sys_thread_exit(status);
}

/* Writes the start block (and the TLS area, when the program has TLS) at the top of
 * [stack, stack+size) and returns the block, or NULL when the stack is too small. */
static struct start_block *start_block_at(void *stack, size_t size, thread_fn fn, void *arg)
{
    size_t tls = __libc_tls_area_size();
    if (size < tls + sizeof(struct start_block) + 256)
        return NULL;
    void *tp = __libc_tls_layout((char *)stack + size - tls, tls);
    uintptr_t top = ((uintptr_t)stack + size - tls) & ~(uintptr_t)15;
    struct start_block *b = (struct start_block *)(top - sizeof(struct start_block));
    b->fn = fn;
    b->arg = arg;
    b->tp = tp;
    return b;
}

int thread_start_on(struct thread *t, thread_fn fn, void *arg, int prio, void *stack,
                    size_t stack_size)
{
    struct start_block *b = start_block_at(stack, stack_size, fn, arg);
    if (b == NULL)
        return E_INVAL;
    long tid = sys_thread_create(__libc_thread_entry, b, b, prio);
    if (tid < 0)
        return (int)tid;
    t->tid = (int)tid;
    t->stack = stack;
    t->stack_size = stack_size;
    t->owns_stack = 0;
    return (int)tid;
}

int thread_start(struct thread *t, thread_fn fn, void *arg, int prio, size_t stack_size)
{
    if (stack_size == 0)
        stack_size = THREAD_STACK_DEFAULT;
    stack_size = (stack_size + 4095) & ~(size_t)4095;
    long addr = sys_vm_map(stack_size, PROT_READ | PROT_WRITE);
    if (addr < 0)
        return (int)addr;
    void *stack = (void *)(uintptr_t)addr;
    int tid = thread_start_on(t, fn, arg, prio, stack, stack_size);
    if (tid < 0) {
        sys_vm_unmap(stack, stack_size);
        return tid;
    }
    t->owns_stack = 1;
    return tid;
}

int thread_join(struct thread *t, int *status)
{
    int st = 0;
    long r = sys_thread_join(t->tid, &st);
    if (r < 0)
        return (int)r;
    if (status != NULL)
        *status = st;
    if (t->owns_stack) {
        sys_vm_unmap(t->stack, t->stack_size);
        t->owns_stack = 0;
    }
    return 0;
}

/* SYS_PS into a mapping made for the scan (reentrant; the kernel writes only the live
 * threads' entries, so few pages are touched), then given back. */
long thread_task_of(int tid)
{
    size_t len = PS_MAX * sizeof(struct ps_entry);
    long addr = sys_vm_map(len, PROT_READ | PROT_WRITE);
    if (addr < 0)
        return addr;
    const struct ps_entry *e = (const struct ps_entry *)addr;
    long n = tid > 0 ? sys_ps((struct ps_entry *)addr, PS_MAX) : 0, task = E_SRCH;
    for (long i = 0; i < n; i++)
        if (e[i].tid == tid && e[i].state != TS_ZOMBIE)
            task = e[i].task;
    sys_vm_unmap((void *)addr, len);
    return task;
}

int thread_self(void)
{
    struct self_info si;
    long r = sys_self(&si);
    return r < 0 ? (int)r : si.tid;
}

/* The clone's thread runs fn(arg) on its copy of the stack region, with its copy of the
 * caller's TLS block (same address in the copy). Its start block lives in this function's
 * frame: the clone gets a copy of it, and no page of the stack region is touched here. */
static int clone_entry_fn(void *fn_arg)
{
    void **fa = fn_arg;
    ((void (*)(void *))fa[0])(fa[1]);
    return 0;
}

long task_clone_run(const char *name, void (*fn)(void *), void *stack_top, void *arg)
{
    void *fa[2] = {(void *)fn, arg};
    struct start_block b = {.fn = clone_entry_fn, .arg = fa, .tp = __libc_tls_self()};
    long t = sys_task_create(name);
    if (t < 0)
        return t;
    long r = sys_vm_clone((int)t, 0);
    if (r == 0)
        r = sys_task_thread((int)t, __libc_thread_entry, stack_top, &b, PRIO_INHERIT);
    return r < 0 ? r : t;
}
