/*
 * nethost: ondol's TCP/IP stack as a Linux program on a tap device, for tests against
 * the host's own stack (tests/test_net_host.py). The stack's only platform is this loop:
 * frames from the tap go to net_input, frames from the stack go to the tap, and the
 * monotonic clock drives net_tick. Optionally a seeded relay (link.h) between the stack
 * and the tap drops, duplicates, reorders and delays frames in both directions.
 *
 * Services (all on the stack's address):
 *   UDP 7   echo
 *   TCP 7   echo
 *   TCP 9   hash sink: reads to EOF, answers "<bytes> <fnv1a-64 hex>\n", closes
 *   TCP 19  source: reads "<bytes> <seed>\n", sends that many bytes of the xorshift64
 *           stream of <seed> (8 little-endian bytes per step), closes
 *   UDP 5   control: "connect A.B.C.D PORT BYTES SEED" makes the stack open a connection
 *           (active open) and send that stream, then close
 * Usage: nethost --tap NAME --ip A.B.C.D [--mask M] [--gw G] [--seed S] [--loss PM]
 *        [--dup PM] [--reorder PM] [--delay MS] [--jitter MS] [--seconds N]
 * Prints "nethost ready" when running; on SIGTERM/SIGINT or after --seconds it prints
 * its counters and exits 0.
 */
#define _GNU_SOURCE
#include "../net.h"
#include "link.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/if.h>
#include <linux/if_tun.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <time.h>
#include <unistd.h>

enum svc { SVC_NONE, SVC_ECHO, SVC_SINK, SVC_SOURCE };

struct conn {
    enum svc svc;
    uint64_t bytes, hash, total, rng;
    size_t pend_off, pend_len;
    char line[64];
    size_t line_len;
    int closing;
    uint8_t pend[4096];
};

static struct netstack *stack;
static struct link relay;
static int use_relay, tapfd;
static struct conn conns[NET_MAX_SOCKETS];
static volatile sig_atomic_t stop;

static uint64_t now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

static void tap_write(const void *frame, size_t len)
{
    if (write(tapfd, frame, len) < 0 && errno != EAGAIN)
        perror("nethost: tap write");
}

static void stack_send(struct netif *nif, const void *frame, size_t len,
                        struct net_offload csum)
{
    (void)csum;                       /* hosted interfaces offload nothing */
    (void)nif;
    if (use_relay)
        link_send(&relay, 0, frame, len, now_ms());
    else
        tap_write(frame, len);
}

static int tap_open(const char *name)
{
    int fd = open("/dev/net/tun", O_RDWR | O_NONBLOCK);
    if (fd < 0)
        return -1;
    struct ifreq ifr;
    memset(&ifr, 0, sizeof ifr);
    ifr.ifr_flags = IFF_TAP | IFF_NO_PI;
    snprintf(ifr.ifr_name, sizeof ifr.ifr_name, "%s", name);
    if (ioctl(fd, TUNSETIFF, &ifr) < 0) {
        close(fd);
        return -1;
    }
    return fd;
}

static uint64_t fnv1a(uint64_t h, const uint8_t *p, size_t n)
{
    for (size_t i = 0; i < n; i++)
        h = (h ^ p[i]) * 0x100000001b3ull;
    return h;
}

static uint64_t xorshift(uint64_t *x)
{
    *x ^= *x << 13;
    *x ^= *x >> 7;
    *x ^= *x << 17;
    return *x;
}

static void listen_on(int type, uint16_t port, enum svc svc)
{
    int sd = net_socket(stack, type);
    if (sd < 0 || net_bind(stack, sd, 0, port) < 0 ||
        (type == NET_SOCK_STREAM && net_listen(stack, sd, 128) < 0)) {
        fprintf(stderr, "nethost: cannot listen on %u\n", port);
        exit(1);
    }
    conns[sd].svc = svc;
}

/* Send what is pending; returns 1 when nothing is left. */
static int flush_pending(int sd, struct conn *c)
{
    while (c->pend_len) {
        long r = net_send(stack, sd, c->pend + c->pend_off, c->pend_len);
        if (r <= 0)
            return 0;
        c->pend_off += (size_t)r;
        c->pend_len -= (size_t)r;
    }
    c->pend_off = 0;
    return 1;
}

static void finish(int sd, struct conn *c)
{
    net_close(stack, sd);
    memset(c, 0, sizeof *c);
}

static void serve_echo(int sd, struct conn *c)
{
    while (flush_pending(sd, c)) {
        long r = net_recv(stack, sd, c->pend, sizeof c->pend);
        if (r == -NET_EAGAIN)
            return;
        if (r <= 0) {
            finish(sd, c);
            return;
        }
        c->pend_len = (size_t)r;
    }
}

