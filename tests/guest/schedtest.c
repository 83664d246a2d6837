/*
 * schedtest MODE: scheduler checks.
 *
 * preempt  A second thread at the same priority spins incrementing a counter; the
 *          main thread spins too, never yielding or blocking, and watches the counter.
 *          On one CPU the counter can only advance while main is spinning if the timer
 *          preempts main, and main can only see it if the spinner is preempted in turn.
 *          Prints "preempt ok spinner=<n> main=<m>" once it has seen the counter
 *          advance PREEMPT_SWITCHES times; fails after MAX_SPIN iterations (or
 *          PREEMPT_TIMEOUT_S seconds) without that. Exiting kills the spinner.
 *
 * prio     Main raises itself to priority 200, creates threads L (60), M (100) and
 *          H (140) in that order (none can run yet: main outranks them), then blocks
 *          joining them. Each thread appends its letter to a shared array, so strict
 *          priority scheduling gives "H M L". Prints "prio order: ..." and "prio ok".
 *
 * fpu      Two threads at the same priority each fill xmm0..xmm15 with their own
 *          pattern, spin long enough to be preempted several times (without touching
 *          the vector registers), then store and check them. Preemption switches to the
 *          other thread, which loads different values: unless the kernel saves and
 *          restores the SSE state per thread, a thread finds the other's pattern.
 *          Prints "fpu ok rounds=<n> switches=<n>" or "fpu FAIL ...".
 *
 * fpuipc   A client (main) and a server thread ping-pong with call / reply_recv, each
 *          holding its own pattern (changed every round) in xmm0..xmm15 across every
 *          IPC: the kernel switches threads on each IPC without the scheduler (fastpath
 *          or general path), and with lazy x87/SSE switching the state moves only when a
 *          thread touches the registers. Every 3rd round the server leaves them alone
 *          and every 4th the client does, so the owner changes in all orders. Prints
 *          "fpuipc ok rounds=<n>" or "fpuipc FAIL ...".
 * hog      A hostile program: tries to raise itself to 255 (printed as "hog raise255=R";
 *          refused with E_PERM above the task's ceiling), then climbs as high as it is
 *          allowed ("hog ceiling=P", also checking a thread may not be created above it)
 *          and spins forever there. The shell must still answer and Ctrl-C must end it.
 *
 * kill     SYS_TASK_KILL rights and effect: killing itself (E_INVAL), the shell that
 *          started it (E_PERM), no task (E_SRCH); its child `schedtest nest`, which has
 *          started a grandchild `schedtest sleep`: both end, the child with KILLED_STATUS,
 *          and a second kill gives E_SRCH. Prints "FAIL ..." lines and "kill ok".
 */
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <ondol/ipc.h>
#include <ondol/sys.h>
#include <ondol/thread.h>

#define PREEMPT_SWITCHES 5
#define MAX_SPIN (1ull << 34)
#define PREEMPT_TIMEOUT_S 60

static volatile uint64_t spin_count;

static int spinner(void *arg)
{
    (void)arg;
    for (;;)
        spin_count++;
    return 0;
}

static uint64_t now_ticks(uint64_t *hz)
{
    struct time_info ti;
    if (sys_time(&ti) < 0)
        return 0;
    if (hz)
        *hz = ti.hz ? ti.hz : 100;
    return ti.ticks;
}

static int preempt(void)
{
    struct thread t;
    int r = thread_start(&t, spinner, NULL, PRIO_INHERIT, 16 * 1024);
    if (r < 0) {
        printf("preempt FAIL: thread_start: %d\n", r);
        return 1;
    }
    uint64_t hz = 100, start = now_ticks(&hz);
    uint64_t seen = spin_count, switches = 0, i;
    for (i = 0; i < MAX_SPIN; i++) {
        uint64_t c = spin_count;
        if (c != seen) {
            seen = c;
            if (++switches >= PREEMPT_SWITCHES)
                break;
        }
        /* Rare bail-out check (a system call, so only every 2^24 iterations). */
        if ((i & ((1u << 24) - 1)) == 0 && i != 0 && now_ticks(NULL) - start > PREEMPT_TIMEOUT_S * hz)
            break;
    }
    if (switches < PREEMPT_SWITCHES) {
        printf("preempt FAIL: spinner=%llu main=%llu switches=%llu\n",
               (unsigned long long)spin_count, (unsigned long long)i,
               (unsigned long long)switches);
        return 1;
    }
    printf("preempt ok spinner=%llu main=%llu\n", (unsigned long long)spin_count,
           (unsigned long long)i);
    return 0;
}

static char order[3];
static volatile int norder;

static int record(void *arg)
{
    int slot = __atomic_fetch_add(&norder, 1, __ATOMIC_SEQ_CST);
    if (slot < 3)
        order[slot] = *(const char *)arg;
    return 0;
}

