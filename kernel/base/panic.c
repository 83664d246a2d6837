/*
 * Kernel panics: registers, a backtrace through the frame-pointer chain, symbolised with
 * the table in .ksyms (generated from the first link by tools/gen_ksyms.py and linked in
 * on the second), then a halt. Under QEMU the machine powers off so a test sees the end.
 */
#include <stdarg.h>
#include "arch.h"
#include "console.h"
#include "kernel.h"
#include "ksyms.h"

/* rip first, then the return addresses of the frame-pointer chain from rbp. */
static void backtrace(u64 rip, u64 rbp)
{
    u64 stack[24];
    stack[0] = rip;
    ksym_stack(rbp, stack + 1, 23);
    printk("backtrace:\n");
    ksym_print(stack, 24);
}

static volatile int panicking;

__attribute__((noreturn)) static void panic_stop(void)
{
    static const char record[] = "\n{\"type\":\"panic\",\"message\":\"kernel panic (see console)\"}\n";
    serial_write(COM2, record, sizeof(record) - 1);
    printk("ondol: kernel panic; system halted\n");
    power_off_or_halt();
}

void panic(const char *fmt, ...)
{
    cli();
    if (panicking++)
        for (;;)
            hlt();
    va_list ap;
    va_start(ap, fmt);
    printk("\nPANIC: ");
    vprintk(fmt, ap);
    printk("\n");
    va_end(ap);
    backtrace((u64)__builtin_return_address(0), (u64)__builtin_frame_address(0));
    panic_stop();
}

void panic_trap(struct trapframe *tf, const char *why)
{
    cli();
    if (panicking++)
        for (;;)
            hlt();
    printk("\nPANIC: %s in kernel mode (vector %lu, error %#lx)\n", why, (unsigned long)tf->vector,
           (unsigned long)tf->error);
    printk("  rip %#018lx  rsp %#018lx  rflags %#lx  cr2 %#lx\n", (unsigned long)tf->rip,
           (unsigned long)tf->rsp, (unsigned long)tf->rflags, (unsigned long)read_cr2());
    printk("  rax %#018lx  rbx %#018lx  rcx %#018lx  rdx %#018lx\n", (unsigned long)tf->rax,
           (unsigned long)tf->rbx, (unsigned long)tf->rcx, (unsigned long)tf->rdx);
    printk("  rsi %#018lx  rdi %#018lx  rbp %#018lx  r8  %#018lx\n", (unsigned long)tf->rsi,
           (unsigned long)tf->rdi, (unsigned long)tf->rbp, (unsigned long)tf->r8);
    printk("  r9  %#018lx  r10 %#018lx  r11 %#018lx  r12 %#018lx\n", (unsigned long)tf->r9,
           (unsigned long)tf->r10, (unsigned long)tf->r11, (unsigned long)tf->r12);
    printk("  r13 %#018lx  r14 %#018lx  r15 %#018lx  cr3 %#lx\n", (unsigned long)tf->r13,
           (unsigned long)tf->r14, (unsigned long)tf->r15, (unsigned long)read_cr3());
    backtrace(tf->rip, tf->rbp);
    panic_stop();
}
