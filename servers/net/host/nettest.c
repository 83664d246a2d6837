/*
 * Unit tests of the stack: two stacks in one process through a simulated (optionally
 * lossy, reordering, duplicating, delaying) link with a simulated clock. Deterministic;
 * runs in seconds; no root. Prints one line per group, "GROUP N checks M failed", and
 * "total ..." at the end; exit status 1 on any failure (tests/test_net.py).
 */
#include "pair.h"
#include "../net_priv.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static unsigned checks, failed, group_checks, group_failed;
static const char *group;

#define CHECK(cond) check((cond), #cond, __LINE__)
static int check(int ok, const char *what, int line)
{
    checks++;
    group_checks++;
    if (!ok) {
        failed++;
        group_failed++;
        printf("  FAIL %s line %d: %s\n", group, line, what);
    }
    return ok;
}

static void begin(const char *name)
{
    group = name;
    group_checks = group_failed = 0;
}

static void end(void) { printf("%-12s %u checks %u failed\n", group, group_checks, group_failed); }

static const struct link_params clean = {0, 0, 0, 1, 0, 1};

/* The byte at position i of the test stream `seed`. */
static uint8_t stream_byte(uint64_t seed, uint64_t i)
{
    uint64_t x = (i / 8 + 1) * 0x9e3779b97f4a7c15ull ^ seed * 0xbf58476d1ce4e5b9ull;
    x ^= x >> 31;
    x *= 0x94d049bb133111ebull;
    x ^= x >> 29;
    return (uint8_t)(x >> (i % 8 * 8));
}

/* Step until cond is true or `limit_ms` of simulated time passed. */
#define RUN_UNTIL(p, cond, limit_ms)                                        \
    do {                                                                    \
        uint64_t until_ = (p)->now + (limit_ms);                            \
        while (!(cond) && (p)->now < until_)                                \
            pair_step((p), 1000);                                           \
    } while (0)

/* A listener on B:port and a connection from A; returns 1 with both ends. */
static int connect_pair(struct pair *p, uint16_t port, int *a, int *b, int *listener)
{
    int l = net_socket(p->st[1], NET_SOCK_STREAM);
    if (l < 0 || net_bind(p->st[1], l, 0, port) || net_listen(p->st[1], l, 8))
        return 0;
    int c = net_socket(p->st[0], NET_SOCK_STREAM);
    if (net_connect(p->st[0], c, PAIR_IP_B, port) != -NET_EINPROGRESS)
        return 0;
    int acc = -1;
    RUN_UNTIL(p, (acc = net_accept(p->st[1], l, 0, 0)) >= 0, 60000);
    RUN_UNTIL(p, net_events(p->st[0], c) & NET_EV_OUT, 60000);
    *a = c;
    *b = acc;
    if (listener)
        *listener = l;
    else
        net_close(p->st[1], l);
    return acc >= 0 && (net_events(p->st[0], c) & NET_EV_OUT);
}

/* Send n bytes of stream `seed` from (sf, sdf) to (st, sdt), reading as it arrives, then
 * close the sender and read to EOF. Returns 1 if every byte arrived intact. */
static int transfer(struct pair *p, int from, int sdf, int sdt, uint64_t n, uint64_t seed)
{
    struct netstack *sf = p->st[from], *dt = p->st[!from];
    static uint8_t buf[8192];
    uint64_t sent = 0, got = 0;
    int bad = 0, eof = 0;
    uint64_t until = p->now + 3600000;
    while (!eof && p->now < until) {
        while (sent < n) {
            size_t k = n - sent < sizeof buf ? (size_t)(n - sent) : sizeof buf;
            for (size_t i = 0; i < k; i++)
                buf[i] = stream_byte(seed, sent + i);
            long r = net_send(sf, sdf, buf, k);
            if (r <= 0)
                break;
            sent += (uint64_t)r;
            if (sent == n)
                net_shutdown_write(sf, sdf);
        }
        long r;
        while ((r = net_recv(dt, sdt, buf, sizeof buf)) > 0) {
            for (long i = 0; i < r; i++)
                bad |= buf[i] != stream_byte(seed, got + (uint64_t)i);
            got += (uint64_t)r;
        }
        if (r == 0)
            eof = 1;
        else
            pair_step(p, 1000);
    }
    if (got != n || bad)
        printf("  transfer: sent %llu got %llu bad %d eof %d\n", (unsigned long long)sent,
               (unsigned long long)got, bad, eof);
    return eof && got == n && !bad;
}

/* Close both ends, run until everything is freed (TIME_WAIT included); 1 if no leak. */
static int drain(struct pair *p)
{
    for (int i = 0; i < 2; i++)
        for (int sd = 0; sd < NET_MAX_SOCKETS; sd++)
            net_close(p->st[i], sd);
    RUN_UNTIL(p, net_sockets_in_use(p->st[0]) + net_sockets_in_use(p->st[1]) == 0, 600000);
    RUN_UNTIL(p, link_next_due(&p->link) == UINT64_MAX, 600000);
    int ok = net_sockets_in_use(p->st[0]) == 0 && net_sockets_in_use(p->st[1]) == 0 &&
             net_mbufs_in_use(p->st[0]) == 0 && net_mbufs_in_use(p->st[1]) == 0;
    if (!ok)
        printf("  drain: sockets %u %u (%s) mbufs %u %u\n", net_sockets_in_use(p->st[0]),
               net_sockets_in_use(p->st[1]), net_state_name(p->st[0], 0),
               net_mbufs_in_use(p->st[0]), net_mbufs_in_use(p->st[1]));
    return ok;
}

static struct sock *tcb(struct pair *p, int side, int sd) { return &p->st[side]->socks[sd]; }

static void test_handshake(void)
{
    begin("handshake");
    struct pair p;
    pair_init(&p, &clean, 1500);
    int a, b, l;
    CHECK(connect_pair(&p, 80, &a, &b, &l));
    CHECK(!strcmp(net_state_name(p.st[0], a), "ESTABLISHED"));
    CHECK(!strcmp(net_state_name(p.st[1], b), "ESTABLISHED"));
    uint32_t ip;
    uint16_t port;
    CHECK(net_peername(p.st[0], a, &ip, &port) == 0 && ip == PAIR_IP_B && port == 80);
    CHECK(net_sockname(p.st[1], b, &ip, &port) == 0 && ip == PAIR_IP_B && port == 80);
    CHECK(tcb(&p, 0, a)->snd_mss == 1460 && tcb(&p, 1, b)->snd_mss == 1460);
    CHECK(tcb(&p, 0, a)->snd_scale == 1 && tcb(&p, 1, b)->rcv_scale == 1);
    CHECK(tcb(&p, 0, a)->snd_wnd == 65536 - 0 || tcb(&p, 0, a)->snd_wnd >= 65534);
    int l2 = net_socket(p.st[1], NET_SOCK_STREAM);
    CHECK(net_bind(p.st[1], l2, 0, 80) == -NET_EADDRINUSE);
    CHECK(net_send(p.st[0], 999, "x", 1) == -NET_EBADF);
    net_close(p.st[1], l2);
    net_close(p.st[1], l);
    CHECK(transfer(&p, 0, a, b, 1000, 1));
    CHECK(transfer(&p, 1, b, a, 1000, 2));
    CHECK(drain(&p));
    pair_free(&p);

    pair_init(&p, &clean, 576);                /* MSS from the smaller side */
    CHECK(connect_pair(&p, 81, &a, &b, 0));
    CHECK(tcb(&p, 0, a)->snd_mss == 536);
    CHECK(transfer(&p, 0, a, b, 20000, 3));
    CHECK(drain(&p));
    pair_free(&p);
    end();
}

static void test_refused_and_reset(void)
{
    begin("rst");
    struct pair p;
    pair_init(&p, &clean, 1500);
    int c = net_socket(p.st[0], NET_SOCK_STREAM);
    net_connect(p.st[0], c, PAIR_IP_B, 9999);
    RUN_UNTIL(&p, net_events(p.st[0], c) & NET_EV_ERR, 10000);
    CHECK(net_error(p.st[0], c) == NET_ECONNREFUSED);
    CHECK(net_recv(p.st[0], c, (char[4]){0}, 4) == 0);
    net_close(p.st[0], c);
    int a, b;
    CHECK(connect_pair(&p, 80, &a, &b, 0));
    net_abort(p.st[0], a);
    RUN_UNTIL(&p, net_events(p.st[1], b) & NET_EV_ERR, 10000);
    CHECK(net_recv(p.st[1], b, (char[4]){0}, 4) == -NET_ECONNRESET);
    CHECK(!strcmp(net_state_name(p.st[1], b), "CLOSED"));
    CHECK(p.st[0]->st.tcp_rst_sent >= 1);
    CHECK(drain(&p));
    pair_free(&p);
    end();
}