static int prio(void)
{
    static const char names[3] = { 'L', 'M', 'H' };
    static const int prios[3] = { 60, 100, 140 };
    struct thread t[3];
    long r = sys_set_priority(0, 200);
    if (r < 0) {
        printf("prio FAIL: set_priority: %ld\n", r);
        return 1;
    }
    for (int i = 0; i < 3; i++) {
        int tid = thread_start(&t[i], record, (void *)&names[i], prios[i], 16 * 1024);
        if (tid < 0) {
            printf("prio FAIL: thread_start: %d\n", tid);
            return 1;
        }
    }
    int before = norder;    /* nobody may have run yet */
    for (int i = 0; i < 3; i++) {
        int st;
        int jr = thread_join(&t[i], &st);
        if (jr < 0) {
            printf("prio FAIL: join: %d\n", jr);
            return 1;
        }
    }
    printf("prio order: %c %c %c\n", order[0], order[1], order[2]);
    if (before != 0 || norder != 3 || memcmp(order, "HML", 3) != 0) {
        printf("prio FAIL (ran before main blocked: %d)\n", before);
        return 1;
    }
    printf("prio ok\n");
    return 0;
}

#define FPU_ROUNDS 4
#define FPU_SPIN (8u << 20)

struct fpu_arg {
    uint64_t pattern;
    volatile uint64_t counter;        /* incremented by the spin loop */
    volatile uint64_t *other;         /* the other thread's counter */
    int bad_regs;
    int switched_rounds;
};

/* Fills all 16 xmm registers with `pattern` (register i gets pattern + i in both halves),
 * spins `spin` times incrementing *counter, then stores the registers to `out`. */
static void xmm_round(uint64_t pattern, volatile uint64_t *counter, uint64_t spin,
                      uint64_t out[16][2])
{
#define FILL(n) "movq %%rax, %%xmm" #n "\n\tpunpcklqdq %%xmm" #n ", %%xmm" #n "\n\tincq %%rax\n\t"
#define STORE(n) "movdqu %%xmm" #n ", " #n "*16(%[out])\n\t"
    __asm__ volatile(
        "movq %[pat], %%rax\n\t"
        FILL(0) FILL(1) FILL(2) FILL(3) FILL(4) FILL(5) FILL(6) FILL(7)
        FILL(8) FILL(9) FILL(10) FILL(11) FILL(12) FILL(13) FILL(14) FILL(15)
        "1:\n\t"
        "incq (%[cnt])\n\t"
        "decq %[spin]\n\t"
        "jnz 1b\n\t"
        STORE(0) STORE(1) STORE(2) STORE(3) STORE(4) STORE(5) STORE(6) STORE(7)
        STORE(8) STORE(9) STORE(10) STORE(11) STORE(12) STORE(13) STORE(14) STORE(15)
        : [spin] "+r"(spin)
        : [pat] "r"(pattern), [cnt] "r"(counter), [out] "r"(out)
        : "rax", "memory", "xmm0", "xmm1", "xmm2", "xmm3", "xmm4", "xmm5", "xmm6", "xmm7",
          "xmm8", "xmm9", "xmm10", "xmm11", "xmm12", "xmm13", "xmm14", "xmm15");
#undef FILL
#undef STORE
}

static int fpu_thread(void *p)
{
    struct fpu_arg *a = p;
    for (int round = 0; round < FPU_ROUNDS; round++) {
        uint64_t regs[16][2];
        uint64_t other_before = *a->other;
        xmm_round(a->pattern, &a->counter, FPU_SPIN, regs);
        if (*a->other != other_before)
            a->switched_rounds++;          /* the other thread ran meanwhile */
        for (int i = 0; i < 16; i++) {
            if (regs[i][0] != a->pattern + (uint64_t)i || regs[i][1] != a->pattern + (uint64_t)i)
                a->bad_regs++;
        }
    }
    return 0;
}

static int fpu(void)
{
    static struct fpu_arg args[2];
    args[0].pattern = 0x1111111100000000ull;
    args[1].pattern = 0x2222222200000000ull;
    args[0].other = &args[1].counter;
    args[1].other = &args[0].counter;
    struct thread t[2];
    for (int i = 0; i < 2; i++) {
        int r = thread_start(&t[i], fpu_thread, &args[i], PRIO_INHERIT, 16 * 1024);
        if (r < 0) {
            printf("fpu FAIL: thread_start: %d\n", r);
            return 1;
        }
    }
    for (int i = 0; i < 2; i++)
        thread_join(&t[i], NULL);
    int bad = args[0].bad_regs + args[1].bad_regs;
    int switched = args[0].switched_rounds + args[1].switched_rounds;
    if (bad != 0) {
        printf("fpu FAIL: %d xmm registers corrupted across %d preempted rounds\n", bad, switched);
        return 1;
    }
    if (switched == 0) {
        printf("fpu FAIL: the threads never interleaved (no preemption?)\n");
        return 1;
    }
    printf("fpu ok rounds=%d switches=%d\n", 2 * FPU_ROUNDS, switched);
    return 0;
}

