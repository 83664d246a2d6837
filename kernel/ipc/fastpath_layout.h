/* Offsets and constants the assembly IPC fastpath (kernel/arch/x86_64/ipcfast.S) uses;
 * every one is checked by a static assert in ipc.c, so a change to a struct that moves a
 * field fails the build instead of the fastpath. Plain #defines: included from assembly. */
#ifndef FASTPATH_LAYOUT_H
#define FASTPATH_LAYOUT_H

/* struct thread (thread.h) */
#define TH_TID            512
#define TH_STATE          516
#define TH_PRIO           520
#define TH_TASK           528
#define TH_SLICE_LEFT     552
#define TH_KILLED         568   /* then user_bases (569): one 16-bit compare tests both; */
#define TH_USER_BASES        569   /* with sleeping (570) and cpu (571) one 32-bit compare */
#define TH_SLEEPING       570   /* tests a partner against the caller */
#define TH_CPU            571
#define TH_WAITING_ON     600
#define TH_TF             672
#define TH_RESUME_VIA_TF  680   /* then ipc_state (681) and ipc_call (682): written as one */
#define TH_IPC_STATE      681
#define TH_ON_CPU         683   /* a CPU runs it or is on its stack (sched.c) */
#define TH_RECV_FROM      688
#define TH_RWTID          692
#define TH_REPLY_TO       696
#define TH_IPC_FLAGS      712
#define TH_SENDERS_HEAD   720
#define TH_FWD            753   /* Linux forwarding (fwd.c) */
#define TH_FS_BASE        824
#define TH_GS_BASE        832
#define TH_REPLY_HEAD     880   /* the callers waiting for its reply (ipc.c await_reply) */
#define TH_REPLY_NEXT     888
#define TH_IPC_LOCK       896   /* ipc_lock.locked: taken with lock bts, released with a store */

/* struct task (task.h), struct aspace (vm.h) */
#define TASK_AS          24
#define TASK_PARENT      32
#define TASK_GRANTS      96
#define TASK_NGRANTS     224
#define TASK_LINUX_SERVER 228
#define TASK_FWD_FAST_SERVER 232 /* linux_server, or 0 when it routes calls (fwd.c) */
#define TASK_FWD_ROUTED  240   /* a Linux task's calls that go to a helper (fwd.c) */
#define AS_CR3           8

/* struct cpu (cpu.h), reached through %gs */
#define CPU_CURRENT      24
#define CPU_NEED_RESCHED 56
#define CPU_FPU_TS       60
#define CPU_FPU_OWNER    64
#define CPU_LINUX_ENTRY  72
#define CPU_FS_BASE      80
#define CPU_GS_BASE      4368
#define CPU_USER_CTX     4376
#define CPU_TSS_RSP0     164
#define CPU_SWITCHES_SAME  4384   /* the switch counters (issue 10, item 7; cpu.h) */
#define CPU_SWITCHES_CROSS 4392
#define CPU_RQ_WORDS     4408  /* this CPU's run queue (sched.c) */
#define CPU_RQ_BITMAP    4416
#define CPU_LOADED_CR3   4448  /* published before each CR3 load (TLB shootdown, vm.c) */
#define CPU_FWD_SERVER   4456  /* the server whose routed calls go to CPU_FWD_HELPER (fwd.c) */
#define CPU_FWD_HELPER   4460

/* values */
#define FP_T_RUNNING     1     /* T_RUNNING */
#define FP_T_BLOCKED     2     /* T_BLOCKED */
#define FP_IPC_RECEIVING 2     /* IPC_RECEIVING; IPC_IDLE is 0 */
#define FP_SLOT_MASK     0xfff /* (1 << THREAD_ID_BITS) - 1 */
#define FP_CR0_TS        8     /* CR0_TS */
#define FP_MSR_LSTAR     0xc0000082
#define FP_MSR_FS_BASE   0xc0000100
#define FP_MSR_KERNEL_GS_BASE 0xc0000102   /* the user GS base while in the kernel */
#define FP_USER_CTX_LINUX 1     /* USER_CTX_LINUX */
#define FP_FWD_SYSCALL   1     /* FWD_SYSCALL (fwd.h) */
#define FP_IPC_FWD       0x400000000 /* IPC_FWD (ipc.h), bit 34 */
#define FP_FWD_SYSCALL_LABEL 0x20001 /* FWD_LABEL(FWD_OP_SYSCALL) (abi.h) */

/* The four bytes at TH_RESUME_VIA_TF (resume_via_tf, ipc_state, ipc_call, on_cpu) as the
 * caller leaves them, written with one 32-bit store: resumes through its frame, receiving,
 * no call pending, and off this CPU. Written once the fastpath has left the caller's stack,
 * under the caller's ipc lock, which it holds to its sysret (docs/smp.md). */
#define FP_CALLER_BLOCKED_RECEIVING (1 | FP_IPC_RECEIVING << 8)
/* ... and as the partner's, which runs next: no frame to resume through, IPC idle, no
 * call pending (its IPC is over), on this CPU. */
#define FP_PARTNER_RUNNING (1 << 24)
/* ... and as a Linux thread leaves them when its forwarded call is taken: resumes through
 * its frame, receiving (the answer), in a call. */
#define FP_CALLER_BLOCKED_IN_CALL (1 | FP_IPC_RECEIVING << 8 | 1 << 16)
#endif