static void test_close_states(void)
{
    begin("close");
    struct pair p;
    pair_init(&p, &clean, 1500);
    int a, b;
    CHECK(connect_pair(&p, 80, &a, &b, 0));
    net_shutdown_write(p.st[0], a);
    RUN_UNTIL(&p, !strcmp(net_state_name(p.st[0], a), "FIN_WAIT_2"), 5000);
    CHECK(!strcmp(net_state_name(p.st[1], b), "CLOSE_WAIT"));
    CHECK(net_recv(p.st[1], b, (char[4]){0}, 4) == 0);
    CHECK(net_send(p.st[1], b, "late", 4) == 4);     /* half-close: B may still send */
    net_shutdown_write(p.st[1], b);
    RUN_UNTIL(&p, !strcmp(net_state_name(p.st[0], a), "TIME_WAIT"), 5000);
    CHECK(!strcmp(net_state_name(p.st[0], a), "TIME_WAIT"));
    char buf[8];
    uint32_t ip;
    uint16_t port;                                   /* MSG_PEEK from an offset */
    CHECK(net_peek(p.st[0], a, 1, buf, 8, &ip, &port) == 3 && !memcmp(buf, "ate", 3));
    CHECK(net_peek(p.st[0], a, 4, buf, 8, &ip, &port) == 0);
    CHECK(net_recv(p.st[0], a, buf, 8) == 4 && !memcmp(buf, "late", 4));
    RUN_UNTIL(&p, !strcmp(net_state_name(p.st[1], b), "CLOSED"), 5000);
    CHECK(!strcmp(net_state_name(p.st[1], b), "CLOSED"));
    uint64_t t0 = p.now;
    RUN_UNTIL(&p, strcmp(net_state_name(p.st[0], a), "TIME_WAIT"), 10 * TCP_MSL_MS);
    CHECK(p.now - t0 >= 2 * TCP_MSL_MS - 100 && p.now - t0 <= 2 * TCP_MSL_MS + 1000);
    CHECK(drain(&p));

    /* simultaneous close: both FIN_WAIT_1 -> CLOSING -> TIME_WAIT */
    CHECK(connect_pair(&p, 82, &a, &b, 0));
    net_shutdown_write(p.st[0], a);
    net_shutdown_write(p.st[1], b);
    RUN_UNTIL(&p, !strcmp(net_state_name(p.st[0], a), "TIME_WAIT") &&
              !strcmp(net_state_name(p.st[1], b), "TIME_WAIT"), 5000);
    CHECK(!strcmp(net_state_name(p.st[0], a), "TIME_WAIT"));
    CHECK(!strcmp(net_state_name(p.st[1], b), "TIME_WAIT"));
    CHECK(drain(&p));

    /* simultaneous open: both bound, both connect */
    int x = net_socket(p.st[0], NET_SOCK_STREAM), y = net_socket(p.st[1], NET_SOCK_STREAM);
    net_bind(p.st[0], x, 0, 5000);
    net_bind(p.st[1], y, 0, 6000);
    net_connect(p.st[0], x, PAIR_IP_B, 6000);
    net_connect(p.st[1], y, PAIR_IP_A, 5000);
    RUN_UNTIL(&p, !strcmp(net_state_name(p.st[0], x), "ESTABLISHED") &&
              !strcmp(net_state_name(p.st[1], y), "ESTABLISHED"), 10000);
    CHECK(!strcmp(net_state_name(p.st[0], x), "ESTABLISHED"));
    CHECK(!strcmp(net_state_name(p.st[1], y), "ESTABLISHED"));
    CHECK(transfer(&p, 0, x, y, 5000, 9));
    CHECK(drain(&p));
    pair_free(&p);
    end();
}


/* A TCP segment to stack `to` on connection tp's 4-tuple (as its peer would send it), with
 * `opt` option bytes; `bad` 1 spoils the checksum, 2 the header length. */
static void inject_tcp(struct pair *p, int to, const struct sock *tp, uint32_t seq, uint32_t ack,
                       uint8_t flags, const uint8_t *opt, unsigned optlen, int bad)
{
    uint8_t f[14 + 20 + 20 + 40] = {0};
    memcpy(f, p->nif[to].mac, 6);
    memcpy(f + 6, p->nif[!to].mac, 6);
    put16(f + 12, ETHERTYPE_IP);
    uint8_t *ih = f + 14, *th = f + 34;
    unsigned tlen = 20 + optlen;
    ih[0] = 0x45; put16(ih + 2, (uint16_t)(20 + tlen)); ih[8] = 64; ih[9] = IPPROTO_TCP;
    put32(ih + 12, tp->rip); put32(ih + 16, tp->lip);
    put16(ih + 10, cksum_fold(cksum_add(0, ih, 20)));
    put16(th, tp->rport); put16(th + 2, tp->lport);
    put32(th + 4, seq); put32(th + 8, ack);
    th[12] = (uint8_t)((bad == 2 ? 15 : tlen / 4) << 4);
    th[13] = flags;
    put16(th + 14, 1000);
    if (optlen)
        memcpy(th + 20, opt, optlen);
    put16(th + 16, cksum_fold(cksum_add(cksum_pseudo(tp->rip, tp->lip, IPPROTO_TCP, (uint16_t)tlen),
                                        th, tlen)) ^ (bad == 1 ? 0x5a5a : 0));
    net_input(p->st[to], f, 34 + tlen);
}

/* Bring a connection to `state` on side 0 (A) and return A's socket. */
static int reach_state(struct pair *p, const char *state, int *b)
{
    int a;
    if (!connect_pair(p, (uint16_t)(1000 + p->now % 1000), &a, b, 0))
        return -1;
    if (!strcmp(state, "ESTABLISHED"))
        return a;
    if (!strcmp(state, "CLOSE_WAIT") || !strcmp(state, "LAST_ACK")) {
        net_shutdown_write(p->st[1], *b);
        RUN_UNTIL(p, !strcmp(net_state_name(p->st[0], a), "CLOSE_WAIT"), 5000);
        if (!strcmp(state, "LAST_ACK")) {
            p->link.p.loss_pm = 1000;        /* the FIN's ACK never arrives */
            net_shutdown_write(p->st[0], a);
            RUN_UNTIL(p, 0, 10);
        }
        return a;
    }
    if (!strcmp(state, "FIN_WAIT_1")) {
        p->link.p.loss_pm = 1000;
        net_shutdown_write(p->st[0], a);
        RUN_UNTIL(p, 0, 10);
        return a;
    }
    net_shutdown_write(p->st[0], a);
    RUN_UNTIL(p, !strcmp(net_state_name(p->st[0], a), "FIN_WAIT_2"), 5000);
    if (!strcmp(state, "TIME_WAIT")) {
        net_shutdown_write(p->st[1], *b);
        RUN_UNTIL(p, !strcmp(net_state_name(p->st[0], a), "TIME_WAIT"), 5000);
    }
    return a;
}

static void test_rst_every_state(void)
{
    begin("rststates");
    static const char *const states[] = {"ESTABLISHED", "FIN_WAIT_1", "FIN_WAIT_2",
                                         "CLOSE_WAIT", "LAST_ACK", "TIME_WAIT"};
    for (unsigned i = 0; i < sizeof states / sizeof states[0]; i++) {
        struct pair p;
        pair_init(&p, &clean, 1500);
        int b, a = reach_state(&p, states[i], &b);
        CHECK(a >= 0 && !strcmp(net_state_name(p.st[0], a), states[i]));
        struct sock *tp = tcb(&p, 0, a);
        uint64_t ch = p.st[0]->st.tcp_challenge_ack;
        inject_tcp(&p, 0, tp, tp->rcv_nxt + 100, 0, TH_RST, 0, 0, 0);   /* in window, not exact */
        CHECK(!strcmp(net_state_name(p.st[0], a), states[i]));
        CHECK(p.st[0]->st.tcp_challenge_ack == ch + 1);
        inject_tcp(&p, 0, tp, tp->rcv_nxt, 0, TH_RST, 0, 0, 0);         /* exact: reset */
        CHECK(!strcmp(net_state_name(p.st[0], a), "CLOSED"));
        p.link.p.loss_pm = 0;
        net_abort(p.st[1], b);
        CHECK(drain(&p));
        pair_free(&p);
    }
    /* SYN in a synchronized state: challenge ACK, connection kept (RFC 5961 4) */
    struct pair p;
    pair_init(&p, &clean, 1500);
    int a, b;
    CHECK(connect_pair(&p, 80, &a, &b, 0));
    struct sock *tp = tcb(&p, 0, a);
    inject_tcp(&p, 0, tp, tp->rcv_nxt + 5, 0, TH_SYN, 0, 0, 0);
    CHECK(!strcmp(net_state_name(p.st[0], a), "ESTABLISHED") && p.st[0]->st.tcp_challenge_ack == 1);
    /* bad checksum, bad header length, malformed options: dropped or ignored, counted */
    uint64_t bad = p.st[0]->st.tcp_bad_cksum, drop = p.st[0]->st.rx_drop_tcp;
    inject_tcp(&p, 0, tp, tp->rcv_nxt, tp->snd_una, TH_ACK | TH_FIN, 0, 0, 1);
    inject_tcp(&p, 0, tp, tp->rcv_nxt, tp->snd_una, TH_ACK | TH_FIN, 0, 0, 2);
    CHECK(p.st[0]->st.tcp_bad_cksum == bad + 1 && p.st[0]->st.rx_drop_tcp == drop + 1);
    CHECK(!strcmp(net_state_name(p.st[0], a), "ESTABLISHED"));
    static const uint8_t junk[8] = {2, 0, 3, 99, 8, 1, 0, 0};    /* zero length, overlong */
    inject_tcp(&p, 0, tp, tp->rcv_nxt, tp->snd_una, TH_ACK, junk, sizeof junk, 0);
    CHECK(!strcmp(net_state_name(p.st[0], a), "ESTABLISHED"));
    /* an old duplicate segment is ACKed and does not move rcv_nxt */
    uint32_t rn = tp->rcv_nxt;
    inject_tcp(&p, 0, tp, rn - 10, tp->snd_una, TH_ACK, 0, 0, 0);
    CHECK(tp->rcv_nxt == rn);
    /* an ACK for data never sent is answered with an ACK and ignored */
    uint32_t una = tp->snd_una;
    inject_tcp(&p, 0, tp, rn, una + 5000, TH_ACK, 0, 0, 0);
    CHECK(tp->snd_una == una);
    /* RST to a closed port answers RST; RST to it answers nothing */
    struct sock ghost = *tp;
    ghost.lport = 4444;
    uint64_t rsts = p.st[0]->st.tcp_rst_sent;
    inject_tcp(&p, 0, &ghost, 1, 0, TH_SYN, 0, 0, 0);
    inject_tcp(&p, 0, &ghost, 1, 0, TH_RST, 0, 0, 0);
    CHECK(p.st[0]->st.tcp_rst_sent == rsts + 1);
    /* a RST for an embryonic connection frees it quietly (no RST for a RST) */
    int l = net_socket(p.st[0], NET_SOCK_STREAM);
    net_bind(p.st[0], l, 0, 4444);
    net_listen(p.st[0], l, 4);
    unsigned before = net_sockets_in_use(p.st[0]);
    p.link.p.loss_pm = 1000;                  /* the SYN,ACK goes nowhere */
    inject_tcp(&p, 0, &ghost, 1000, 0, TH_SYN, 0, 0, 0);
    CHECK(net_sockets_in_use(p.st[0]) == before + 1);
    rsts = p.st[0]->st.tcp_rst_sent;
    inject_tcp(&p, 0, &ghost, 1001, 0, TH_RST, 0, 0, 0);
    CHECK(net_sockets_in_use(p.st[0]) == before && p.st[0]->st.tcp_rst_sent == rsts);
    p.link.p.loss_pm = 0;
    CHECK(drain(&p));
    pair_free(&p);
    end();
}

