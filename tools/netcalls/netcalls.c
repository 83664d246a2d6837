/*
 * netcalls - the Linux-ABI half of `./ondol bench net` (docs/net.md, "The Linux guest
 * beside ondol"): one static program (musl-gcc -static) that times TCP socket calls and
 * bulk transfers against the host peer (tools/ondol/netpeer.py at 10.79.0.1), on ondol's
 * UNIX server with its network server (unix=mk net=mk, unix=ik net=ik; pid 1 through
 * linux_init=) and on the Linux guest in the same QEMU.
 *
 *   netcalls          the full run (installed as /bench/netcalls)
 *   netcalls-quick    a few samples and a small transfer (the test suite's shape check)
 *   netcalls-bulk     the bulk transfers alone (`./ondol bench net-offload`)
 *
 * Under QEMU's icount the TSC counts instructions, so a sample read just before and just
 * after a call that does not wait is the exact number of instructions the whole machine
 * ran for it. Per size of P3 (100, 300, 500, 1440 bytes):
 *   write  on a connection to the sink (port 9100, ACKs at once), TCP_NODELAY: wait until
 *          everything sent is acknowledged (SIOCOUTQ 0), then time one write of the size;
 *   recv   on a connection to the source (port 9101: the next segment once the last is
 *          acknowledged): wait until one whole segment is there (poll, FIONREAD), then
 *          time one recv of it;
 *   peek   the same, timing a recv with MSG_PEEK of the segment (then a recv takes it);
 *   sendto UDP, one datagram of the size with its address to the host's sink (port 9104),
 *          each after a pause (nothing comes back);
 *   recvfrom  UDP, a datagram of the size sent to the host's echo (port 9105): once its
 *          echo is there (poll, FIONREAD), time one recvfrom of it.
 * Bulk transfers (16 KiB calls), the host timing them on its side (wall clock):
 *   to_host    BULK bytes to port 9102, shutdown, the host's "BYTES NS" line at its EOF;
 *   from_host  asks port 9103 for BULK bytes, reads them all, says "d", reads the line.
 *   Instructions: TSC ticks of the transfer less the time the CPU was halted with
 *   nothing to run, per byte: on ondol the kernel's count (/proc/ondol/syscalls idle_ns),
 *   on Linux the tick code's idle and iowait sleep times (/proc/timer_list, in ns; the
 *   guest has no cpuidle driver, and /proc/stat counts in 10 ms).
 * Records go to the result stream: /dev/results where it exists (ondol), else stdout (the
 * Linux guest's /init sends that to COM2). An end record follows, then a power-off when
 * this is pid 1.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/reboot.h>
#include <sys/socket.h>
#include <unistd.h>

#ifndef SIOCOUTQ
#define SIOCOUTQ TIOCOUTQ          /* linux/sockios.h: the same number */
#endif

#define PEER_IP "10.79.0.1"        /* tools/ondol/netns.py LINUX_IP */
#define SINK_PORT 9100
#define SOURCE_PORT 9101
#define BULK_SINK_PORT 9102
#define BULK_SOURCE_PORT 9103
#define UDP_SINK_PORT 9104
#define UDP_ECHO_PORT 9105
#define WARMUP 3
#define MAX_N 200
#define CHUNK 16384
#define NS_PER_TICK 10000000ull    /* /proc/stat's USER_HZ = 100 */

static const unsigned sizes[] = {100, 300, 500, 1440};
static int out_fd = 1;
static uint64_t samples[MAX_N];
static unsigned char buf[CHUNK];

static uint64_t rdtsc(void)
{
    uint32_t lo, hi;
    __asm__ __volatile__("lfence\n\trdtsc\n\tlfence" : "=a"(lo), "=d"(hi) : : "memory");
    return (uint64_t)hi << 32 | lo;
}

static void die(const char *what)
{
    dprintf(out_fd, "{\"type\":\"error\",\"bench\":\"net\",\"what\":\"%s\"}\n", what);
    perror(what);
    exit(1);
}

static int connect_to(int port)
{
    int s = socket(AF_INET, SOCK_STREAM, 0), one = 1;
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port)};
    inet_pton(AF_INET, PEER_IP, &a.sin_addr);
    for (int tries = 0; tries < 50; tries++) {
        if (connect(s, (struct sockaddr *)&a, sizeof a) == 0) {
            setsockopt(s, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
            return s;
        }
        close(s);
        usleep(100000);
        s = socket(AF_INET, SOCK_STREAM, 0);
    }
    die("connect");
    return -1;
}

static int cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

static void report(const char *phase, unsigned size, int n)
{
    qsort(samples, (size_t)n, sizeof samples[0], cmp_u64);
    dprintf(out_fd, "{\"type\":\"result\",\"bench\":\"net\",\"test\":\"call\",\"phase\":\"%s\","
            "\"layer\":\"call\",\"size\":%u,\"unit\":\"tsc\",\"median\":%llu,\"min\":%llu,"
            "\"max\":%llu,\"n\":%d}\n", phase, size, (unsigned long long)samples[n / 2],
            (unsigned long long)samples[0], (unsigned long long)samples[n - 1], n);
}

