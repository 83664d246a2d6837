/*
 * The IPC fastpath (docs/ipc.md "The fastpath"): register-only SYS_IPC_CALL and
 * SYS_IPC_REPLY_RECV to a partner already blocked receiving from us on this CPU, taken
 * straight from syscall_entry (entry.S). It takes no big kernel lock: it holds the two
 * threads' ipc locks (thread.h ipc_lock, docs/smp.md "Design: IPC's per-endpoint state"),
 * each taken with one `lock bts` and never waited for (busy: the general path decides),
 * from its test of the partner to its sysret; every route out before the commit
 * releases them (*_unlock_slow). Every waker of a thread blocked in IPC holds its lock,
 * so under the two locks the partner is blocked and stays so until it is ours.
 *
 * In:  rsp = the caller's complete trapframe (SYSCALL_FRAME), the flags of entry.S's
 *      compare (ZF set: reply_recv), rdi/rsi/rdx the caller's arguments, and the eight
 *      message words live in r8, r9, r10, r12, r13, r14, r15, rbx. Those eight are never
 *      written here: they reach the partner as they are, through sysret.
 * Out: either `jmp syscall_slow` with nothing changed and the locks free (any condition
 *      fails: the general path decides, with the same semantics), or sysret into the
 *      partner with our tid in rax, its own rdi, rsi, rdx, rbp, rip, rflags, rsp from its
 *      frame, the locks released.
 *
 * It does what do_send (call) / do_reply_recv, wake_partner and direct_switch do in ipc.c
 * for this case, and ipc.c's fastpath() (which runs instead when pcnt probes are on) makes
 * the same decisions check for check. The slow path is the reference: the differential
 * test (tests/test_ipc.py, ipctest diff) requires identical results with ipc_fastpath=on
 * and off.
 *
 * Forwarded Linux system calls (kernel/ipc/fwd.c, docs/unix.md "Forwarding") have their
 * own two routes here: fwd_fastpath, from linux_syscall_entry, takes a Linux thread's
 * `syscall` straight to its server waiting in an open receive, and fast_reply_recv's
 * answer to a thread waiting in a forwarded system call (IPC_FWD, FWD_SYSCALL) returns to
 * it with the answer in rax and every other register from its frame. Those two switch the
 * CPU's user context (LSTAR, FS base) as thread_user_context does; between native threads
 * it stays as it is, and a Linux thread waits in IPC only inside a forwarded call, whose
 * IPC_FWD flag the ordinary partner checks (ipc_flags == 0) turn away.
 * Native threads with an FS base of their own (TLS, user_bases) are turned away, at no
 * cost: user_bases shares a 16-bit compare with the caller's killed byte and with the
 * partner's sleeping byte (a Linux thread's base is switched on its own routes, so its
 * user_bases stays 0). Switching the base here would cost three instructions a half.
 *
 * Registers: rbp = the current thread (cur), rax = the partner (p), rdi = p's id; rcx, rsi,
 * r11 (and rdx for call) are scratch; on the forwarded routes everything but rbp and rax
 * is (the caller's registers are in its frame). No C code runs on the common route; each operation
 * has its own straight-line copy of the shared parts (macros), so nothing is called and
 * nothing branches on the kind twice. Offsets: kernel/ipc/fastpath_layout.h.
 */
#include "cpu_offsets.h"
#include "fastpath_layout.h"

/*
 * The fast gate: the three settings the fastpath depends on, as the bytes of one word
 * (the fourth is always 0), so that one compare checks them. The settings are the option
 * variables themselves (options.def: dts, ipc_fastpath; pcnt.c: pcnt_probes_on), declared
 * `extern bool` in C as before and defined here, where their layout matters. Open iff
 * dts = 1, ipc_fastpath = 1 and probes = 0. Read on every call and written almost never,
 * like the CR3 gate after it: the big kernel lock's byte (klock.h) has a line of its own.
 */
    .data
    .balign 64
    .globl ipc_fast_gate, ipc_dts, ipc_fastpath_on, pcnt_probes_on, kernel_bkl_byte
    .globl kernel_bkl_gen
