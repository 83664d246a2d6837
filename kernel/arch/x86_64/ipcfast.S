/*
 * The IPC fastpath (docs/ipc.md "The fastpath"): register-only SYS_IPC_CALL and
 * SYS_IPC_REPLY_RECV to a partner already blocked receiving from us, taken straight from
 * syscall_entry (entry.S) with no kernel lock (one CPU, interrupts off; a per-CPU or
 * per-object scheme once SMP arrives).
 *
 * In:  rsp = the caller's complete trapframe (SYSCALL_FRAME), rcx = 0 for call and 1 for
 *      reply_recv, rdi/rsi/rdx the caller's arguments, and the eight message words live in
 *      r8, r9, r10, r12, r13, r14, r15, rbx. Those eight are never written here: they reach
 *      the partner as they are, through sysret.
 * Out: either `jmp syscall_slow` with nothing changed (any condition fails: the general
 *      path decides, with the same semantics), or sysret into the partner with our tid in
 *      rax, its own rdi, rsi, rdx, rbp, rip, rflags, rsp from its frame.
 *
 * It does exactly what do_send (call) / do_reply_recv and wake_partner, direct_switch do
 * in ipc.c for this case: the slow path is the reference, and the differential test
 * (tests/test_ipc.py, ipctest diff) requires identical results with ipc_fastpath=on/off.
 * With pcnt probes on, ipc.c's fastpath() in C runs instead, under its probe.
 *
 * Registers here: rbp = the current thread (cur), rax = the partner (p); rcx, rdx, rsi,
 * rdi and r11 are scratch once the arguments are checked. Offsets: fastpath_layout.h.
 */
#include "cpu_offsets.h"
#include "fastpath_layout.h"

/*
 * The fast gate: the three settings the fastpath depends on, as the bytes of one word, so
 * that one compare checks them all. They are the option variables themselves (options.def:
 * dts, ipc_fastpath; pcnt.c: pcnt_probes_on), declared `extern bool` in C as before and
 * defined here, where their layout matters. Fast iff dts = 1, ipc_fastpath = 1, probes = 0.
 */
    .data
    .balign 4
    .globl ipc_fast_gate, ipc_dts, ipc_fastpath_on, pcnt_probes_on
ipc_fast_gate:
ipc_dts:            .byte 1
ipc_fastpath_on:    .byte 1
pcnt_probes_on:     .byte 0
                    .byte 0
#define FAST_GATE_OPEN 0x0101

/*
 * The checks both operations start with, inline in each (no call, no branch on the kind):
 * the gate, no pending work on this CPU (need_resched) and the caller not killed, as the
 * general path's exit would check them; no flags (buffers) in rdx's upper half; and p =
 * the thread whose id is exactly rdi, which rejects 0, negatives and ids >= 2^31 as the
 * general path's lookup does. Leaves cur in rbp and p in rax.
 */
.macro GATE_AND_PARTNER
    cmpl $FAST_GATE_OPEN, ipc_fast_gate(%rip)
    jne syscall_slow
    cmpb $0, %gs:CPU_NEED_RESCHED
    jne syscall_slow
    movq %gs:CPU_CURRENT, %rbp
    cmpb $0, TH_KILLED(%rbp)
    jne syscall_slow
    cmpl $0, TF_RDX+4(%rsp)
    jne syscall_slow
    movl %edi, %r11d
    andl $FP_SLOT_MASK, %r11d
    movq thread_ids+IDT_OBJS(%rip), %rax
    movq (%rax,%r11,8), %rax
    testq %rax, %rax
    jz syscall_slow
    movslq TH_TID(%rax), %r11
    cmpq %r11, %rdi
    jne syscall_slow
.endm

/*
 * The L4 priority rule for a direct switch, as wake_partner applies it, narrowed as the
 * fastpath needs: p at least our priority and at least every ready thread's
 * (rq_highest_prio); p not sleeping (a timed receive: the general path disarms it) and on
 * no queue (a closed receive: the general path unlinks it). Clobbers rcx, rsi.
 */
.macro PRIORITY_OK
    movl TH_PRIO(%rax), %ecx
    cmpl TH_PRIO(%rbp), %ecx
    jl syscall_slow
    movq rq_words(%rip), %rsi
    testq %rsi, %rsi
    jz 9f
    bsrq %rsi, %rsi                     /* the highest non-empty word */
    bsrq rq_bitmap(,%rsi,8), %rcx       /* its highest priority */
    shll $6, %esi
    addl %esi, %ecx
    cmpl %ecx, TH_PRIO(%rax)
    jl syscall_slow
