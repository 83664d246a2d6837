/*
 * The ondol system-call ABI, shared by the kernel and user space.
 * The call list is syscalls.def and the error list errors.def (one line each); the
 * structs, flags and limits are here. docs/syscalls.md is the prose version; tests check
 * that its tables match the two lists.
 *
 * Calling convention (x86-64 `syscall` instruction):
 *   rax = call number, arguments in rdi, rsi, rdx, r10, r8, r9,
 *   result in rax (>= 0 success, < 0 one of the E_* codes below).
 *   rcx and r11 are clobbered by the instruction; all other registers are preserved.
 */
#ifndef ONDOL_ABI_H
#define ONDOL_ABI_H

#include <stdint.h>

/* ---- call numbers: one enumerator per line of syscalls.def ----------------------- */
#define SYSCALL(num, NAME, ...) SYS_##NAME = (num),
#define SYSCALL_NORETURN SYSCALL
#define SYSCALL_IPC SYSCALL
enum syscall_number {
#include <ondol/syscalls.def>
};
#undef SYSCALL
#define SYSCALL(...) +1
enum { NSYSCALLS = 0
#include <ondol/syscalls.def>
};
#undef SYSCALL
#undef SYSCALL_NORETURN
#undef SYSCALL_IPC
/* IPC calls (docs/ipc.md) use their own register convention, see IPC_* below. */
#define SYS_IPC_FIRST      SYS_IPC_SEND
#define SYS_IPC_LAST       SYS_IPC_GRANT

/* ---- error codes (negated in rax): one enumerator per line of errors.def ------------ */
#define ERROR(NAME, value, meaning) E_##NAME = (value),
enum error_code {
#include <ondol/errors.def>
};
#undef ERROR
#define ERROR(...) +1
enum { E_COUNT = 0           /* E_NOSYS (-1) .. -E_COUNT are the valid codes */
#include <ondol/errors.def>
};
#undef ERROR

/* ---- IPC register convention (docs/ipc.md) -------------------------------------------
 * rax = call number; rdi = partner (dest / from / to); rsi = second partner (reply_recv's
 * `from`); rdx = timeout in ticks (bits 0-31) | flags (bits 32-63);
 * message words MR0..MR7 in r8, r9, r10, r12, r13, r14, r15, rbx (in for sends, out for
 * receives). Result in rax: the partner's tid (receives, call) or 0 (send), or an error. */
#define IPC_ANY           (-1)
#define IPC_MRS           8
#define IPC_POLL          0u
#define IPC_FOREVER       0xffffffffu
#define IPC_SEND_BUF      (1ull << 32)   /* send the UTCB's send_buf/send_len along */
#define IPC_RECV_BUF      (1ull << 33)   /* accept a buffer into the UTCB's recv_buf/recv_cap */
#define IPC_BUF_MAX       4096

/* Long-message descriptor, registered once per thread with SYS_IPC_UTCB. */
struct ipc_utcb {
    const void *send_buf;
    uint64_t send_len;         /* <= IPC_BUF_MAX */
    void *recv_buf;
    uint64_t recv_cap;         /* <= IPC_BUF_MAX */
    uint64_t recv_len;         /* written by the kernel on a receive */
};

/* ---- pcnt (docs/measuring.md): P3's counter slots ----------------------------------- */
enum pcnt_cmd {
    PCNT_DUMP = 1,       /* (struct pcnt_slot_info *out, int max, int cpu) -> slots written */
    PCNT_CLEAR = 2,      /* ()  every slot INIT and zeroed, the overhead slot re-measured;
                            unprivileged: the user slots only                             */
    PCNT_SET_EVENT = 3,  /* (int ev0, int ev1, unsigned modes) -> 0 or E_NOTSUP (privileged) */
    PCNT_GET_EVENT = 4,  /* (struct pcnt_events *out)                                      */
    PCNT_LIST = 5,       /* (char *buf, size_t len) -> bytes: "probe NAME SLOT" / "event NAME ID" lines */
    PCNT_START = 6,      /* (int slot, uint64_t para)  the probes' slots 1..12 need privilege */
    PCNT_STOP = 7,       /* (int slot)                                                      */
    PCNT_REPEAT = 8,     /* (int slot, int on)  each start/stop pair becomes a sample        */
    PCNT_PROBES = 9,     /* (int on)  enable the named kernel probe points (privileged)      */
    PCNT_RESET = 10,     /* ()  probes off, no events, every slot cleared (privileged)      */
};
enum pcnt_status { PCNT_INIT = 0, PCNT_RUNNING = 1, PCNT_SET = 2, PCNT_FAIL = 3 };
enum pcnt_event {
    PCNT_EV_NONE = 0, PCNT_EV_INSTRUCTIONS = 1, PCNT_EV_CYCLES = 2, PCNT_EV_LLC_REFS = 3,
    PCNT_EV_LLC_MISSES = 4, PCNT_EV_BRANCH_MISSES = 5, PCNT_EV_BRANCHES = 6, PCNT_NEVENTS = 7,
};
#define PCNT_MODE_USER   1u
#define PCNT_MODE_KERNEL 2u
#define PCNT_RING        64      /* samples kept per slot for the median */

