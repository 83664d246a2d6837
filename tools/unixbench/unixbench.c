/*
 * unixbench - `./ondol bench unix` (docs/unix.md, "Benchmark"): one static Linux program
 * (musl-gcc -static) that times the same UNIX operations on ondol's UNIX server, in MK
 * and IK form, and on the Linux peer, in the same QEMU.
 *
 *   unixbench            the full run (installed as /bench/unixbench)
 *   unixbench-quick      the same with a few samples (the test suite's shape check)
 *   unixbench exit       exits at once: the program fork+execve runs
 *
 * ondol's UNIX server starts it as pid 1 (linux_init= takes no arguments, so the name
 * picks the mode); the peer's /init runs it. Operations, one sample each, the TSC read
 * just before and just after (under QEMU's icount the TSC counts instructions, so a
 * sample is the exact number of instructions the whole machine ran for the operation):
 *   getppid      the getppid system call
 *   open_read    open + read 4 KiB + close of a file on tmpfs (/tmp)
 *   stat         stat of that file
 *   pipe         write 4 KiB into a pipe, read it back (one process)
 *   fork         fork, the child _exit(0)s, wait4
 *   fork_exec    fork, the child execve's this program with "exit", wait4
 *   fork_exec_dyn  the same with Debian's dynamically linked /usr/bin/hello (glibc; its
 *                line goes to /dev/null): the interpreter, libc's mappings, relocation
 *   mmap_file    mmap of all of libc.so.6 (1.9 MB), private and read-only as ld.so's
 *                first mapping of it, and munmap (the per-mapping cost of a file)
 * Each operation prints one result record (median, min, max, n; unit "tsc") on the
 * result stream, with the switches the n samples made in all (read before and after
 * them, less what reading the counters twice costs by itself): on ondol "thread_switches" and "as_switches" from /proc/ondol/syscalls (the
 * kernel's counters); on Linux "thread_switches" is /proc/stat's ctxt (context switches)
 * and "as_switches" -1 (Linux counts no CR3 loads). The record goes to the result stream: /dev/results where it exists (ondol's server: COM2), else stdout (the
 * peer's /init sends that to its COM2). An end record follows, then a power-off.
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/reboot.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#define FILE_BYTES 4096
#define DATA_FILE "/tmp/unixbench.dat"
#define MAX_SAMPLES 2000

struct op {
    const char *name;
    void (*run)(void);
    int samples, quick_samples;
};

static char self_path[256];
static char buffer[FILE_BYTES];
static int pipe_fds[2];
static int out_fd = 1;
static uint64_t samples[MAX_SAMPLES];

static uint64_t rdtsc(void)
{
    uint32_t lo, hi;
    __asm__ __volatile__("lfence\n\trdtsc\n\tlfence" : "=a"(lo), "=d"(hi) : : "memory");
    return ((uint64_t)hi << 32) | lo;
}

static void die(const char *what)
{
    dprintf(out_fd, "{\"type\":\"end\",\"bench\":\"unix\",\"status\":1,\"error\":\"%s\"}\n",
            what);
    exit(1);
}

static void op_getppid(void) { syscall(SYS_getppid); }

static void op_open_read(void)
{
    int fd = open(DATA_FILE, O_RDONLY);
    if (fd < 0 || read(fd, buffer, FILE_BYTES) != FILE_BYTES)
        die("open_read");
    close(fd);
}

static void op_stat(void)
{
    struct stat st;
    if (stat(DATA_FILE, &st) != 0 || st.st_size != FILE_BYTES)
        die("stat");
}

static void op_pipe(void)
{
    if (write(pipe_fds[1], buffer, FILE_BYTES) != FILE_BYTES ||
        read(pipe_fds[0], buffer, FILE_BYTES) != FILE_BYTES)
        die("pipe");
}

static void wait_child(pid_t pid)
{
    int status;
    if (pid < 0 || wait4(pid, &status, 0, NULL) != pid || !WIFEXITED(status) ||
        WEXITSTATUS(status) != 0)
        die("wait4");
}

static void op_fork(void)
{
    pid_t pid = fork();
    if (pid == 0)
        _exit(0);
    wait_child(pid);
}

static void op_fork_exec(void)
{
    pid_t pid = fork();
    if (pid == 0) {
        char *argv[] = {self_path, "exit", NULL};
        char *envp[] = {NULL};
        execve(self_path, argv, envp);
        _exit(127);
    }
    wait_child(pid);
}

#define DYN_PROGRAM "/usr/bin/hello"
#define LIBC "/lib/x86_64-linux-gnu/libc.so.6"
static int libc_fd = -1;
static size_t libc_bytes;

static void op_fork_exec_dyn(void)
{
    pid_t pid = fork();
    if (pid == 0) {
        char *argv[] = {DYN_PROGRAM, NULL};
        char *envp[] = {NULL};
        int null = open("/dev/null", O_WRONLY);
        if (null < 0 || dup2(null, 1) != 1)
            _exit(126);
        execve(DYN_PROGRAM, argv, envp);
        _exit(127);
    }
    wait_child(pid);
}

static void op_mmap_file(void)
{
    void *p = mmap(NULL, libc_bytes, PROT_READ, MAP_PRIVATE, libc_fd, 0);
    if (p == MAP_FAILED || munmap(p, libc_bytes) != 0)
        die("mmap_file");
}

/* The value of the line "key N" (key includes its separator) in /proc file path, or -1. */
static long long proc_value(const char *path, const char *key)
{
    static char text[16384];
    int fd = open(path, O_RDONLY);
    if (fd < 0)
        return -1;
    ssize_t n = read(fd, text, sizeof(text) - 1);
    close(fd);
    text[n > 0 ? n : 0] = 0;
    size_t len = strlen(key);
    for (char *line = text; *line;) {
        if (strncmp(line, key, len) == 0)
            return strtoll(line + len, NULL, 10);
        char *end = strchr(line, '\n');
        if (!end)
            break;
        line = end + 1;
    }
    return -1;
}

