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
#define SYSCALL_UNLOCKED SYSCALL
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
#undef SYSCALL_UNLOCKED
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
    PCNT_START = 6,      /* (int slot, uint64_t para)  the probes' slots 1..13 need privilege */
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
    uint64_t mappings;           /* anonymous and file user PTEs in all address spaces */
    uint64_t entries;            /* reverse-map entries on the frames' lists */
    uint64_t errors;             /* mismatches of any kind (0 when consistent) */
};

/* SYS_DEV_FIND: a PCI function claimed by a driver (docs/drivers.md). */
#define DEV_BAR_IO       0x1u    /* an I/O-port BAR (base is a port number) */
#define DEV_BAR_MEM64    0x2u    /* a 64-bit memory BAR (it also used the next BAR slot) */
#define DEV_BAR_PREFETCH 0x4u
#define DEV_IRQ_NONE     0xff
struct dev_bar {
    uint64_t base, size;         /* physical address (or port) and length; size 0: unused */
    uint32_t flags, reserved;
};
struct dev_info {
    uint16_t vendor, device;
    uint8_t bus, slot, func;
    uint8_t irq;                 /* its interrupt line (I/O APIC pin), DEV_IRQ_NONE if none */
    uint32_t class_code;         /* class << 16 | subclass << 8 | programming interface */
    struct dev_bar bar[6];
    uint8_t msix;                /* 1: its interrupts come as MSI-X (every table entry, one
                                    vector; option msix), INTx is off; 0: INTx (irq) */
};
#define DMA_ALLOC_MAX (4u << 20) /* SYS_DMA_ALLOC: largest contiguous allocation */
/* ---- Linux tasks (docs/unix.md, "Forwarding") ----------------------------------------
 * A task marked with SYS_TASK_LINUX runs Linux code: each of its `syscall` instructions
 * (any rax) and each fault the kernel cannot resolve becomes one IPC call from the
 * thread to its server thread. Message words: w0 = label (op of the unix interface,
 * SRV_LABEL layout: op | UNIX_IFACE << 16), then
 *   FWD_OP_SYSCALL  w1 = Linux call number, w2..w7 = rdi, rsi, rdx, r10, r8, r9
 *   FWD_OP_FAULT    w1 = vector, w2 = error code, w3 = address (cr2 for #PF), w4 = rip;
 *                   w1 = FWD_FAULT_NOMEM: a page fault that found no free frame;
 *                   w1 = FWD_FAULT_BUS: a page wholly past the end of a mapped file
 * The reply's word 0 becomes rax (a system call; every other register is preserved), or
 * for a fault or an interrupt: >= 0 resume (at the registers SYS_THREAD_CTL may have set), < 0 end the
 * task with status KILLED_STATUS_BASE + vector. After SYS_THREAD_CTL(SET_REGS) the reply
 * word is ignored: the thread resumes with exactly the registers set. */
#define UNIX_IFACE          2
#define FWD_OP_SYSCALL      1
#define FWD_OP_FAULT        2
#define FWD_OP_INTERRUPT    3    /* SYS_THREAD_CTL(INTERRUPT): no other words */
#define FWD_FAULT_NOMEM     256  /* FWD_OP_FAULT's vector when memory ran out (not a CPU's) */
#define FWD_FAULT_BUS       257  /* ... for a page wholly past the end of a mapped file */
#define FWD_LABEL(op)       ((uint64_t)(op) | (uint64_t)UNIX_IFACE << 16)