static unsigned count_b_frames;
static void count_tap(struct pair *p, int from, const uint8_t *frame, size_t len)
{
    (void)p;
    (void)frame;
    (void)len;
    count_b_frames += from == 1;
}

static void test_delack_nagle(void)
{
    begin("delack");
    struct pair p;
    pair_init(&p, &clean, 1500);
    int a, b;
    CHECK(connect_pair(&p, 80, &a, &b, 0));
    RUN_UNTIL(&p, 0, 500);
    p.tap = count_tap;
    count_b_frames = 0;
    net_send(p.st[0], a, "one", 3);
    uint64_t t0 = p.now;
    RUN_UNTIL(&p, count_b_frames > 0, 1000);
    CHECK(count_b_frames == 1 && p.now - t0 >= TCP_DELACK_MS);   /* ACK waited */
    /* two full segments: ACK at once for the second */
    RUN_UNTIL(&p, 0, 200);
    count_b_frames = 0;
    static uint8_t big[2920];
    net_send(p.st[0], a, big, sizeof big);
    t0 = p.now;
    RUN_UNTIL(&p, count_b_frames > 0, 1000);
    CHECK(count_b_frames == 1 && p.now - t0 < TCP_DELACK_MS);
    RUN_UNTIL(&p, 0, 200);
    /* Nagle: small writes while data is outstanding are held and coalesced */
    uint64_t before = p.frames[0];
    for (int i = 0; i < 10; i++)
        net_send(p.st[0], a, "0123456789", 10);
    CHECK(p.frames[0] - before == 1);
    RUN_UNTIL(&p, 0, 500);
    CHECK(p.frames[0] - before == 2);
    net_setopt(p.st[0], a, NET_OPT_NODELAY, 1);
    before = p.frames[0];
    for (int i = 0; i < 10; i++)
        net_send(p.st[0], a, "0123456789", 10);
    CHECK(p.frames[0] - before == 10);
    char buf[256];
    while (net_recv(p.st[1], b, buf, sizeof buf) > 0)
        ;
    p.tap = 0;
    CHECK(drain(&p));
    pair_free(&p);
    end();
}

static void test_bulk(void)
{
    begin("bulk");
    struct pair p;
    pair_init(&p, &(struct link_params){0, 0, 0, 5, 0, 7}, 1500);
    int a, b;
    CHECK(connect_pair(&p, 80, &a, &b, 0));
    /* request/response: the reader empties its buffer before the delayed ACK, so the ACK
     * carries the same window and takes the predicted path */
    uint64_t hp = p.st[0]->st.tcp_hdrpred_ack;
    for (int i = 0; i < 20; i++) {
        char small[100];
        net_send(p.st[0], a, small, sizeof small);
        RUN_UNTIL(&p, net_recv(p.st[1], b, small, sizeof small) > 0, 1000);
        RUN_UNTIL(&p, tcb(&p, 0, a)->snd_una == tcb(&p, 0, a)->snd_max, 1000);
    }
    CHECK(p.st[0]->st.tcp_hdrpred_ack - hp >= 19);
    uint64_t t0 = p.now;
    CHECK(transfer(&p, 0, a, b, 4 << 20, 11));
    uint64_t ms = p.now - t0;
    printf("  header prediction: %llu ACKs, %llu data segments\n",
           (unsigned long long)p.st[0]->st.tcp_hdrpred_ack,
           (unsigned long long)p.st[1]->st.tcp_hdrpred_data);
    printf("  4 MiB over a 5 ms link: %llu ms simulated, srtt %u ms, cwnd %u\n",
           (unsigned long long)ms, tcb(&p, 0, a)->srtt >> 3, tcb(&p, 0, a)->cwnd);
    CHECK(ms < 10000);                       /* a 64 KiB window at 10 ms RTT: ~1.6 s */
    CHECK((tcb(&p, 0, a)->srtt >> 3) >= 10 && (tcb(&p, 0, a)->srtt >> 3) <= 20);
    CHECK(p.st[1]->st.tcp_hdrpred_data > 1000);
    CHECK(p.st[0]->st.tcp_rexmt == 0);
    CHECK(transfer(&p, 1, b, a, 1 << 20, 12));
    CHECK(drain(&p));
    pair_free(&p);
    end();
}

static void impaired_seeds(uint64_t first, uint64_t last, uint64_t *fast, uint64_t *rexmt,
                           uint64_t *ooo)
{
    for (uint64_t seed = first; seed <= last; seed++) {
        struct link_params lp = {20, 10, 30, 3, 4, seed};
        struct pair p;
        pair_init(&p, &lp, 1500);
        int a, b;
        CHECK(connect_pair(&p, 80, &a, &b, 0));
        CHECK(transfer(&p, seed & 1, (seed & 1) ? b : a, (seed & 1) ? a : b, 300000, seed));
        CHECK(drain(&p));
        for (int i = 0; i < 2; i++) {
            *fast += p.st[i]->st.tcp_fast_rexmt;
            *rexmt += p.st[i]->st.tcp_rexmt;
            *ooo += p.st[i]->st.tcp_ooo;
        }
        pair_free(&p);
    }
}

static void test_impaired(void)
{
    begin("impaired");
    uint64_t fast = 0, rexmt = 0, ooo = 0;
    impaired_seeds(1, 8, &fast, &rexmt, &ooo);
    printf("  8 seeds: fast retransmits %llu, timeouts %llu, out-of-order %llu\n",
           (unsigned long long)fast, (unsigned long long)rexmt, (unsigned long long)ooo);
    CHECK(fast > 0 && ooo > 0);
    /* heavy loss: 15 % each way, still completes */
    struct pair p;
    pair_init(&p, &(struct link_params){150, 0, 0, 2, 0, 99}, 1500);
    int a, b;
    CHECK(connect_pair(&p, 80, &a, &b, 0));
    CHECK(transfer(&p, 0, a, b, 100000, 5));
    CHECK(p.st[0]->st.tcp_rexmt > 0);
    CHECK(drain(&p));
    pair_free(&p);
    end();
}

