/*
 * Kernel entry and exit: interrupt/exception stubs, the syscall entry, the common return
 * path, and the context switch. Every entry builds a struct trapframe (arch/x86_64/include/trap.h)
 * on the current thread's kernel stack. The kernel itself runs with interrupts disabled; they
 * are taken only in user mode and in the idle loop.
 */
#include "cpu_offsets.h"
#include "fastpath_layout.h"

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

/* Store the registers of a `syscall` entry into the trapframe at the top of the kernel
 * stack (see syscall_entry). */
#define SYSCALL_FRAME \
    swapgs; \
    movq %rsp, %gs:CPU_USER_RSP; \
    movq %gs:CPU_SYSCALL_FRAME, %rsp; \
    movq %rcx, TF_RIP(%rsp); \
    movq %r11, TF_RFLAGS(%rsp); \
    movq %gs:CPU_USER_RSP, %rcx; \
    movq %rcx, TF_RSP(%rsp); \
    movq $256, TF_VECTOR(%rsp)          /* VEC_SYSCALL */; \
    movq %rax, TF_RAX(%rsp); \
    movq %rbx, TF_RBX(%rsp); \
    movq %rdx, TF_RDX(%rsp); \
    movq %rsi, TF_RSI(%rsp); \
    movq %rdi, TF_RDI(%rsp); \
    movq %rbp, TF_RBP(%rsp); \
    movq %r8, TF_R8(%rsp); \
    movq %r9, TF_R9(%rsp); \
    movq %r10, TF_R10(%rsp); \
    movq %r12, TF_R12(%rsp); \
    movq %r13, TF_R13(%rsp); \
    movq %r14, TF_R14(%rsp); \
    movq %r15, TF_R15(%rsp);

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
 * syscall: rcx = user rip, r11 = user rflags, IF and DF already cleared by SFMASK.
 * Fills the trapframe at the top of the thread's kernel stack with stores rather than
 * pushes, leaving out what a syscall frame never needs from this entry: rcx and r11
 * (clobbered by the ABI; the exit reloads them from rip and rflags) and cs, ss, error
 * (always the user selectors and 0 in a user thread's top frame: thread_create and every
 * entry from user mode write the same values). Register-only IPC call and reply_recv try
 * the fastpath first (docs/ipc.md); everything else, and every case the fastpath declines,
 * goes to syscall_dispatch, which returns the frame to leave through.
 */
    .globl syscall_entry
syscall_entry:
    SYSCALL_FRAME
    leaq -ASM_SYS_IPC_CALL(%rax), %rcx
    cmpq $1, %rcx
    jbe ipc_fastpath            /* ipcfast.S (uses these flags): switches, or comes back to syscall_slow */
    .globl syscall_slow
syscall_slow:
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
exit_checked:                   /* the checks done, the lock released */
    cmpq $256, TF_VECTOR(%rsp)
    jne trap_return
    movq TF_RIP(%rsp), %rcx     /* sysret's rip */
    movq %rcx, %rax
    sarq $47, %rax
    jnz trap_return
    /* loads, not pops: rcx and r11 come from rip and rflags, and the frame stays put */
    movq TF_R15(%rsp), %r15
    movq TF_R14(%rsp), %r14
    movq TF_R13(%rsp), %r13
    movq TF_R12(%rsp), %r12
    movq TF_R10(%rsp), %r10
    movq TF_R9(%rsp), %r9
    movq TF_R8(%rsp), %r8
    movq TF_RBP(%rsp), %rbp
    movq TF_RDI(%rsp), %rdi
    movq TF_RSI(%rsp), %rsi
    movq TF_RDX(%rsp), %rdx
    movq TF_RBX(%rsp), %rbx
    movq TF_RAX(%rsp), %rax
    movq TF_RFLAGS(%rsp), %r11
    movq TF_RSP(%rsp), %rsp
    swapgs
    sysretq

/*
 * The syscall entry while a Linux task runs (LSTAR is switched per thread:
 * cpu_user_context, cpu.h): the same frame, then the forwarding fastpath (fwd_fastpath,
 * ipcfast.S), which switches to the server or comes back to fwd_slow: fwd_syscall
 * (kernel/ipc/fwd.c) forwards the call to the task's server whatever rax holds, and
 * returns the frame to leave through (the server's after a direct switch). ondol's own
 * entry is untouched.
 */
    .globl linux_syscall_entry
linux_syscall_entry:
    SYSCALL_FRAME
    jmp fwd_fastpath                    /* ipcfast.S */
    .globl fwd_slow
fwd_slow:
    movq %rsp, %rdi
    call fwd_syscall
    movq %rax, %rsp
    jmp exit_to_user

/*
 * The syscall entry of a thread of a task served in the kernel (unix=ik; LSTAR is switched
 * per thread, ENTRY_LINUX_IK): the same frame, then straight to the in-kernel server,
 * which takes the kernel lock itself, runs the exit checks and releases the lock
 * (sched_leave_kernel) before it returns the frame to leave through (its own).
 */
    .globl linux_ik_syscall_entry
linux_ik_syscall_entry:
    SYSCALL_FRAME
    movq %rsp, %rdi
    call unix_ik_syscall                /* kernel/srv/unix_ik.c */
    movq %rax, %rsp
    jmp exit_checked

/*
 * void swtch(u64 *save_rsp, u64 new_rsp): save callee-saved registers on the current
 * stack, store its rsp, load the new one and restore. A new thread's stack is prepared
 * so that the final ret lands in thread_start.
 */
/* The callee-saved registers pushed, and the stack pointer stored in *save_rsp (rdi). */
.macro SAVE_CONTINUATION
    pushq %rbp
    pushq %rbx
    pushq %r12
    pushq %r13
    pushq %r14
    pushq %r15
    movq %rsp, (%rdi)
.endm

    .globl swtch
swtch:
    SAVE_CONTINUATION
    movq %rsi, %rsp
    popq %r15
    popq %r14
    popq %r13
    popq %r12
    popq %rbx
    popq %rbp
    ret

/*
 * void swtch_to_tf(u64 *save_rsp, struct trapframe *tf): switch to a thread without a
 * kernel continuation (blocked in IPC): its stack pointer becomes its trapframe and
 * thread_start runs, with rbp 0 ending the frame-pointer chain (backtraces, the lock
 * checker's stack walk); no switch frame is built for it. save_rsp as swtch's, or NULL
 * when the current thread has no continuation either (it blocked in IPC: the DTS-off
 * round trip's every switch), which saves nothing and never returns.
 */
    .globl swtch_to_tf
swtch_to_tf:
    testq %rdi, %rdi
    jz 1f
    SAVE_CONTINUATION
1:  movq %rsi, %rsp
    xorl %ebp, %ebp
    jmp thread_start

/* A thread switched to without a kernel continuation (new, or blocked in IPC) starts
 * here with rsp at its trapframe: finish the switch and the exit checks, without the
 * kernel lock (sched.c thread_leave_via_tf), then leave through the frame. */
    .globl thread_start
thread_start:
    call thread_leave_via_tf
    jmp exit_checked

    .section .note.GNU-stack, "", @progbits
