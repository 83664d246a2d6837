/*
 * Hosted unit tests of ondol's allocator (lib/malloc/), run by tests/test_malloc_host.py.
 * Built with rename.h, so the allocator is linked as om_* beside the host's malloc, under
 * ASan/UBSan when the compiler has them. Options are read once per process, so the tests
 * of options and misuse reports run this program again: `test_malloc misuse KIND` and
 * `test_malloc lockinfo` in a child with the environment set.
 * Prints one line per group, "<group> <n> checks <f> failed", and exits non-zero on failure.
 */
#include <errno.h>
#include <malloc.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "ondol_malloc.h"

static long checks, fails, total_fails;
/* Impossible sizes, hidden from the compiler so that it does not reject the calls. */
static volatile size_t huge = SIZE_MAX - 100, half = SIZE_MAX / 2;
static const char *group;
static char self_path[4096];

#define CHECK(cond, ...)                                                  \
    do {                                                                  \
        checks++;                                                         \
        if (!(cond)) {                                                    \
            fails++;                                                      \
            fprintf(stderr, "FAIL [%s] line %d: ", group, __LINE__);      \
            fprintf(stderr, __VA_ARGS__);                                 \
            fputc('\n', stderr);                                          \
        }                                                                 \
    } while (0)

static void begin(const char *name)
{
    group = name;
    checks = fails = 0;
}

static void end(void)
{
    printf("%-10s %ld checks %ld failed\n", group, checks, fails);
    total_fails += fails;
}

static size_t mapped(void)
{
    struct ondol_malloc_info info;
    ondol_malloc_info(&info);
    return info.mapped_bytes;
}

static void test_sizes(void)
{
    begin("sizes");
    for (size_t n = 0; n < 70000; n += (n < 1100 ? 1 : 97)) {
        unsigned char *p = malloc(n);
        size_t u = malloc_usable_size(p);
        CHECK(p != NULL && ((uintptr_t)p & 15) == 0, "malloc(%zu) = %p", n, (void *)p);
        /* Classes and large bins are a quarter-power apart; large blocks end on a page. */
        CHECK(u >= n && (n < 128 || u <= n + n / 4 + (n > 32768 ? 4096 : 16)),
              "usable %zu for %zu", u, n);
        memset(p, 0xa5, u);
        free(p);
    }
    void *p = malloc(0), *q = malloc(0);
    CHECK(p != NULL && q != NULL && p != q, "malloc(0) gives distinct pointers");
    free(p);
    free(q);
    free(NULL);
    CHECK(malloc_usable_size(NULL) == 0, "usable size of NULL");
    errno = 0;
    CHECK(malloc(huge) == NULL && errno == ENOMEM, "huge malloc fails with ENOMEM");
    end();
}

static void test_calloc_realloc(void)
{
    begin("calloc");
    for (size_t n = 1; n < 200000; n = n * 3 + 1) {
        unsigned char *dirty = malloc(n);
        memset(dirty, 0xff, n);
        free(dirty);
        unsigned char *p = calloc(n, 1);
        size_t nonzero = 0;
        for (size_t i = 0; i < n; i++)
            nonzero += p[i] != 0;
        CHECK(nonzero == 0, "calloc(%zu) has %zu non-zero bytes", n, nonzero);
        free(p);
    }
    errno = 0;
    CHECK(calloc(half, 3) == NULL && errno == ENOMEM, "calloc overflow");
    end();

    begin("realloc");
    unsigned char *p = realloc(NULL, 10);
    for (size_t i = 0; i < 10; i++)
        p[i] = (unsigned char)i;
    size_t n = 10;
    for (size_t want = 11; want < 3000000; want = want * 2 + 3) {
        p = realloc(p, want);
        int same = 1;
        for (size_t i = 0; i < n; i++)
            same &= p[i] == (unsigned char)(i * 7 + i / 256);
        CHECK(p != NULL && malloc_usable_size(p) >= want, "realloc to %zu", want);
        for (size_t i = 0; i < want; i++)
            p[i] = (unsigned char)(i * 7 + i / 256);
        CHECK(n == 10 || same, "contents kept growing to %zu", want);
        n = want;
    }
    for (size_t want = n / 3; want > 4; want /= 3) {
        p = realloc(p, want);
        int same = 1;
        for (size_t i = 0; i < want; i++)
            same &= p[i] == (unsigned char)(i * 7 + i / 256);
        CHECK(same, "contents kept shrinking to %zu", want);
    }
    CHECK(realloc(p, 0) == NULL, "realloc(p, 0) frees");
    CHECK(reallocarray(NULL, half, 3) == NULL, "reallocarray overflow");
    end();
}

