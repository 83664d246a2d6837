/* User threads, see ondol/thread.h. */
#include <stddef.h>
#include <stdint.h>

#include <ondol/sys.h>
#include <ondol/thread.h>

/*
 * First instructions of a new thread. The kernel enters here with rdi = the arg given
 * to SYS_THREAD_CREATE, which is a pointer to the start block {fn, arg} at the top of
 * the new stack. Align the stack, call fn(arg), end the thread with its return value
 * (through a C function: the call number is an enumerator, which asm text cannot name).
 */
__asm__(".text\n"
        ".globl __libc_thread_entry\n"
        ".type __libc_thread_entry, @function\n"
        "__libc_thread_entry:\n"
        "    xorl %ebp, %ebp\n"
        "    andq $-16, %rsp\n"
        "    movq 0(%rdi), %rax\n"
        "    movq 8(%rdi), %rdi\n"
        "    call *%rax\n"
        "    movl %eax, %edi\n"
        "    call __libc_thread_exit\n"
        "    ud2\n"
        ".size __libc_thread_entry, . - __libc_thread_entry\n");

__attribute__((noreturn, used)) void __libc_thread_exit(int status);
void __libc_thread_exit(int status) { sys_thread_exit(status); }
void __libc_thread_entry(void *start_block);

int thread_start_on(struct thread *t, thread_fn fn, void *arg, int prio, void *stack,
                    size_t stack_size)
{
    uintptr_t top = ((uintptr_t)stack + stack_size) & ~(uintptr_t)15;
    if (stack_size < 256 || top - 16 < (uintptr_t)stack)
        return E_INVAL;
    /* The start block {fn, arg} sits at the very top of the stack; the thread's
     * stack pointer starts right below it. */
    void **block = (void **)(top - 16);
    block[0] = (void *)fn;
    block[1] = arg;
    long tid = sys_thread_create(__libc_thread_entry, block, block, prio);
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

int thread_self(void)
{
    struct self_info si;
    long r = sys_self(&si);
    return r < 0 ? (int)r : si.tid;
}

long task_clone_run(const char *name, void (*fn)(void *), void *stack_top, void *arg)
{
    long t = sys_task_create(name);
    if (t < 0)
        return t;
    long r = sys_vm_clone((int)t, 0);
    if (r == 0)
        r = sys_task_thread((int)t, fn, stack_top, arg, PRIO_INHERIT);
    return r < 0 ? r : t;
}
