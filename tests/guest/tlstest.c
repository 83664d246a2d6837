/*
 * tlstest MODE — thread-local storage in native programs (libc's tls.c, SYS_THREAD_TLS)
 * for tests/test_tls.py. Prints "name=value" lines.
 *   threads  the main thread and THREADS libc threads each find the template's initial
 *            values (initialised, zeroed, 64-byte aligned), write their own, yield, and
 *            read their own back; %fs:0 is the control block's address; thread_at_exit
 *            runs once per thread (a second registration is refused)
 *   ipc      two threads with TLS (general path: the fastpath leaves them) and one with
 *            TLS against a raw thread without (SYS_THREAD_CREATE) make ROUNDS calls each;
 *            after every reply the caller still reads its own values
 *   clone    task_clone_run: the clone reads the caller's values at clone time, its
 *            writes do not reach the caller
 *   errors   SYS_THREAD_TLS with a kernel or non-canonical address: E_FAULT, and the
 *            thread's TLS is untouched
 */
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <ondol/ipc.h>
#include <ondol/sys.h>
#include <ondol/thread.h>

#define THREADS 4
#define ROUNDS 1000

static __thread int tls_init = 1234;               /* .tdata */
static __thread char tls_zero[100];                 /* .tbss */
static __thread _Alignas(64) uint64_t tls_aligned = 0x5eed;
static __thread int tls_id;

/* 1 when this thread sees the template's initial values and the alignment. */
static int fresh_values(void)
{
    int zero = 1;
    for (size_t i = 0; i < sizeof(tls_zero); i++)
        zero &= tls_zero[i] == 0;
    return tls_init == 1234 && zero && tls_aligned == 0x5eed && ((uintptr_t)&tls_aligned & 63) == 0;
}

static void write_own(int id)
{
    tls_id = id;
    tls_init = id * 10;
    memset(tls_zero, id, sizeof(tls_zero));
    tls_aligned = (uint64_t)id << 32;
}

static int own_values(int id)
{
    int same = 1;
    for (size_t i = 0; i < sizeof(tls_zero); i++)
        same &= tls_zero[i] == (char)id;
    return tls_id == id && tls_init == id * 10 && same && tls_aligned == (uint64_t)id << 32;
}

static int tp_is_self(void)
{
    uintptr_t tp;
    __asm__("movq %%fs:0, %0" : "=r"(tp));
    return tp != 0 && (uintptr_t)&tls_id < tp;      /* the block lies below the pointer */
}

static volatile int exit_calls;
static void count_exit(void *arg) { __atomic_add_fetch(&exit_calls, (int)(long)arg, __ATOMIC_RELAXED); }

static int worker(void *arg)
{
    int id = (int)(long)arg;
    int ok = fresh_values() && tp_is_self();
    write_own(id);
    for (int i = 0; i < 50; i++)
        sys_yield();
    ok &= own_values(id);
    ok &= thread_at_exit(count_exit, (void *)1) == 0;
    ok &= thread_at_exit(count_exit, (void *)100) == E_INVAL;
    return ok;
}

static void threads(void)
{
    struct thread t[THREADS];
    int main_fresh = fresh_values() && tp_is_self();
    write_own(99);
    for (int i = 0; i < THREADS; i++)
        thread_start(&t[i], worker, (void *)(long)(i + 1), PRIO_INHERIT, 0);
    int good = 0;
    for (int i = 0; i < THREADS; i++) {
        int st = 0;
        thread_join(&t[i], &st);
        good += st == 1;
    }
    printf("main_fresh=%d\nthreads_ok=%d\nmain_own=%d\nexit_calls=%d\n", main_fresh, good,
           own_values(99), exit_calls);
}

/* Answers ROUNDS calls with word 0 + 1, then ends. Runs with or without TLS. */
static void serve(void)
{
    struct ipc_msg m = {0};
    long from = ipc_recv(IPC_ANY, &m, IPC_FOREVER);
    for (int i = 0; i < ROUNDS && from > 0; i++) {
        m.w[0]++;
        from = ipc_reply_recv((int)from, IPC_ANY, &m, i + 1 < ROUNDS ? IPC_FOREVER : IPC_POLL);
    }
}

static int tls_server(void *arg)
{
    write_own((int)(long)arg);
    serve();
    return own_values((int)(long)arg);
}

static void raw_server(void *arg)
{
    (void)arg;
    serve();
    sys_thread_exit(0);
}

/* ROUNDS calls to `server`, checking the caller's own values after each reply. */
static int call_rounds(int server, int id)
{
    write_own(id);
    struct ipc_msg m = {0};
    int ok = 1;
    for (int i = 0; i < ROUNDS; i++) {
        uint64_t sent = m.w[0];
        ok &= ipc_call(server, &m, IPC_FOREVER) == server && m.w[0] == sent + 1;
        ok &= own_values(id);
    }
    return ok;
}

static char raw_stack[16384] __attribute__((aligned(16)));

static void ipc(void)
{
    struct thread s;
    thread_start(&s, tls_server, (void *)7, PRIO_INHERIT, 0);
    int with_tls = call_rounds(s.tid, 3);
    int st = 0;
    thread_join(&s, &st);
    long raw = sys_thread_create(raw_server, raw_stack + sizeof(raw_stack) - 8, NULL, PRIO_INHERIT);
    int with_raw = raw > 0 && call_rounds((int)raw, 5);
    if (raw > 0)
        sys_thread_join((int)raw, NULL);
    printf("tls_to_tls=%d\nserver_own=%d\ntls_to_raw=%d\n", with_tls, st, with_raw);
}

static char clone_stack[16384] __attribute__((aligned(16)));
static volatile int clone_saw;

static void clone_child(void *arg)
{
    (void)arg;
    clone_saw = own_values(42);
    write_own(43);
    sys_exit(own_values(43) ? 10 + clone_saw : 1);
}

static void clone_mode(void)
{
    write_own(42);
    long t = task_clone_run("tlsclone", clone_child, clone_stack + sizeof(clone_stack), NULL);
    int status = -1;
    if (t > 0)
        sys_task_wait((int)t, &status);
    printf("clone_status=%d\nparent_own=%d\n", status, own_values(42));
}

static void errors(void)
{
    printf("kernel=%ld\n", sys_thread_tls((void *)0xffffffff80100000ull));
    printf("noncanonical=%ld\n", sys_thread_tls((void *)0x0000800000000000ull));
    printf("still=%d\n", tp_is_self() && fresh_values());
}

int main(int argc, char **argv)
{
    const char *mode = argc > 1 ? argv[1] : "";
    if (strcmp(mode, "threads") == 0)
        threads();
    else if (strcmp(mode, "ipc") == 0)
        ipc();
    else if (strcmp(mode, "clone") == 0)
        clone_mode();
    else if (strcmp(mode, "errors") == 0)
        errors();
    else {
        printf("usage: tlstest threads|ipc|clone|errors\n");
        return 2;
    }
    return 0;
}
