/* Offsets and numbers used by assembly (entry.S); checked by static asserts in cpu.c
 * (struct cpu), trap.c (struct trapframe) and ipc.c (the system-call numbers). */
#define CPU_SYSCALL_FRAME 8
#define CPU_USER_RSP   16

/* struct trapframe (trap.h) */
#define TF_R15    0
#define TF_R14    8
#define TF_R13    16
#define TF_R12    24
#define TF_R11    32
#define TF_R10    40
#define TF_R9     48
#define TF_R8     56
#define TF_RBP    64
#define TF_RDI    72
#define TF_RSI    80
#define TF_RDX    88
#define TF_RCX    96
#define TF_RBX    104
#define TF_RAX    112
#define TF_VECTOR 120
#define TF_RIP    136
#define TF_RFLAGS 152
#define TF_RSP    160
#define TF_SIZE   176

/* The two calls the IPC fastpath takes straight from syscall_entry: CALL and CALL + 1. */
#define ASM_SYS_IPC_CALL 23
