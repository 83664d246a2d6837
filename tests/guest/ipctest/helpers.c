/* ipctest helpers shared by every area: failure reports, thread and message helpers. */
#include "ipctest.h"

const char *mode = "?";
int fails;

void check_(int ok, const char *file, int line, const char *fmt, ...)
{
    if (ok)
        return;
    __atomic_add_fetch(&fails, 1, __ATOMIC_SEQ_CST);
    char buf[256];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof(buf), fmt, ap);
    va_end(ap);
    printf("FAIL %s (%s:%d): %s\n", mode, file, line, buf);
}

long expect_(long got, long want, const char *file, int line, const char *fmt, ...)
{
    if (got == want)
        return got;
    char buf[200];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof(buf), fmt, ap);
    va_end(ap);
    check_(0, file, line, "%s: got %ld, expected %ld", buf, got, want);
    return got;
}

uint64_t now(void)
{
    struct time_info ti;
    sys_time(&ti);
    return ti.ticks;
}

static struct ps_entry ps_buf[1024];

/* State of thread `tid` (enum thread_state_abi), -1 if it does not exist. */
int state_of(int tid)
{
    long n = sys_ps(ps_buf, 1024);
    for (long i = 0; i < n; i++)
        if (ps_buf[i].tid == tid)
            return ps_buf[i].state;
    return -1;
}

/* Sleep a tick at a time (so lower priorities run too) until `tid` is in `state`. */
int wait_state(int tid, int state, int max_ticks)
{
    for (int i = 0; i <= max_ticks; i++) {
        if (state_of(tid) == state)
            return 1;
        sys_sleep(1);
    }
    return 0;
}

/* The (first live) thread of task `task`, or 0. */
int tid_of_task(int task, int max_ticks)
{
    for (int i = 0; i <= max_ticks; i++) {
        long n = sys_ps(ps_buf, 1024);
        for (long k = 0; k < n; k++)
            if (ps_buf[k].task == task && ps_buf[k].state != TS_ZOMBIE)
                return ps_buf[k].tid;
        sys_sleep(1);
    }
    return 0;
}

int start(struct thread *t, thread_fn fn, void *arg, int prio)
{
    int tid = thread_start(t, fn, arg, prio, STACK);
    CHECK(tid > 0, "thread_start: %d", tid);
    return tid;
}

int join(struct thread *t)
{
    int st = -1;
    int r = thread_join(t, &st);
    CHECK(r == 0, "thread_join(%d): %d", t->tid, r);
    return st;
}

/* Messages whose eight words are all derived from word 0 (the key), so a receiver can
 * check that every register arrived intact. */
static uint64_t word(uint64_t key, int k)
{
    return (key * 0x9e3779b97f4a7c15ull) ^ ((uint64_t)k << 56) ^ ((uint64_t)k * 0x1234567ull);
}

void msg_make(struct ipc_msg *m, uint64_t key)
{
    m->w[0] = key;
    for (int k = 1; k < IPC_MRS; k++)
        m->w[k] = word(key, k);
}

int msg_ok(const struct ipc_msg *m)
{
    for (int k = 1; k < IPC_MRS; k++)
        if (m->w[k] != word(m->w[0], k))
            return 0;
    return 1;
}

void *map_pages(int n)
{
    long a = sys_vm_map((size_t)n * PAGE, PROT_READ | PROT_WRITE);
    CHECK(a > 0, "vm_map(%d pages): %ld", n, a);
    return a > 0 ? (void *)(uintptr_t)a : NULL;
}

char *tidstr(char *buf, long v)
{
    snprintf(buf, 16, "%ld", v);
    return buf;
}

/* Optionally sleep, then send `rounds` messages keyed (idx << 32 | j) to dest. */
int sender_fn(void *p)
{
    struct snd *a = p;
    if (a->delay)
        sys_sleep((uint64_t)a->delay);
    for (int j = 0; j < a->rounds; j++) {
        struct ipc_msg m = {{0}};
        msg_make(&m, ((uint64_t)a->idx << 32) | (uint64_t)j);
        long r = ipc_send(a->dest, &m, IPC_FOREVER);
        if (r != 0) {
            a->res = r;
            return 1;
        }
    }
    a->res = 0;
    return 0;
}

int sleeper_fn(void *p)
{
    sys_sleep((uint64_t)(uintptr_t)p);
    return 0;
}