static void test_zero_window(void)
{
    begin("zerowindow");
    struct pair p;
    pair_init(&p, &clean, 1500);
    int a, b;
    CHECK(connect_pair(&p, 80, &a, &b, 0));
    static uint8_t buf[200000];
    for (size_t i = 0; i < sizeof buf; i++)
        buf[i] = stream_byte(4, i);
    size_t sent = 0;
    long r;
    uint64_t stop = p.now + 20000;           /* B reads nothing: the window closes */
    while (p.now < stop) {
        while (sent < sizeof buf && (r = net_send(p.st[0], a, buf + sent, sizeof buf - sent)) > 0)
            sent += (size_t)r;
        pair_step(&p, 1000);
    }
    printf("  zero window: %zu bytes queued, snd_wnd %u, %llu probes\n", sent,
           tcb(&p, 0, a)->snd_wnd, (unsigned long long)p.st[0]->st.tcp_persist);
    CHECK(tcb(&p, 0, a)->snd_wnd == 0);
    CHECK(p.st[0]->st.tcp_persist >= 3);
    CHECK(!strcmp(net_state_name(p.st[0], a), "ESTABLISHED"));
    static uint8_t got[200000];
    size_t n = 0;
    uint64_t until = p.now + 60000;
    while (n < sizeof buf && p.now < until) {
        while (sent < sizeof buf && (r = net_send(p.st[0], a, buf + sent, sizeof buf - sent)) > 0)
            sent += (size_t)r;
        while ((r = net_recv(p.st[1], b, got + n, sizeof got - n)) > 0)
            n += (size_t)r;
        pair_step(&p, 1000);
    }
    CHECK(n == sizeof buf && !memcmp(buf, got, n));
    CHECK(drain(&p));
    pair_free(&p);
    end();
}

static void test_keepalive(void)
{
    begin("keepalive");
    struct pair p;
    pair_init(&p, &clean, 1500);
    int a, b;
    CHECK(connect_pair(&p, 80, &a, &b, 0));
    net_setopt(p.st[0], a, NET_OPT_KEEPALIVE, 1);
    RUN_UNTIL(&p, 0, TCP_KEEP_IDLE_MS + 3 * TCP_KEEP_INTVL_MS);
    CHECK(p.st[0]->st.tcp_keepalive >= 1);   /* probes answered: still up */
    CHECK(!strcmp(net_state_name(p.st[0], a), "ESTABLISHED"));
    p.link.p.loss_pm = 1000;                 /* the peer vanishes */
    RUN_UNTIL(&p, net_events(p.st[0], a) & NET_EV_ERR,
              TCP_KEEP_IDLE_MS + (TCP_KEEP_PROBES + 2) * TCP_KEEP_INTVL_MS);
    CHECK(net_error(p.st[0], a) == NET_ETIMEDOUT);
    p.link.p.loss_pm = 0;
    net_abort(p.st[1], b);
    CHECK(drain(&p));
    pair_free(&p);
    end();
}

static void test_many(void)
{
    begin("many");
    struct pair p;
    pair_init(&p, &(struct link_params){5, 5, 5, 2, 2, 3}, 1500);
    int l = net_socket(p.st[1], NET_SOCK_STREAM);
    net_bind(p.st[1], l, 0, 7);
    net_listen(p.st[1], l, 128);
    enum { N = 100 };
    int c[N], srv[N], done[N] = {0};
    for (int i = 0; i < N; i++) {
        c[i] = net_socket(p.st[0], NET_SOCK_STREAM);
        net_connect(p.st[0], c[i], PAIR_IP_B, 7);
        srv[i] = -1;
    }
    int accepted = 0, ndone = 0;
    char msg[64], buf[64];
    uint64_t until = p.now + 120000;
    while (ndone < N && p.now < until) {
        int s;
        while ((s = net_accept(p.st[1], l, 0, 0)) >= 0)
            srv[accepted++] = s;
        for (int i = 0; i < accepted; i++) {    /* echo server */
            long r = net_recv(p.st[1], srv[i], buf, sizeof buf);
            if (r > 0)
                net_send(p.st[1], srv[i], buf, (size_t)r);
        }
        for (int i = 0; i < N; i++) {
            if (done[i] == 0 && (net_events(p.st[0], c[i]) & NET_EV_OUT)) {
                int len = snprintf(msg, sizeof msg, "conn %d", i);
                net_send(p.st[0], c[i], msg, (size_t)len);
                done[i] = 1;
            } else if (done[i] == 1) {
                long r = net_recv(p.st[0], c[i], buf, sizeof buf - 1);
                if (r > 0) {
                    buf[r] = 0;
                    snprintf(msg, sizeof msg, "conn %d", i);
                    done[i] = strcmp(buf, msg) ? 3 : 2;
                    ndone++;
                }
            }
        }
        pair_step(&p, 1000);
    }
    int good = 0;
    for (int i = 0; i < N; i++)
        good += done[i] == 2;
    CHECK(accepted == N);
    CHECK(good == N);
    CHECK(drain(&p));
    pair_free(&p);

    /* SYN flood bounded by the backlog: nobody accepts, 2 fit, the rest are dropped */
    pair_init(&p, &clean, 1500);
    l = net_socket(p.st[1], NET_SOCK_STREAM);
    net_bind(p.st[1], l, 0, 7);
    net_listen(p.st[1], l, 2);
    for (int i = 0; i < 10; i++) {
        c[i] = net_socket(p.st[0], NET_SOCK_STREAM);
        net_connect(p.st[0], c[i], PAIR_IP_B, 7);
    }
    RUN_UNTIL(&p, 0, 3000);
    CHECK(net_sockets_in_use(p.st[1]) == 3);
    CHECK(p.st[1]->st.tcp_syn_dropped >= 8);
    int got = 0;
    RUN_UNTIL(&p, (got += net_accept(p.st[1], l, 0, 0) >= 0) == 10, 120000);
    CHECK(got == 10);                        /* retried SYNs get in as the queue drains */
    CHECK(drain(&p));
    pair_free(&p);
    end();
}

static void test_udp_icmp_arp(void)
{
    begin("udp");
    struct pair p;
    pair_init(&p, &clean, 1500);
    int u = net_socket(p.st[1], NET_SOCK_DGRAM), v = net_socket(p.st[0], NET_SOCK_DGRAM);
    CHECK(net_bind(p.st[1], u, 0, 7) == 0);
    CHECK(net_sendto(p.st[0], v, "hello", 5, PAIR_IP_B, 7) == 5);
    RUN_UNTIL(&p, net_events(p.st[1], u) & NET_EV_IN, 5000);
    char buf[2000];
    uint32_t ip;
    uint16_t port;
    CHECK(net_recvfrom(p.st[1], u, buf, sizeof buf, &ip, &port) == 5 && !memcmp(buf, "hello", 5) &&
          ip == PAIR_IP_A && port >= 49152);
    CHECK(net_recvfrom(p.st[1], u, buf, sizeof buf, &ip, &port) == -NET_EAGAIN);
    /* peek and queued lengths; a connected socket takes only its peer's datagrams */
    int w = net_socket(p.st[0], NET_SOCK_DGRAM);
    uint32_t inq = 1, outq = 1;
    CHECK(net_connect(p.st[1], u, PAIR_IP_A, 5000) == 0);
    CHECK(net_bind(p.st[0], w, 0, 5000) == 0);
    CHECK(net_sendto(p.st[0], v, "other", 5, PAIR_IP_B, 7) == 5);
    CHECK(net_send(p.st[0], w, "peer!!", 6) == -NET_EDESTADDRREQ);   /* no peer yet */
    CHECK(net_connect(p.st[0], w, PAIR_IP_B, 7) == 0 && net_send(p.st[0], w, "peer!!", 6) == 6);
    RUN_UNTIL(&p, net_events(p.st[1], u) & NET_EV_IN, 5000);
    CHECK(p.st[1]->st.udp_not_peer == 1);
    CHECK(net_queued(p.st[1], u, &inq, &outq) == 0 && inq == 6 && outq == 0);
    CHECK(net_peek(p.st[1], u, 0, buf, 4, &ip, &port) == 4 && !memcmp(buf, "peer", 4) &&
          ip == PAIR_IP_A && port == 5000);
    CHECK(net_recv(p.st[1], u, buf, sizeof buf) == 6 && !memcmp(buf, "peer!!", 6));
    CHECK(net_peek(p.st[1], u, 0, buf, 4, &ip, &port) == -NET_EAGAIN);
    CHECK(net_queued(p.st[1], u, &inq, &outq) == 0 && inq == 0);
    CHECK(net_connect(p.st[1], u, 0, 0) == 0);
    net_close(p.st[0], w);
    CHECK(net_sendto(p.st[0], v, buf, 1473, PAIR_IP_B, 7) == -NET_EMSGSIZE);
    net_sendto(p.st[0], v, "x", 1, PAIR_IP_B, 8);     /* closed port */
    RUN_UNTIL(&p, 0, 100);
    CHECK(p.st[1]->st.udp_noport == 1);
    CHECK(p.st[0]->st.rx_drop_icmp == 1);             /* the port-unreachable came back */
    /* ARP: an absent neighbour; three requests, then the datagram is dropped */
    uint64_t sent = p.frames[0];
    net_sendto(p.st[0], v, "y", 1, 0x0a000063u, 7);
    RUN_UNTIL(&p, 0, 5000);
    CHECK(p.frames[0] - sent == NET_ARP_TRIES);
    CHECK(p.st[0]->st.arp_timeouts == 1);
    /* ICMP echo request by hand: B answers */
    uint8_t f[14 + 20 + 16] = {0};
    memcpy(f, p.nif[1].mac, 6);
    memcpy(f + 6, p.nif[0].mac, 6);
    put16(f + 12, ETHERTYPE_IP);
    uint8_t *ih = f + 14, *ic = f + 34;
    ih[0] = 0x45; put16(ih + 2, 36); ih[8] = 64; ih[9] = IPPROTO_ICMP;
    put32(ih + 12, PAIR_IP_A); put32(ih + 16, PAIR_IP_B);
    put16(ih + 10, cksum_fold(cksum_add(0, ih, 20)));
    ic[0] = 8; put16(ic + 4, 0x1234); put16(ic + 6, 1); memcpy(ic + 8, "pingdata", 8);
    put16(ic + 2, cksum_fold(cksum_add(0, ic, 16)));
    net_input(p.st[1], f, sizeof f);
    CHECK(p.st[1]->st.icmp_echo == 1);
    ih[8] = 64; f[30 + 4 - 4] ^= 0xff;                /* corrupt the IP header checksum */
    net_input(p.st[1], f, sizeof f);
    CHECK(p.st[1]->st.ip_bad_cksum == 1);
    /* net_ping: A pings B; the intact reply is noted, another sequence number is not */
    CHECK(net_ping(p.st[0], PAIR_IP_B, 7, 3, NET_PING_MAX) == 0);
    RUN_UNTIL(&p, net_ping_answered(p.st[0], 7, 3), 1000);
    CHECK(net_ping_answered(p.st[0], 7, 3) && !net_ping_answered(p.st[0], 7, 4));
    CHECK(p.st[0]->st.icmp_echo_reply == 1);
    CHECK(net_ping(p.st[0], PAIR_IP_B, 7, 4, NET_PING_MAX + 1) == -NET_EMSGSIZE);
    /* a raw ICMP socket: its own echo request out, the reply in with the IP header */
    int r = net_socket(p.st[0], NET_SOCK_RAW);
    CHECK(net_sendto(p.st[0], r, ic, 16, PAIR_IP_B, 0) == 16);
    RUN_UNTIL(&p, net_events(p.st[0], r) & NET_EV_IN, 1000);
    CHECK(net_recvfrom(p.st[0], r, buf, sizeof buf, &ip, &port) == 36 && ip == PAIR_IP_B &&
          buf[0] == 0x45 && buf[9] == IPPROTO_ICMP && buf[20] == 0 &&
          !memcmp(buf + 24, ic + 4, 12));
    CHECK(net_sendto(p.st[0], r, ic, 4, PAIR_IP_B, 0) == -NET_EINVAL);
    net_close(p.st[0], r);
    net_close(p.st[0], v);
    net_close(p.st[1], u);
    CHECK(drain(&p));
    pair_free(&p);
    end();
}

