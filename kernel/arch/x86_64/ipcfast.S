/*
 * The IPC fastpath (docs/ipc.md "The fastpath"): register-only SYS_IPC_CALL and
 * SYS_IPC_REPLY_RECV to a partner already blocked receiving from us, taken straight from
 * syscall_entry (entry.S) with no kernel lock (one CPU, interrupts off; a per-CPU or
 * per-object scheme once SMP arrives).
 *
 * In:  rsp = the caller's complete trapframe (SYSCALL_FRAME), the flags of entry.S's
 *      compare (ZF set: reply_recv), rdi/rsi/rdx the caller's arguments, and the eight
 *      message words live in r8, r9, r10, r12, r13, r14, r15, rbx. Those eight are never
 *      written here: they reach the partner as they are, through sysret.
 * Out: either `jmp syscall_slow` with nothing changed (any condition fails: the general
 *      path decides, with the same semantics), or sysret into the partner with our tid in
 *      rax, its own rdi, rsi, rdx, rbp, rip, rflags, rsp from its frame.
 *
 * It does what do_send (call) / do_reply_recv, wake_partner and direct_switch do in ipc.c
 * for this case, and ipc.c's fastpath() (which runs instead when pcnt probes are on) makes
 * the same decisions check for check. The slow path is the reference: the differential
 * test (tests/test_ipc.py, ipctest diff) requires identical results with ipc_fastpath=on
 * and off.
 *
 * No Linux thread (kernel/ipc/fwd.c) is ever involved, so the CPU's LSTAR and FS base stay
 * as they are (thread_user_context is not needed): the caller came in through ondol's own
 * syscall entry, and a Linux thread waits in IPC only inside a forwarded call, whose
 * IPC_FWD flag the partner check (ipc_flags == 0) turns away.
 *
 * Registers: rbp = the current thread (cur), rax = the partner (p), rdi = p's id; rcx, rsi,
 * r11 (and rdx for call) are scratch. No C code runs on the common route; each operation
 * has its own straight-line copy of the shared parts (macros), so nothing is called and
 * nothing branches on the kind twice. Offsets: kernel/ipc/fastpath_layout.h.
 */
#include "cpu_offsets.h"
#include "fastpath_layout.h"

/*
 * The fast gate: the three settings the fastpath depends on, as the bytes of one word, so
 * that one compare checks them all. They are the option variables themselves (options.def:
 * dts, ipc_fastpath; pcnt.c: pcnt_probes_on), declared `extern bool` in C as before and
 * defined here, where their layout matters. Open iff dts = 1, ipc_fastpath = 1, probes = 0,
 * and no native thread has FS/GS bases of its own (ipc_user_bases, thread.c: the fastpath
 * does not load them).
 */
    .data
    .balign 4
    .globl ipc_fast_gate, ipc_dts, ipc_fastpath_on, pcnt_probes_on, ipc_user_bases
ipc_fast_gate:
ipc_dts:            .byte 1
ipc_fastpath_on:    .byte 1
pcnt_probes_on:     .byte 0
ipc_user_bases:     .byte 0
#define FAST_GATE_OPEN 0x0101

/* The CR3 gate, likewise: a plain CR3 load between tasks unless PCID is in use (cpu.c
 * sets pcid_active) or the cache model's markers are on (option markers); either takes
 * aspace_load in C. */
    .globl cr3_gate, pcid_active, markers_on
cr3_gate:
pcid_active:        .byte 0
markers_on:         .byte 0

/*
 * The checks both operations start with: the gate; no pending work on this CPU
 * (need_resched) and the caller not killed, as the general path's exit would check; no
 * flags (buffers) in rdx's upper half; and p = the thread whose id is exactly rdi, which
 * rejects 0, negatives and ids >= 2^31 as the general path's lookup does. Leaves cur in
 * rbp and p in rax.
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
    movq thread_objs(,%r11,8), %rax     /* thread_ids' slots (thread.c) */
    testq %rax, %rax
    jz syscall_slow
    movslq TH_TID(%rax), %r11
    cmpq %r11, %rdi
    jne syscall_slow
.endm

/*
 * The L4 priority rule for a direct switch as wake_partner applies it when the current
 * thread blocks: p at least as high as every ready thread (rq_highest_prio). And p not
 * sleeping (a timed receive: the general path disarms it) and on no queue (a closed
 * receive: the general path unlinks it). Clobbers rcx, rsi.
 */
.macro PRIORITY_OK
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
 * may_send(cur, p) (ipc.c) when our reply right does not name p (each operation tests
 * that first: in an RPC loop both sides hold it): p in our task, in a task we created, or
 * our task holds a grant for p (out of line). Falls through when allowed. Clobbers rcx,
 * rsi.
 */
.macro MAY_SEND_OTHER_RIGHT
    movq TH_TASK(%rbp), %rsi
    movq TH_TASK(%rax), %rcx
    cmpq %rsi, %rcx
    je 8f
    cmpq %rsi, TASK_PARENT(%rcx)
    je 8f
    call fast_granted
    jne syscall_slow
8:
.endm

