/*
 * fuzz SEED N: random system calls against the kernel.
 *
 * Makes N system calls with a PRNG seeded by SEED (xorshift64*, reproducible): the
 * call number is mostly uniform in [0, NSYSCALLS + 8) and sometimes a fully random
 * 64-bit value; every argument is drawn from a mix of small integers, -1, huge values,
 * pointers into the fuzzer's own scratch mapping (also right at its end, next to the
 * unmapped guard page), pointers into its own read-only code, NULL, kernel addresses,
 * unmapped user addresses, non-canonical addresses and random 64-bit values.
 *
 * Calls that would legitimately end or block the fuzzer are skipped or sanitised:
 *   SYS_EXIT, SYS_THREAD_EXIT   never called (they end the fuzzer); another number is drawn
 *   SYS_CONSOLE_READ            never called (it blocks waiting for input)
 *   SYS_SLEEP                   ticks in [0, 2] (mostly 0)
 *   SYS_FUTEX_WAIT              timeout in [0, 2] ticks, like SYS_SLEEP (a word that holds
 *                               the expected value would otherwise block it for good)
 *   SYS_TASK_WAIT               only with ids that cannot name a child (0, negative but
 *                               not -1 = "any child", or above INT32_MAX)
 *   SYS_THREAD_JOIN             only with ids that cannot name a live thread of ours
 *                               (0, negative, too large, random, or our own: E_DEADLK)
 *   SYS_THREAD_CREATE           only with invalid entry points (kernel, non-canonical, or
 *                               at/above the end of user space), so no runaway threads
 *   SYS_SPAWN                   garbage arguments. A valid spawn is possible (a program
 *                               name can appear in the scratch buffer, e.g. written there
 *                               by SYS_PS) and fine: the child runs and is reaped when we
 *                               exit. Only "sh" and "init" are defused (they would compete
 *                               for the console).
 *   SYS_VM_MAP                  lengths mostly up to 1 MiB, once in a while 512 MiB (more
 *                               than the machine has: fine, pages come on first touch);
 *                               at most MAX_TRACKED mappings are kept, the oldest is unmapped
 *   SYS_VM_MMAP                 fixed mappings only over the fuzzer's own mappings or at
 *                               invalid addresses; hints 0, our own or invalid addresses
 *                               (so nothing appears where other arguments point);
 *                               results tracked like SYS_VM_MAP's
 *   SYS_VM_PROTECT              only the fuzzer's own mappings or invalid addresses
 *   SYS_VM_PAGER                as SYS_VM_MMAP (shifted by the task argument: often 0 or a
 *                               created task); the pager is often our own thread. Our own
 *                               pager regions are only ever reached by the kernel (which
 *                               gets E_FAULT), never touched by the fuzzer itself (its
 *                               pager would be itself: the fault would kill it)
 *   SYS_TASK_CREATE             at most MAX_CREATED tasks are made (then bad names only);
 *                               they never run and go when the fuzzer exits
 *   SYS_VM_CLONE, SYS_TASK_THREAD, SYS_VM_CTL, SYS_TASK_COPY  often aimed at those
 *                               tasks; threads only with invalid entry points; copies never
 *                               into our own program image
 *   SYS_THREAD_CTL              often on our own thread (E_PERM: never stopped or ended)
 *   SYS_TASK_HANDOVER           often aimed at those tasks; the receiver is never another
 *                               live task (invalid ids, ourselves, the created tasks, which
 *                               have no threads: E_INVAL), so nothing outlives the fuzzer
 *   SYS_TASK_THREAD_REGS        as SYS_TASK_THREAD: the registers come from a random frame
 *                               whose rip is always an invalid entry point (E_INVAL)
 *   SYS_VM_UNMAP                only the fuzzer's own SYS_VM_MAP results (whole or a
 *                               leading part) or invalid addresses, so it never unmaps its
 *                               own stack, code or scratch buffer
 *   SYS_CONSOLE_WRITE           lengths capped at 64 (keeps the console readable)
 *   SYS_RESULT_WRITE            lengths capped at 64, and 0 for readable buffers, so no
 *                               garbage reaches the JSON result stream on COM2
 *   SYS_POWEROFF, SYS_KSET      called: the fuzzer must run unprivileged (the shell
 *                               spawns programs that way), so they must give E_PERM;
 *                               so must SYS_PCNT's switches (probes, events, reset)
 *   SYS_IPC_*                   made through their own register convention (message words
 *                               in r8-r10, r12-r15, rbx, which receives overwrite); the
 *                               timeout is forced to [0, 2] ticks (never IPC_FOREVER) so no
 *                               send, receive or call blocks for long; the flag bits and
 *                               partners are random (often invalid, sometimes IPC_ANY or
 *                               ourselves); SYS_IPC_UTCB registers random descriptors
 *
 * Checks: every result must be >= 0 or one of the E_* codes; unknown call numbers must
 * give E_NOSYS; SYS_POWEROFF and SYS_KSET must give E_PERM. Prints progress every 50,000 calls, a
 * histogram of results per call number, and "fuzz done seed=S n=N", and sends a result
 * line {"type":"result","bench":"fuzz",...} to the result stream; exits 1 if a check
 * failed (the first few failures are printed).
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <ondol/result.h>
#include <ondol/sys.h>

#define SCRATCH_SIZE (64 * 1024)
#define MAX_TRACKED 16
#define MAX_CREATED 16
#define NUM_RANGE (NSYSCALLS + 8)
#define NBUCKETS (E_COUNT + 2) /* ok, one per E_* code (E_NOSYS first), other */
#define KERNEL_ADDR 0xffffffff80000000ull
#define PHYSMAP_ADDR 0xffff800000000000ull
#define NONCANON_ADDR 0x0000800000000000ull
#define UNMAPPED_ADDR 0x10000000ull