ipc_fast_gate:
ipc_dts:            .byte 1
ipc_fastpath_on:    .byte 1
pcnt_probes_on:     .byte 0
                    .byte 0
#define FAST_GATE_OPEN 0x0101

/* The CR3 gate, likewise: a plain CR3 load between tasks unless PCID is in use (cpu.c
 * sets pcid_active), the cache model's markers are on (option markers), either of which
 * takes aspace_load in C, or every task shares one address space (mmu=off, vm.c sets
 * one_aspace), which loads nothing. */
    .globl cr3_gate, pcid_active, markers_on, one_aspace
cr3_gate:
pcid_active:        .byte 0
markers_on:         .byte 0
one_aspace:         .byte 0
                    .byte 0

    .balign 64                          /* the big kernel lock: its line to itself */
kernel_bkl_byte:    .byte 0
    .balign 4
kernel_bkl_gen:     .long 0             /* its releases, counted (klock.h bkl_grace) */
    .balign 64

/*
 * The checks both operations start with: the gate; no pending work on this CPU
 * (need_resched) and the caller not killed, as the general path's exit would check; no
 * flags (buffers) in rdx's upper half. Leaves cur in rbp.
 */
.macro GATE slow
    cmpl $FAST_GATE_OPEN, ipc_fast_gate(%rip)
    jne \slow
    cmpb $0, %gs:CPU_NEED_RESCHED
    jne \slow
    movq %gs:CPU_CURRENT, %rbp
    cmpw $0, TH_KILLED(%rbp)            /* killed, or an FS base to switch (user_bases) */
    jne \slow
.endm

/*
 * Our lock and p's (p in rax, read from the thread table without a lock), one `lock bts`
 * each; either busy: `slow` (nothing held) or `unlock_cur_slow` (ours held). Never a wait,
 * so the order does not matter (docs/smp.md). p may be ourselves (its lock is then
 * busy: the general path answers E_DEADLK or E_SRCH), an empty slot's thread_none (its
 * lock always busy), or a thread freed and its TCB reused meanwhile: TCBs are type-stable
 * (thread.c), so the lock is a lock, and the caller tests p's id only now, under it (a
 * free clears it under the lock).
 */
.macro LOCK_BOTH slow, unlock_cur_slow
    lock btsl $0, TH_IPC_LOCK(%rbp)
    jc \slow
    lock btsl $0, TH_IPC_LOCK(%rax)
    jc \unlock_cur_slow
.endm

/* ... and p = the thread whose id is exactly rdi, which rejects 0, negatives and ids
 * >= 2^31 as the general path's lookup does; both locks held. Leaves p in rax. */
.macro GATE_AND_PARTNER
    GATE syscall_slow
    cmpl $0, TF_RDX+4(%rsp)
    jne syscall_slow
    movl %edi, %r11d
    andl $FP_SLOT_MASK, %r11d
    movq thread_fast(,%r11,8), %rax     /* thread_ids' slots, for us (thread.c) */
    LOCK_BOTH syscall_slow, syscall_unlock_cur_slow
    movslq TH_TID(%rax), %r11
    cmpq %r11, %rdi
    jne syscall_unlock_slow
.endm

/*
 * The L4 priority rule for a direct switch as wake_partner applies it when the current
 * thread blocks: p at least as high as every thread ready on this CPU (rq_highest_prio).
 * And p not killed, with no FS base (user_bases), not sleeping (a timed receive: the
 * general path disarms it), on this CPU (one on another is woken there by the general
 * path) and on no queue (a closed receive: the general path unlinks it). Clobbers rcx, rsi.
 */
.macro PRIORITY_OK slow=syscall_unlock_slow
    /* This CPU's run queue (sched.c), which other CPUs change meanwhile (a wake-up, a
     * steal: no BKL excludes them since step 3): each word is read once, by the bsr that
     * tests it (ZF: empty), never tested and then read again, since a bsr of a word
     * emptied in between leaves its destination as it was (a task pointer in rsi made
     * the next load fault: ipcrace, -smp 2). A race ends in a stale priority, no fault. */
    bsrq %gs:CPU_RQ_WORDS, %rsi         /* the highest non-empty word */
    jz 9f
    bsrq %gs:CPU_RQ_BITMAP(,%rsi,8), %rcx   /* its highest priority */
    jz 9f
    shll $6, %esi
    addl %esi, %ecx
    cmpl %ecx, TH_PRIO(%rax)
    jl \slow
