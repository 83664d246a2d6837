/*
 * netbench: P3's per-layer cost of sending and receiving one TCP segment, on ondol's
 * network server (`./ondol bench net`, docs/net.md "P3's per-layer cost in QEMU").
 *   netbench IP N
 * For each size of P3 (100, 300, 500, 1440 bytes), on a connection of its own to the host
 * peer at IP (tools/ondol/netpeer.py in the namespace):
 *   send   port 9100, a sink that ACKs at once: N times (after WARMUP) write one segment
 *          ("send" phase), then wait until it is acknowledged ("ack_in" phase);
 *   recv   port 9101, a source that sends the next segment once the previous one is
 *          acknowledged: N times read one segment ("recv"), then wait until the delayed ACK
 *          is out ("ack_out").
 * The server's probes (the net.idl op `probes`) put each layer's own work on a pcnt slot;
 * around every phase this program reads the slots, so per iteration and layer it has the
 * instructions (sum of the slot's samples minus one switch's fixed cost per sample).
 * P3's filter: an iteration during which any slot dropped a sample (an interrupt came) is
 * left out whole. One result row per test, size, phase and layer (median, min, max over
 * the kept iterations; `segments` how many stretches of that layer an iteration had),
 * then, with the probes off, the client's own view of each write call (phase "call": IPC,
 * dispatch and the stack); then "end".
 * For the cache model (`./ondol bench net --cache SPEC`): every measured iteration of a
 * phase (up to 127) is a window of its own, whose id says size, phase and iteration, and
 * whose end id also says whether P3's filter kept it (WINDOW_DROPPED); the kernel
 * announces each pcnt stretch as the bucket of its slot, so the host gets each layer's
 * modelled cycles and memory references per iteration (tools/ondol/netbench.py). Window 0
 * holds the calibration stretches. Without the plugin the windows cost two system calls
 * outside every slot.
 */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <ondol/result.h>
#include <ondol/sys.h>
#include <ondol/timing.h>

#include "net_client.h"

#define NET_SOCK_STREAM 1
#define SINK_PORT 9100
#define SOURCE_PORT 9101
#define WARMUP 3
#define MAX_N 1000
#define TIMEOUT_MS 5000
#define LAYERS 7                      /* servers/net/net_probe.h, in slot order */
#define MAX_SLOTS 64

static const char *const layer_names[LAYERS] = {
    "sock", "tcp_output", "ip_output", "driver_output", "driver_input", "ip_input", "tcp_input",
};
static const unsigned sizes[] = {100, 300, 500, 1440};

/* Window ids (12 bits): size index << 9 | phase << 7 | iteration + 1; 0 = calibration. */
enum { PH_SEND, PH_ACK_IN, PH_RECV, PH_ACK_OUT };
#define WINDOW_ITERATIONS 127
#define WINDOW_DROPPED 0x800
static unsigned size_index;
static long window_open;              /* the open window's id, or -1 */

/* P3's modules per phase (layer indexes); whatever else ran is reported as "other". */
struct phase_def {
    const char *test, *name;
    int layers[4];
    int nlayers;
    int id;                           /* PH_* (window ids) */
};
static const struct phase_def phase_send = {"send", "send", {0, 1, 2, 3}, 4, PH_SEND};
static const struct phase_def phase_ack_in = {"send", "ack_in", {4, 5, 6}, 3, PH_ACK_IN};
static const struct phase_def phase_recv = {"recv", "recv", {4, 5, 6, 0}, 4, PH_RECV};
static const struct phase_def phase_ack_out = {"recv", "ack_out", {1, 2, 3}, 3, PH_ACK_OUT};

static struct srv_conn conn;
static int first_slot;
static uint64_t switch_cost;          /* fixed cost in every sample (the calibration) */
static uint64_t calibrations;         /* stretches of the calibration (window 0) */
static struct pcnt_slot_info dump_a[MAX_SLOTS], dump_b[MAX_SLOTS];

/* Per phase: every iteration's instructions per layer and stretches per layer. */
struct phase_samples {
    uint64_t ins[LAYERS][MAX_N];
    uint64_t segs[LAYERS][MAX_N];
    uint64_t call[MAX_N];
    int n, dropped;
};
static struct phase_samples samples[2];