/* Until everything sent on s is acknowledged. */
static void wait_acked(int s)
{
    int q = 1;
    while (ioctl(s, SIOCOUTQ, &q) == 0 && q > 0)
        usleep(1000);
}

/* Until a whole segment of size bytes is waiting on s. */
static void wait_segment(int s, unsigned size)
{
    int q = 0;
    struct pollfd pf = {.fd = s, .events = POLLIN};
    while (ioctl(s, FIONREAD, &q) == 0 && q < (int)size)
        if (poll(&pf, 1, 1000) < 0)
            die("poll");
}

/* A 16-byte request to a peer port: the text, padded with spaces, and a newline. */
static void request(int s, const char *text)
{
    char ask[16];
    size_t len = strlen(text) < 15 ? strlen(text) : 15;
    memset(ask, ' ', sizeof ask);
    memcpy(ask, text, len);
    ask[15] = '\n';
    if (write(s, ask, sizeof ask) != (ssize_t)sizeof ask)
        die("request");
}

/* n timed calls (after WARMUP) of one size: writes to the sink, each once the last is
 * acknowledged; or recvs from the source (with peek: MSG_PEEK, then an untimed recv),
 * each once a whole segment is there. */
static void time_calls(const char *phase, unsigned size, int n)
{
    bool write_call = !strcmp(phase, "write"), peek = !strcmp(phase, "peek");
    int s = connect_to(write_call ? SINK_PORT : SOURCE_PORT);
    char ask[32];
    snprintf(ask, sizeof ask, "%u %d", size, WARMUP + n);
    if (!write_call)
        request(s, ask);
    memset(buf, 'w', size);
    for (int i = 0; i < WARMUP + n; i++) {
        if (write_call)
            wait_acked(s);
        else
            wait_segment(s, size);
        uint64_t t0 = rdtsc();
        ssize_t r = write_call ? write(s, buf, size) : recv(s, buf, size, peek ? MSG_PEEK : 0);
        uint64_t t = rdtsc() - t0;
        if (r != (ssize_t)size || (peek && recv(s, buf, size, 0) != (ssize_t)size))
            die(phase);
        if (i >= WARMUP)
            samples[i - WARMUP] = t;
    }
    if (write_call)
        wait_acked(s);
    close(s);
    report(phase, size, n);
}

/* n timed UDP calls (after WARMUP) of one size: sendto the sink, or recvfrom of the
 * echo of an untimed send, once it is there. */
static void time_datagrams(bool receive, unsigned size, int n)
{
    int s = socket(AF_INET, SOCK_DGRAM, 0);
    struct sockaddr_in to = {.sin_family = AF_INET,
                             .sin_port = htons(receive ? UDP_ECHO_PORT : UDP_SINK_PORT)};
    inet_pton(AF_INET, PEER_IP, &to.sin_addr);
    memset(buf, 'u', size);
    for (int i = 0; i < WARMUP + n; i++) {
        struct sockaddr_in from;
        socklen_t flen = sizeof from;
        ssize_t r;
        uint64_t t0, t;
        if (receive) {
            if (sendto(s, buf, size, 0, (struct sockaddr *)&to, sizeof to) != (ssize_t)size)
                die("sendto echo");
            wait_segment(s, size);
            t0 = rdtsc();
            r = recvfrom(s, buf, size, 0, (struct sockaddr *)&from, &flen);
            t = rdtsc() - t0;
        } else {
            usleep(2000);              /* the last datagram gone, the device quiet */
            t0 = rdtsc();
            r = sendto(s, buf, size, 0, (struct sockaddr *)&to, sizeof to);
            t = rdtsc() - t0;
        }
        if (r != (ssize_t)size)
            die(receive ? "recvfrom" : "sendto");
        if (i >= WARMUP)
            samples[i - WARMUP] = t;
    }
    close(s);
    report(receive ? "recvfrom" : "sendto", size, n);
}

/* The text of a file (NUL-terminated, at most 64 KiB) in a static buffer; NULL when
 * unreadable. */
static const char *file_text(const char *path)
{
    static char text[65536];
    int fd = open(path, O_RDONLY);
    if (fd < 0)
        return NULL;
    size_t got = 0;
    ssize_t n;
    while (got < sizeof text - 1 && (n = read(fd, text + got, sizeof text - 1 - got)) > 0)
        got += (size_t)n;
    close(fd);
    text[got] = 0;
    return got ? text : NULL;
}

/* The sum of the numbers after every occurrence of key in text. */
static uint64_t sum_after(const char *text, const char *key)
{
    uint64_t sum = 0;
    unsigned long long v;
    for (const char *at = strstr(text, key); at; at = strstr(at + 1, key))
        if (sscanf(at + strlen(key), "%llu", &v) == 1)
            sum += v;
    return sum;
}

/* Idle time so far, in ns: on ondol the kernel's count (/proc/ondol/syscalls idle_ns); on
 * Linux the CPUs' idle and iowait sleep time (/proc/timer_list, ns, root only); else
 * /proc/stat's cpu line (USER_HZ ticks). */
