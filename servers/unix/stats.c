/*
 * Per-call statistics (issue 10, item 7; docs/unix.md "Statistics"): the server counts its
 * calls by number (dispatch.c) and by process (entry.c counts each forwarded call once,
 * re-runs of a waiting call excluded). Before the machine powers off, one record goes to
 * the result stream (COM2):
 *   {"type":"unix_calls","form":"mk","calls":N,"unknown":U,"by_number":{"0":n,...},
 *    "by_pid":{"1":n,...},"reaped":R,"unlocked":L,"thread_switches":T,"as_switches":A}
 * Every count is of first runs only (dispatch.c: a waiting call's re-run is the same
 * call). calls and by_number cover numbers 0..UNIX_NR_MAX-1; unknown counts every unknown
 * number; by_pid the processes still in the table; reaped the calls of processes already
 * reaped, unlocked the calls that ran without the server lock (syscalls.def LX_UNLOCKED:
 * by number only), so calls + the unknown ones out of range = the sum of by_pid + reaped
 * + unlocked; T and
 * A the kernel's thread and address-space switches since boot (runtime.h).
 */
#include "runtime.h"

static uint64_t reaped_calls;

void stats_reaped(const struct proc *p) { reaped_calls += p->calls; }

struct out {
    char buf[16384];
    size_t n;
};

static void put(struct out *o, const char *s)
{
    while (*s && o->n < sizeof(o->buf) - 1)
        o->buf[o->n++] = *s++;
}

static void put_u(struct out *o, uint64_t v)
{
    char d[24];
    int k = 0;
    do
        d[k++] = (char)('0' + v % 10);
    while ((v /= 10) && k < 23);
    while (k && o->n < sizeof(o->buf) - 1)
        o->buf[o->n++] = d[--k];
}

/* "key":value, with a comma before every pair but the first of an object */
static void pair(struct out *o, bool *first, uint64_t key, uint64_t value)
{
    put(o, *first ? "\"" : ",\"");
    *first = false;
    put_u(o, key);
    put(o, "\":");
    put_u(o, value);
}

struct pid_walk {
    struct out *o;
    bool first;
};

static void put_proc(struct proc *p, void *arg)
{
    struct pid_walk *w = arg;
    pair(w->o, &w->first, (uint64_t)p->pid, p->calls);
}

void unix_stats_write(void)
{
    static struct out o;
    char form[8] = "";
    if (rt_option("unix", form, sizeof(form)) <= 0)
        __builtin_memcpy(form, "?", 2);
    o.n = 0;
    uint64_t total = 0;
    for (long nr = 0; nr < UNIX_NR_MAX; nr++)
        total += unix_call_count(nr);
    put(&o, "{\"type\":\"unix_calls\",\"form\":\"");
    put(&o, form);
    put(&o, "\",\"calls\":");
    put_u(&o, total);
    put(&o, ",\"unknown\":");
    put_u(&o, unix_unknown_count());
    put(&o, ",\"by_number\":{");
    bool first = true;
    for (long nr = 0; nr < UNIX_NR_MAX; nr++)
        if (unix_call_count(nr))
            pair(&o, &first, (uint64_t)nr, unix_call_count(nr));
    put(&o, "},\"by_pid\":{");
    struct pid_walk w = {&o, true};
    proc_for_each(put_proc, &w);
    put(&o, "},\"reaped\":");
    put_u(&o, reaped_calls);
    put(&o, ",\"unlocked\":");
    put_u(&o, unix_unlocked_count());
    uint64_t threads = 0, spaces = 0;
    unix_switch_counts(&threads, &spaces);
    put(&o, ",\"thread_switches\":");
    put_u(&o, threads);
    put(&o, ",\"as_switches\":");
    put_u(&o, spaces);
    put(&o, "}\n");
    rt_result_write(o.buf, o.n);
}