static uint32_t parse_ip(const char *s)
{
    uint32_t v = 0;
    for (int i = 0; i < 4; i++) {
        v = v << 8 | (uint32_t)strtoul(s, (char **)&s, 10);
        if (*s == '.')
            s++;
    }
    return v;
}

static void read_slots(struct pcnt_slot_info *out)
{
    SC4(SYS_PCNT, PCNT_DUMP, (long)out, first_slot + LAYERS, 0);
}

/* A cache-model window around measured iteration i (from 0) of phase ph, if it has an id. */
static void window_begin(const struct phase_def *ph, int i)
{
    window_open = -1;
    if (i < 0 || i >= WINDOW_ITERATIONS)
        return;
    window_open = (long)(size_index << 9 | (unsigned)ph->id << 7 | (unsigned)(i + 1));
    SC2(SYS_MEASURE, MEASURE_WINDOW_BEGIN, window_open);
}

/* Its end; the end id says whether P3's filter kept the iteration. */
static void window_end(bool kept)
{
    if (window_open >= 0)
        SC2(SYS_MEASURE, MEASURE_WINDOW_END, window_open | (kept ? 0 : WINDOW_DROPPED));
    window_open = -1;
}

/* The phase between dumps a and b into iteration slot i of ps; false if P3's filter
 * drops it (a sample of some layer was dropped: an interrupt fell into it). */
static bool record(struct phase_samples *ps)
{
    for (int l = 0; l < LAYERS; l++) {
        const struct pcnt_slot_info *a = &dump_a[first_slot + l], *b = &dump_b[first_slot + l];
        if (b->dropped != a->dropped) {
            ps->dropped++;
            return false;
        }
    }
    for (int l = 0; l < LAYERS; l++) {
        const struct pcnt_slot_info *a = &dump_a[first_slot + l], *b = &dump_b[first_slot + l];
        uint64_t segs = b->count - a->count, sum = b->sum - a->sum;
        ps->segs[l][ps->n] = segs;
        ps->ins[l][ps->n] = sum > segs * switch_cost ? sum - segs * switch_cost : 0;
    }
    ps->n++;
    return true;
}

struct stats {
    uint64_t median, min, max;
};

static struct stats stats_of(const uint64_t *v, int n)
{
    static uint64_t sorted[MAX_N];
    memcpy(sorted, v, sizeof(uint64_t) * (size_t)n);
    sort_u64(sorted, (size_t)n);
    return (struct stats){sorted[n / 2], sorted[0], sorted[n - 1]};
}

static void row(const struct phase_def *ph, unsigned size, const char *layer, const uint64_t *v,
                const uint64_t *segs, const struct phase_samples *ps)
{
    struct stats s = stats_of(v, ps->n), g = segs ? stats_of(segs, ps->n) : (struct stats){0, 0, 0};
    result_printf("{\"type\":\"result\",\"bench\":\"net\",\"test\":\"%s\",\"size\":%u,"
                  "\"phase\":\"%s\",\"layer\":\"%s\",\"unit\":\"tsc\",\"median\":%llu,"
                  "\"min\":%llu,\"max\":%llu,\"n\":%d,\"dropped\":%d,\"segments\":%llu,"
                  "\"switch_cost\":%llu,\"first_slot\":%d,\"calibrations\":%llu}",
                  ph->test, size, ph->name, layer, (unsigned long long)s.median,
                  (unsigned long long)s.min, (unsigned long long)s.max, ps->n, ps->dropped,
                  (unsigned long long)g.median, (unsigned long long)switch_cost, first_slot,
                  (unsigned long long)calibrations);
}

/* P3's modules of the phase, then "other" (the layers outside them). */
static void report(const struct phase_def *ph, unsigned size, const struct phase_samples *ps)
{
    static uint64_t other[MAX_N], other_segs[MAX_N];
    if (ps->n == 0) {
        printf("netbench: %s %u %s: every iteration dropped\n", ph->test, size, ph->name);
        return;
    }
    bool mine[LAYERS] = {false};
    for (int i = 0; i < ph->nlayers; i++) {
        int l = ph->layers[i];
        mine[l] = true;
        row(ph, size, layer_names[l], ps->ins[l], ps->segs[l], ps);
    }
    for (int k = 0; k < ps->n; k++) {
        other[k] = other_segs[k] = 0;
        for (int l = 0; l < LAYERS; l++)
            if (!mine[l]) {
                other[k] += ps->ins[l][k];
                other_segs[k] += ps->segs[l][k];
            }
    }
    row(ph, size, "other", other, other_segs, ps);
}