/* `nettest SEED COUNT`: only the impaired transfer, for COUNT seeds from SEED (a longer
 * exploration than make test's eight). */
/* ---- DHCP: a scripted server on B (UDP port 67) and the client on A ------------------ */
struct dhcpd {
    int sd;
    int mode;                          /* DHCPD_ANSWER, DHCPD_SILENT, DHCPD_NAK */
    uint32_t lease_s;
    unsigned discovers, requests, unicast_requests, bad_requests;
    uint32_t last_ciaddr;
};
#define DHCPD_ANSWER 0
#define DHCPD_SILENT 1
#define DHCPD_NAK 2
#define DHCPD_OFFER_IP 0x0a00004du     /* 10.0.0.77 */

/* The value of option `code` in a client message (len bytes), or NULL. */
static const uint8_t *dhcp_opt(const uint8_t *m, size_t len, uint8_t code, uint8_t *olen)
{
    for (size_t i = 240; i + 1 < len && m[i] != 255;) {
        if (m[i] == 0) {
            i++;
            continue;
        }
        if (m[i] == code) {
            *olen = m[i + 1];
            return m + i + 2;
        }
        i += 2u + m[i + 1];
    }
    return NULL;
}

/* A reply of `type` to request `req` (xid, chaddr): the offer/lease options. */
static size_t dhcpd_reply(const struct dhcpd *d, uint8_t *out, const uint8_t *req, uint8_t type)
{
    memset(out, 0, 300);
    out[0] = 2; out[1] = 1; out[2] = 6;
    memcpy(out + 4, req + 4, 4);
    memcpy(out + 28, req + 28, 16);
    if (type != 6)
        put32(out + 16, DHCPD_OFFER_IP);
    put32(out + 236, 0x63825363u);
    uint8_t *o = out + 240;
    *o++ = 53; *o++ = 1; *o++ = type;
    *o++ = 54; *o++ = 4; put32(o, PAIR_IP_B); o += 4;
    if (type != 6) {
        *o++ = 1; *o++ = 4; put32(o, 0xffffff00u); o += 4;
        *o++ = 3; *o++ = 4; put32(o, PAIR_IP_B); o += 4;
        *o++ = 51; *o++ = 4; put32(o, d->lease_s); o += 4;
    }
    *o++ = 255;
    return 300;
}

/* Answers every message waiting on B's port 67 as d->mode says; checks each request. */
static void dhcpd_serve(struct pair *p, struct dhcpd *d)
{
    uint8_t m[600], out[300];
    uint32_t ip;
    uint16_t port;
    long n;
    while ((n = net_recvfrom(p->st[1], d->sd, m, sizeof m, &ip, &port)) > 0) {
        uint8_t olen = 0;
        const uint8_t *type = dhcp_opt(m, (size_t)n, 53, &olen);
        int good = n >= 300 && m[0] == 1 && port == 68 && !memcmp(m + 28, p->nif[0].mac, 6) &&
                   get32(m + 236) == 0x63825363u && type && olen == 1 &&
                   dhcp_opt(m, (size_t)n, 55, &olen);
        if (!good) {
            d->bad_requests++;
            continue;
        }
        if (*type == 1) {
            d->discovers++;
            good = ip == 0 && (get16(m + 10) & 0x8000);
        } else if (*type == 3) {
            d->requests++;
            d->last_ciaddr = get32(m + 12);
            const uint8_t *want = dhcp_opt(m, (size_t)n, 50, &olen);
            if (d->last_ciaddr)
                d->unicast_requests += ip == d->last_ciaddr;
            else
                good = want && olen == 4 && get32(want) == DHCPD_OFFER_IP &&
                       dhcp_opt(m, (size_t)n, 54, &olen);
        }
        d->bad_requests += !good;
        if (d->mode == DHCPD_SILENT)
            continue;
        uint8_t reply = *type == 1 ? 2 : d->mode == DHCPD_NAK ? 6 : 5;
        net_sendto(p->st[1], d->sd, out, dhcpd_reply(d, out, m, reply), 0xffffffffu, 68);
    }
}

#define RUN_SERVING(p, d, cond, limit_ms)                                   \
    do {                                                                    \
        uint64_t until_ = (p)->now + (limit_ms);                            \
        while (!(cond) && (p)->now < until_) {                              \
            pair_step((p), 1000);                                           \
            dhcpd_serve((p), (d));                                          \
        }                                                                   \
    } while (0)

/* A hand-made reply to A's current transaction, broken as `how` says, sent from B. */
static void dhcp_bad_reply(struct pair *p, struct dhcpd *d, int how)
{
    uint8_t req[300] = {0}, out[300];
    put32(req + 4, net_dhcp(p->st[0])->xid);
    memcpy(req + 28, p->nif[0].mac, 6);
    size_t n = dhcpd_reply(d, out, req, 2);
    if (how == 0) out[4] ^= 1;                 /* another transaction */
    if (how == 1) out[28] ^= 1;                /* another client */
    if (how == 2) out[0] = 1;                  /* a request, not a reply */
    if (how == 3) { out[241] = 200; n = 250; } /* an option running past the end */
    if (how == 4) n = 200;                     /* shorter than the fixed part */
    if (how == 5) { out[246] = 0; out[245] = 0; out[244] = 0; out[243] = 0; out[242] = 0; } /* no server id */
    net_sendto(p->st[1], d->sd, out, n, 0xffffffffu, 68);
}