static uint64_t rng;
static unsigned char *scratch;
static uint64_t counts[NSYSCALLS + 1][NBUCKETS];   /* last row: numbers >= NSYSCALLS */
static uint64_t violations;

static struct {
    uint64_t addr, len;
} tracked[MAX_TRACKED];
static int ntracked;
static long created[MAX_CREATED];     /* empty tasks from SYS_TASK_CREATE (freed when we exit) */
static int ncreated;

static uint64_t r64(void) { return rand64(&rng); }

static int self_task_id(void)
{
    struct self_info me;
    sys_self(&me);
    return me.task;
}
static uint64_t below(uint64_t n) { return n ? r64() % n : 0; }

static const unsigned char *code_ptr(void)
{
    return (const unsigned char *)(uintptr_t)&below;   /* read-only, executable */
}

static uint64_t arg(void)
{
    switch (below(13)) {
    case 0: return below(16);
    case 1: return (uint64_t)-1;
    case 2: {
        static const uint64_t huge[] = { 1ull << 63, UINT64_MAX, 0x7fffffffffffffffull,
                                         1ull << 32, 0xffffffffull, 0x80000000ull,
                                         (uint64_t)INT32_MIN, 1ull << 47 };
        return huge[below(sizeof huge / sizeof huge[0])];
    }
    case 3: return (uint64_t)(uintptr_t)(scratch + below(SCRATCH_SIZE - 4096));
    case 4: return (uint64_t)(uintptr_t)(scratch + SCRATCH_SIZE - below(64));  /* at the guard page */
    case 5: return 0;
    case 6: return (below(2) ? KERNEL_ADDR : PHYSMAP_ADDR) + below(1ull << 24);
    case 7: return UNMAPPED_ADDR + below(1 << 20);
    case 8: return (below(2) ? NONCANON_ADDR : 0x8000000000000000ull) + below(1ull << 20);
    case 9: return (uint64_t)(uintptr_t)(code_ptr() + below(256));
    case 10: return below(257);
    case 11: return r64();
    default: return r64() >> below(64);
    }
}