9:  cmpb $0, TH_SLEEPING(%rax)
    jne syscall_slow
    cmpq $0, TH_WAITING_ON(%rax)
    jne syscall_slow
.endm

/*
 * may_send(cur, p) (ipc.c): p in our task, in a task we created, our reply right names
 * p (rdi holds p's id), or our task holds a grant for p (out of line). Falls through
 * when allowed. Clobbers rcx, rsi.
 */
.macro MAY_SEND
    movq TH_TASK(%rbp), %rsi
    movq TH_TASK(%rax), %rcx
    cmpq %rsi, %rcx
    je 8f
    cmpq %rsi, TASK_PARENT(%rcx)
    je 8f
    cmpl %edi, TH_REPLY_TO(%rbp)
    je 8f
    call fast_granted
    jne syscall_slow
8:
.endm

    .text
    .globl ipc_fastpath
/* From syscall_entry: the flags of its `cmpq $1, rcx` (rcx = number - SYS_IPC_CALL) tell
 * the two apart: ZF set for reply_recv. */
ipc_fastpath:
    je fast_reply_recv

/* call(dest = p): p receives from us or from anyone, on no queue, with no buffer. */
fast_call:
    GATE_AND_PARTNER
    cmpq %rax, %rbp                     /* IPC with oneself: E_DEADLK */
    je syscall_slow
    cmpb $FP_IPC_RECEIVING, TH_IPC_STATE(%rax)
    jne syscall_slow
    movl TH_RECV_FROM(%rax), %r11d
    testl %r11d, %r11d
    jz 1f
    cmpl TH_TID(%rbp), %r11d
    jne syscall_slow
1:  cmpq $0, TH_IPC_FLAGS(%rax)
    jne syscall_slow
    MAY_SEND
    PRIORITY_OK
    /* committed: p stops waiting for our reply if it was; we await p's reply */
    testl %r11d, %r11d
    jz 2f
    decl TH_REPLY_WAITERS(%rbp)
2:  movl %edi, TH_RECV_FROM(%rbp)
    incl TH_REPLY_WAITERS(%rax)
    jmp fast_commit

/* reply_recv(to = p, from = IPC_ANY, a non-zero timeout): p waits for our reply; no
 * sender queued for us. */
fast_reply_recv:
    GATE_AND_PARTNER
    cmpq $-1, %rsi                      /* IPC_ANY */
    jne syscall_slow
    cmpq $0, TH_SENDERS_HEAD(%rbp)
    jne syscall_slow
    testl %edx, %edx                    /* poll: the general path's receive answers */
    jz syscall_slow
    cmpb $FP_IPC_RECEIVING, TH_IPC_STATE(%rax)
    jne syscall_slow
    movl TH_TID(%rbp), %r11d
    cmpl %r11d, TH_RECV_FROM(%rax)
    jne syscall_slow
    cmpq $0, TH_IPC_FLAGS(%rax)
    jne syscall_slow
    cmpl %edi, TH_REPLY_TO(%rbp)        /* usually the reply right */
    jne fast_reply_may_send
fast_reply_allowed:
    PRIORITY_OK
    /* committed: p stops waiting for our reply; we receive from anyone */
    decl TH_REPLY_WAITERS(%rbp)
    movl $0, TH_RECV_FROM(%rbp)
    cmpl $-1, %edx                      /* IPC_FOREVER: no timeout to arm */
    jne fast_arm_timeout

/* Both: p gets the message (words in registers, our tid in rax at the end) and the reply
 * right; we use ours up, block receiving, and p runs on our time slice. */
fast_commit:
    movl TH_TID(%rbp), %esi
    movw $0, TH_RESUME_VIA_TF(%rax)      /* p: runs on, IPC idle */
    movl %esi, TH_RWTID(%rax)
    movl %esi, TH_REPLY_TO(%rax)
    cmpl %edi, TH_REPLY_TO(%rbp)         /* the reply right is one-shot */
    jne 1f
    movl $0, TH_REPLY_TO(%rbp)
