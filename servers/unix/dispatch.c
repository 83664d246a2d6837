/*
 * The dispatch of forwarded Linux system calls (unix.h): a table indexed by number,
 * generated from syscalls.def, so adding a call is one LX line and its lx_ handler.
 * Every call is counted once, when it first runs (unix_dispatch; a woken call's re-run,
 * unix_dispatch_again, is the same call), by number and by process (P0's Table 2 needs the UNIX calls per run;
 * /proc/ondol/syscalls shows them); an unknown number returns -ENOSYS, and with unix_report_unknown each unknown number is
 * printed once ("unix: unknown system call N").
 */
#include "unix.h"

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
static uint64_t unknown_calls, out_of_range_calls;
static uint64_t reported[UNIX_NR_MAX / 64];   /* unknown numbers already printed */
static bool reported_out_of_range;
bool unix_report_unknown;

static bool in_table(long nr) { return nr >= 0 && nr < UNIX_NR_MAX; }

uint64_t unix_call_count(long nr) { return in_table(nr) ? counts[nr] : 0; }
uint64_t unix_unknown_count(void) { return unknown_calls; }
const char *unix_call_name(long nr) { return in_table(nr) ? names[nr] : NULL; }

/* The total is summed when asked (/proc/ondol/syscalls), so that a call costs only its
 * own counters: the number's and the process's. */
uint64_t unix_total_count(void)
{
    uint64_t total = out_of_range_calls;
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