/* A thread's user registers (SYS_THREAD_CTL, SYS_TASK_THREAD_REGS). */
struct user_regs {
    uint64_t rax, rbx, rcx, rdx, rsi, rdi, rbp, rsp;
    uint64_t r8, r9, r10, r11, r12, r13, r14, r15;
    uint64_t rip, rflags, fs_base, gs_base;
};
#define THREAD_CTL_GET_REGS 1    /* SYS_THREAD_CTL ops */
#define THREAD_CTL_SET_REGS 2
#define THREAD_CTL_END      3
#define THREAD_CTL_INTERRUPT 4   /* a FWD_OP_INTERRUPT call at its next return to user mode */
#define THREAD_CTL_STOP     5    /* stop at its next return to user mode: 1 stopped, 0 pending */
#define THREAD_CTL_RESUME   6    /* a stopped thread goes on (a pending stop is cancelled) */
/* rflags bits a user frame may set (CF PF AF ZF SF DF OF); IF is always on */
#define USER_RFLAGS_MASK    0xcd5ull

#define MEASURE_WINDOW_BEGIN 1   /* SYS_MEASURE ops: marker for the cache model */
#define MEASURE_WINDOW_END   2
#define MEASURE_MODEL        3   /* arg 1: every CPU resumes the coherence model's clock, 0: pauses */

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
#define VM_CTL_DISCARD  4        /* drop the pages of a mapped range; the regions stay */
/* File objects (docs/memory.md, "File objects"): a server's page cache. SYS_VM_MMAP with
 * VM_MMAP_FILE (privileged) makes a file object of len zeroed bytes (at most
 * VM_FILE_WINDOW) in contiguous frames and maps it shared in the caller: its window,
 * always VM_FILE_WINDOW bytes long (pages past the object's size fault). VM_CTL_MAP_FILE
 * maps part of it into a controlled task: flags = the window address of the first page
 * to map (page aligned) | VM_MMAP_FIXED | VM_MMAP_SHARED (else copy-on-write); pages
 * wholly past the file's end fault there (FWD_FAULT_BUS). With task 0 and addr a window:
 * VM_CTL_FILE_EOF sets the file's end (len = its size in bytes, at most the object's),
 * VM_CTL_FILE_GROW moves the bytes to a larger run (len bytes, at most VM_FILE_WINDOW);
 * the window stays where it is. */
#define VM_MMAP_FILE    0x8u
#define VM_FILE_WINDOW  (1ull << 30)
#define VM_CTL_MAP_FILE  5
#define VM_CTL_FILE_EOF  6
#define VM_CTL_FILE_GROW 7
/* VM_CTL_MAP_CALLER (task = the id of a thread waiting for the caller's reply: a client
 * whose call a server is serving; else E_PERM; privileged callers only, E_PERM): maps len
 * bytes of that client's window at addr (a window page of its task, else E_INVAL) shared
 * into the caller, where the kernel chooses, and returns the address. So a client shares
 * memory it made with the server it calls (docs/net.md, "The data channel"). */
#define VM_CTL_MAP_CALLER 8
/* VM_CTL_CALLER in flags of VM_CTL_UNMAP, VM_CTL_PROTECT or VM_CTL_DISCARD: task = the id
 * of a thread waiting for the caller's reply (a Linux thread whose forwarded call the
 * caller holds, SYS_FWD_HELPER); the operation is on that thread's task, which the caller
 * must control (else E_PERM; with another op, E_INVAL). So a server's helper thread acts on
 * the memory of the process it serves without a table of its own (docs/unix.md). */
#define VM_CTL_CALLER   0x100u
#define TASK_COPY_TO    1        /* SYS_TASK_COPY: our bytes into the task's memory */
#define TASK_COPY_FROM  2        /* the task's bytes into ours */
#define TASK_COPY_MAX   (1u << 20)

/* ---- pagers (docs/memory.md, "Pagers") ------------------------------------------------
 * A region made by SYS_VM_PAGER gets its pages from a pager thread. A fault on a page it
 * has not supplied becomes an IPC call from the faulting thread to the pager, words:
 *   w0 = PAGER_FAULT, w1 = fault address, w2 = access (PROT_READ, PROT_WRITE or PROT_EXEC),
 *   w3 = rip, w4 = faulting thread id, w5 = its task id, w6 = byte offset in the object,
 *   w7 = why the pager's previous answer to this thread was not taken (0: it was).
 * The pager answers with IPC_REPLY_RECV: w0 = PAGER_SUPPLY, w1 = page-aligned address of
 * a readable page of the pager's own memory, whose bytes are copied into a new page of
 * the region; or w0 = PAGER_REFUSE, and the access is the thread's fault. A bad answer
 * (other label E_INVAL, unaligned E_INVAL, unreadable E_FAULT, no frame E_NOMEM) is not
 * taken: the thread retries its access and calls again, with the reason in w7. */