static void test_dhcp(void)
{
    begin("dhcp");
    struct pair p;
    pair_init(&p, &clean, 1500);
    unsigned mbufs = net_mbufs_in_use(p.st[0]);
    struct dhcpd d = {.sd = net_socket(p.st[1], NET_SOCK_DGRAM), .lease_s = 600};
    CHECK(net_bind(p.st[1], d.sd, 0, 67) == 0);
    d.mode = DHCPD_SILENT;
    net_dhcp_start(p.st[0]);
    uint32_t ip, mask, gw;
    net_address(p.st[0], &ip, &mask, &gw);
    CHECK(ip == 0 && net_dhcp_state(p.st[0]) == DHCP_SELECTING);
    /* unanswered: DISCOVERs at 0, ~4, ~12, ~28 s (backoff 4, 8, 16 s, +-1 s) */
    RUN_SERVING(&p, &d, 0, 30000);
    CHECK(d.discovers == 4 && d.bad_requests == 0);
    /* replies that are not for us, or broken, change nothing */
    for (int how = 0; how < 6; how++)
        dhcp_bad_reply(&p, &d, how);
    RUN_UNTIL(&p, 0, 10);
    CHECK(net_dhcp(p.st[0])->dropped == 6 && net_dhcp_state(p.st[0]) == DHCP_SELECTING);
    /* answered: OFFER, REQUEST, ACK */
    d.mode = DHCPD_ANSWER;
    RUN_SERVING(&p, &d, net_dhcp_state(p.st[0]) == DHCP_BOUND, 70000);
    net_address(p.st[0], &ip, &mask, &gw);
    CHECK(net_dhcp_state(p.st[0]) == DHCP_BOUND && ip == DHCPD_OFFER_IP &&
          mask == 0xffffff00u && gw == PAIR_IP_B && d.requests == 1 && d.bad_requests == 0);
    /* the address works: B answers a ping from it */
    CHECK(net_ping(p.st[0], PAIR_IP_B, 7, 1, 32) == 0);
    RUN_SERVING(&p, &d, net_ping_answered(p.st[0], 7, 1), 5000);
    CHECK(net_ping_answered(p.st[0], 7, 1));
    /* T1 (lease/2 = 300 s): a unicast REQUEST from the address, answered: renewed */
    uint64_t bound_at = p.now;
    RUN_SERVING(&p, &d, net_dhcp(p.st[0])->leases == 2, 400000);
    CHECK(net_dhcp(p.st[0])->leases == 2 && d.unicast_requests == 1 &&
          d.last_ciaddr == DHCPD_OFFER_IP && p.now >= bound_at + 300000 - 10 &&
          p.now < bound_at + 301000);
    /* the server goes away: renewing, rebinding (broadcast), then the lease runs out and
     * the address goes, 600 s after the renewal */
    d.mode = DHCPD_SILENT;
    uint64_t renewed_at = p.now;
    unsigned before = d.requests;
    RUN_SERVING(&p, &d, net_dhcp_state(p.st[0]) == DHCP_SELECTING, 700000);
    net_address(p.st[0], &ip, &mask, &gw);
    CHECK(net_dhcp_state(p.st[0]) == DHCP_SELECTING && ip == 0 &&
          p.now >= renewed_at + 600000 - 10 && p.now < renewed_at + 601000);
    CHECK(d.requests - before >= 3 && d.bad_requests == 0);
    /* a NAK sends the client back to the start */
    d.mode = DHCPD_NAK;
    RUN_SERVING(&p, &d, net_dhcp(p.st[0])->naks == 1, 70000);
    CHECK(net_dhcp(p.st[0])->naks == 1 && net_dhcp_state(p.st[0]) == DHCP_SELECTING);
    d.mode = DHCPD_ANSWER;
    RUN_SERVING(&p, &d, net_dhcp_state(p.st[0]) == DHCP_BOUND, 70000);
    CHECK(net_dhcp_state(p.st[0]) == DHCP_BOUND);
    CHECK(net_mbufs_in_use(p.st[0]) == mbufs);
    pair_free(&p);
    /* over a link losing 30 % of frames the client still gets its lease */
    const struct link_params lossy = {300, 0, 0, 1, 0, 5};
    pair_init(&p, &lossy, 1500);
    struct dhcpd e = {.sd = net_socket(p.st[1], NET_SOCK_DGRAM), .lease_s = 600};
    CHECK(net_bind(p.st[1], e.sd, 0, 67) == 0);
    net_dhcp_start(p.st[0]);
    RUN_SERVING(&p, &e, net_dhcp_state(p.st[0]) == DHCP_BOUND, 300000);
    CHECK(net_dhcp_state(p.st[0]) == DHCP_BOUND && e.bad_requests == 0);
    pair_free(&p);
    end();
}

/* A pair whose side A leaves its TCP/UDP checksums to the device (NETIF_TX_CSUM); the
 * link finishes them (finish_csum) or not; side B gets rx_flags_b with every frame. */
static void offload_pair(struct pair *p, bool finish, unsigned rx_offload_b, unsigned rx_flags_b)
{
    pair_init(p, &clean, 1500);
    p->nif[0].offload = NETIF_TX_CSUM;
    p->nif[1].offload = rx_offload_b;
    p->finish_csum = finish;
    p->rx_flags[1] = rx_flags_b;
}

/* Checksum offload, as virtio-net's CSUM and GUEST_CSUM: A's checksums finished by the
 * "device" pass B's full check (TCP both ways, UDP); unfinished ones (pseudo-header sum
 * only, as the host's stack hands them to a guest) are taken when B's device vouches for
 * them (NET_RX_CSUM_OK with NETIF_RX_CSUM), and dropped, flag or not, when B's interface
 * did not agree to receive offload. */
static void test_offload(void)
{
    begin("offload");
    struct pair p;
    int a, b;
    offload_pair(&p, true, 0, 0);
    CHECK(connect_pair(&p, 80, &a, &b, 0));
    CHECK(transfer(&p, 0, a, b, 1 << 20, 21) && transfer(&p, 1, b, a, 1 << 18, 22));
    CHECK(p.tx_csum > (1 << 20) / 1460 && p.st[1]->st.tcp_bad_cksum == 0);
    int u = net_socket(p.st[1], NET_SOCK_DGRAM), v = net_socket(p.st[0], NET_SOCK_DGRAM);
    CHECK(net_bind(p.st[1], u, 0, 7) == 0 && net_sendto(p.st[0], v, "sum", 3, PAIR_IP_B, 7) == 3);
    RUN_UNTIL(&p, net_events(p.st[1], u) & NET_EV_IN, 5000);
    char buf[8];
    CHECK(net_recv(p.st[1], u, buf, sizeof buf) == 3 && p.st[1]->st.udp_bad_cksum == 0);
    CHECK(drain(&p));
    pair_free(&p);

    offload_pair(&p, false, NETIF_RX_CSUM, NET_RX_CSUM_OK);
    CHECK(connect_pair(&p, 80, &a, &b, 0));
    CHECK(transfer(&p, 0, a, b, 1 << 20, 23) && p.st[1]->st.tcp_bad_cksum == 0);
    CHECK(drain(&p));
    pair_free(&p);

    offload_pair(&p, false, 0, NET_RX_CSUM_OK);
    CHECK(!connect_pair(&p, 80, &a, &b, 0) && p.st[1]->st.tcp_bad_cksum > 0);
    pair_free(&p);
    end();
}

/* A pair with a clean or impaired link whose sides send with the offloads `offload`
 * (both: each direction sends super-segments); the link does the device's work. */
static void tso_pair(struct pair *p, const struct link_params *lp, unsigned offload)
{
    pair_init(p, lp, 1500);
    p->nif[0].offload = p->nif[1].offload = offload;
    p->finish_csum = true;
}

static size_t wire_max;
static void wire_tap(struct pair *p, int from, const uint8_t *frame, size_t len)
{
    (void)p;
    (void)from;
    (void)frame;
    if (len > wire_max)
        wire_max = len;
}

static uint8_t super[NET_TSO_MAX + 14];
static size_t super_len;
static void keep_super(struct pair *p, int from, const uint8_t *frame, size_t len)
{
    (void)p;
    (void)from;
    memcpy(super, frame, len);
    super_len = len;
}

/* Nagle with super-segments: 3.5 MSS written at once go as one super-segment of 3 MSS,
 * the half segment waits for the ACK as it would without the offload; with NODELAY it
 * goes at once. */
static void tso_nagle(void)
{
    struct pair p;
    int a, b;
    tso_pair(&p, &(struct link_params){0, 0, 0, 5, 0, 3}, NETIF_TX_CSUM | NETIF_TX_TSO);
    CHECK(connect_pair(&p, 80, &a, &b, 0));
    static uint8_t data[3 * 1460 + 700];
    uint64_t super0 = p.tso_frames, frames0 = p.frames[0];
    CHECK(net_send(p.st[0], a, data, sizeof data) == (long)sizeof data);
    CHECK(p.tso_frames - super0 == 1 && p.frames[0] - frames0 == 1 &&
          tcb(&p, 0, a)->snd_max - tcb(&p, 0, a)->snd_una == 3 * 1460);
    RUN_UNTIL(&p, p.frames[0] - frames0 > 1, 1000);
    CHECK(p.frames[0] - frames0 == 2 && tcb(&p, 0, a)->snd_una - tcb(&p, 0, a)->iss == 1 + 3 * 1460 &&
          tcb(&p, 0, a)->snd_max - tcb(&p, 0, a)->snd_una == 700);
    RUN_UNTIL(&p, net_quiet(p.st[0], a), 1000);
    net_setopt(p.st[0], a, NET_OPT_NODELAY, 1);
    frames0 = p.frames[0];
    CHECK(net_send(p.st[0], a, data, sizeof data) == (long)sizeof data);
    CHECK(p.frames[0] - frames0 == 2 && tcb(&p, 0, a)->snd_nxt == tcb(&p, 0, a)->snd_max &&
          tcb(&p, 0, a)->snd_max - tcb(&p, 0, a)->snd_una == sizeof data);
    CHECK(drain(&p));
    pair_free(&p);
}

/* A super-segment from the link is no frame for a stack without NETIF_RX_TSO: never
 * taken whole, whatever its device says, and the stack stays whole. */