9:  movl TH_KILLED(%rbp), %ecx          /* ours: not killed, no bases, not sleeping, our CPU */
    cmpl %ecx, TH_KILLED(%rax)          /* p's the same: not killed, no FS base to switch */
    jne \slow                           /* (user_bases), not sleeping, on this CPU */
    cmpq $0, TH_WAITING_ON(%rax)
    jne \slow
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
    jne syscall_unlock_slow
8:
.endm

/* The callers waiting for a thread's reply (thread.h reply_head, ipc.c await_reply): p,
 * the head of our list (tested before the commit), off it; we onto p's, as its head.
 * Clobber rcx. */
.macro POP_REPLY_HEAD
    movq TH_REPLY_NEXT(%rax), %rcx
    movq %rcx, TH_REPLY_HEAD(%rbp)
.endm

.macro PUSH_REPLY_WAITER
    movq TH_REPLY_HEAD(%rax), %rcx
    movq %rcx, TH_REPLY_NEXT(%rbp)
    movq %rbp, TH_REPLY_HEAD(%rax)
.endm

/*
 * Committed (this and what follows cannot fail): p gets the message (the words stay in
 * their registers, our tid goes to its rax at the end) and the reply right; we block
 * receiving, resuming later through our frame (the fields the operation sets are already
 * written). Two 32-bit stores mark p on this CPU and us off it (on_cpu, sched.c): p's
 * here, ours once we have left our stack (SWITCH_TO_PARTNER, under our lock). The
 * forwarded call sets these fields its own way (fwd_fastpath).
 */
.macro MESSAGE_FIELDS
    movl TH_TID(%rbp), %esi
    movl $FP_PARTNER_RUNNING, TH_RESUME_VIA_TF(%rax) /* p: runs here, IPC idle */
    movl %esi, TH_RWTID(%rax)
    movl %esi, TH_REPLY_TO(%rax)
    movq $0, TH_IPC_FLAGS(%rbp)
.endm

/* Between native threads the user context stays (FS base 0, ondol's entry). */
.macro NATIVE_CONTEXT
.endm

/* sysret into a native p: our tid in rax, the words as they are, p's own rdi, rsi, rdx,
 * rbp, rip, rflags and rsp from its frame. */
.macro LEAVE_NATIVE
    movslq TH_TID(%rbp), %rax
    movl $0, TH_IPC_LOCK(%rbp)          /* our last read: our lock goes */
    movq TF_RDI(%rsp), %rdi
    movq TF_RSI(%rsp), %rsi
    movq TF_RDX(%rsp), %rdx
    movq TF_RBP(%rsp), %rbp
    movq TF_RIP(%rsp), %rcx
    movq TF_RFLAGS(%rsp), %r11
    movq TF_RSP(%rsp), %rsp
    swapgs
    sysretq
.endm

/* The user context of a native p after a Linux thread (cpu_load_user_context): ondol's
 * syscall entry, and p's FS and GS bases unless loaded. The CPU's user_ctx keeps the
 * Linux bit, so the next general switch checks everything again (thread_user_context).
 * Keeps rax (p); clobbers rcx, rdx, rsi (p's rsi and rdx come from its frame at the
 * exit). */
.macro LINUX_TO_NATIVE_CONTEXT
    movq %rax, %rsi
    leaq syscall_entry(%rip), %rax
    movb $0, %gs:CPU_LINUX_ENTRY
    LOAD_MSR FP_MSR_LSTAR
    LOAD_BASE TH_FS_BASE, CPU_FS_BASE, FP_MSR_FS_BASE
    LOAD_BASE TH_GS_BASE, CPU_GS_BASE, FP_MSR_KERNEL_GS_BASE
    movq %rsi, %rax
.endm

