/* The text of /proc files (procfs.c), byte for byte, in Linux's layouts; plus the parses
 * tests/linux/dev.c makes (fscanf "%d %s %c" of /proc/PID/stat, "Name:\t" and "PPid:\t"
 * lines of status) and the cut-short behaviour. */
#include <stdio.h>
#include <string.h>
#include "fake.h"

static char buf[4096];

static const struct procfs_task task = {
    .pid = 42, .ppid = 1, .pgid = 42, .sid = 7, .tpgid = 42, .threads = 1,
    .tty_nr = 0x501, .state = 'R', .comm = "dev",
    .utime = 3, .stime = 4, .cutime = 5, .cstime = 6, .start_time = 1234,
    .vsize_bytes = 3133440, .rss_pages = 392, .minflt = 98, .majflt = 1,
    .sig_pending = 0, .sig_blocked = 0x10000, .sig_ignored = 0x1000, .sig_caught = 0x4002,
    .nice = 0, .processor = 1, .umask = 022, .uid = {0}, .gid = {0}, .fd_slots = 256,
};

static void test_meminfo(void)
{
    struct procfs_meminfo m = {.total_kib = 24684092, .free_kib = 22982100,
                               .available_kib = 23868288, .buffers_kib = 13036,
                               .cached_kib = 1022124, .shmem_kib = 7,
                               .slab_reclaimable_kib = 151688};
    size_t n = procfs_meminfo(buf, sizeof buf, &m);
    CHECK_EQ(n, strlen(buf));
    const char *want =
        "MemTotal:       24684092 kB\n"
        "MemFree:        22982100 kB\n"
        "MemAvailable:   23868288 kB\n"
        "Buffers:           13036 kB\n"
        "Cached:          1022124 kB\n"
        "SwapCached:            0 kB\n";
    CHECK_EQ(strncmp(buf, want, strlen(want)), 0);
    CHECK(strstr(buf, "\nShmem:                 7 kB\n") != NULL);
    CHECK(strstr(buf, "\nSReclaimable:     151688 kB\n") != NULL);
    CHECK(strstr(buf, "\nSwapTotal:             0 kB\nSwapFree:              0 kB\n"));
}

static void test_uptime(void)
{
    memset(buf, 0, sizeof buf);
    size_t n = procfs_uptime(buf, sizeof buf, 11336671234567ull, 2885260000000ull);
    CHECK_EQ(n, 17);
    CHECK_EQ(strcmp(buf, "11336.67 2885.26\n"), 0);
    memset(buf, 0, sizeof buf);
    procfs_uptime(buf, sizeof buf, 50000000, 0);
    CHECK_EQ(strcmp(buf, "0.05 0.00\n"), 0);
    double up = -1, idle = -1;
    CHECK_EQ(sscanf(buf, "%lf %lf", &up, &idle), 2);
}

static void test_stat(void)
{
    struct procfs_cpu cpus[2] = {
        {875639, 25260, 78585, 147414, 634, 0, 91, 1245},
        {876353, 28006, 80558, 141112, 1194, 0, 825, 1211},
    };
    struct procfs_stat s = {
        .total = {1751992, 53266, 159143, 288526, 1829, 0, 916, 2456},
        .cpu = cpus, .ncpu = 2, .interrupts = 99, .context_switches = 12345,
        .boot_time_s = 1795393546, .forks = 327422, .running = 5, .blocked = 0,
    };
    memset(buf, 0, sizeof buf);
    procfs_stat(buf, sizeof buf, &s);
    const char *want =
        "cpu  1751992 53266 159143 288526 1829 0 916 2456 0 0\n"
        "cpu0 875639 25260 78585 147414 634 0 91 1245 0 0\n"
        "cpu1 876353 28006 80558 141112 1194 0 825 1211 0 0\n"
        "intr 99\n"
        "ctxt 12345\n"
        "btime 1795393546\n"
        "processes 327422\n"
        "procs_running 5\n"
        "procs_blocked 0\n"
        "softirq 0 0 0 0 0 0 0 0 0 0 0\n";
    CHECK_EQ(strcmp(buf, want), 0);
}