static uint64_t idle_ns(void)
{
    const char *text = file_text("/proc/ondol/syscalls");
    if (text && strstr(text, "\nidle_ns "))
        return sum_after(text, "\nidle_ns ");
    text = file_text("/proc/timer_list");
    if (text && strstr(text, ".idle_sleeptime"))
        return sum_after(text, ".idle_sleeptime :") + sum_after(text, ".iowait_sleeptime:");
    unsigned long long v[5] = {0};
    text = file_text("/proc/stat");
    if (!text || sscanf(text, "cpu %llu %llu %llu %llu %llu", &v[0], &v[1], &v[2], &v[3],
                        &v[4]) != 5)
        die("/proc/stat");
    return (v[3] + v[4]) * NS_PER_TICK;
}

/* The host's "BYTES NS" line: its count of bytes and its wall-clock time for them. */
static void host_line(int s, unsigned long long *bytes, unsigned long long *ns)
{
    char line[64] = {0};
    size_t got = 0;
    ssize_t r;
    while (got < sizeof line - 1 && (r = read(s, line + got, sizeof line - 1 - got)) > 0)
        got += (size_t)r;
    if (sscanf(line, "%llu %llu", bytes, ns) != 2)
        die("host line");
}

static void bulk_report(const char *phase, uint64_t bytes, uint64_t ticks, uint64_t idle,
                        unsigned long long host_bytes, unsigned long long host_ns)
{
    uint64_t ins = ticks > idle ? ticks - idle : 0;
    dprintf(out_fd, "{\"type\":\"result\",\"bench\":\"net\",\"test\":\"bulk\",\"phase\":\"%s\","
            "\"layer\":\"bulk\",\"size\":%llu,\"unit\":\"tsc\",\"median\":%llu,\"min\":%llu,"
            "\"max\":%llu,\"n\":1,\"ticks\":%llu,\"idle_ns\":%llu,\"ins_per_byte\":%.2f,"
            "\"host_bytes\":%llu,\"host_ns\":%llu,\"mb_s\":%.2f}\n", phase,
            (unsigned long long)bytes, (unsigned long long)ins, (unsigned long long)ins,
            (unsigned long long)ins, (unsigned long long)ticks, (unsigned long long)idle,
            (double)ins / (double)bytes, host_bytes, host_ns,
            host_ns ? (double)host_bytes * 1000.0 / (double)host_ns : 0.0);
}

static void bulk_to_host(uint64_t total)
{
    int s = connect_to(BULK_SINK_PORT);
    memset(buf, 'b', sizeof buf);
    uint64_t i0 = idle_ns(), t0 = rdtsc();
    for (uint64_t done = 0; done < total;) {
        size_t k = total - done < CHUNK ? (size_t)(total - done) : CHUNK;
        ssize_t r = write(s, buf, k);
        if (r <= 0)
            die("bulk write");
        done += (uint64_t)r;
    }
    shutdown(s, SHUT_WR);
    unsigned long long hb, hns;
    host_line(s, &hb, &hns);
    uint64_t ticks = rdtsc() - t0, idle = idle_ns() - i0;
    close(s);
    bulk_report("to_host", total, ticks, idle, hb, hns);
}

static void bulk_from_host(uint64_t total)
{
    int s = connect_to(BULK_SOURCE_PORT);
    char ask[32];
    snprintf(ask, sizeof ask, "%llu", (unsigned long long)total);
    uint64_t i0 = idle_ns(), t0 = rdtsc();
    request(s, ask);
    for (uint64_t done = 0; done < total;) {
        ssize_t r = read(s, buf, sizeof buf);
        if (r <= 0)
            die("bulk read");
        done += (uint64_t)r;
    }
    if (write(s, "d", 1) != 1)
        die("bulk done");
    unsigned long long hb, hns;
    host_line(s, &hb, &hns);
    uint64_t ticks = rdtsc() - t0, idle = idle_ns() - i0;
    close(s);
    bulk_report("from_host", total, ticks, idle, hb, hns);
}

int main(int argc, char **argv)
{
    (void)argc;
    int quick = strstr(argv[0], "-quick") != NULL;
    int bulk_only = strstr(argv[0], "-bulk") != NULL;
    int n = quick ? 5 : 50;
    uint64_t bulk = quick ? 256 * 1024 : 8 * 1024 * 1024;
    int results = open("/dev/results", O_WRONLY);
    if (results >= 0)
        out_fd = results;
    for (size_t i = 0; i < sizeof sizes / sizeof sizes[0] && !bulk_only; i++) {
        time_calls("write", sizes[i], n);
        time_calls("recv", sizes[i], n);
        time_calls("peek", sizes[i], n);
        time_datagrams(false, sizes[i], n);
        time_datagrams(true, sizes[i], n);
    }
    bulk_to_host(bulk);
    bulk_from_host(bulk);
    dprintf(out_fd, "{\"type\":\"end\",\"bench\":\"net\",\"status\":0}\n");
    sync();
    if (getpid() == 1)
        reboot(RB_POWER_OFF);
    return 0;
}