/* ---- fpuipc -------------------------------------------------------------------------- */
#define FPUIPC_ROUNDS 2000

/* One IPC (call or reply_recv, words unused) with xmm0..xmm15 loaded from xmm[] before it
 * and stored back to xmm[] after it, in one asm block so nothing else touches them. The
 * buffer address travels as message word 0 (r8) and on the stack across the syscall. */
static long xmm_ipc(long nr, long a, long b, uint64_t xmm[16][2])
{
#define LOAD(n) "movdqu " #n "*16(%%r8), %%xmm" #n "\n\t"
#define STORE(n) "movdqu %%xmm" #n ", " #n "*16(%%rcx)\n\t"
    register uint64_t r8 __asm__("r8") = (uint64_t)xmm;
    uint64_t rdx = IPC_FOREVER;
    long ret = nr;
    __asm__ volatile(
        LOAD(0) LOAD(1) LOAD(2) LOAD(3) LOAD(4) LOAD(5) LOAD(6) LOAD(7)
        LOAD(8) LOAD(9) LOAD(10) LOAD(11) LOAD(12) LOAD(13) LOAD(14) LOAD(15)
        "pushq %%r8\n\t"
        "syscall\n\t"
        "popq %%rcx\n\t"
        STORE(0) STORE(1) STORE(2) STORE(3) STORE(4) STORE(5) STORE(6) STORE(7)
        STORE(8) STORE(9) STORE(10) STORE(11) STORE(12) STORE(13) STORE(14) STORE(15)
        : "+a"(ret), "+D"(a), "+S"(b), "+d"(rdx), "+r"(r8)
        :
        : "rcx", "r9", "r10", "r11", "r12", "r13", "r14", "r15", "rbx", "memory", "xmm0",
          "xmm1", "xmm2", "xmm3", "xmm4", "xmm5", "xmm6", "xmm7", "xmm8", "xmm9", "xmm10",
          "xmm11", "xmm12", "xmm13", "xmm14", "xmm15");
#undef LOAD
#undef STORE
    return ret;
}

static void xmm_fill(uint64_t xmm[16][2], uint64_t pattern)
{
    for (int i = 0; i < 16; i++)
        xmm[i][0] = xmm[i][1] = pattern + (uint64_t)i;
}

/* Wrong registers in xmm[] after an IPC made with pattern `pattern`. */
static int xmm_bad(uint64_t xmm[16][2], uint64_t pattern)
{
    int bad = 0;
    for (int i = 0; i < 16; i++)
        bad += xmm[i][0] != pattern + (uint64_t)i || xmm[i][1] != pattern + (uint64_t)i;
    return bad;
}

static int fpuipc_bad[2];              /* wrong registers seen by client, server */

static int fpuipc_server(void *arg)
{
    (void)arg;
    struct ipc_msg m = {{0}};
    long from = ipc_recv(IPC_ANY, &m, IPC_FOREVER);
    for (uint64_t round = 1; from > 0 && round <= FPUIPC_ROUNDS; round++) {
        if (round % 3 == 0) {
            from = ipc_reply_recv((int)from, IPC_ANY, &m, IPC_FOREVER);
            continue;
        }
        uint64_t xmm[16][2], pattern = 0x5e55000000000000ull + (round << 8);
        xmm_fill(xmm, pattern);
        from = xmm_ipc(SYS_IPC_REPLY_RECV, from, IPC_ANY, xmm);
        fpuipc_bad[1] += xmm_bad(xmm, pattern);
    }
    return from > 0 && ipc_send((int)from, &m, IPC_FOREVER) == 0 ? 0 : 1;   /* the last reply */
}

static int fpuipc(void)
{
    struct thread t;
    int server = thread_start(&t, fpuipc_server, NULL, PRIO_INHERIT, 16 * 1024);
    if (server < 0) {
        printf("fpuipc FAIL: thread_start: %d\n", server);
        return 1;
    }
    struct ipc_msg m = {{0}};
    int wrong_result = 0;
    for (uint64_t round = 0; round <= FPUIPC_ROUNDS; round++) {
        long r;
        if (round % 4 == 0) {
            r = ipc_call(server, &m, IPC_FOREVER);
        } else {
            uint64_t xmm[16][2], pattern = 0xc11e000000000000ull + (round << 8);
            xmm_fill(xmm, pattern);
            r = xmm_ipc(SYS_IPC_CALL, server, 0, xmm);
            fpuipc_bad[0] += xmm_bad(xmm, pattern);
        }
        wrong_result += r != server;
    }
    int status = thread_join(&t, NULL);
    if (fpuipc_bad[0] || fpuipc_bad[1] || wrong_result || status) {
        printf("fpuipc FAIL: wrong xmm registers client %d server %d, wrong results %d, "
               "server status %d\n", fpuipc_bad[0], fpuipc_bad[1], wrong_result, status);
        return 1;
    }
    printf("fpuipc ok rounds=%d\n", FPUIPC_ROUNDS);
    return 0;
}