static void test_pid_stat(void)
{
    memset(buf, 0, sizeof buf);
    procfs_pid_stat(buf, sizeof buf, &task);
    const char *want =
        "42 (dev) R 1 42 7 1281 42 0 98 0 1 0 3 4 5 6 20 0 1 0 1234 3133440 392 "
        "18446744073709551615 0 0 0 0 0 0 65536 4096 16386 0 0 0 17 1 0 0 0 0 0 0 0 0 0 0 "
        "0 0 0\n";
    CHECK_EQ(strcmp(buf, want), 0);
    int fields = 2;                              /* pid and (comm), then one per space */
    for (const char *c = strchr(buf, ')'); *c; c++)
        fields += *c == ' ';
    CHECK_EQ(fields, 52);                        /* proc(5): 52 fields in Linux 6.1 */
    int pid = 0;
    char comm[64] = {0}, state = '?';
    CHECK_EQ(sscanf(buf, "%d %63s %c", &pid, comm, &state), 3);
    CHECK_EQ(pid, 42);
    CHECK_EQ(strcmp(comm, "(dev)"), 0);
    CHECK_EQ(state, 'R');
    struct procfs_task t = task;
    t.comm = "a-very-long-command-name";          /* shown as its first 15 bytes */
    t.nice = -5;
    t.tpgid = -1;
    procfs_pid_stat(buf, sizeof buf, &t);
    CHECK_EQ(strncmp(buf, "42 (a-very-long-com) R 1 42 7 1281 -1 ", 38), 0);
    CHECK(strstr(buf, " 15 -5 1 0 1234 ") != NULL);
}

static void test_pid_status(void)
{
    memset(buf, 0, sizeof buf);
    procfs_pid_status(buf, sizeof buf, &task);
    const char *want =
        "Name:\tdev\n"
        "Umask:\t0022\n"
        "State:\tR (running)\n"
        "Tgid:\t42\n"
        "Ngid:\t0\n"
        "Pid:\t42\n"
        "PPid:\t1\n"
        "TracerPid:\t0\n"
        "Uid:\t0\t0\t0\t0\n"
        "Gid:\t0\t0\t0\t0\n"
        "FDSize:\t256\n"
        "Groups:\t \n"
        "NStgid:\t42\n"
        "NSpid:\t42\n"
        "NSpgid:\t42\n"
        "NSsid:\t7\n"
        "VmSize:\t    3060 kB\n"
        "VmRSS:\t    1568 kB\n"
        "Threads:\t1\n"
        "SigPnd:\t0000000000000000\n"
        "ShdPnd:\t0000000000000000\n"
        "SigBlk:\t0000000000010000\n"
        "SigIgn:\t0000000000001000\n"
        "SigCgt:\t0000000000004002\n";
    CHECK_EQ(strcmp(buf, want), 0);
    struct procfs_task t = task;
    t.comm = "a\\b\nc";
    t.state = 'Z';
    memset(buf, 0, sizeof buf);
    procfs_pid_status(buf, sizeof buf, &t);
    CHECK_EQ(strncmp(buf, "Name:\ta\\\\b\\nc\nUmask:\t0022\nState:\tZ (zombie)\n", 43), 0);
}

static void test_cut_short(void)
{
    char small[10];
    memset(small, '#', sizeof small);
    size_t n = procfs_pid_status(small, 8, &task);
    CHECK(n > 100);                               /* the full length */
    CHECK_EQ(memcmp(small, "Name:\tde##", 10), 0);   /* 8 bytes written, no more */
    const char args[] = "/suite/bin/dev\0-x\0";
    n = procfs_pid_cmdline(buf, sizeof buf, args, sizeof args - 1);
    CHECK_EQ(n, 18);
    CHECK_EQ(memcmp(buf, args, 18), 0);
    CHECK_EQ(procfs_pid_cmdline(small, 4, args, 18), 18);
    CHECK_EQ(memcmp(small, "/sui", 4), 0);
}

/* /proc/net/dev: the headers, and the interface's line as Linux's format prints it. */
static void test_net_dev(void)
{
    char buf[1024], want[256];
    struct procfs_netif n = {.present = true, .rx_bytes = 123456789, .rx_frames = 4321,
                             .rx_dropped = 2, .tx_bytes = 98765, .tx_frames = 77,
                             .tx_dropped = 1};
    size_t len = procfs_net_dev(buf, sizeof buf, &n);
    buf[len] = 0;
    snprintf(want, sizeof want, "%6s: %7llu %7llu %4llu %4llu %4llu %5llu %10llu %9llu "
             "%8llu %7llu %4llu %4llu %4llu %5llu %7llu %10llu\n", "eth0", 123456789ull,
             4321ull, 0ull, 2ull, 0ull, 0ull, 0ull, 0ull, 98765ull, 77ull, 0ull, 1ull, 0ull,
             0ull, 0ull, 0ull);
    CHECK(strncmp(buf, "Inter-|   Receive    ", 20) == 0);
    CHECK(strstr(buf, "|bytes    packets errs drop fifo colls carrier compressed\n") != NULL);
    CHECK(strstr(buf, want) != NULL && buf[len - 1] == '\n');
    n.present = false;
    CHECK(procfs_net_dev(buf, sizeof buf, &n) == len - strlen(want));
}

int main(void)
{
    test_meminfo();
    test_uptime();
    test_stat();
    test_pid_stat();
    test_pid_status();
    test_cut_short();
    test_net_dev();
    return fake_done();
}