static void serve_sink(int sd, struct conn *c)
{
    if (c->closing) {
        if (flush_pending(sd, c))
            finish(sd, c);
        return;
    }
    uint8_t buf[8192];
    long r;
    while ((r = net_recv(stack, sd, buf, sizeof buf)) > 0) {
        c->hash = fnv1a(c->hash, buf, (size_t)r);
        c->bytes += (uint64_t)r;
    }
    if (r == 0) {
        c->pend_len = (size_t)snprintf((char *)c->pend, sizeof c->pend, "%llu %016llx\n",
                                       (unsigned long long)c->bytes, (unsigned long long)c->hash);
        c->closing = 1;
        serve_sink(sd, c);
    } else if (r != -NET_EAGAIN) {
        finish(sd, c);
    }
}

static void serve_source(int sd, struct conn *c)
{
    if (!c->total) {                          /* still reading the request line */
        char ch;
        long r;
        while (c->line_len < sizeof c->line - 1 && (r = net_recv(stack, sd, &ch, 1)) == 1) {
            c->line[c->line_len++] = ch;
            if (ch == '\n')
                break;
        }
        if (!c->line_len || c->line[c->line_len - 1] != '\n')
            return;
        c->line[c->line_len] = 0;
        unsigned long long n = 0, seed = 0;
        if (sscanf(c->line, "%llu %llu", &n, &seed) != 2 || !n) {
            finish(sd, c);
            return;
        }
        c->total = n;
        c->rng = seed * 0x9e3779b97f4a7c15ull + 1;
    }
    unsigned ev = net_events(stack, sd);
    if ((ev & NET_EV_ERR) || ((ev & NET_EV_HUP) && c->bytes < c->total)) {
        finish(sd, c);                        /* refused or reset */
        return;
    }
    while (flush_pending(sd, c) && c->bytes < c->total) {
        size_t n = 0;
        while (n + 8 <= sizeof c->pend) {
            uint64_t x = xorshift(&c->rng);
            memcpy(c->pend + n, &x, 8);
            n += 8;
        }
        if (n > c->total - c->bytes)
            n = (size_t)(c->total - c->bytes);
        c->pend_len = n;
        c->bytes += n;
    }
    if (c->bytes >= c->total && !c->pend_len)
        finish(sd, c);
}

/* New connections take their listener's service. */
static void accept_all(void)
{
    for (int sd = 0; sd < NET_MAX_SOCKETS; sd++) {
        if (conns[sd].svc == SVC_NONE || strcmp(net_state_name(stack, sd), "LISTEN"))
            continue;
        int n;
        while ((n = net_accept(stack, sd, 0, 0)) >= 0) {
            memset(&conns[n], 0, sizeof conns[n]);
            conns[n].svc = conns[sd].svc;
            conns[n].hash = 0xcbf29ce484222325ull;     /* FNV-1a offset basis */
        }
    }
}

static void serve(void)
{
    accept_all();
    for (int sd = 0; sd < NET_MAX_SOCKETS; sd++) {
        struct conn *c = &conns[sd];
        const char *st = net_state_name(stack, sd);
        if (c->svc == SVC_NONE || !strcmp(st, "LISTEN"))
            continue;
        if (!strcmp(st, "FREE"))
            memset(c, 0, sizeof *c);
        else if (c->svc == SVC_ECHO)
            serve_echo(sd, c);
        else if (c->svc == SVC_SINK)
            serve_sink(sd, c);
        else
            serve_source(sd, c);
    }
}

/* The control port: start an active open that sends a stream (a source without request). */
static void serve_control(int sd)
{
    char msg[128];
    uint32_t from;
    uint16_t from_port;
    long r;
    while ((r = net_recvfrom(stack, sd, msg, sizeof msg - 1, &from, &from_port)) >= 0) {
        msg[r] = 0;
        unsigned a, b, c, d, port;
        unsigned long long n, seed;
        if (sscanf(msg, "connect %u.%u.%u.%u %u %llu %llu", &a, &b, &c, &d, &port, &n, &seed) != 7 ||
            !n || port > 65535)
            continue;
        int s = net_socket(stack, NET_SOCK_STREAM);
        if (s < 0)
            continue;
        net_connect(stack, s, a << 24 | b << 16 | c << 8 | d, (uint16_t)port);
        memset(&conns[s], 0, sizeof conns[s]);
        conns[s].svc = SVC_SOURCE;
        conns[s].total = n;
        conns[s].rng = seed * 0x9e3779b97f4a7c15ull + 1;
    }
}

static void serve_udp_echo(int sd)
{
    uint8_t buf[1500];
    uint32_t ip;
    uint16_t port;
    long r;
    while ((r = net_recvfrom(stack, sd, buf, sizeof buf, &ip, &port)) >= 0)
        net_sendto(stack, sd, buf, (size_t)r, ip, port);
}

/* Frames from the tap into the stack (through the relay if any), and relayed frames out. */
static void pump(void)
{
    uint8_t frame[2048];
    ssize_t n;
    while ((n = read(tapfd, frame, sizeof frame)) > 0) {
        if (use_relay)
            link_send(&relay, 1, frame, (size_t)n, now_ms());
        else
            net_input(stack, frame, (size_t)n);
    }
    if (!use_relay)
        return;
    int dir;
    size_t len;
    while ((len = link_recv(&relay, now_ms(), &dir, frame, sizeof frame)) > 0) {
        if (dir == 0)
            tap_write(frame, len);
        else
            net_input(stack, frame, len);
    }
}