/* Whether p points into memory we can read: the scratch mapping or the program image. */
static int readable(uint64_t p)
{
    uint64_t s = (uint64_t)(uintptr_t)scratch;
    return (p >= s && p < s + SCRATCH_SIZE) || (p >= 0x400000 && p < 0x800000);
}

static uint64_t invalid_entry(void)
{
    switch (below(4)) {
    case 0: return KERNEL_ADDR + below(1ull << 20);
    case 1: return PHYSMAP_ADDR + below(1ull << 30);
    case 2: return NONCANON_ADDR + below(1ull << 40);
    default: return 0x8000000000000000ull | r64();
    }
}

/* An IPC call with message words MR0..MR7 in r8, r9, r10, r12, r13, r14, r15, rbx; the
 * kernel may overwrite all of them (receives), and rdi/rsi/rdx too for all we assume. */
static long ipc_raw(uint64_t n, uint64_t a0, uint64_t a1, uint64_t a2, uint64_t mr[IPC_MRS])
{
    register uint64_t r8 __asm__("r8") = mr[0];
    register uint64_t r9 __asm__("r9") = mr[1];
    register uint64_t r10 __asm__("r10") = mr[2];
    register uint64_t r12 __asm__("r12") = mr[3];
    register uint64_t r13 __asm__("r13") = mr[4];
    register uint64_t r14 __asm__("r14") = mr[5];
    register uint64_t r15 __asm__("r15") = mr[6];
    uint64_t rbx = mr[7];
    uint64_t rax = n;
    __asm__ volatile("syscall"
                     : "+a"(rax), "+D"(a0), "+S"(a1), "+d"(a2), "+r"(r8), "+r"(r9), "+r"(r10),
                       "+r"(r12), "+r"(r13), "+r"(r14), "+r"(r15), "+b"(rbx)
                     :
                     : "rcx", "r11", "memory");
    mr[0] = r8;
    mr[1] = r9;
    mr[2] = r10;
    mr[3] = r12;
    mr[4] = r13;
    mr[5] = r14;
    mr[6] = r15;
    mr[7] = rbx;
    return (long)rax;
}

static int is_ipc(uint64_t n) { return n >= SYS_IPC_FIRST && n <= SYS_IPC_LAST; }

/* An IPC partner: mostly junk, sometimes IPC_ANY, ourselves or a small id. */
static uint64_t ipc_partner(void)
{
    switch (below(5)) {
    case 0: return (uint64_t)(int64_t)IPC_ANY;
    case 1: return (uint64_t)sys_self(NULL);
    case 2: return below(1 << 14);
    default: return arg();
    }
}

/* SYS_PCNT commands that change what the kernel measures for everyone: privileged. */
static int is_pcnt_switch(uint64_t cmd)
{
    return cmd == PCNT_PROBES || cmd == PCNT_SET_EVENT || cmd == PCNT_RESET;
}

static int bucket(long r)
{
    if (r >= 0)
        return 0;
    if (r >= -E_COUNT)
        return (int)-r;          /* E_NOSYS (-1) -> 1 ... the last code -> E_COUNT */
    return NBUCKETS - 1;
}

static void violation(uint64_t n, const uint64_t *a, long r, const char *why)
{
    violations++;
    if (violations <= 10)
        printf("fuzz: VIOLATION %s: call %llu (%#llx, %#llx, %#llx, %#llx) -> %ld\n", why,
               (unsigned long long)n, (unsigned long long)a[0], (unsigned long long)a[1],
               (unsigned long long)a[2], (unsigned long long)a[3], r);
}

static void track_map(uint64_t addr, uint64_t len)
{
    if (ntracked == MAX_TRACKED) {
        /* keep memory bounded: drop the oldest mapping */
        sys_vm_unmap((void *)(uintptr_t)tracked[0].addr, tracked[0].len);
        memmove(&tracked[0], &tracked[1], sizeof tracked[0] * (MAX_TRACKED - 1));
        ntracked--;
    }
    tracked[ntracked].addr = addr;
    tracked[ntracked].len = (len + 4095) & ~4095ull;
    ntracked++;
}

