/*
 * The allocation-trace recorder (issue 14, docs/alloc.md): an LD_PRELOAD library that
 * passes every call on to the process's real allocator (dlsym(RTLD_NEXT)) and appends
 * one text line per call to the file named by $ondol_trace ("%p" becomes the pid, so the
 * processes of `gcc` each get their own). Replay it with allocreplay against any allocator.
 * The table of live blocks has 2^$ondol_trace_bits slots (12..28, default 24: 256 MiB of
 * address space, touched sparsely); on a machine with little memory (ondol's UNIX server,
 * docs/alloc.md) 18 keeps it at 4 MiB, room for ~200,000 live blocks.
 *
 * Format, one event a line; ids number the blocks in the order they were returned:
 *   m ID SIZE            malloc             c ID NMEMB SIZE   calloc
 *   a ID ALIGN SIZE      posix_memalign, aligned_alloc, memalign
 *   r OLD ID SIZE        realloc (OLD = 0 for realloc(NULL, SIZE); ID = 0 when it freed)
 *   f ID                 free (of a block this process got from the traced calls)
 * The first line is "# ondol alloc trace v1".
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#define TABLE_BITS_DEFAULT 24
#define BOOT_HEAP 65536

struct entry {
    uintptr_t ptr;   /* 0 empty, 1 deleted */
    uint64_t id;
};

static void *(*real_malloc)(size_t);
static void (*real_free)(void *);
static void *(*real_calloc)(size_t, size_t);
static void *(*real_realloc)(void *, size_t);
static int (*real_memalign)(void **, size_t, size_t);

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static struct entry *table;
static unsigned table_bits = TABLE_BITS_DEFAULT;
static size_t table_size;
static uint64_t next_id = 1;
static int fd = -1;
static char buf[1 << 16];
static size_t used;
static __thread int inside;   /* our own calls (dlsym, the table) are not traced */
static char boot_heap[BOOT_HEAP];
static size_t boot_used;

/* dlsym may allocate before the real functions are known: serve it from a static heap. */
static void *boot_alloc(size_t n)
{
    n = (n + 15) & ~(size_t)15;
    if (boot_used + n > BOOT_HEAP)
        return NULL;
    void *p = boot_heap + boot_used;
    boot_used += n;
    return p;
}

static int from_boot(const void *p)
{
    return (const char *)p >= boot_heap && (const char *)p < boot_heap + BOOT_HEAP;
}

static void flush(void)
{
    if (fd >= 0 && used > 0 && write(fd, buf, used) < 0)
        fd = -1;
    used = 0;
}

static void emit(const char *fmt, ...)
{
    char line[96];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(line, sizeof line, fmt, ap);
    va_end(ap);
    if (used + (size_t)n > sizeof buf)
        flush();
    memcpy(buf + used, line, (size_t)n);
    used += (size_t)n;
}