/* The user context of a Linux p after a native thread: its syscall entry, FS and GS
 * bases, and the Linux bit in the CPU's user_ctx (what thread_user_context tests). */
.macro NATIVE_TO_LINUX_CONTEXT
    movq %rax, %rsi
    leaq linux_syscall_entry(%rip), %rax
    movb $1, %gs:CPU_LINUX_ENTRY
    orb $FP_USER_CTX_LINUX, %gs:CPU_USER_CTX
    LOAD_MSR FP_MSR_LSTAR
    LOAD_BASE TH_FS_BASE, CPU_FS_BASE, FP_MSR_FS_BASE
    LOAD_BASE TH_GS_BASE, CPU_GS_BASE, FP_MSR_KERNEL_GS_BASE
    movq %rsi, %rax
.endm

/* wrmsr(msr, rax) */
.macro LOAD_MSR msr
    movq %rax, %rdx
    shrq $32, %rdx
    movl $\msr, %ecx
    wrmsr
.endm

/* A base of the thread in rsi (its field th, the CPU's copy cpu, the MSR msr), unless
 * the CPU has it loaded already. */
.macro LOAD_BASE th, cpu, msr
    movq \th(%rsi), %rax
    cmpq %rax, %gs:\cpu
    je 6f
    movq %rax, %gs:\cpu
    LOAD_MSR \msr
6:
.endm

/* sysret into a Linux thread answered: the answer (word 0, r8) in rax, every other
 * register as it was at its `syscall` (its frame; rcx and r11 from rip and rflags, as
 * Linux's syscall leaves them). */
.macro LEAVE_LINUX
    movl $0, TH_IPC_LOCK(%rbp)          /* our lock goes */
    movq %r8, %rax
    movq TF_RBX(%rsp), %rbx
    movq TF_RDX(%rsp), %rdx
    movq TF_RSI(%rsp), %rsi
    movq TF_RDI(%rsp), %rdi
    movq TF_RBP(%rsp), %rbp
    movq TF_R8(%rsp), %r8
    movq TF_R9(%rsp), %r9
    movq TF_R10(%rsp), %r10
    movq TF_R12(%rsp), %r12
    movq TF_R13(%rsp), %r13
    movq TF_R14(%rsp), %r14
    movq TF_R15(%rsp), %r15
    movq TF_RIP(%rsp), %rcx
    movq TF_RFLAGS(%rsp), %r11
    movq TF_RSP(%rsp), %rsp
    swapgs
    sysretq
.endm

/*
 * The switch: p runs next on the rest of our time slice, on its kernel stack and address
 * space, with its user context (`context`: a macro, empty between native threads) and
 * lazy x87/SSE (as switch_to_partner), and leaves (`leave`) through its frame: sysret,
 * as its rip is canonical (it entered the kernel with syscall; the forwarded answer
 * checks a Linux thread's).
 */
.macro SWITCH_TO_PARTNER context=NATIVE_CONTEXT, leave=LEAVE_NATIVE, caller=FP_CALLER_BLOCKED_RECEIVING
    movl $FP_T_BLOCKED, TH_STATE(%rbp)
    movl $FP_T_RUNNING, TH_STATE(%rax)
    movl TH_SLICE_LEFT(%rbp), %ecx      /* the rest of our slice, or a fresh one */
    testl %ecx, %ecx
    jnz 1f
    movl slice_ticks(%rip), %ecx
1:  movl %ecx, TH_SLICE_LEFT(%rax)
    movq %rax, %gs:CPU_CURRENT
    movl $0, TH_IPC_LOCK(%rax)          /* p is ours: its lock goes (its frame is ours too) */
    movq TH_TF(%rax), %rsp              /* p's frame, at the top of its kernel stack */
    movl $\caller, TH_RESUME_VIA_TF(%rbp) /* we are off this CPU: its stack left; under our
                                           lock, held to the exit, so no CPU runs us yet */
    movq %rsp, %gs:CPU_SYSCALL_FRAME
    leaq TF_SIZE(%rsp), %rcx
    movq %rcx, %gs:CPU_TSS_RSP0
    /* Address space: none to load within a task. Between tasks CR3 always changes (a
     * task's address space is its own, and ours is loaded), so it is not read back. One
     * switch counter (cpu.h): cross-task on the straight route, same-task out of line. */
    movq TH_TASK(%rax), %rcx
    cmpq TH_TASK(%rbp), %rcx
    je 7f
    incq %gs:CPU_SWITCHES_CROSS
    movq TASK_AS(%rcx), %rcx
    cmpl $0, cr3_gate(%rip)
    jne 4f
    movq AS_CR3(%rcx), %rdx
    movq %rdx, %gs:CPU_LOADED_CR3       /* published first: the TLB shootdown reads it */
    movq %rdx, %cr3