struct switches {
    long long threads, spaces;
};

/* The kernel's switch counters now: ondol's, else Linux's context switches. */
static struct switches switches_now(void)
{
    struct switches s = {proc_value("/proc/ondol/syscalls", "thread_switches "),
                         proc_value("/proc/ondol/syscalls", "as_switches ")};
    if (s.threads < 0)
        s = (struct switches){proc_value("/proc/stat", "ctxt "), -1};
    return s;
}

/* A counter's change from `before` to `after`, less the change two back-to-back reads
 * make (`idle`: the reads are system calls too); -1 when the counter is not kept. */
static long long switches_made(long long before, long long after, long long idle)
{
    return before < 0 ? -1 : after - before - idle;
}

static int compare(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

/* A few untimed rounds first (caches, the first page faults), then the samples. */
static void measure(const struct op *op, int n)
{
    for (int i = 0; i < 3; i++)
        op->run();
    struct switches idle0 = switches_now(), idle1 = switches_now();
    struct switches before = switches_now();
    for (int i = 0; i < n; i++) {
        uint64_t t0 = rdtsc();
        op->run();
        samples[i] = rdtsc() - t0;
    }
    struct switches after = switches_now();
    qsort(samples, (size_t)n, sizeof(samples[0]), compare);
    dprintf(out_fd, "{\"type\":\"result\",\"bench\":\"unix\",\"test\":\"%s\",\"unit\":\"tsc\","
            "\"median\":%llu,\"min\":%llu,\"max\":%llu,\"n\":%d,"
            "\"thread_switches\":%lld,\"as_switches\":%lld}\n", op->name,
            (unsigned long long)samples[n / 2], (unsigned long long)samples[0],
            (unsigned long long)samples[n - 1], n,
            switches_made(before.threads, after.threads, idle1.threads - idle0.threads),
            switches_made(before.spaces, after.spaces, idle1.spaces - idle0.spaces));
}

static void setup(void)
{
    memset(buffer, 'u', sizeof(buffer));
    int fd = open(DATA_FILE, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (fd < 0 || write(fd, buffer, FILE_BYTES) != FILE_BYTES || close(fd) != 0)
        die("setup file");
    if (pipe(pipe_fds) != 0)
        die("pipe");
    struct stat st;
    libc_fd = open(LIBC, O_RDONLY);
    if (libc_fd < 0 || fstat(libc_fd, &st) != 0)
        die("open libc");
    libc_bytes = (size_t)st.st_size;
}

int main(int argc, char **argv)
{
    if (argc > 1 && strcmp(argv[1], "exit") == 0)
        return 0;
    int quick = strstr(argv[0], "-quick") != NULL;
    if (readlink("/proc/self/exe", self_path, sizeof(self_path) - 1) <= 0)
        snprintf(self_path, sizeof(self_path), "%s", argv[0]);
    int results = open("/dev/results", O_WRONLY);
    if (results >= 0)
        out_fd = results;
    setup();
    static const struct op ops[] = {
        {"getppid", op_getppid, 1000, 5},
        {"open_read", op_open_read, 1000, 5},
        {"stat", op_stat, 1000, 5},
        {"pipe", op_pipe, 1000, 5},
        {"fork", op_fork, 100, 3},
        {"fork_exec", op_fork_exec, 50, 3},
        {"fork_exec_dyn", op_fork_exec_dyn, 21, 3},
        {"mmap_file", op_mmap_file, 21, 3},
    };
    for (size_t i = 0; i < sizeof(ops) / sizeof(ops[0]); i++)
        measure(&ops[i], quick ? ops[i].quick_samples : ops[i].samples);
    dprintf(out_fd, "{\"type\":\"end\",\"bench\":\"unix\",\"status\":0}\n");
    sync();
    if (getpid() == 1)
        reboot(RB_POWER_OFF);
    return 0;
}