static void on_signal(int sig)
{
    (void)sig;
    stop = 1;
}

static uint32_t parse_ip(const char *s)
{
    struct in_addr a;
    if (inet_pton(AF_INET, s, &a) != 1) {
        fprintf(stderr, "nethost: bad address %s\n", s);
        exit(2);
    }
    return ntohl(a.s_addr);
}

int main(int argc, char **argv)
{
    const char *tap = 0;
    uint32_t ip = 0, mask = 0xffffff00u, gw = 0;
    struct link_params lp = {0, 0, 0, 0, 0, 1};
    unsigned seconds = 0;
    for (int i = 1; i + 1 < argc; i += 2) {
        const char *k = argv[i], *v = argv[i + 1];
        if (!strcmp(k, "--tap")) tap = v;
        else if (!strcmp(k, "--ip")) ip = parse_ip(v);
        else if (!strcmp(k, "--mask")) mask = parse_ip(v);
        else if (!strcmp(k, "--gw")) gw = parse_ip(v);
        else if (!strcmp(k, "--seed")) lp.seed = strtoull(v, 0, 0);
        else if (!strcmp(k, "--loss")) lp.loss_pm = (unsigned)atoi(v);
        else if (!strcmp(k, "--dup")) lp.dup_pm = (unsigned)atoi(v);
        else if (!strcmp(k, "--reorder")) lp.reorder_pm = (unsigned)atoi(v);
        else if (!strcmp(k, "--delay")) lp.delay_ms = (unsigned)atoi(v);
        else if (!strcmp(k, "--jitter")) lp.jitter_ms = (unsigned)atoi(v);
        else if (!strcmp(k, "--seconds")) seconds = (unsigned)atoi(v);
        else { fprintf(stderr, "nethost: unknown option %s\n", k); return 2; }
    }
    if (!tap || !ip) {
        fprintf(stderr, "usage: nethost --tap NAME --ip A.B.C.D [options]\n");
        return 2;
    }
    tapfd = tap_open(tap);
    if (tapfd < 0) {
        perror("nethost: open tap");
        return 1;
    }
    use_relay = lp.loss_pm || lp.dup_pm || lp.reorder_pm || lp.delay_ms || lp.jitter_ms;
    link_init(&relay, &lp);
    static struct netif nif = {{0x02, 0x4f, 0x4e, 0x44, 0x4f, 0x4c}, 1500, stack_send, 0, 0};
    stack = calloc(1, net_stack_size());
    uint64_t start = now_ms();
    net_init(stack, &nif, ip, mask, gw, start, lp.seed ^ start);
    listen_on(NET_SOCK_STREAM, 7, SVC_ECHO);
    listen_on(NET_SOCK_STREAM, 9, SVC_SINK);
    listen_on(NET_SOCK_STREAM, 19, SVC_SOURCE);
    int udp = net_socket(stack, NET_SOCK_DGRAM), control = net_socket(stack, NET_SOCK_DGRAM);
    net_bind(stack, udp, 0, 7);
    net_bind(stack, control, 0, 5);
    signal(SIGTERM, on_signal);
    signal(SIGINT, on_signal);
    printf("nethost ready\n");
    fflush(stdout);
    while (!stop && (!seconds || now_ms() - start < seconds * 1000ull)) {
        struct pollfd pfd = {tapfd, POLLIN, 0};
        uint64_t next = net_next_timer(stack), now = now_ms();
        int timeout = next <= now ? 0 : next - now > 5 ? 5 : (int)(next - now);
        if (use_relay)
            timeout = timeout > 1 ? 1 : timeout;
        poll(&pfd, 1, timeout);
        net_tick(stack, now_ms());
        pump();
        serve_udp_echo(udp);
        serve_control(control);
        serve();
    }
    const struct net_stats *st = net_stats(stack);
    printf("nethost stats: rx %llu tx %llu rexmt %llu fast_rexmt %llu ooo %llu hp_ack %llu "
           "hp_data %llu bad_cksum %llu relay lost %llu dup %llu reordered %llu\n",
           (unsigned long long)st->rx_frames, (unsigned long long)st->tx_frames,
           (unsigned long long)st->tcp_rexmt, (unsigned long long)st->tcp_fast_rexmt,
           (unsigned long long)st->tcp_ooo, (unsigned long long)st->tcp_hdrpred_ack,
           (unsigned long long)st->tcp_hdrpred_data, (unsigned long long)st->tcp_bad_cksum,
           (unsigned long long)relay.lost, (unsigned long long)relay.duplicated,
           (unsigned long long)relay.reordered);
    link_free(&relay);
    free(stack);
    close(tapfd);
    return 0;
}
