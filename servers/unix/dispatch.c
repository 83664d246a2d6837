/*
 * The dispatch of forwarded Linux system calls (unix.h): a table indexed by number,
 * generated from syscalls.def, so adding a call is one LX line and its lx_ handler.
 * Every call is counted once, when it first runs (unix_dispatch; a woken call's re-run,
 * unix_dispatch_again, is the same call), by number and by process (P0's Table 2 needs the UNIX calls per run;
 * /proc/ondol/syscalls shows them); an unknown number returns -ENOSYS, and with unix_report_unknown each unknown number is
 * printed once ("unix: unknown system call N").
 */
#include "runtime.h"

typedef long (*lx_handler)(struct ucall *c);

#define LX(nr, name) [nr] = lx_##name,
static const lx_handler handlers[UNIX_NR_MAX] = {
#include "syscalls.def"
};
#undef LX

#define LX(nr, name) [nr] = #name,
static const char *const names[UNIX_NR_MAX] = {
#include "syscalls.def"
};
#undef LX

static uint64_t counts[UNIX_NR_MAX];
static uint64_t unlocked_counts[64], unlocked_total;   /* LX_UNLOCKED calls, atomic adds */
static uint64_t unknown_calls, out_of_range_calls;
static uint64_t reported[UNIX_NR_MAX / 64];   /* unknown numbers already printed */
static bool reported_out_of_range;
bool unix_report_unknown;

static bool in_table(long nr) { return nr >= 0 && nr < UNIX_NR_MAX; }

uint64_t unix_call_count(long nr)
{
    if (!in_table(nr))
        return 0;
    return counts[nr] + (nr < 64 ? __atomic_load_n(&unlocked_counts[nr], __ATOMIC_RELAXED) : 0);
}
uint64_t unix_unknown_count(void) { return unknown_calls; }
const char *unix_call_name(long nr) { return in_table(nr) ? names[nr] : NULL; }

/* The total is summed when asked (/proc/ondol/syscalls), so that a call costs only its
 * own counters: the number's and the process's. */
uint64_t unix_total_count(void)
{
    uint64_t total = out_of_range_calls + unix_unlocked_count();
    for (long nr = 0; nr < UNIX_NR_MAX; nr++)
        total += counts[nr];
    return total;
}

/* "unix: unknown system call N" (numbers outside the table print as "out of range") */
static size_t append(char *line, size_t n, const char *s)
{
    while (*s)
        line[n++] = *s++;
    line[n] = 0;
    return n;
}

static void report_unknown(long nr)
{
    char line[64];
    size_t n = append(line, 0, "unix: unknown system call ");
    if (!in_table(nr)) {
        append(line, n, "out of range");
    } else {
        char digits[8] = {0};
        int k = 7;
        for (long v = nr; k == 7 || v > 0; v /= 10)
            digits[--k] = (char)('0' + v % 10);
        append(line, n, digits + k);
    }
    unix_log(line);
}

/* A number with no handler: -ENOSYS, counted, printed once. Out of line, so that run()
 * needs no stack frame. */
__attribute__((noinline, cold)) static long unknown(long nr)
{
    unknown_calls++;
    bool first;
    if (in_table(nr)) {
        first = !(reported[nr / 64] & (1ull << (nr % 64)));
        reported[nr / 64] |= 1ull << (nr % 64);
    } else {
        first = !reported_out_of_range;
        reported_out_of_range = true;
    }
    if (unix_report_unknown && first)
        report_unknown(nr);
    return -ENOSYS;
}

/* One table look-up: a number outside the table or without a handler is unknown. */
static inline long run(struct ucall *c)
{
    ucall_run_begin();
    unsigned long nr = (unsigned long)c->nr;
    if (nr >= UNIX_NR_MAX || !handlers[nr])
        return unknown(c->nr);
    return handlers[nr](c);
}

long unix_dispatch(struct ucall *c)
{
    if (c->proc)
        c->proc->calls++;
    if ((unsigned long)c->nr < UNIX_NR_MAX)
        counts[c->nr]++;
    else
        out_of_range_calls++;
    return run(c);
}

long unix_dispatch_again(struct ucall *c) { return run(c); }

/* ---- calls without the server lock (syscalls.def, LX_UNLOCKED) ------------------------
 * Their handlers touch no server state, so they may run on any thread beside the one
 * that holds the server lock, and beside each other; they are counted apart, with atomic
 * adds, and by number only (no process is looked up). */
#define LX(nr, name)
#define LX_UNLOCKED(nr, name) _Static_assert((nr) < 64, "LX_UNLOCKED " #name ": below 64");
#include "syscalls.def"
#undef LX_UNLOCKED
#define LX_UNLOCKED(nr, name) | 1ull << (nr)
static const uint64_t unlocked_table = 0
#include "syscalls.def"
    ;
#undef LX_UNLOCKED
#undef LX

uint64_t unix_unlocked_calls;

void unix_unlocked_init(void)
{
    char v[8];                      /* on unless given as off (options.def) */
    bool on = !(rt_option("unix_unlocked", v, sizeof v) > 0 && v[0] == 'o' && v[1] == 'f');
    unix_unlocked_calls = on ? unlocked_table : 0;
}

long unix_syscall_unlocked(int task, struct ucall *c)
{
    c->proc = NULL;
    c->thread = NULL;
    c->task = task;
    __atomic_fetch_add(&unlocked_counts[c->nr], 1, __ATOMIC_RELAXED);
    __atomic_fetch_add(&unlocked_total, 1, __ATOMIC_RELAXED);
    return handlers[c->nr](c);
}

uint64_t unix_unlocked_count(void) { return __atomic_load_n(&unlocked_total, __ATOMIC_RELAXED); }
