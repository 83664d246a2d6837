/* Trap frames and the trap entry points. */
#ifndef TRAP_H
#define TRAP_H
#include "types.h"

/* Layout must match the push order in arch/x86_64/entry.S. */
struct trapframe {
    u64 r15, r14, r13, r12, r11, r10, r9, r8;
    u64 rbp, rdi, rsi, rdx, rcx, rbx, rax;
    u64 vector, error;
    u64 rip, cs, rflags, rsp, ss;
};

#define VEC_TIMER     32
#define VEC_COM1      36
#define VEC_DEV_BASE  0x40  /* I/O APIC pin p of a claimed device: VEC_DEV_BASE + p */
#define DEV_IRQ_PINS  24
#define VEC_MSI_BASE  0x60  /* MSI-X of the claimed device with handle h: VEC_MSI_BASE + h */
#define DEV_MSI_VECTORS 8
#define VEC_SPURIOUS  255
#define VEC_SYSCALL   256   /* pseudo vector recorded in frames built by syscall entry */
#define VEC_REGS      257   /* pseudo vector: registers set by a server (fwd.c); leave by iret */

void idt_init(void);
void idt_load(void);                   /* this CPU's IDTR := the shared IDT (APs) */
void trap(struct trapframe *tf);
struct trapframe *syscall_dispatch(struct trapframe *tf);
void kernel_exit_to_user(struct trapframe *tf);
const char *trap_name(u64 vector);
static inline bool tf_from_user(const struct trapframe *tf) { return (tf->cs & 3) == 3; }

/* entry.S */
extern void trap_return(void);            /* pops a trapframe at rsp and returns to it */
#endif