/*
 * Committed: the rest cannot fail. p gets the message (the words stay in their registers,
 * our tid goes to its rax at the end) and the reply right, and runs next on the rest of
 * our time slice; we block receiving (the fields the operation sets are already written)
 * and resume later through our frame. Then p's kernel stack, address space, lazy x87/SSE
 * (as switch_to_partner), and sysret through p's frame. Its rip is canonical: it entered
 * the kernel with syscall.
 */
.macro SWITCH_TO_PARTNER
    movl TH_TID(%rbp), %esi
    movw $0, TH_RESUME_VIA_TF(%rax)     /* p: runs on, IPC idle */
    movl %esi, TH_RWTID(%rax)
    movl %esi, TH_REPLY_TO(%rax)
    movq $0, TH_IPC_FLAGS(%rbp)
    movl $FP_CALLER_BLOCKED_RECEIVING, TH_RESUME_VIA_TF(%rbp)
    movl $FP_T_BLOCKED, TH_STATE(%rbp)
    movb $0, TH_ON_CPU(%rbp)
    movl $FP_T_RUNNING, TH_STATE(%rax)
    movb $1, TH_ON_CPU(%rax)
    movl TH_SLICE_LEFT(%rbp), %ecx      /* the rest of our slice, or a fresh one */
    testl %ecx, %ecx
    jnz 1f
    movl slice_ticks(%rip), %ecx
1:  movl %ecx, TH_SLICE_LEFT(%rax)
    movq %rax, %gs:CPU_CURRENT
    movq TH_TF(%rax), %rsp              /* p's frame, at the top of its kernel stack */
    movq %rsp, %gs:CPU_SYSCALL_FRAME
    leaq TF_SIZE(%rsp), %rcx
    movq %rcx, %gs:CPU_TSS_RSP0
    /* Address space: none to load within a task. Between tasks CR3 always changes (a
     * task's address space is its own, and ours is loaded), so it is not read back. */
    movq TH_TASK(%rax), %rcx
    cmpq TH_TASK(%rbp), %rcx
    je 3f
    movq TASK_AS(%rcx), %rcx
    cmpw $0, cr3_gate(%rip)
    jne 4f
    movq AS_CR3(%rcx), %rdx
    movq %rdx, %cr3
3:  cmpb $0, %gs:CPU_FPU_TS             /* set CR0.TS unless set or p owns the registers */
    jne 5f
    cmpq %rax, %gs:CPU_FPU_OWNER
    je 5f
    movq %cr0, %rdx
    orq $FP_CR0_TS, %rdx
    movq %rdx, %cr0
    movb $1, %gs:CPU_FPU_TS
5:  movslq TH_TID(%rbp), %rax
    movq TF_RDI(%rsp), %rdi
    movq TF_RSI(%rsp), %rsi
    movq TF_RDX(%rsp), %rdx
    movq TF_RBP(%rsp), %rbp
    movq TF_RIP(%rsp), %rcx
    movq TF_RFLAGS(%rsp), %r11
    movq TF_RSP(%rsp), %rsp
    swapgs
    sysretq
4:  pushq %rax                          /* fastpath_load_aspace(as) (ipc.c) on p's free */
    pushq %r8                           /* stack, keeping p and the words in r8-r10; four */
    pushq %r9                           /* pushes keep the 16-byte alignment */
    pushq %r10
    movq %rcx, %rdi
    call fastpath_load_aspace
    popq %r10
    popq %r9
    popq %r8
    popq %rax
    jmp 3b
.endm

    .text
    .globl ipc_fastpath
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
    cmpl %edi, TH_REPLY_TO(%rbp)        /* in an RPC loop, the right the last reply gave */
    jne fast_call_other_right
    PRIORITY_OK
    movl $0, TH_REPLY_TO(%rbp)          /* committed: the reply right is used up */
fast_call_commit:
    /* p stops waiting for our reply if it was; we await p's reply */
    testl %r11d, %r11d
    jz 2f
    decl TH_REPLY_WAITERS(%rbp)
2:  movl %edi, TH_RECV_FROM(%rbp)
    incl TH_REPLY_WAITERS(%rax)
    SWITCH_TO_PARTNER

/* call without the reply right: the other rights, and our reply right (naming another
 * thread) stays. */
fast_call_other_right:
    MAY_SEND_OTHER_RIGHT
    PRIORITY_OK
    jmp fast_call_commit

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
    jne fast_reply_other_right
    PRIORITY_OK
    movl $0, TH_REPLY_TO(%rbp)          /* committed: the reply right is used up */
fast_reply_commit:
    /* p stops waiting for our reply; we receive from anyone */
    decl TH_REPLY_WAITERS(%rbp)
    movl $0, TH_RECV_FROM(%rbp)
    cmpl $-1, %edx                      /* IPC_FOREVER: no timeout to arm */
    jne fast_arm_timeout
fast_reply_armed:
    SWITCH_TO_PARTNER

/* reply_recv without the reply right: the other rights, and our reply right (naming
 * another thread) stays. */
fast_reply_other_right:
    MAY_SEND_OTHER_RIGHT
    PRIORITY_OK
    jmp fast_reply_commit

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
    jmp fast_reply_armed

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