3:  \context
    cmpb $0, %gs:CPU_FPU_TS             /* set CR0.TS unless set or p owns the registers */
    jne 5f
    cmpq %rax, %gs:CPU_FPU_OWNER
    je 5f
    movq %cr0, %rdx
    orq $FP_CR0_TS, %rdx
    movq %rdx, %cr0
    movb $1, %gs:CPU_FPU_TS
5:  \leave
4:  cmpb $0, one_aspace(%rip)          /* mmu=off: the tables loaded are p's too */
    jne 3b
    pushq %rax                          /* fastpath_load_aspace(as) (ipc.c) on p's free */
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
7:  incq %gs:CPU_SWITCHES_SAME
    jmp 3b
.endm

    .text
/* A route turned away with the locks held (rax = p, rbp = cur): release them, then the
 * general path. */
syscall_unlock_slow:
    movl $0, TH_IPC_LOCK(%rax)
syscall_unlock_cur_slow:
    movl $0, TH_IPC_LOCK(%rbp)
    jmp syscall_slow
fwd_unlock_slow:
    movl $0, TH_IPC_LOCK(%rax)
fwd_unlock_cur_slow:
    movl $0, TH_IPC_LOCK(%rbp)
    jmp fwd_slow

    .globl ipc_fastpath
ipc_fastpath:
    je fast_reply_recv

/* call(dest = p): p receives from us or from anyone, on no queue, with no buffer. */
fast_call:
    GATE_AND_PARTNER                    /* (IPC with oneself: p's lock was busy) */
    cmpb $FP_IPC_RECEIVING, TH_IPC_STATE(%rax)
    jne syscall_unlock_slow
    movl TH_RECV_FROM(%rax), %r11d
    testl %r11d, %r11d
    jz 1f
    cmpl TH_TID(%rbp), %r11d
    jne syscall_unlock_slow
    cmpq %rax, TH_REPLY_HEAD(%rbp)      /* p waits for our reply: the latest caller only */
    jne syscall_unlock_slow
1:  cmpq $0, TH_IPC_FLAGS(%rax)
    jne syscall_unlock_slow
    cmpl %edi, TH_REPLY_TO(%rbp)        /* in an RPC loop, the right the last reply gave */
    jne fast_call_other_right
    PRIORITY_OK
    movl $0, TH_REPLY_TO(%rbp)          /* committed: the reply right is used up */
fast_call_commit:
    /* p stops waiting for our reply if it was (off our list's head); we await p's reply */
    testl %r11d, %r11d
    jz 2f
    POP_REPLY_HEAD
2:  movl %edi, TH_RECV_FROM(%rbp)
    PUSH_REPLY_WAITER
    MESSAGE_FIELDS
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
    jne syscall_unlock_slow
    cmpq $0, TH_SENDERS_HEAD(%rbp)
    jne syscall_unlock_slow
    testl %edx, %edx                    /* poll: the general path's receive answers */
    jz syscall_unlock_slow
    cmpb $FP_IPC_RECEIVING, TH_IPC_STATE(%rax)
    jne syscall_unlock_slow
    cmpq %rax, TH_REPLY_HEAD(%rbp)      /* p waits for our reply (so its recv_from is us), */
    jne syscall_unlock_slow             /* the latest caller (an RPC loop answers it) */
    cmpq $0, TH_IPC_FLAGS(%rax)
    jne fast_answer                     /* a buffer, or a Linux thread's forwarded call */
    cmpl %edi, TH_REPLY_TO(%rbp)        /* usually the reply right */
    jne fast_reply_other_right
    PRIORITY_OK
    movl $0, TH_REPLY_TO(%rbp)          /* committed: the reply right is used up */
