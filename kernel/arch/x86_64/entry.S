/*
 * Kernel entry and exit: interrupt/exception stubs, the syscall entry, the common return
 * path, and the context switch. Every entry builds a struct trapframe (arch/x86_64/include/trap.h)
 * on the current thread's kernel stack. The kernel itself runs with interrupts disabled; they
 * are taken only in user mode and in the idle loop.
 */
#include "cpu_offsets.h"

#define SAVE_REGS       \
    pushq %rax;         \
    pushq %rbx;         \
    pushq %rcx;         \
    pushq %rdx;         \
    pushq %rsi;         \
    pushq %rdi;         \
    pushq %rbp;         \
    pushq %r8;          \
    pushq %r9;          \
    pushq %r10;         \
    pushq %r11;         \
    pushq %r12;         \
    pushq %r13;         \
    pushq %r14;         \
    pushq %r15

#define RESTORE_REGS    \
    popq %r15;          \
    popq %r14;          \
    popq %r13;          \
    popq %r12;          \
    popq %r11;          \
    popq %r10;          \
    popq %r9;           \
    popq %r8;           \
    popq %rbp;          \
    popq %rdi;          \
    popq %rsi;          \
    popq %rdx;          \
    popq %rcx;          \
    popq %rbx;          \
    popq %rax

    .text
/* Vectors that push an error code: 8, 10-14, 17, 21, 29, 30. Others push a zero. */
.macro VECTOR n
    .align 16
vector_\n:
    .if (\n == 8) || (\n >= 10 && \n <= 14) || (\n == 17) || (\n == 21) || (\n == 29) || (\n == 30)
    .else
    pushq $0
    .endif
    pushq $\n
    jmp trap_common
.endm

    .globl trap_vectors
    .align 16
trap_vectors_start:
.altmacro
.set i, 0
.rept 256
    VECTOR %i
    .set i, i + 1
.endr

/* Table of the 256 stub addresses, used by idt_init(). */
    .section .rodata
    .align 8
trap_vectors:
.macro VECADDR n
    .quad vector_\n
.endm
.set i, 0
.rept 256
    VECADDR %i
    .set i, i + 1
.endr
    .text

trap_common:
    testb $3, 24(%rsp)          /* cs of the interrupted context (after vector, error, rip) */
    jz 1f
    swapgs
1:  cld
    SAVE_REGS
    movq %rsp, %rdi
    call trap
    /* fall through */

    .globl trap_return
trap_return:
    RESTORE_REGS
    addq $16, %rsp              /* vector, error */
    testb $3, 8(%rsp)
    jz 2f
    swapgs
2:  iretq

/*
 * syscall: rcx = user rip, r11 = user rflags, IF already cleared by SFMASK.
 * Builds the same trapframe as an interrupt from user mode, then returns with sysret
 * (or iret when the frame's rip is not canonical, to avoid the sysret #GP in ring 0).
 */
    .globl syscall_entry
syscall_entry:
    swapgs
    movq %rsp, %gs:CPU_USER_RSP
    movq %gs:CPU_KERNEL_RSP, %rsp
    pushq $0x23                 /* ss */
    pushq %gs:CPU_USER_RSP      /* rsp */
    pushq %r11                  /* rflags */
    pushq $0x2b                 /* cs */
    pushq %rcx                  /* rip */
    pushq $0                    /* error */
    pushq $256                  /* vector: VEC_SYSCALL */
    cld
    SAVE_REGS
    movq %rsp, %rdi
    call syscall_dispatch       /* returns the frame to leave through: after a direct */
    movq %rax, %rsp             /* IPC switch it is the partner's, on the partner's stack */
    /* fall through */

/*
 * Leave the kernel through the trapframe at rsp: run the exit checks (reschedule, killed)
 * on this thread's own stack, release the kernel lock, then sysret for frames built by
 * syscall entry (when rip is canonical: sysret to a non-canonical rip faults in ring 0)
 * and iret otherwise.
 */
    .globl exit_to_user
exit_to_user:
    movq %rsp, %rdi
    call kernel_exit_to_user
    cmpq $256, 15*8(%rsp)       /* vector */
    jne trap_return
    movq 17*8(%rsp), %rcx       /* rip */
    movq %rcx, %rax
    sarq $47, %rax
    jnz trap_return
    RESTORE_REGS
    movq 16(%rsp), %rcx         /* rip */
    movq 32(%rsp), %r11         /* rflags */
    movq 40(%rsp), %rsp         /* user rsp */
    swapgs
    sysretq

/*
 * void swtch(u64 *save_rsp, u64 new_rsp): save callee-saved registers on the current
 * stack, store its rsp, load the new one and restore. A new thread's stack is prepared
 * so that the final ret lands in thread_start.
 */
    .globl swtch
swtch:
    pushq %rbp
    pushq %rbx
    pushq %r12
    pushq %r13
    pushq %r14
    pushq %r15
    movq %rsp, (%rdi)
    movq %rsi, %rsp
    popq %r15
    popq %r14
    popq %r13
    popq %r12
    popq %rbx
    popq %rbp
    ret

/* A thread switched to without a kernel continuation (new, or blocked in IPC) starts
 * here with rsp at its trapframe: finish the switch, then leave through the frame. */
    .globl thread_start
thread_start:
    call thread_first_run
    jmp exit_to_user

    .section .note.GNU-stack, "", @progbits