struct pcnt_slot_info {
    uint32_t slot, status;
    uint64_t para;
    uint64_t tsc, ev[2];         /* last start..stop deltas, raw */
    uint64_t tsc_net, ev_net[2]; /* minus the overhead slot's values (0 for slot 0) */
    /* repeated mode */
    uint32_t repeat, ring_len;
    uint64_t count, dropped, min, max, sum;
    uint64_t ring[PCNT_RING];    /* the latest samples (TSC deltas, raw) */
    char name[16];               /* probe name, or "" */
};

struct pcnt_events {
    int32_t ev[2];
    uint32_t modes;
    uint32_t supported;          /* 1 when the CPU has architectural PMU counters */
    uint32_t pmu_version, pmu_counters;
    uint32_t probes;             /* 1 while the kernel probe points are on */
};

struct vm_check {                /* SYS_VM_CHECK: the reverse map against the page tables */
    uint64_t mappings;           /* anonymous user PTEs in all address spaces */
    uint64_t entries;            /* reverse-map entries on the frames' lists */
    uint64_t errors;             /* mismatches of any kind (0 when consistent) */
};

#define MEASURE_WINDOW_BEGIN 1   /* SYS_MEASURE ops: marker for the cache model */
#define MEASURE_WINDOW_END   2

/* ---- flags and limits ---------------------------------------------------------------- */
#define SPAWN_PRIVILEGED  0x1u   /* child may call privileged calls (caller must be) */
#define PROT_READ   0x1u
#define PROT_WRITE  0x2u
#define PROT_EXEC   0x4u
#define PROT_NONE   0x0u         /* a guard region: reserved, every access faults */
#define VM_MMAP_FIXED 0x1u       /* SYS_VM_MMAP: exactly at addr, replacing what is there */
#define VM_MMAP_PHYS  0x2u       /* SYS_VM_MMAP: map physical memory from phys (privileged) */
#define VM_MMAP_SHARED 0x4u      /* SYS_VM_MMAP: anonymous memory shared with clones (not COW) */
#define VM_CTL_MAP      1        /* SYS_VM_CTL operations in a controlled task */
#define VM_CTL_UNMAP    2
#define VM_CTL_PROTECT  3
#define TASK_COPY_TO    1        /* SYS_TASK_COPY: our bytes into the task's memory */
#define TASK_COPY_FROM  2        /* the task's bytes into ours */
#define TASK_COPY_MAX   (1u << 20)

#define PRIO_MIN      0
#define PRIO_MAX      255
#define PRIO_DEFAULT  100
#define PRIO_INHERIT  (-1)       /* thread_create: same priority as the caller */
#define KILLED_STATUS 0x200      /* exit status of a task ended by SYS_TASK_KILL (not 128+vector) */

#define SPAWN_MAX_ARGS     16
#define SPAWN_MAX_ARGLEN   256   /* total bytes of all argument strings */
#define NAME_LEN           16
#define USER_SPACE_END     0x0000800000000000ull
#define SLEEP_FOREVER      UINT64_MAX

/* Exit status of a task killed for a fault: KILLED_STATUS_BASE + exception vector. */
#define KILLED_STATUS_BASE 128

struct self_info {
    int32_t tid;          /* calling thread   */
    int32_t task;         /* calling task     */
    int32_t prio;         /* thread priority  */
    int32_t cpu;          /* cpu it runs on   */
};

enum thread_state_abi {
    TS_READY = 0, TS_RUNNING = 1, TS_BLOCKED = 2, TS_SLEEPING = 3, TS_ZOMBIE = 4,
};

struct ps_entry {
    int32_t  tid;
    int32_t  task;
    int32_t  prio;
    int32_t  state;       /* enum thread_state_abi */
    uint64_t ticks;       /* timer ticks spent running */
    char     name[NAME_LEN];
};

struct meminfo {
    uint64_t frames_total;     /* usable 4 KiB frames found in the memory map */
    uint64_t frames_free;
    uint64_t kernel_frames;    /* frames used by the kernel image + boot archive */
    uint64_t tasks;            /* live kernel objects, by type */
    uint64_t threads;
    uint64_t aspaces;
    uint64_t kobj_bytes;       /* bytes of kernel-object memory in use */
    uint64_t kobj_frames;      /* frames held by the kernel-object allocator */
};

struct time_info {
    uint64_t ticks;            /* timer ticks since boot */
    uint64_t hz;               /* ticks per second */
    uint64_t tsc;              /* raw time-stamp counter */
    uint64_t tsc_hz;           /* calibrated TSC frequency (0 if unknown) */
};

#endif
