/*
 * netcost SIZE ITER: P3's experiment on the hosted stack, for exact per-layer instruction
 * counts under `valgrind --tool=callgrind` (servers/net/host/netcost.py runs it and makes
 * the table in docs/net.md). Two stacks on one open connection, each with a minimal
 * "driver" that copies a frame into a one-frame transmit slot (as a driver copies into a
 * device ring); frames move only when this program moves them, so each phase is one call:
 *   cost_send        A: net_send of SIZE bytes -> TCP output -> IP -> Ethernet -> driver
 *   cost_receive     B: driver -> Ethernet -> IP -> TCP input (append) ; net_recv (copy out)
 *   cost_ack_output  B: the delayed-ACK timer -> TCP output -> IP -> Ethernet -> driver
 *   cost_ack_input   A: driver -> Ethernet -> IP -> TCP ACK input and buffer release
 * Warm-up iterations call the phases' bodies directly, so `--toggle-collect=cost_PHASE`
 * counts only the ITER measured calls.
 */
#include "../net_priv.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct wire {
    uint8_t frame[2048];
    size_t len;
};
static struct wire slot[2];            /* frames sent by A (0) and by B (1) */
static struct netif nif[2];
static struct netstack *st[2];
static uint64_t now = 1000;
static uint8_t user_buf[2048];

/* The driver's transmit routine: copy the frame into the device's slot. */
__attribute__((noinline)) static void driver_send(struct netif *n, const void *frame, size_t len,
                        struct net_offload csum)
{
    (void)csum;                       /* hosted interfaces offload nothing */
    struct wire *w = &slot[n == &nif[1]];
    memcpy(w->frame, frame, len);
    w->len = len;
}

/* The driver's receive routine: hand the frame in `from`'s slot to stack `to`. */
__attribute__((noinline)) static void driver_receive(int from, int to)
{
    size_t len = slot[from].len;
    slot[from].len = 0;
    if (len)
        net_input(st[to], slot[from].frame, len);
}

static int conn_a, conn_b;

static void send_once(size_t size) { net_send(st[0], conn_a, user_buf, size); }
static void receive_once(size_t size)
{
    driver_receive(0, 1);
    if (net_recv(st[1], conn_b, user_buf, size) != (long)size)
        abort();
}
static void ack_output_once(void)
{
    now += TCP_DELACK_MS;
    net_tick(st[1], now);
}
static void ack_input_once(void) { driver_receive(1, 0); }

__attribute__((noinline)) void cost_send(size_t size) { send_once(size); }
__attribute__((noinline)) void cost_receive(size_t size) { receive_once(size); }
__attribute__((noinline)) void cost_ack_output(void) { ack_output_once(); }
__attribute__((noinline)) void cost_ack_input(void) { ack_input_once(); }

static void exchange_until_quiet(void)
{
    for (int i = 0; i < 64 && (slot[0].len || slot[1].len); i++) {
        driver_receive(0, 1);
        driver_receive(1, 0);
    }
}

static void setup(void)
{
    for (int i = 0; i < 2; i++) {
        static const uint8_t mac[2][6] = {{2, 0, 0, 0, 0, 1}, {2, 0, 0, 0, 0, 2}};
        memcpy(nif[i].mac, mac[i], 6);
        nif[i].mtu = 1500;
        nif[i].send = driver_send;
        st[i] = calloc(1, net_stack_size());
        net_init(st[i], &nif[i], 0x0a000001u + (uint32_t)i, 0xffffff00u, 0, now, (uint64_t)i + 1);
    }
    int l = net_socket(st[1], NET_SOCK_STREAM);
    net_bind(st[1], l, 0, 5001);
    net_listen(st[1], l, 1);
    conn_a = net_socket(st[0], NET_SOCK_STREAM);
    net_setopt(st[0], conn_a, NET_OPT_NODELAY, 1);
    net_connect(st[0], conn_a, 0x0a000002u, 5001);
    exchange_until_quiet();                   /* ARP, SYN, SYN-ACK, ACK */
    conn_b = net_accept(st[1], l, 0, 0);
    if (conn_b < 0) {
        fprintf(stderr, "netcost: no connection\n");
        exit(1);
    }
}

int main(int argc, char **argv)
{
    size_t size = argc > 1 ? strtoul(argv[1], 0, 0) : 1440;
    int iter = argc > 2 ? atoi(argv[2]) : 10;
    if (size == 0 || size > 1460 || iter <= 0) {
        fprintf(stderr, "usage: netcost SIZE(1-1460) ITER\n");
        return 2;
    }
    setup();
    for (int i = 0; i < 20; i++) {            /* warm-up: caches, cwnd, ARP, prediction */
        send_once(size);
        receive_once(size);
        ack_output_once();
        ack_input_once();
    }
    for (int i = 0; i < iter; i++) {
        cost_send(size);
        cost_receive(size);
        cost_ack_output();
        cost_ack_input();
    }
    const struct net_stats *a = net_stats(st[0]), *b = net_stats(st[1]);
    printf("netcost size %zu iter %d: predicted ACKs %llu, predicted data %llu\n", size, iter,
           (unsigned long long)a->tcp_hdrpred_ack, (unsigned long long)b->tcp_hdrpred_data);
    return 0;
}