static int compare_addresses(const void *a, const void *b)
{
    uintptr_t x = *(const uintptr_t *)a, y = *(const uintptr_t *)b;
    return x < y ? -1 : x > y;
}

static void test_aligned(void)
{
    begin("aligned");
    for (size_t align = 8; align <= ((size_t)2 << 20); align *= 2) {
        for (size_t n = 1; n < 600000; n = n * 5 + 3) {
            void *p = NULL;
            int r = posix_memalign(&p, align, n);
            CHECK(r == 0 && ((uintptr_t)p & (align - 1)) == 0, "posix_memalign(%zu, %zu)", align, n);
            CHECK(malloc_usable_size(p) >= n, "usable size of aligned %zu/%zu", align, n);
            memset(p, 1, n);
            free(p);
            void *q = aligned_alloc(align, n);
            CHECK(q != NULL && ((uintptr_t)q & (align - 1)) == 0, "aligned_alloc(%zu, %zu)", align, n);
            free(q);
        }
    }
    /* Zero bytes at a large alignment: the pointer must stay inside its own block (it
     * once landed on the next block, which free() then gave away; found by the stress). */
    enum { PAIRS = 500 };
    static uintptr_t seen[2 * PAIRS];
    for (int i = 0; i < PAIRS; i++) {
        void *a;
        posix_memalign(&a, 32, 0);
        seen[2 * i] = (uintptr_t)a;
        seen[2 * i + 1] = (uintptr_t)malloc(16);
    }
    qsort(seen, 2 * PAIRS, sizeof seen[0], compare_addresses);
    int distinct = 1;
    for (int i = 1; i < 2 * PAIRS; i++)
        distinct &= seen[i] != seen[i - 1];
    CHECK(distinct, "aligned empty blocks and 16-byte blocks are all distinct");
    void *p;
    CHECK(posix_memalign(&p, 24, 10) == EINVAL, "posix_memalign rejects 24");
    CHECK(posix_memalign(&p, 4, 10) == EINVAL, "posix_memalign rejects 4 (< sizeof(void *))");
    CHECK(aligned_alloc(48, 10) == NULL, "aligned_alloc rejects 48");
    void *v = valloc(100), *pv = pvalloc(5000);
    CHECK(((uintptr_t)v & 4095) == 0 && ((uintptr_t)pv & 4095) == 0 &&
          malloc_usable_size(pv) >= 8192, "valloc/pvalloc");
    free(v);
    free(pv);
    end();
}

/* Memory goes back: small spans to the purged pool (at most 64 kept mapped), large
 * blocks beyond the small cache straight to munmap. */
static void test_returned(void)
{
    begin("returned");
    size_t before = mapped();
    enum { N = 200000 };
    void **ptrs = malloc(N * sizeof *ptrs);
    for (int i = 0; i < N; i++)
        ptrs[i] = malloc(16 + (size_t)(i % 40) * 8);
    size_t peak = mapped();
    for (int i = 0; i < N; i++)
        free(ptrs[i]);
    free(ptrs);
    size_t after = mapped();
    struct ondol_malloc_info info;
    ondol_malloc_info(&info);
    CHECK(peak > before + 20 * info.span_size, "the small blocks took spans (%zu -> %zu)", before, peak);
    /* At most the purged pool (64 spans), a heap's cached span, and the thread's large
     * bins (16 MiB; the pointer array went there) stay mapped. */
    CHECK(after <= before + 66 * info.span_size + ((size_t)16 << 20),
          "spans given back: %zu -> %zu -> %zu", before, peak, after);
    void *big = malloc((size_t)64 << 20);
    CHECK(mapped() >= after + ((size_t)64 << 20), "a large block is mapped on its own");
    free(big);
    CHECK(mapped() <= after + info.span_size, "and unmapped when freed (%zu)", mapped());
    end();
}

struct handoff {
    void **ptrs;
    int n;
};

static void *produce(void *arg)
{
    struct handoff *h = arg;
    for (int i = 0; i < h->n; i++) {
        h->ptrs[i] = malloc(32 + (size_t)(i % 64) * 16);
        memset(h->ptrs[i], i, 32);
    }
    return NULL;
}

/* Blocks allocated by short-lived threads and freed by the main thread (remote frees into
 * spans whose owner has exited): memory stays bounded over many rounds. */
static void test_threads(void)
{
    begin("threads");
    enum { ROUNDS = 300, N = 3000 };
    void **ptrs = malloc(N * sizeof *ptrs);
    size_t after_first = 0;
    for (int round = 0; round < ROUNDS; round++) {
        struct handoff h = {ptrs, N};
        pthread_t t;
        pthread_create(&t, NULL, produce, &h);
        pthread_join(t, NULL);
        int intact = 1;
        for (int i = 0; i < N; i++) {
            intact &= ((unsigned char *)ptrs[i])[0] == (unsigned char)i;
            free(ptrs[i]);
        }
        CHECK(intact, "round %d: blocks intact", round);
        if (round == 10)
            after_first = mapped();
    }
    CHECK(mapped() <= after_first + 8 * 262144, "bounded over rounds: %zu -> %zu", after_first, mapped());
    free(ptrs);
    end();
}

