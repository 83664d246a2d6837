/*
 * netcli: a native client of the network server (interfaces/net.idl, docs/net.md). One
 * binary for both placements: the boot option net=mk|ik decides who answers.
 *   netcli config                      the address, netmask, gateway and MAC in use
 *   netcli ping IP [N]                 N (default 3) ICMP echoes of 56 bytes, one a second at most
 *   netcli send IP PORT BYTES SEED     TCP: connect, send BYTES of the test stream, close
 *   netcli recv IP PORT                TCP: connect, read to the end of the stream
 *   netcli udp IP PORT TEXT            one datagram, and the answer
 *   netcli stats                       the driver's and the stack's counters
 *   netcli channel                     the data channel's refusals of a client that breaks
 *                                      its rules (docs/net.md, "The data channel")
 * Transfers print the byte count and FNV-1a hash of what went each way; the test stream
 * (xorshift64 from SEED, 8 little-endian bytes a step) is tests/net/hostpeer.py's.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <ondol/sys.h>
#include "net_client.h"

#define NET_SOCK_STREAM 1
#define NET_SOCK_DGRAM  2
#define TIMEOUT_MS 10000
#define CHUNK 4096
#define FIN_MS 1500                   /* the RTO's first three backoffs: 200, 400, 800 ms */

static struct srv_conn conn;

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

static void print_ip(const char *what, uint64_t ip)
{
    printf(" %s %lu.%lu.%lu.%lu", what, (unsigned long)(ip >> 24) & 255, (unsigned long)(ip >> 16) & 255,
           (unsigned long)(ip >> 8) & 255, (unsigned long)ip & 255);
}

struct stream {
    uint64_t x;
    uint8_t bytes[8];
    int left;
};

static void stream_init(struct stream *st, uint64_t seed)
{
    st->x = seed * 0x9E3779B97F4A7C15ull + 1;
    st->left = 0;
}

static uint8_t stream_byte(struct stream *st)
{
    if (st->left == 0) {
        st->x ^= st->x << 13;
        st->x ^= st->x >> 7;
        st->x ^= st->x << 17;
        for (int i = 0; i < 8; i++)
            st->bytes[i] = (uint8_t)(st->x >> (8 * i));
        st->left = 8;
    }
    return st->bytes[8 - st->left--];
}

static uint64_t fnv1a(uint64_t h, const uint8_t *p, size_t n)
{
    for (size_t i = 0; i < n; i++)
        h = (h ^ p[i]) * 0x100000001B3ull;
    return h;
}
#define FNV_OFFSET 0xCBF29CE484222325ull

static int cmd_config(void)
{
    uint64_t ip, mask, gw, mac, flags;
    long r = net_call_config(&conn, &ip, &mask, &gw, &mac, &flags);
    if (r < 0)
        return printf("netcli: config: error %ld\n", r), 1;
    printf("netcli config");
    print_ip("ip", ip);
    print_ip("mask", mask);
    print_ip("gw", gw);
    printf(" mac %012lx\n", (unsigned long)mac);
    return 0;
}

static int cmd_ping(uint32_t ip, int n)
{
    int answered = 0;
    for (int seq = 1; seq <= n; seq++) {
        uint64_t r = 0, rtt = 0;
        long e = net_call_echo(&conn, ip, (uint64_t)seq, 56, 2000, &r, &rtt);
        if (e == 0 && (long)r == 0) {
            answered++;
            printf("netcli ping seq %d: reply in %lu ms\n", seq, (unsigned long)rtt);
        } else {
            printf("netcli ping seq %d: no reply (%ld/%ld)\n", seq, e, (long)r);
        }
    }
    printf("netcli ping %d sent %d answered\n", n, answered);
    return answered != n;
}