/* An address range for calls that change mappings: part of one of our own tracked
 * mappings (its index in *idx, pages left after the range in *keep; a leading part, so
 * an unmap leaves a tracked tail) or an invalid range, so that no call ever changes the
 * fuzzer's own stack, code or scratch buffer. */
static void own_or_invalid_range(uint64_t *a, int *idx, uint64_t *keep)
{
    *idx = -1;
    *keep = 0;
    if (ntracked > 0 && below(2) == 0) {
        int i = (int)below((uint64_t)ntracked);
        uint64_t pages = tracked[i].len / 4096;
        uint64_t k = below(3) == 0 ? 1 + below(pages) : pages;
        a[0] = tracked[i].addr;
        a[1] = k * 4096 - (below(4) == 0 ? below(4096) : 0);   /* rounded up by the kernel */
        *idx = i;
        *keep = pages - k;
    } else {
        switch (below(5)) {
        case 0: a[0] = KERNEL_ADDR + below(1ull << 30); break;
        case 1: a[0] = NONCANON_ADDR + below(1ull << 40); break;
        case 2: a[0] = (uint64_t)(uintptr_t)scratch + 1 + below(4095); break;   /* unaligned */
        case 3: a[0] = 0; a[1] = below(1 << 20); break;
        default: a[0] = UINT64_MAX - below(1 << 20); break;
        }
    }
}

/* SYS_VM_PAGER(task, addr, len, prot, flags, pager): SYS_VM_MMAP's rules for addr..flags. */
static void draw_vm_pager(uint64_t *a)
{
    int idx;
    uint64_t keep, range[2] = {a[1], a[2]};
    own_or_invalid_range(range, &idx, &keep);   /* fixed: only over our own mappings */
    a[1] = range[0];
    a[2] = range[1];
    if (below(4) != 0) {
        a[3] = below(8);
        a[4] = below(2) == 0 ? VM_MMAP_FIXED : below(8);
    }
    if (!(a[4] & VM_MMAP_FIXED)) {
        a[2] = 1 + below(1 << 18);
        if (below(2) == 0)
            a[1] = 0;
    }
    if (below(2) == 0)
        a[0] = ncreated > 0 && below(2) == 0 ? (uint64_t)created[below((uint64_t)ncreated)] : 0;
    if (below(2) == 0)
        a[5] = (uint64_t)sys_self(NULL);        /* a valid pager: this thread */
}

/* SYS_TASK_HANDOVER(task, to): `to` never names a live task but ours (see the list). */
static void draw_task_handover(uint64_t *a)
{
    if (ncreated > 0 && below(2) == 0)
        a[0] = (uint64_t)created[below((uint64_t)ncreated)];
    switch (below(4)) {
    case 0: a[1] = (uint64_t)self_task_id(); break;
    case 1:
        if (ncreated > 0) {
            a[1] = (uint64_t)created[below((uint64_t)ncreated)];
            break;
        }
        /* fall through */
    case 2: a[1] = (uint64_t)-(int64_t)(1 + below(100)); break;
    default: a[1] = 0x80000000ull + below(1ull << 40); break;
    }
}