fast_reply_commit:
    /* p stops waiting for our reply; we receive from anyone */
    POP_REPLY_HEAD
    movl $0, TH_RECV_FROM(%rbp)
    cmpl $-1, %edx                      /* IPC_FOREVER: no timeout to arm */
    jne fast_arm_timeout
fast_reply_armed:
    MESSAGE_FIELDS
    SWITCH_TO_PARTNER

/* reply_recv without the reply right: the other rights, and our reply right (naming
 * another thread) stays. */
fast_reply_other_right:
    MAY_SEND_OTHER_RIGHT
    PRIORITY_OK
    jmp fast_reply_commit

/* reply_recv's finite receive timeout: sleep_until(cur, ticks) (sched.c), keeping p, p's
 * id (rdi) and the caller-saved words; six pushes keep the frame's 16-byte alignment. */
.macro ARM_TIMEOUT back
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
    jmp \back
.endm

fast_arm_timeout:
    ARM_TIMEOUT fast_reply_armed

/*
 * reply_recv answering a Linux thread's forwarded system call (fwd_answer, fwd.c): p waits
 * in a forwarded call (IPC_FWD) of kind FWD_SYSCALL (faults, interrupts and registers the
 * server set leave by the general path), is not killed or interrupted (its exit would
 * act on it), and its rip is canonical (the general exit would leave by iret). The
 * checks before are reply_recv's. p gets word 0 in rax and nothing else: no sender id,
 * no reply right, its forwarded call ends.
 */
fast_answer:
    movabsq $FP_IPC_FWD, %rcx
    cmpq %rcx, TH_IPC_FLAGS(%rax)
    jne syscall_unlock_slow
    cmpb $FP_FWD_SYSCALL, TH_FWD(%rax)
    jne syscall_unlock_slow
    cmpb $0, TH_KILLED(%rax)
    jne syscall_unlock_slow
    movq TH_TF(%rax), %rcx
    movq TF_RIP(%rcx), %rcx
    sarq $47, %rcx
    jnz syscall_unlock_slow
    cmpl %edi, TH_REPLY_TO(%rbp)        /* the right its call gave us */
    jne fast_answer_other_right
    PRIORITY_OK
    movl $0, TH_REPLY_TO(%rbp)
fast_answer_commit:
    POP_REPLY_HEAD                      /* as fast_reply_commit */
    movl $0, TH_RECV_FROM(%rbp)
    cmpl $-1, %edx
    jne fast_answer_arm_timeout
fast_answer_armed:
    movl $FP_PARTNER_RUNNING, TH_RESUME_VIA_TF(%rax) /* p: runs here, IPC idle, its forwarded call over */
    movb $0, TH_FWD(%rax)
    movq $0, TH_IPC_FLAGS(%rax)
    movq $0, TH_IPC_FLAGS(%rbp)
    SWITCH_TO_PARTNER NATIVE_TO_LINUX_CONTEXT, LEAVE_LINUX

fast_answer_other_right:
    MAY_SEND_OTHER_RIGHT
    PRIORITY_OK
    jmp fast_answer_commit

fast_answer_arm_timeout:
    ARM_TIMEOUT fast_answer_armed

/*
 * A Linux thread's `syscall` (linux_syscall_entry, entry.S), as fwd_syscall and
 * ipc_forward (the call) and wake_partner (the direct switch) do it: to its server s, the
 * thread whose id is exactly task->linux_server (or for a routed call this CPU's helper,
 * fwd_routed below), blocked in an open receive (or one from
 * this thread) with no buffer, on no queue, not in a timed receive, at least as high as
 * every ready thread, on this CPU. Else `jmp fwd_slow`, nothing changed (the lock released). s gets the message in its
 * registers: w0 = the label, w1 = the number (rax), w2..w7 = rdi, rsi, rdx, r10, r8, r9,
 * all read back from our frame, and our tid in rax. We wait for the answer as a caller
 * (recv_from = s, on s's reply_head list) in a forwarded call (IPC_FWD,
 * FWD_SYSCALL); fwd_words are left alone, since only a queued call is taken from them.
 */
    .globl fwd_fastpath