1:  movq $0, TH_IPC_FLAGS(%rbp)
    movl $FP_CALLER_BLOCKED_RECEIVING, TH_RESUME_VIA_TF(%rbp)
    movl $FP_T_BLOCKED, TH_STATE(%rbp)
    movb $0, TH_ON_CPU(%rbp)
    movl $FP_T_RUNNING, TH_STATE(%rax)
    movb $1, TH_ON_CPU(%rax)
    movl TH_SLICE_LEFT(%rbp), %ecx       /* the rest of our slice, or a fresh one */
    testl %ecx, %ecx
    jnz 2f
    movl slice_ticks(%rip), %ecx
2:  movl %ecx, TH_SLICE_LEFT(%rax)
    movq %rax, %gs:CPU_CURRENT
    movq TH_KSTACK(%rax), %rcx
    addq $FP_KSTACK_SIZE, %rcx
    movq %rcx, %gs:CPU_KERNEL_RSP
    movq %rcx, %gs:CPU_TSS_RSP0

    /* address space: same task, or its tables already loaded: nothing to do */
    movq TH_TASK(%rax), %rcx
    cmpq TH_TASK(%rbp), %rcx
    je 4f
    movq TASK_AS(%rcx), %rcx
    movq AS_CR3(%rcx), %rdi
    movq %cr3, %rdx
    cmpq %rdx, %rdi
    je 4f
    cmpb $0, pcid_active(%rip)
    jne fast_load_tagged
    cmpb $0, markers_on(%rip)           /* the cache model's marker (aspace_load) */
    je 3f
    movl AS_ASID(%rcx), %edx
    andl $0xfff, %edx
    movzbl FP_MARKER_ASID(%rdx), %edx
3:  movq %rdi, %cr3
4:
    /* lazy x87/SSE (thread_fpu_switch): set CR0.TS unless set or p owns the registers */
    cmpb $0, %gs:CPU_FPU_TS
    jne 5f
    cmpq %rax, %gs:CPU_FPU_OWNER
    je 5f
    movq %cr0, %rdx
    orq $FP_CR0_TS, %rdx
    movq %rdx, %cr0
    movb $1, %gs:CPU_FPU_TS
5:
    /* leave through p's frame; its rip is canonical (it entered with syscall) */
    movq TH_TF(%rax), %rsp
    movslq TH_TID(%rbp), %rax
    movq TF_RDI(%rsp), %rdi
    movq TF_RSI(%rsp), %rsi
    movq TF_RDX(%rsp), %rdx
    movq TF_RBP(%rsp), %rbp
    movq TF_RIP(%rsp), %rcx
    movq TF_RFLAGS(%rsp), %r11
    movq TF_RSP(%rsp), %rsp
    swapgs
    sysretq

/* reply_recv without the reply right: the other rights. */
fast_reply_may_send:
    MAY_SEND
    jmp fast_reply_allowed

/* reply_recv's finite receive timeout: sleep_until(cur, ticks) (sched.c), keeping p, p's
 * id (rdi) and the caller-saved words; six pushes keep the frame's 16-byte alignment. */
fast_arm_timeout:
    pushq %rax
    pushq %rdi
    pushq %r8
    pushq %r9
    pushq %r10
    pushq %r10
    movq %rbp, %rdi
    movl %edx, %esi
    call sleep_until
    popq %r10
    popq %r10
    popq %r9
    popq %r8
    popq %rdi
    popq %rax
    jmp fast_commit

/* aspace_load_tagged(cr3, asid) (vm.c, PCID): the words in r8-r10 and p survive the call. */
fast_load_tagged:
    pushq %rax
    pushq %r8
    pushq %r9
    pushq %r10
    movl AS_ASID(%rcx), %esi
    call aspace_load_tagged
    popq %r10
    popq %r9
    popq %r8
    popq %rax
    jmp 4b

/* Whether our task (rsi) holds a grant for p (id in rdi): ZF set if so. Clobbers rcx. */
fast_granted:
    movl TASK_NGRANTS(%rsi), %ecx
1:  testl %ecx, %ecx
    jz 2f
    decl %ecx
    cmpl %edi, TASK_GRANTS(%rsi,%rcx,4)
    jne 1b
    ret                                 /* ZF set */
2:  testq %rsp, %rsp                    /* ZF clear */
    ret

    .section .note.GNU-stack, "", @progbits
