/*
 * sdetmark: the counters an SDET run is measured by (docs/sdet.md).
 *
 *   sdetmark                      prints "TSC CALLS THREAD_SWITCHES AS_SWITCHES"
 *   sdetmark N T C TH AS          prints the result record of a run of N users that
 *                                 began at the counters T C TH AS (a first call's line)
 *
 * TSC is the time stamp counter: under QEMU's -icount shift=0 one tick per instruction
 * (instructions, exact). On ondol the other three come from /proc/ondol/syscalls (the
 * UNIX server's system calls and the kernel's thread and address-space switches); on
 * Linux THREAD_SWITCHES is /proc/stat's ctxt (context switches) and CALLS and AS_SWITCHES
 * are -1 (Linux counts neither; the peer's calls come from a separate traced round).
 * The record goes to /dev/results where it exists (ondol's result stream), else stdout.
 */
#define _POSIX_C_SOURCE 200809L
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

struct counters {
    long long tsc, calls, threads, spaces;
};

static long long tsc_now(void)
{
    uint32_t lo, hi;
    __asm__ __volatile__("lfence\n\trdtsc\n\tlfence" : "=a"(lo), "=d"(hi) : : "memory");
    return (long long)(((uint64_t)hi << 32) | lo);
}

/* The number after KEY at the start of a line of PATH, or -1. */
static long long proc_value(const char *path, const char *key)
{
    static char buf[1 << 16];
    int fd = open(path, O_RDONLY);
    if (fd < 0)
        return -1;
    ssize_t n = read(fd, buf, sizeof(buf) - 1);
    close(fd);
    if (n <= 0)
        return -1;
    buf[n] = 0;
    size_t k = strlen(key);
    for (char *line = buf; line; line = strchr(line, '\n') ? strchr(line, '\n') + 1 : NULL)
        if (strncmp(line, key, k) == 0)
            return strtoll(line + k, NULL, 10);
    return -1;
}

static struct counters counters_now(void)
{
    struct counters c = {tsc_now(), proc_value("/proc/ondol/syscalls", "calls "),
                         proc_value("/proc/ondol/syscalls", "thread_switches "),
                         proc_value("/proc/ondol/syscalls", "as_switches ")};
    if (c.threads < 0)
        c.threads = proc_value("/proc/stat", "ctxt ");
    return c;
}

/* AFTER - BEFORE, or -1 where the system has no such counter. */
static long long delta(long long after, long long before)
{
    return after < 0 || before < 0 ? -1 : after - before;
}

int main(int argc, char **argv)
{
    struct counters now = counters_now();
    if (argc == 1) {
        printf("%lld %lld %lld %lld\n", now.tsc, now.calls, now.threads, now.spaces);
        return 0;
    }
    if (argc != 6) {
        fprintf(stderr, "usage: sdetmark [N TSC CALLS THREADS SPACES]\n");
        return 2;
    }
    int fd = open("/dev/results", O_WRONLY);
    dprintf(fd >= 0 ? fd : 1,
            "{\"type\":\"result\",\"bench\":\"sdet\",\"test\":\"sdet\",\"users\":%d,"
            "\"instructions\":%lld,\"syscalls\":%lld,"
            "\"thread_switches\":%lld,\"as_switches\":%lld}\n",
            atoi(argv[1]), delta(now.tsc, atoll(argv[2])),
            delta(now.calls, atoll(argv[3])), delta(now.threads, atoll(argv[4])),
            delta(now.spaces, atoll(argv[5])));
    return 0;
}