/* A connected TCP socket, or a negative result (printed). */
static long tcp_open(uint32_t ip, uint16_t port)
{
    uint64_t sd = 0, r = 0;
    long e = net_call_open(&conn, NET_SOCK_STREAM, &sd);
    if (e == 0 && (long)sd >= 0)
        e = net_call_connectto(&conn, sd, ip, port, TIMEOUT_MS, &r);
    if (e < 0 || (long)sd < 0 || (long)r < 0) {
        printf("netcli: connect: %ld/%ld/%ld\n", e, (long)sd, (long)r);
        return -1;
    }
    return (long)sd;
}

static int cmd_send(uint32_t ip, uint16_t port, uint64_t bytes, uint64_t seed)
{
    static uint8_t chunk[CHUNK];
    long sd = tcp_open(ip, port);
    if (sd < 0)
        return 1;
    struct stream st;
    stream_init(&st, seed);
    uint64_t sent = 0, h = FNV_OFFSET, r = 0;
    while (sent < bytes) {
        size_t n = bytes - sent < CHUNK ? (size_t)(bytes - sent) : CHUNK;
        for (size_t i = 0; i < n; i++)
            chunk[i] = stream_byte(&st);
        if (net_call_write(&conn, (uint64_t)sd, TIMEOUT_MS, chunk, n, &r) < 0 || (long)r != (long)n) {
            printf("netcli: send stopped after %lu bytes (%ld)\n", (unsigned long)sent, (long)r);
            break;
        }
        h = fnv1a(h, chunk, n);
        sent += n;
    }
    /* The stack runs only during calls: stay until every byte is acknowledged (a lost
     * tail segment needs retransmissions), then give the FIN time for a few of its own. */
    net_call_settle(&conn, (uint64_t)sd, TIMEOUT_MS, &r);
    net_call_release(&conn, (uint64_t)sd, &r);
    net_call_run(&conn, FIN_MS);
    printf("netcli send %lu bytes fnv %016lx\n", (unsigned long)sent, (unsigned long)h);
    return sent != bytes;
}

static int cmd_recv(uint32_t ip, uint16_t port)
{
    static uint8_t chunk[CHUNK];
    long sd = tcp_open(ip, port);
    if (sd < 0)
        return 1;
    uint64_t got = 0, h = FNV_OFFSET, r = 0;
    size_t len = 0;
    for (;;) {
        long e = net_call_read(&conn, (uint64_t)sd, TIMEOUT_MS, &r, chunk, sizeof(chunk), &len);
        if (e < 0 || (long)r <= 0) {
            if (e < 0 || (long)r < 0)
                printf("netcli: recv: %ld/%ld\n", e, (long)r);
            break;
        }
        h = fnv1a(h, chunk, len);
        got += len;
    }
    net_call_release(&conn, (uint64_t)sd, &r);
    net_call_run(&conn, 200);
    printf("netcli recv %lu bytes fnv %016lx\n", (unsigned long)got, (unsigned long)h);
    return 0;
}

static int cmd_udp(uint32_t ip, uint16_t port, const char *text)
{
    static char back[CHUNK + 1];
    uint64_t sd = 0, r = 0, from = 0, from_port = 0;
    size_t len = 0;
    net_call_open(&conn, NET_SOCK_DGRAM, &sd);
    net_call_senddgram(&conn, sd, ip, port, text, strlen(text), &r);
    long e = net_call_recvdgram(&conn, sd, TIMEOUT_MS, &r, &from, &from_port, back, CHUNK, &len);
    back[len] = 0;
    printf("netcli udp answer (%ld/%ld) \"%s\"\n", e, (long)r, back);
    net_call_release(&conn, sd, &r);
    return e < 0 || (long)r < 0;
}