#define PAGER_FAULT   0x5046ull  /* "PF" */
#define PAGER_SUPPLY  0x5053ull  /* "PS" */
#define PAGER_REFUSE  0x5052ull  /* "PR" */

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
#define FUTEX_CHANGED      1        /* SYS_FUTEX_WAIT: the word did not hold the expected value */

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

/* SYS_PS: at most this many entries (one per thread slot of the kernel's table). */
#define PS_MAX             4096

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
    uint64_t rmap_inserts;     /* reverse-map updates since boot, all CPUs (docs/memory.md) */
    uint64_t rmap_removes;
    uint64_t rmap_cancelled;   /* rmap=log: removes that cancelled a logged insert */
    uint64_t rmap_applied;     /* rmap=log: logged operations applied */
    uint64_t rmap_probe_ticks; /* TSC ticks in the rmap probes (0 unless probes are on) */
    uint64_t moves_wake;       /* threads moved to another CPU since boot (docs/smp.md): */
    uint64_t moves_steal;      /*   woken elsewhere, stolen by an idle CPU, pulled by a */
    uint64_t moves_balance;    /*   busy CPU's periodic balancing */
    uint64_t move_ticks;       /* TSC ticks those moves took (x87/SSE state fetched) */
    uint64_t rmap_families;    /* rmap=family: fork families of address spaces alive (else 0) */
    uint64_t rmap_full_passes; /* rmap=log: a full log applied by its CPU (that log only) */
    uint64_t rmap_foreign;     /* rmap=log: operations a CPU applied from another CPU's log */
};

/* CPUs struct time_info reports one by one: the first 32 of up to 64 (MAX_CPUS). A cap:
 * at 64 the struct would be 2,120 bytes, more than half a page, and SYS_TIME, also a
 * clock read (lib/drv/mk.c, the UNIX server's fallback), would zero and copy twice as
 * much on every call; `cpus`, `cpu` and the sums count every CPU (docs/syscalls.md). */
#define TIME_CPUS 32
/* What a CPU was doing when its timer ticked (cpu_ticks): Linux's tick-sampled CPU times,
 * which /proc/stat reports. USER: a Linux task's thread in user mode; IDLE: the CPU's
 * idle thread; SYSTEM: anything else (native tasks such as the servers, in user mode, and
 * the kernel, which a tick reaches only where it runs with interrupts on). */
enum { TIME_TICK_USER, TIME_TICK_SYSTEM, TIME_TICK_IDLE, TIME_TICK_KINDS };
struct time_info {
    uint64_t ticks;            /* timer ticks since boot */
    uint64_t hz;               /* ticks per second */
    uint64_t tsc;              /* raw time-stamp counter */
    uint64_t tsc_hz;           /* calibrated TSC frequency (0 if unknown) */
    uint64_t thread_switches;  /* changes of the running thread since boot, all CPUs */
    uint64_t as_switches;      /* address-space (CR3) loads since boot, all CPUs */
    uint32_t cpus;             /* CPUs that run threads */
    uint32_t cpu;              /* the CPU the caller runs on */
    uint64_t cpu_thread_switches[TIME_CPUS];   /* thread_switches of each CPU */
    uint64_t idle_tsc;         /* TSC ticks all CPUs spent halted with nothing to run */
    uint64_t cpu_ticks[TIME_CPUS][TIME_TICK_KINDS];  /* each CPU's timer ticks, by what it
                                                        was doing: TIME_TICK_* */
    uint64_t interrupts;       /* interrupts taken since boot, all CPUs (IPIs included) */
};

#endif