static int hog_thread(void *arg)
{
    (void)arg;
    return 0;
}

static int hog(void)
{
    printf("hog raise255=%ld\n", sys_set_priority(0, PRIO_MAX));
    int p = PRIO_MAX;
    while (p > PRIO_DEFAULT && sys_set_priority(0, p) < 0)
        p--;
    struct thread t;
    printf("hog ceiling=%d thread_above=%d\n", p,
           p < PRIO_MAX ? thread_start(&t, hog_thread, NULL, p + 1, 0) : 0);
    fflush(stdout);
    for (volatile uint64_t spin = 0;; spin++)
        ;
    return 0;                        /* not reached */
}

static int kill_fails;
#define KCHECK(cond, ...)                                                                \
    do {                                                                                 \
        if (!(cond)) {                                                                   \
            kill_fails++;                                                                \
            printf("FAIL kill: " __VA_ARGS__);                                           \
            printf("\n");                                                                \
        }                                                                                \
    } while (0)

/* The task id of the first thread named `name` (0 if none). */
static int task_named(const char *name)
{
    static struct ps_entry e[256];
    long n = sys_ps(e, 256);
    for (long i = 0; i < n; i++)
        if (!strncmp(e[i].name, name, NAME_LEN) && e[i].state != TS_ZOMBIE)
            return e[i].task;
    return 0;
}

static long spawn_mode(const char *name, const char *mode)
{
    const char *argv[] = {name, mode};
    return sys_spawn("schedtest", argv, 2, 0);
}

/* `schedtest nest`: starts a grandchild that sleeps, then sleeps itself. */
static int nest(void)
{
    if (spawn_mode("grandchild", "sleep") < 0)
        return 1;
    sys_sleep(SLEEP_FOREVER);
    return 0;
}

static int kill_checks(void)
{
    struct self_info me;
    sys_self(&me);
    long r = sys_task_kill(me.task);
    KCHECK(r == E_INVAL, "self: %ld", r);
    int sh = task_named("sh");
    r = sys_task_kill(sh);
    KCHECK(sh > 0 && r == E_PERM, "the shell (task %d): %ld", sh, r);
    r = sys_task_kill(0x7ffffff0);
    KCHECK(r == E_SRCH, "no such task: %ld", r);
    long child = spawn_mode("child", "nest");
    KCHECK(child > 0, "spawn: %ld", child);
    for (int i = 0; i < 100 && !task_named("grandchild"); i++)
        sys_sleep(1);
    int grand = task_named("grandchild");
    KCHECK(grand > 0, "the grandchild never started");
    r = sys_task_kill((int)child);
    KCHECK(r == 0, "child: %ld", r);
    int status = 0;
    r = sys_task_wait((int)child, &status);
    KCHECK(r == child && status == KILLED_STATUS, "wait: %ld status %d", r, status);
    for (int i = 0; i < 100 && task_named("grandchild"); i++)
        sys_sleep(1);
    KCHECK(!task_named("grandchild"), "the grandchild survived");
    r = sys_task_kill((int)child);
    KCHECK(r == E_SRCH, "reaped child: %ld", r);
    printf("kill %s\n", kill_fails ? "failed" : "ok");
    return kill_fails != 0;
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        printf("usage: schedtest preempt|prio|fpu|fpuipc|hog|kill\n");
        return 2;
    }
    if (strcmp(argv[1], "preempt") == 0)
        return preempt();
    if (strcmp(argv[1], "prio") == 0)
        return prio();
    if (strcmp(argv[1], "fpu") == 0)
        return fpu();
    if (strcmp(argv[1], "fpuipc") == 0)
        return fpuipc();
    if (strcmp(argv[1], "hog") == 0)
        return hog();
    if (strcmp(argv[1], "kill") == 0)
        return kill_checks();
    if (strcmp(argv[1], "nest") == 0)
        return nest();
    if (strcmp(argv[1], "sleep") == 0)
        return (int)sys_sleep(SLEEP_FOREVER);
    printf("schedtest: unknown mode %s\n", argv[1]);
    return 2;
}