static int cmd_stats(void)
{
    uint64_t rx = 0, tx = 0, irqs = 0, hp = 0, txc = 0, rxc = 0, tso = 0;
    long e = net_call_counters(&conn, &rx, &tx, &irqs, &hp, &txc, &rxc, &tso);
    printf("netcli stats rx %lu tx %lu irqs %lu hdrpred %lu csum tx %lu rx %lu tso tx %lu (%ld)\n",
           (unsigned long)rx, (unsigned long)tx, (unsigned long)irqs, (unsigned long)hp,
           (unsigned long)txc, (unsigned long)rxc, (unsigned long)tso, e);
    /* the stack's view, and the super-segments received whole (net_rxtso) */
    uint64_t rxf = 0, rxb = 0, txf = 0, txb = 0, rxd = 0, txd = 0, sup = 0;
    long f = net_call_ifstats(&conn, &rxf, &rxb, &txf, &txb, &rxd, &txd, &sup);
    printf("netcli ifstats rx %lu frames %lu bytes dropped %lu super %lu (%ld)\n",
           (unsigned long)rxf, (unsigned long)rxb, (unsigned long)rxd, (unsigned long)sup, f);
    return e < 0 || f < 0;
}

/* A client without a window of its own (netcli may not make one): every channel op must
 * be refused with -EINVAL (22) and the server go on serving; and the kernel must refuse to
 * map our memory for a thread that is not serving our call (E_PERM, -7). */
static int cmd_channel(void)
{
    static unsigned char anon[8192] __attribute__((aligned(4096)));
    uint64_t sd = 0, tid = 0, r[6] = {0};
    long e = net_call_open(&conn, NET_SOCK_STREAM, &sd);
    e |= net_call_chwrite(&conn, sd, 100, &r[0]);                          /* no channel */
    e |= net_call_chread(&conn, sd, 100, &r[1]);
    e |= net_call_channel(&conn, (uint64_t)anon, 4096, 0, &r[2], &tid);   /* not a window */
    e |= net_call_channel(&conn, (uint64_t)anon, 100, 0, &r[3], &tid);    /* not pages */
    e |= net_call_channel(&conn, (uint64_t)anon, 1ull << 30, 0, &r[4], &tid);   /* too big */
    e |= net_call_chwrite(&conn, sd, ~0ull, &r[5]);
    long k = sys_vm_ctl(conn.dest, VM_CTL_MAP_CALLER, anon, 4096, PROT_READ | PROT_WRITE, 0);
    uint64_t ignored;
    net_call_release(&conn, sd, &ignored);
    printf("netcli channel");
    for (int i = 0; i < 6; i++)
        printf(" %ld", (long)r[i]);
    printf(" tid %lu kernel %ld\n", (unsigned long)tid, k);
    return e < 0;
}

int main(int argc, char **argv)
{
    long e = srv_connect(&conn, NET_IFACE);
    if (e < 0) {
        printf("netcli: no network server (boot with net=mk or net=ik): %ld\n", e);
        return 1;
    }
    const char *cmd = argc > 1 ? argv[1] : "";
    if (!strcmp(cmd, "config"))
        return cmd_config();
    if (!strcmp(cmd, "ping") && argc >= 3)
        return cmd_ping(parse_ip(argv[2]), argc > 3 ? atoi(argv[3]) : 3);
    if (!strcmp(cmd, "send") && argc == 6)
        return cmd_send(parse_ip(argv[2]), (uint16_t)atoi(argv[3]), strtoull(argv[4], 0, 10),
                        strtoull(argv[5], 0, 10));
    if (!strcmp(cmd, "recv") && argc == 4)
        return cmd_recv(parse_ip(argv[2]), (uint16_t)atoi(argv[3]));
    if (!strcmp(cmd, "udp") && argc == 5)
        return cmd_udp(parse_ip(argv[2]), (uint16_t)atoi(argv[3]), argv[4]);
    if (!strcmp(cmd, "stats"))
        return cmd_stats();
    if (!strcmp(cmd, "channel"))
        return cmd_channel();
    printf("usage: netcli config | ping IP [N] | send IP PORT BYTES SEED | recv IP PORT | "
           "udp IP PORT TEXT | stats | channel\n");
    return 2;
}