/* Children: a misuse the check must report, or the lock kind in force. */
static int child(const char *what)
{
    static char on_stack[64];
    if (strcmp(what, "lockinfo") == 0) {
        struct ondol_malloc_info info;
        ondol_malloc_info(&info);
        printf("lock=%s check=%d\n", info.lock, info.check);
        return 0;
    }
    char *small = malloc(40), *large = malloc(1 << 20);
    if (strcmp(what, "double-small") == 0) {
        free(small);
        free(small);
    } else if (strcmp(what, "double-large") == 0) {
        free(large);
        free(large);
    } else if (strcmp(what, "interior") == 0) {
        free(small + 16);
    } else if (strcmp(what, "foreign") == 0) {
        free(on_stack + 16);
    }
    return 0;
}

/* Runs this program as `argv1` with `env` (NAME=VALUE, or NULL) and returns its exit
 * status (128 + signal when killed) and the first line of its stderr/stdout in out. */
static int run_child(const char *argv1, const char *env, char *out, size_t outlen)
{
    int fds[2];
    if (pipe(fds) != 0)
        return -1;
    pid_t pid = fork();
    if (pid == 0) {
        dup2(fds[1], 1);
        dup2(fds[1], 2);
        close(fds[0]);
        if (env != NULL)
            putenv((char *)env);
        execl(self_path, self_path, argv1, (char *)NULL);
        _exit(126);
    }
    close(fds[1]);
    size_t got = 0;
    ssize_t r;
    while (got < outlen - 1 && (r = read(fds[0], out + got, outlen - 1 - got)) > 0)
        got += (size_t)r;
    out[got] = '\0';
    close(fds[0]);
    int status;
    waitpid(pid, &status, 0);
    return WIFSIGNALED(status) ? 128 + WTERMSIG(status) : WEXITSTATUS(status);
}

static void expect_report(const char *kind, const char *env, const char *text)
{
    char out[4096];
    int status = run_child(kind, env, out, sizeof out);
    CHECK(status == 128 + SIGABRT && strstr(out, text) != NULL,
          "%s (%s): status %d, output: %s", kind, env ? env : "no option", status, out);
}

static void test_misuse(void)
{
    begin("misuse");
    expect_report("double-small", "malloc_check=on", "ondol malloc: double free of 0x");
    expect_report("double-large", "malloc_check=on", "ondol malloc: double free of 0x");
    expect_report("double-large", NULL, "ondol malloc: double free of 0x");
    expect_report("interior", "malloc_check=on", "not the start of a block");
    expect_report("foreign", "malloc_check=on", "malloc never returned");
    char out[256];
    CHECK(run_child("double-small", NULL, out, sizeof out) == 0,
          "without malloc_check a small double free goes unnoticed (documented): %s", out);
    end();
}

static void test_lock_option(void)
{
    begin("lockopt");
    static const char *const kinds[] = {"sleep-retry", "blocking", "lock-free"};
    char env[64], out[256], want[64];
    for (int i = 0; i < 3; i++) {
        snprintf(env, sizeof env, "malloc_lock=%s", kinds[i]);
        snprintf(want, sizeof want, "lock=%s check=0", kinds[i]);
        int status = run_child("lockinfo", env, out, sizeof out);
        CHECK(status == 0 && strstr(out, want) != NULL, "%s: %s", env, out);
    }
    int status = run_child("lockinfo", NULL, out, sizeof out);
    CHECK(status == 0 && strstr(out, "lock=lock-free") != NULL, "default is lock-free: %s", out);
    status = run_child("lockinfo", "malloc_lock=spin", out, sizeof out);
    CHECK(status == 128 + SIGABRT && strstr(out, "malloc_lock must be") != NULL,
          "a bad malloc_lock is reported: %d %s", status, out);
    end();
}

int main(int argc, char **argv)
{
    if (argc == 2)
        return child(argv[1]);
    ssize_t len = readlink("/proc/self/exe", self_path, sizeof self_path - 1);
    if (len <= 0)
        return 2;
    self_path[len] = '\0';
    test_sizes();
    test_calloc_realloc();
    test_aligned();
    test_returned();
    test_threads();
    test_misuse();
    test_lock_option();
    printf("total %s\n", total_fails == 0 ? "ok" : "FAILED");
    return total_fails == 0 ? 0 : 1;
}