static void tso_receive(void)
{
    struct pair p;
    int a, b;
    tso_pair(&p, &clean, NETIF_TX_CSUM | NETIF_TX_TSO);
    p.nif[1].offload |= NETIF_RX_CSUM;
    p.tso_tap = keep_super;
    CHECK(connect_pair(&p, 80, &a, &b, 0));
    static uint8_t data[8 * 1460];
    CHECK(net_send(p.st[0], a, data, sizeof data) == (long)sizeof data && super_len > 34);
    uint32_t rcv = tcb(&p, 1, b)->rcv_nxt;
    uint64_t dropped = p.st[1]->st.rx_drop_ether + p.st[1]->st.rx_drop_ip;
    uint32_t sum = cksum_pseudo(PAIR_IP_A, PAIR_IP_B, IPPROTO_TCP, (uint16_t)(super_len - 34));
    put16(super + 34 + 16, 0);
    put16(super + 34 + 16, cksum_fold(cksum_add(sum, super + 34, super_len - 34)));
    net_input_flags(p.st[1], super, super_len, NET_RX_CSUM_OK);
    CHECK(tcb(&p, 1, b)->rcv_nxt == rcv &&
          p.st[1]->st.rx_drop_ether + p.st[1]->st.rx_drop_ip == dropped + 1);
    p.tso_tap = 0;
    CHECK(drain(&p));
    pair_free(&p);
}

/* Segmentation offload, as virtio-net's HOST_TSO4 (docs/net.md, "Segmentation offload"):
 * new data goes out in super-segments whose headers and virtio fields the link checks
 * (pair.c's super_segment_ok) before its reference splitter cuts them into MSS-sized
 * frames, which the receiver checks in full (its checksums too); under loss the
 * retransmissions go one MSS at a time (a super-segment that resent data would count in
 * tso_resent); without the checksum offload there are none. */
/* Whether B's ping of `ip` (A's address or not) is answered within 3 s. */
static bool b_pings(struct pair *p, uint32_t ip, uint16_t seq)
{
    if (net_ping(p->st[1], ip, 9, seq, 16))
        return false;
    RUN_UNTIL(p, net_ping_answered(p->st[1], 9, seq), 3000);
    return net_ping_answered(p->st[1], 9, seq);
}

/* Configuration changes (docs/net.md, "Changing the configuration"): ENETUNREACH without a
 * route, the default route, down and up, a new address, the ARP cache's view, DHCP
 * stopped by a manual change. */
static void test_config(void)
{
    begin("config");
    struct pair p;
    pair_init(&p, &clean, 1500);
    struct netstack *a = p.st[0];
    const uint32_t off_link = 0x0a090001u, mask = 0xffffff00u;
    int u = net_socket(a, NET_SOCK_DGRAM), t = net_socket(a, NET_SOCK_STREAM);
    int raw = net_socket(a, NET_SOCK_RAW);
    static const uint8_t echo[8] = {8, 0, 0xf7, 0xff, 0, 0, 0, 0};
    CHECK(net_sendto(a, u, "x", 1, off_link, 9) == -NET_ENETUNREACH);
    CHECK(net_connect(a, t, off_link, 80) == -NET_ENETUNREACH);
    CHECK(net_connect(a, u, off_link, 9) == -NET_ENETUNREACH);
    CHECK(net_sendto(a, raw, echo, sizeof echo, off_link, 0) == -NET_ENETUNREACH);
    CHECK(net_route(a, PAIR_IP_B) == 0 && net_route(a, off_link) == -NET_ENETUNREACH);
    net_set_address(a, PAIR_IP_A, mask, PAIR_IP_B);          /* a default route through B */
    CHECK(net_route(a, off_link) == 0 && net_sendto(a, u, "x", 1, off_link, 9) == 1);
    /* the ARP cache: B, confirmed by its reply */
    CHECK(net_ping(a, PAIR_IP_B, 7, 1, 16) == 0);
    RUN_UNTIL(&p, net_ping_answered(a, 7, 1), 3000);
    uint32_t ip = 0;
    uint8_t mac[6];
    bool seen = false;
    for (unsigned i = 0; i < NET_ARP_ENTRIES; i++)
        seen |= net_neighbour(a, i, &ip, mac) == NET_NEIGH_REACHABLE && ip == PAIR_IP_B;
    CHECK(seen && net_neighbour(a, NET_ARP_ENTRIES, &ip, mac) == NET_NEIGH_NONE);
    /* down: nothing in or out, no route; up again: answered */
    net_set_down(a, true);
    CHECK(net_is_down(a) && net_sendto(a, u, "x", 1, PAIR_IP_B, 9) == -NET_ENETUNREACH);
    CHECK(!b_pings(&p, PAIR_IP_A, 1));
    net_set_down(a, false);
    CHECK(b_pings(&p, PAIR_IP_A, 2));
    /* a new address: answered there, not at the old one */
    net_set_address(a, PAIR_IP_A + 8, mask, 0);
    CHECK(b_pings(&p, PAIR_IP_A + 8, 3) && !b_pings(&p, PAIR_IP_A, 4));
    /* no address: no route at all; a manual change stops DHCP */
    net_set_address(a, 0, 0, 0);
    CHECK(net_route(a, PAIR_IP_B) == -NET_ENETUNREACH);
    net_dhcp_start(a);
    CHECK(net_dhcp_state(a) == DHCP_SELECTING);
    net_set_address(a, PAIR_IP_A, mask, 0);
    CHECK(net_dhcp_state(a) == DHCP_OFF && b_pings(&p, PAIR_IP_A, 5));
    net_close(a, u);
    net_close(a, t);
    net_close(a, raw);
    pair_free(&p);
    end();
}

static void test_tso(void)
{
    begin("tso");
    struct pair p;
    int a, b;
    tso_pair(&p, &(struct link_params){0, 0, 0, 5, 0, 7}, NETIF_TX_CSUM | NETIF_TX_TSO);
    p.tap = wire_tap;
    wire_max = 0;
    CHECK(connect_pair(&p, 80, &a, &b, 0));
    CHECK(transfer(&p, 0, a, b, 1 << 20, 31) && transfer(&p, 1, b, a, 1 << 20, 32));
    printf("  2 MiB: %llu super-segments, %llu frames from the stacks, %llu on the wire\n",
           (unsigned long long)p.tso_frames, (unsigned long long)(p.frames[0] + p.frames[1]),
           (unsigned long long)p.link.sent);
    CHECK(p.tso_bad == 0 && p.tso_resent == 0 && p.tso_frames > 2 * (1 << 20) / NET_TSO_MAX);
    CHECK(p.tso_frames == p.st[0]->st.tcp_tso + p.st[1]->st.tcp_tso);
    CHECK(p.link.sent >= p.frames[0] + p.frames[1] + p.tso_frames && wire_max == 1514);
    CHECK(p.st[0]->st.tcp_bad_cksum + p.st[1]->st.tcp_bad_cksum == 0);
    CHECK(p.st[0]->st.tcp_rexmt + p.st[1]->st.tcp_rexmt == 0);
    p.tap = 0;
    CHECK(drain(&p));
    pair_free(&p);

    tso_pair(&p, &(struct link_params){100, 10, 30, 3, 4, 5}, NETIF_TX_CSUM | NETIF_TX_TSO);
    CHECK(connect_pair(&p, 80, &a, &b, 0));
    CHECK(transfer(&p, 0, a, b, 1 << 20, 33));
    CHECK(p.tso_bad == 0 && p.tso_resent == 0 && p.tso_frames > 0);
    CHECK(p.st[0]->st.tcp_rexmt + p.st[0]->st.tcp_fast_rexmt > 0);
    CHECK(drain(&p));
    pair_free(&p);

    tso_pair(&p, &clean, NETIF_TX_TSO);
    CHECK(connect_pair(&p, 80, &a, &b, 0));
    CHECK(transfer(&p, 0, a, b, 1 << 18, 34) && p.tso_frames == 0 && p.tso_bad == 0);
    CHECK(drain(&p));
    pair_free(&p);

    tso_nagle();
    tso_receive();
    end();
}

/* ---- receive segmentation offload (rxtso) ---- */

/* A pair whose sides send super-segments and take them whole (pair.h's rx_super: the
 * driver's checks, then NET_RX_SUPER). */
static void rxtso_pair(struct pair *p, const struct link_params *lp)
{
    pair_init(p, lp, 1500);
    for (int i = 0; i < 2; i++) {
        p->nif[i].offload = NETIF_TX_CSUM | NETIF_TX_TSO | NETIF_RX_CSUM | NETIF_RX_TSO;
        p->rx_super[i] = true;
    }
    p->finish_csum = true;
}

/* The eight ways (and one more, a frame too short) a device's GSO header may disagree
 * with its frame (vnet_rx.h); rx_spoil spoils the next super-segment with spoil_kind. */