/* Draws a call and its arguments, applying the skip list and the sanitising rules. */
static uint64_t draw(uint64_t *a, int *unmap_idx, uint64_t *unmap_keep)
{
    uint64_t n;
    for (;;) {
        n = below(10) == 0 ? r64() : below(NUM_RANGE);
        if (n != SYS_EXIT && n != SYS_THREAD_EXIT && n != SYS_CONSOLE_READ)
            break;
    }
    for (int i = 0; i < 6; i++)
        a[i] = arg();
    *unmap_idx = -1;

    switch (n) {
    case SYS_SLEEP: {
        uint64_t x = below(100);
        a[0] = x < 95 ? 0 : x < 99 ? 1 : 2;
        break;
    }
    case SYS_FUTEX_WAIT: {
        uint64_t x = below(100);
        a[2] = x < 95 ? 0 : x < 99 ? 1 : 2;
        break;
    }
    case SYS_TASK_WAIT:
        switch (below(4)) {
        case 0: a[0] = 0; break;
        case 1: a[0] = (uint64_t)(int64_t)-(int64_t)(2 + below(1u << 30)); break;
        case 2: a[0] = 0x80000000ull + below(1ull << 40); break;
        default: a[0] = (uint64_t)INT32_MIN; break;
        }
        break;
    case SYS_THREAD_JOIN:
        switch (below(5)) {
        case 0: a[0] = 0; break;
        case 1: a[0] = (uint64_t)-(int64_t)(1 + below(100)); break;
        case 2: a[0] = 0x80000000ull + below(1ull << 40); break;
        case 3: a[0] = (uint64_t)sys_self(NULL); break;   /* E_DEADLK */
        default: a[0] = below(1ull << 31); break;         /* no live thread but us */
        }
        break;
    case SYS_THREAD_CREATE:
        a[0] = invalid_entry();
        break;
    case SYS_SPAWN:
        if (a[0] >= (uint64_t)(uintptr_t)scratch && a[0] < (uint64_t)(uintptr_t)scratch + SCRATCH_SIZE) {
            const char *p = (const char *)(uintptr_t)a[0];
            size_t room = (size_t)((uint64_t)(uintptr_t)scratch + SCRATCH_SIZE - a[0]);
            if ((room >= 3 && strcmp(p, "sh") == 0) || (room >= 5 && strcmp(p, "init") == 0))
                scratch[a[0] - (uint64_t)(uintptr_t)scratch] ^= 0x20;   /* "SH", "Init" */
        }
        break;
    case SYS_VM_MAP:
        if (below(2000) == 0) {
            a[0] = 512ull << 20;
            a[1] = PROT_READ | PROT_WRITE;
        } else if (below(2) == 0) {        /* plausible requests, to get real mappings */
            a[0] = 1 + below(1 << 18);
            a[1] = below(8);
        } else if (a[0] <= (1ull << 32) && a[0] > (1ull << 20))
            a[0] = 1 + below(1 << 20);
        break;
    case SYS_VM_UNMAP:
        own_or_invalid_range(a, unmap_idx, unmap_keep);
        break;
    case SYS_VM_PROTECT: {
        int idx;
        uint64_t keep;
        own_or_invalid_range(a, &idx, &keep);
        if (below(4) != 0)
            a[2] = below(8);
        break;
    }
    case SYS_VM_MMAP: {
        int idx;
        uint64_t keep, len = 1 + below(1 << 18);
        if (below(4) != 0) {
            a[2] = below(8);
            a[3] = below(8);              /* FIXED, PHYS (E_PERM for us), SHARED */
        }
        own_or_invalid_range(a, &idx, &keep);   /* fixed: only over our own mappings */
        if (!(a[3] & VM_MMAP_FIXED)) {
            a[1] = len;
            if (below(2) == 0)
                a[0] = 0;
        }
        break;
    }
    case SYS_VM_PAGER:
        draw_vm_pager(a);
        break;
    case SYS_TASK_HANDOVER:
        draw_task_handover(a);
        break;
    case SYS_THREAD_CTL:
        if (below(2) == 0)
            a[0] = (uint64_t)sys_self(NULL);   /* ours: not a controlled task's (E_PERM) */
        break;
    case SYS_TASK_CREATE:
        if (ncreated == MAX_CREATED)
            a[0] = invalid_entry();        /* E_FAULT: keeps the task table from filling */
        break;
    case SYS_TASK_THREAD:
    case SYS_VM_CLONE:
    case SYS_VM_CTL:
    case SYS_TASK_COPY:
        if (ncreated > 0 && below(2) == 0)
            a[0] = (uint64_t)created[below((uint64_t)ncreated)];
        if (n == SYS_VM_CTL && below(2) == 0)
            a[1] = 1 + below(3);
        if (n == SYS_TASK_COPY && below(2) == 0)
            a[1] = 1 + below(2);
        if (n == SYS_TASK_COPY && a[3] >= 0x400000 && a[3] < 0x800000)
            a[3] = (uint64_t)(uintptr_t)scratch;   /* never over our own image */
        if (n == SYS_TASK_THREAD)
            a[1] = invalid_entry();        /* no runaway copies of the fuzzer */
        break;
    case SYS_TASK_THREAD_REGS: {
        static struct user_regs frame;
        uint64_t *w = (uint64_t *)&frame;
        for (size_t i = 0; i < sizeof(frame) / 8; i++)
            w[i] = arg();
        frame.rip = invalid_entry();       /* no runaway copies of the fuzzer */
        if (ncreated > 0 && below(2) == 0)
            a[0] = (uint64_t)created[below((uint64_t)ncreated)];
        a[1] = (uint64_t)(uintptr_t)&frame;
        break;
    }
    case SYS_CONSOLE_WRITE:
        if (a[1] > 64)
            a[1] %= 65;
        break;
    case SYS_RESULT_WRITE:
        /* Readable buffers get length 0, so only the pointer checks are exercised and
         * no garbage lands in the JSON result stream (tests parse it line by line). */
        if (a[1] > 64)
            a[1] %= 65;
        if (readable(a[0]))
            a[1] = 0;
        break;
    default:
        if (is_ipc(n) && n != SYS_IPC_UTCB && n != SYS_IPC_GRANT) {
            a[0] = ipc_partner();
            a[1] = ipc_partner();
            uint64_t flags = below(4) == 0 ? r64() >> 32 : below(4);   /* bits 32.. */
            uint64_t x = below(100);
            uint64_t timeout = x < 90 ? 0 : x < 98 ? 1 : 2;         /* never IPC_FOREVER */
            a[2] = flags << 32 | timeout;
        }
        break;
    }
    return n;
}