static long tcp_open(uint32_t ip, uint16_t port)
{
    uint64_t sd = 0, r = 0;
    long e = net_call_open(&conn, NET_SOCK_STREAM, &sd);
    if (e == 0 && (long)sd >= 0)
        e = net_call_connectto(&conn, sd, ip, port, TIMEOUT_MS, &r);
    if (e < 0 || (long)sd < 0 || (long)r < 0) {
        printf("netbench: connect to port %u: %ld/%ld/%ld\n", port, e, (long)sd, (long)r);
        return -1;
    }
    return (long)sd;
}

static bool settle(long sd)
{
    uint64_t r = 0;
    long e = net_call_settle(&conn, (uint64_t)sd, TIMEOUT_MS, &r);
    if (e < 0 || (long)r < 0)
        printf("netbench: settle: %ld/%ld\n", e, (long)r);
    return e == 0 && r == 0;
}

static void close_conn(long sd)
{
    uint64_t r = 0;
    net_call_release(&conn, (uint64_t)sd, &r);
    net_call_run(&conn, 100);
}

/* The ACK phase after a data phase: the stack settles, its layers' costs into sample. */
static bool measure_settle(long sd, const struct phase_def *ph, int i,
                           struct phase_samples *sample)
{
    read_slots(dump_a);
    window_begin(ph, i);
    bool ok = settle(sd);
    read_slots(dump_b);
    window_end(i >= 0 && record(sample));
    return ok;
}

/* End of a test: close, and report its two phases when every round went through. */
static bool finish_test(long sd, bool ok, const char *what, unsigned size,
                        const struct phase_def *data, const struct phase_def *ack)
{
    close_conn(sd);
    if (!ok) {
        printf("netbench: %s %u failed\n", what, size);
        return false;
    }
    report(data, size, &samples[0]);
    report(ack, size, &samples[1]);
    return true;
}

/* The send test of one size: write, then the ACK coming back. */
static bool send_test(uint32_t ip, unsigned size, int n)
{
    static uint8_t data[1440];
    memset(data, 'p', sizeof data);
    long sd = tcp_open(ip, SINK_PORT);
    if (sd < 0)
        return false;
    memset(samples, 0, sizeof samples);
    bool ok = true;
    for (int i = 0; i < WARMUP + n && ok; i++) {
        uint64_t r = 0;
        read_slots(dump_a);
        window_begin(&phase_send, i - WARMUP);
        long e = net_call_write(&conn, (uint64_t)sd, TIMEOUT_MS, data, size, &r);
        read_slots(dump_b);
        ok = e == 0 && r == size;
        window_end(i >= WARMUP && record(&samples[0]));
        ok = ok && measure_settle(sd, &phase_ack_in, i - WARMUP, &samples[1]);
    }
    return finish_test(sd, ok, "send", size, &phase_send, &phase_ack_in);
}

/* The whole write call as the client sees it (IPC, the server's dispatch, the stack),
 * with the probes off: one "call" row per size, test "send", phase "call". */
static bool call_test(uint32_t ip, unsigned size, int n)
{
    static uint8_t data[1440];
    static const struct phase_def phase_call = {"send", "call", {0}, 0, -1};
    long sd = tcp_open(ip, SINK_PORT);
    if (sd < 0)
        return false;
    memset(samples, 0, sizeof samples);
    bool ok = true;
    for (int i = 0; i < WARMUP + n && ok; i++) {
        uint64_t r = 0, t0 = rdtsc();
        long e = net_call_write(&conn, (uint64_t)sd, TIMEOUT_MS, data, size, &r);
        uint64_t call = rdtsc() - t0;
        ok = e == 0 && r == size && settle(sd);
        if (i >= WARMUP)
            samples[0].call[samples[0].n++] = call;
    }
    close_conn(sd);
    if (ok)
        row(&phase_call, size, "write call", samples[0].call, NULL, &samples[0]);
    return ok;
}