static enum vnet_rx_verdict spoil_kind;
static void spoil(struct pair *p, uint8_t *hdr, uint8_t *f, size_t *len)
{
    (void)p;
    switch (spoil_kind) {
    case VNET_RX_BAD_LENGTH: *len = 40; break;                  /* shorter than its headers */
    case VNET_RX_BAD_TYPE: hdr[VNET_HDR_GSO_TYPE] = 4; break;   /* TCPV6 */
    case VNET_RX_BAD_SIZE: vnet_put_le16(hdr + VNET_HDR_GSO_SIZE, 1500); break;
    case VNET_RX_BAD_HDRLEN: vnet_put_le16(hdr + VNET_HDR_HDR_LEN, 40); break;
    case VNET_RX_BAD_TOTAL: put16(f + 16, (uint16_t)(get16(f + 16) - 100)); break;
    case VNET_RX_BAD_IP: f[14 + 9] = IPPROTO_UDP; break;
    case VNET_RX_BAD_TCP: f[34 + 13] |= TH_SYN; break;
    case VNET_RX_BAD_CSUM: hdr[0] = 0; break;
    case VNET_RX_BAD_EMPTY:                                     /* headers only */
        *len = 54;
        put16(f + 16, 40);
        vnet_put_le16(hdr + VNET_HDR_HDR_LEN, 54);
        break;
    default: return;
    }
    spoil_kind = VNET_RX_PLAIN;                                 /* once */
}

/* Super-segments in order: the data intact, far fewer frames, each super-segment ACKed
 * at once (two full-sized segments' worth and more), none refused; one segment alone
 * still waits for the delayed ACK. */
static void rxtso_in_order(void)
{
    struct pair p;
    int a, b;
    rxtso_pair(&p, &clean);
    CHECK(connect_pair(&p, 80, &a, &b, 0));
    CHECK(transfer(&p, 0, a, b, 1 << 20, 41));
    printf("  1 MiB: %llu super-segments taken whole, B sent %llu frames\n",
           (unsigned long long)p.rx_supers[1], (unsigned long long)p.frames[1]);
    CHECK(p.rx_supers[1] > (1 << 20) / NET_TSO_MAX && p.rx_bad[1] == 0);
    CHECK(p.rx_supers[1] == p.st[1]->st.rx_super && p.st[1]->st.tcp_bad_cksum == 0);
    CHECK(p.st[1]->st.tcp_hdrpred_data > 0 && p.st[0]->st.tcp_rexmt == 0);
    CHECK(p.frames[1] < (1 << 20) / 1460 / 2);      /* fewer ACKs than one per 2 MSS */
    CHECK(transfer(&p, 1, b, a, 1 << 18, 42) && p.rx_supers[0] > 0 && p.rx_bad[0] == 0);
    CHECK(drain(&p));
    pair_free(&p);

    rxtso_pair(&p, &clean);
    CHECK(connect_pair(&p, 80, &a, &b, 0));
    static uint8_t data[8 * 1460];
    for (int i = 0; i < 16; i++) {                  /* open the congestion window */
        net_send(p.st[0], a, data, sizeof data);
        RUN_UNTIL(&p, net_quiet(p.st[0], a), 1000);
        while (net_recv(p.st[1], b, data, sizeof data) > 0)
            ;
    }
    RUN_UNTIL(&p, 0, 500);
    p.tap = count_tap;
    count_b_frames = 0;
    net_setopt(p.st[0], a, NET_OPT_NODELAY, 1);
    uint64_t supers = p.rx_supers[1], t0 = p.now;
    CHECK(net_send(p.st[0], a, data, sizeof data) == (long)sizeof data);
    RUN_UNTIL(&p, count_b_frames > 0, 1000);
    CHECK(p.rx_supers[1] == supers + 1 && count_b_frames == 1 && p.now - t0 < TCP_DELACK_MS);
    CHECK(tcb(&p, 1, b)->rcv_nxt == tcb(&p, 0, a)->snd_max);
    RUN_UNTIL(&p, 0, 200);
    count_b_frames = 0;
    t0 = p.now;
    CHECK(net_send(p.st[0], a, data, 1460) == 1460);
    RUN_UNTIL(&p, count_b_frames > 0, 1000);
    CHECK(p.rx_supers[1] == supers + 1 && count_b_frames == 1 && p.now - t0 >= TCP_DELACK_MS);
    p.tap = 0;
    CHECK(drain(&p));
    pair_free(&p);
}

/* Under 3 % loss, 3 % duplication and 10 % reordering (seeded): the stream intact, the
 * out-of-order super-segments copied into the reassembly queue, every buffer back. */
static void rxtso_impaired(void)
{
    struct pair p;
    int a, b;
    rxtso_pair(&p, &(struct link_params){30, 30, 100, 2, 3, 11});
    CHECK(connect_pair(&p, 80, &a, &b, 0));
    CHECK(transfer(&p, 0, a, b, 1 << 20, 44) && transfer(&p, 1, b, a, 1 << 18, 46));
    printf("  impaired 1 MiB: %llu super-segments, out-of-order %llu, lost %llu dup %llu "
           "reordered %llu\n", (unsigned long long)p.rx_supers[1],
           (unsigned long long)p.st[1]->st.tcp_ooo, (unsigned long long)p.link.lost,
           (unsigned long long)p.link.duplicated, (unsigned long long)p.link.reordered);
    CHECK(p.rx_supers[1] > 0 && p.rx_bad[1] == 0 && p.st[1]->st.tcp_ooo > 0);
    CHECK(p.rx_supers[0] > 0 && p.rx_bad[0] == 0);
    CHECK(p.st[1]->st.tcp_dup_data > 0 && p.link.lost > 0);
    CHECK(drain(&p));
    pair_free(&p);
}

/* Each kind of bad GSO header once: counted by its kind and dropped before the stack
 * (whose state it never touches); the sender's retransmissions fill the holes. And the
 * driver's rules alone: a GSO header it did not offer, a plain frame too long. */
static void rxtso_malformed(void)
{
    struct pair p;
    int a, b;
    rxtso_pair(&p, &clean);
    p.rx_spoil = spoil;
    CHECK(connect_pair(&p, 80, &a, &b, 0));
    static uint8_t data[16 * 1460];
    for (int k = VNET_RX_BAD_LENGTH; k < VNET_RX_KINDS; k++) {
        spoil_kind = (enum vnet_rx_verdict)k;
        uint64_t supers = p.rx_supers[1], drops = p.st[1]->st.rx_drop_ether +
                                                  p.st[1]->st.rx_drop_ip + p.st[1]->st.rx_drop_tcp;
        CHECK(net_send(p.st[0], a, data, sizeof data) == (long)sizeof data);
        RUN_UNTIL(&p, net_quiet(p.st[0], a), 60000);
        while (net_recv(p.st[1], b, data, sizeof data) > 0)
            ;
        CHECK(spoil_kind == VNET_RX_PLAIN && p.rx_bad_kind[k] == 1 && net_quiet(p.st[0], a));
        CHECK(p.st[1]->st.rx_drop_ether + p.st[1]->st.rx_drop_ip + p.st[1]->st.rx_drop_tcp == drops);
        CHECK(p.rx_supers[1] >= supers);
    }
    CHECK(p.rx_bad[1] == VNET_RX_KINDS - VNET_RX_BAD_LENGTH && p.st[0]->st.tcp_rexmt > 0);
    CHECK(transfer(&p, 0, a, b, 1 << 18, 45));
    p.rx_spoil = 0;
    CHECK(drain(&p));
    pair_free(&p);
    static uint8_t hdr[VNET_HDR_LEN], frame[VNET_BUF];
    hdr[VNET_HDR_GSO_TYPE] = VNET_HDR_GSO_TCPV4;
    CHECK(vnet_rx_judge(hdr, frame, 1000, false) == VNET_RX_BAD_TYPE);
    hdr[VNET_HDR_GSO_TYPE] = 0;
    CHECK(vnet_rx_judge(hdr, frame, VNET_BUF - VNET_HDR_LEN + 1, true) == VNET_RX_BAD_LENGTH);
    CHECK(vnet_rx_judge(hdr, frame, 0, true) == VNET_RX_BAD_LENGTH);
    CHECK(vnet_rx_judge(hdr, frame, 60, false) == VNET_RX_PLAIN);
}

/* Receive segmentation offload, as virtio-net's GUEST_TSO4 (docs/net.md, "Receive
 * segmentation offload"). */
static void test_rxtso(void)
{
    begin("rxtso");
    rxtso_in_order();
    rxtso_impaired();
    rxtso_malformed();
    end();
}

int main(int argc, char **argv)
{
    if (argc == 3) {
        uint64_t first = strtoull(argv[1], 0, 0), n = strtoull(argv[2], 0, 0), f = 0, r = 0, o = 0;
        begin("impaired");
        impaired_seeds(first, first + n - 1, &f, &r, &o);
        printf("  seeds %llu..%llu: fast retransmits %llu, timeouts %llu, out-of-order %llu\n",
               (unsigned long long)first, (unsigned long long)(first + n - 1),
               (unsigned long long)f, (unsigned long long)r, (unsigned long long)o);
        end();
        return failed != 0;
    }
    test_handshake();
    test_refused_and_reset();
    test_rst_every_state();
    test_close_states();
    test_delack_nagle();
    test_bulk();
    test_impaired();
    test_zero_window();
    test_keepalive();
    test_many();
    test_udp_icmp_arp();
    test_offload();
    test_tso();
    test_rxtso();
    test_dhcp();
    test_config();
    printf("total        %u checks %u failed\n", checks, failed);
    return failed != 0;
}