static void open_trace(void)
{
    const char *name = getenv("ondol_trace");
    if (name == NULL)
        return;
    char path[512];
    size_t k = 0;
    for (const char *s = name; *s != '\0' && k < sizeof path - 24; s++) {
        if (s[0] == '%' && s[1] == 'p') {
            k += (size_t)snprintf(path + k, sizeof path - k, "%d", (int)getpid());
            s++;
        } else {
            path[k++] = *s;
        }
    }
    path[k] = '\0';
    const char *bits = getenv("ondol_trace_bits");
    if (bits != NULL && atoi(bits) >= 12 && atoi(bits) <= 28)
        table_bits = (unsigned)atoi(bits);
    table_size = (size_t)1 << table_bits;
    fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    table = mmap(NULL, table_size * sizeof *table, PROT_READ | PROT_WRITE,
                 MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (table == MAP_FAILED) {
        table = NULL;
        fd = -1;
    }
    emit("# ondol alloc trace v1\n");
}

static void at_exit_flush(void)
{
    pthread_mutex_lock(&lock);
    flush();
    pthread_mutex_unlock(&lock);
}

/* A forked child without exec would write into its parent's file: it stops tracing. */
static void in_child(void)
{
    fd = -1;
    used = 0;
}

__attribute__((constructor)) static void init(void)
{
    inside++;
    real_malloc = dlsym(RTLD_NEXT, "malloc");
    real_free = dlsym(RTLD_NEXT, "free");
    real_calloc = dlsym(RTLD_NEXT, "calloc");
    real_realloc = dlsym(RTLD_NEXT, "realloc");
    real_memalign = dlsym(RTLD_NEXT, "posix_memalign");
    open_trace();
    atexit(at_exit_flush);
    pthread_atfork(NULL, NULL, in_child);
    inside--;
}

static size_t slot(uintptr_t p)
{
    return (size_t)((p >> 4) * 0x9e3779b97f4a7c15ull >> (64 - table_bits));
}

/* Callers hold the lock. */
static uint64_t remember(void *p)
{
    size_t i = slot((uintptr_t)p);
    while (table[i].ptr > 1)
        i = (i + 1) & (table_size - 1);
    table[i].ptr = (uintptr_t)p;
    table[i].id = next_id;
    return next_id++;
}

static uint64_t forget(void *p)
{
    for (size_t i = slot((uintptr_t)p); table[i].ptr != 0; i = (i + 1) & (table_size - 1)) {
        if (table[i].ptr == (uintptr_t)p) {
            table[i].ptr = 1;
            return table[i].id;
        }
    }
    return 0;
}

static int tracing(void)
{
    return fd >= 0 && !inside;
}

void *malloc(size_t n)
{
    if (real_malloc == NULL)
        return boot_alloc(n);
    void *p = real_malloc(n);
    if (p != NULL && tracing()) {
        pthread_mutex_lock(&lock);
        emit("m %llu %zu\n", (unsigned long long)remember(p), n);
        pthread_mutex_unlock(&lock);
    }
    return p;
}

void free(void *p)
{
    if (p == NULL || from_boot(p))
        return;
    if (tracing()) {
        pthread_mutex_lock(&lock);
        uint64_t id = forget(p);
        if (id != 0)
            emit("f %llu\n", (unsigned long long)id);
        pthread_mutex_unlock(&lock);
    }
    real_free(p);
}

void *calloc(size_t nmemb, size_t size)
{
    if (real_calloc == NULL)
        return boot_alloc(nmemb * size);   /* static memory is zero */
    void *p = real_calloc(nmemb, size);
    if (p != NULL && tracing()) {
        pthread_mutex_lock(&lock);
        emit("c %llu %zu %zu\n", (unsigned long long)remember(p), nmemb, size);
        pthread_mutex_unlock(&lock);
    }
    return p;
}

void *realloc(void *old, size_t n)
{
    if (from_boot(old)) {
        void *p = malloc(n);
        if (p != NULL)
            memcpy(p, old, n);   /* boot blocks are small; reading past one stays in boot_heap */
        return p;
    }
    if (!tracing())
        return real_realloc(old, n);
    pthread_mutex_lock(&lock);
    uint64_t old_id = old != NULL ? forget(old) : 0;
    void *p = real_realloc(old, n);
    uint64_t id = p != NULL ? remember(p) : 0;
    if (p == NULL && n != 0 && old != NULL)
        remember(old);   /* failed: the old block lives on (under a new id) */
    emit("r %llu %llu %zu\n", (unsigned long long)old_id, (unsigned long long)id, n);
    pthread_mutex_unlock(&lock);
    return p;
}

static void *traced_aligned(size_t align, size_t n)
{
    void *p = NULL;
    if (real_memalign(&p, align < sizeof(void *) ? sizeof(void *) : align, n) != 0)
        return NULL;
    if (tracing()) {
        pthread_mutex_lock(&lock);
        emit("a %llu %zu %zu\n", (unsigned long long)remember(p), align, n);
        pthread_mutex_unlock(&lock);
    }
    return p;
}

int posix_memalign(void **out, size_t align, size_t n)
{
    void *p = traced_aligned(align, n);
    if (p == NULL)
        return 12;
    *out = p;
    return 0;
}

void *aligned_alloc(size_t align, size_t n)
{
    return traced_aligned(align, n);
}

void *memalign(size_t align, size_t n)
{
    return traced_aligned(align, n);
}