/* Call names from <ondol/syscalls.def>; numbers without a call print as "call N". */
#define SYSCALL(num, NAME, name, ...) [SYS_##NAME] = #name,
#define SYSCALL_NORETURN SYSCALL
#define SYSCALL_UNLOCKED SYSCALL
#define SYSCALL_IPC SYSCALL
static const char *const known_names[NSYSCALLS] = {
#include <ondol/syscalls.def>
};
#undef SYSCALL
#undef SYSCALL_NORETURN
#undef SYSCALL_UNLOCKED
#undef SYSCALL_IPC

/* Histogram column titles: the E_* names from <ondol/errors.def>, in code order. */
#define ERROR(NAME, value, meaning) #NAME,
static const char *const error_names[E_COUNT] = {
#include <ondol/errors.def>
};
#undef ERROR

static const char *call_name(int c, char *buf, size_t size)
{
    if (c == NSYSCALLS)
        return "(invalid)";
    if (known_names[c] != NULL)
        return known_names[c];
    snprintf(buf, size, "call %d", c);
    return buf;
}

int main(int argc, char **argv)
{
    if (argc < 3) {
        printf("usage: fuzz SEED N\n");
        return 2;
    }
    uint64_t seed = strtoull(argv[1], NULL, 0);
    uint64_t total = strtoull(argv[2], NULL, 0);
    rng = seed ? seed : 1;

    long m = sys_vm_map(SCRATCH_SIZE, PROT_READ | PROT_WRITE);
    if (m < 0) {
        printf("fuzz: cannot map scratch: %ld\n", m);
        return 1;
    }
    scratch = (unsigned char *)(uintptr_t)m;
    for (size_t i = 0; i < SCRATCH_SIZE; i++)
        scratch[i] = (unsigned char)r64();
    printf("fuzz: seed=%llu n=%llu scratch=%p\n", (unsigned long long)seed,
           (unsigned long long)total, (void *)scratch);
    fflush(stdout);

    for (uint64_t done = 0; done < total; done++) {
        uint64_t a[6];
        int unmap_idx;
        uint64_t unmap_keep = 0;
        uint64_t n = draw(a, &unmap_idx, &unmap_keep);
        long r;
        if (is_ipc(n)) {
            uint64_t mr[IPC_MRS];
            for (int i = 0; i < IPC_MRS; i++)
                mr[i] = arg();
            r = ipc_raw(n, a[0], a[1], a[2], mr);
        } else {
            r = syscall6((long)n, (long)a[0], (long)a[1], (long)a[2], (long)a[3], (long)a[4],
                         (long)a[5]);
        }

        counts[n < NSYSCALLS ? n : NSYSCALLS][bucket(r)]++;
        if (r < -E_COUNT)
            violation(n, a, r, "result is not an E_* code");
        if (n >= NSYSCALLS && r != E_NOSYS)
            violation(n, a, r, "unknown call number did not give E_NOSYS");
        if (n == SYS_POWEROFF && r != E_PERM)
            violation(n, a, r, "unprivileged poweroff did not give E_PERM");
        if (n == SYS_KSET && r != E_PERM)
            violation(n, a, r, "unprivileged kset did not give E_PERM");
        if (n == SYS_PCNT && is_pcnt_switch(a[0]) && r != E_PERM)
            violation(n, a, r, "unprivileged pcnt switch did not give E_PERM");
        if (n == SYS_VM_MAP && r >= 0)
            track_map((uint64_t)r, a[0]);
        if (n == SYS_TASK_CREATE && r > 0 && ncreated < MAX_CREATED)
            created[ncreated++] = r;
        if (n == SYS_VM_MMAP && r >= 0 && !(a[3] & VM_MMAP_FIXED))
            track_map((uint64_t)r, a[1]);
        if (n == SYS_VM_PAGER && r >= 0 && a[0] == 0 && !(a[4] & VM_MMAP_FIXED))
            track_map((uint64_t)r, a[2]);
        if (n == SYS_VM_UNMAP && unmap_idx >= 0 && r == 0) {
            if (unmap_keep == 0) {
                memmove(&tracked[unmap_idx], &tracked[unmap_idx + 1],
                        sizeof tracked[0] * (size_t)(ntracked - unmap_idx - 1));
                ntracked--;
            } else {
                tracked[unmap_idx].addr += tracked[unmap_idx].len - unmap_keep * 4096;
                tracked[unmap_idx].len = unmap_keep * 4096;
            }
        }
        if ((done + 1) % 50000 == 0) {
            printf("\nfuzz: %llu/%llu calls\n", (unsigned long long)(done + 1),
                   (unsigned long long)total);
            fflush(stdout);
        }
    }

    printf("\nfuzz: results per call (ok = >= 0)\n");
    printf("%-14s %8s", "call", "ok");
    for (int e = 0; e < E_COUNT; e++)
        printf(" %7s", error_names[e]);
    printf(" %7s\n", "other");
    for (int c = 0; c <= NSYSCALLS; c++) {
        uint64_t sum = 0;
        for (int b = 0; b < NBUCKETS; b++)
            sum += counts[c][b];
        if (sum == 0)
            continue;
        char nbuf[16];
        printf("%-14s", call_name(c, nbuf, sizeof nbuf));
        for (int b = 0; b < NBUCKETS; b++)
            printf(b == 0 ? " %8llu" : " %7llu", (unsigned long long)counts[c][b]);
        printf("\n");
    }
    printf("fuzz: %llu violations\n", (unsigned long long)violations);
    uint64_t invalid = 0;
    for (int b = 0; b < NBUCKETS; b++)
        invalid += counts[NSYSCALLS][b];
    result_printf("{\"type\":\"result\",\"bench\":\"fuzz\",\"test\":\"syscalls\","
                  "\"seed\":%llu,\"n\":%llu,\"invalid_numbers\":%llu,\"violations\":%llu}",
                  (unsigned long long)seed, (unsigned long long)total,
                  (unsigned long long)invalid, (unsigned long long)violations);
    printf("fuzz done seed=%llu n=%llu\n", (unsigned long long)seed, (unsigned long long)total);
    return violations ? 1 : 0;
}