/* Read exactly size bytes (one segment; more reads only if it came split). */
static bool read_segment(long sd, unsigned size)
{
    static uint8_t buf[2048];
    unsigned got = 0;
    while (got < size) {
        uint64_t r = 0;
        size_t len = 0;
        long e = net_call_read(&conn, (uint64_t)sd, TIMEOUT_MS, &r, buf, size - got, &len);
        if (e < 0 || (long)r <= 0) {
            printf("netbench: read: %ld/%ld after %u of %u bytes\n", e, (long)r, got, size);
            return false;
        }
        got += (unsigned)len;
    }
    return true;
}

/* The receive test of one size: ask the source for WARMUP + n segments of size bytes,
 * then read each and let the ACK go. */
static bool recv_test(uint32_t ip, unsigned size, int n)
{
    long sd = tcp_open(ip, SOURCE_PORT);
    if (sd < 0)
        return false;
    char ask[17];                     /* 16 bytes: "SIZE COUNT", spaces, newline */
    int len = snprintf(ask, sizeof ask, "%u %d", size, WARMUP + n);
    memset(ask + len, ' ', sizeof ask - 1 - (size_t)len);
    ask[15] = '\n';
    uint64_t r = 0;
    bool ok = net_call_write(&conn, (uint64_t)sd, TIMEOUT_MS, ask, 16, &r) == 0 &&
              r == 16 && settle(sd);
    memset(samples, 0, sizeof samples);
    for (int i = 0; i < WARMUP + n && ok; i++) {
        read_slots(dump_a);
        window_begin(&phase_recv, i - WARMUP);
        ok = read_segment(sd, size);
        read_slots(dump_b);
        window_end(i >= WARMUP && record(&samples[0]));
        ok = ok && measure_settle(sd, &phase_ack_out, i - WARMUP, &samples[1]);
    }
    return finish_test(sd, ok, "recv", size, &phase_recv, &phase_ack_out);
}

/* Probes on, and the fixed cost of one stretch: the minimum of the calibration samples
 * the server left in the first layer's slot. */
static bool probes_on(void)
{
    uint64_t r = 0;
    SC2(SYS_MEASURE, MEASURE_WINDOW_BEGIN, 0);
    long e = net_call_probes(&conn, 1, &r);
    SC2(SYS_MEASURE, MEASURE_WINDOW_END, 0);
    if (e < 0 || (long)r <= 0 || (long)r + LAYERS > MAX_SLOTS) {
        printf("netbench: probes: %ld/%ld\n", e, (long)r);
        return false;
    }
    first_slot = (int)r;
    read_slots(dump_a);
    switch_cost = dump_a[first_slot].min;
    calibrations = dump_a[first_slot].count;
    return calibrations > 0;
}

int main(int argc, char **argv)
{
    if (argc != 3 || atoi(argv[2]) < 1 || atoi(argv[2]) > MAX_N) {
        printf("usage: netbench IP N (N from 1 to %d)\n", MAX_N);
        return 2;
    }
    uint32_t ip = parse_ip(argv[1]);
    int n = atoi(argv[2]);
    long e = srv_connect(&conn, NET_IFACE);
    if (e < 0) {
        printf("netbench: no network server (boot with net=mk or net=ik): %ld\n", e);
        return 1;
    }
    bool ok = probes_on();
    for (unsigned i = 0; ok && i < sizeof sizes / sizeof sizes[0]; i++) {
        size_index = i;
        ok = send_test(ip, sizes[i], n) && recv_test(ip, sizes[i], n);
    }
    uint64_t r = 0;
    net_call_probes(&conn, 0, &r);
    for (unsigned i = 0; ok && i < sizeof sizes / sizeof sizes[0]; i++)
        ok = call_test(ip, sizes[i], n);
    result_printf("{\"type\":\"end\",\"bench\":\"net\",\"status\":%d}", ok ? 0 : 1);
    printf("netbench %s\n", ok ? "done" : "failed");
    return ok ? 0 : 1;
}