fwd_fastpath:
    GATE fwd_slow
    movq TH_TASK(%rbp), %rcx
    movslq TASK_FWD_FAST_SERVER(%rcx), %rdi   /* 0 with routed calls: fwd_busy_or_routed */
fwd_to_rdi:
    movl %edi, %r11d
    andl $FP_SLOT_MASK, %r11d
    movq thread_fast(,%r11,8), %rax
    LOCK_BOTH fwd_slow, fwd_busy_or_routed
    cmpl TH_TID(%rax), %edi
    jne fwd_unlock_slow
    cmpb $FP_IPC_RECEIVING, TH_IPC_STATE(%rax)
    jne fwd_unlock_slow
    movl TH_RECV_FROM(%rax), %r11d
    testl %r11d, %r11d
    jz 1f
    cmpl TH_TID(%rbp), %r11d
    jne fwd_unlock_slow
    cmpq %rax, TH_REPLY_HEAD(%rbp)      /* s waits for our reply: the latest caller only */
    jne fwd_unlock_slow
1:  cmpq $0, TH_IPC_FLAGS(%rax)
    jne fwd_unlock_slow
    PRIORITY_OK fwd_unlock_slow
    testl %r11d, %r11d                  /* s stops waiting for our reply if it was */
    jz 2f
    POP_REPLY_HEAD
2:  movl %edi, TH_RECV_FROM(%rbp)       /* we await s's answer */
    PUSH_REPLY_WAITER
    movl TH_TID(%rbp), %esi
    movl $FP_PARTNER_RUNNING, TH_RESUME_VIA_TF(%rax) /* s: runs here, IPC idle, the sender and its right */
    movl %esi, TH_RWTID(%rax)
    movl %esi, TH_REPLY_TO(%rax)
    movabsq $FP_IPC_FWD, %rcx           /* we: in a forwarded system call */
    movq %rcx, TH_IPC_FLAGS(%rbp)
    movb $FP_FWD_SYSCALL, TH_FWD(%rbp)
    movq TF_R8(%rsp), %r15              /* the message, from our frame */
    movq TF_R9(%rsp), %rbx
    movq TF_R10(%rsp), %r14
    movq TF_RDX(%rsp), %r13
    movq TF_RSI(%rsp), %r12
    movq TF_RDI(%rsp), %r10
    movq TF_RAX(%rsp), %r9
    movl $FP_FWD_SYSCALL_LABEL, %r8d
    SWITCH_TO_PARTNER LINUX_TO_NATIVE_CONTEXT, LEAVE_NATIVE, FP_CALLER_BLOCKED_IN_CALL

/* The partner's lock was busy, or the task has routed calls: its fwd_fast_server is 0,
 * whose slot holds thread_none, always locked (thread.c), so that a task without routed
 * calls pays no test for them. A call its server routes to a helper (task->fwd_routed, a
 * bit per call number below 64) goes to this CPU's helper when the CPU's is the server's
 * (cpu->fwd_server), else to the server (rdi = task->linux_server): fwd.c fwd_route's
 * rule; then the same steps, with rdi not 0, so a busy lock there goes to fwd_slow. */
fwd_busy_or_routed:
    movl $0, TH_IPC_LOCK(%rbp)
    testl %edi, %edi
    jnz fwd_slow
    movslq TASK_LINUX_SERVER(%rcx), %rdi
    movq TF_RAX(%rsp), %r11
    cmpq $63, %r11
    ja fwd_to_rdi
    movq TASK_FWD_ROUTED(%rcx), %rsi
    btq %r11, %rsi
    jnc fwd_to_rdi
    cmpl %gs:CPU_FWD_SERVER, %edi
    jne fwd_to_rdi
    movslq %gs:CPU_FWD_HELPER, %rdi
    jmp fwd_to_rdi

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
