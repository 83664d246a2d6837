/*
 * netfuzz SEED N: a seeded random-frame fuzz of the stack's input path (built with ASan
 * and UBSan). Two stacks keep real connections busy through a simulated link while
 * stack B also receives N generated frames: pure noise, and frames that are valid up to
 * a chosen layer (correct Ethernet address, IP header and checksums) with random TCP
 * flags, sequence numbers near the live connections', options, lengths, UDP, ICMP, ARP
 * and IP fragments and options. After every frame the connection invariants are checked;
 * at the end every socket is closed and the stacks must give back every buffer and
 * socket. Then a stack running its DHCP client gets N/4 frames aimed at it: UDP 67 -> 68
 * carrying replies to its transaction (or nearly), with random message types, addresses
 * and option bytes; its state must stay sound and it must hold no buffer at the end.
 * Exit 0 and a summary line when all held; a crash, a sanitizer report, a broken
 * invariant or a leak fails. Every eighth frame is a super-segment as a device with
 * GUEST_TSO4 hands one over (receive segmentation offload): up to 64 KiB of TCP behind a
 * virtio_net_hdr, mostly right, its bytes sometimes spoilt; three in four go through the
 * driver's checks (vnet_rx_judge) first, the rest straight to the stack with
 * NET_RX_SUPER, whose own checks must hold alone.
 */
#include "pair.h"
#include "../net_priv.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static uint64_t rng;
static uint64_t rnd(void)
{
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return rng;
}
static unsigned below(unsigned n) { return (unsigned)(rnd() % n); }

static void check_invariants(struct netstack *s)
{
    if (s->pool.in_use > NET_MBUFS)
        abort();
    for (unsigned i = 0; i < NET_MAX_SOCKETS; i++) {
        struct sock *t = &s->socks[i];
        if (!t->used || t->type != NET_SOCK_STREAM || t->state == TCPS_LISTEN)
            continue;
        if (t->snd.len > NET_SOCKBUF || t->rcv.len > NET_SOCKBUF || t->nreass > NET_TCP_REASS_MAX)
            abort();
        if (t->state >= TCPS_SYN_RECEIVED &&
            (SEQ_GT(t->snd_una, t->snd_nxt) || SEQ_GT(t->snd_nxt, t->snd_max)))
            abort();
    }
}

/* A live TCP connection of stack B to aim at, or 0. */
static struct sock *some_conn(struct netstack *s)
{
    unsigned start = below(NET_MAX_SOCKETS);
    for (unsigned k = 0; k < NET_MAX_SOCKETS; k++) {
        struct sock *t = &s->socks[(start + k) % NET_MAX_SOCKETS];
        if (t->used && t->type == NET_SOCK_STREAM && t->state != TCPS_CLOSED)
            return t;
    }
    return 0;
}

static uint32_t near(uint32_t x)
{
    switch (below(4)) {
    case 0: return x;
    case 1: return x + below(3000);
    case 2: return x - below(3000);
    default: return (uint32_t)rnd();
    }
}

/* A TCP segment for B: mostly aimed at a live connection or a listener. */
static size_t make_tcp(struct netstack *b, uint8_t *t, size_t room)
{
    struct sock *c = some_conn(b);
    unsigned optlen = below(4) ? 0 : below(11) * 4;
    unsigned dlen = below(3) ? below(64) : below(1461);
    if (TCP_HLEN + optlen + dlen > room)
        dlen = (unsigned)(room - TCP_HLEN - optlen);
    put16(t, c && below(8) ? c->rport : (uint16_t)(49152 + below(64)));
    put16(t + 2, c && below(8) ? c->lport : (below(2) ? 80 : (uint16_t)rnd()));
    put32(t + 4, c ? near(c->rcv_nxt) : (uint32_t)rnd());
    put32(t + 8, c ? near(c->snd_una) : (uint32_t)rnd());
    t[12] = (uint8_t)(((TCP_HLEN + optlen) / 4) << 4);
    t[13] = below(2) ? TH_ACK | (below(4) ? 0 : (uint8_t)below(64)) : (uint8_t)below(64);
    put16(t + 14, (uint16_t)(below(4) ? rnd() : 0));
    put32(t + 16, 0);
    for (unsigned i = 0; i < optlen; i++)
        t[TCP_HLEN + i] = below(3) ? (uint8_t)below(5) : (uint8_t)rnd();
    for (unsigned i = 0; i < dlen; i++)
        t[TCP_HLEN + optlen + i] = (uint8_t)rnd();
    return TCP_HLEN + optlen + dlen;
}

static size_t make_payload(struct netstack *b, uint8_t proto, uint8_t *p, size_t room)
{
    if (proto == IPPROTO_TCP)
        return make_tcp(b, p, room);
    size_t len = below(4) ? below(64) : below((unsigned)room + 1);
    for (size_t i = 0; i < len; i++)
        p[i] = (uint8_t)rnd();
    if (proto == IPPROTO_UDP && len >= UDP_HLEN) {
        put16(p + 2, below(2) ? 7 : (uint16_t)rnd());
        put16(p + 4, below(4) ? (uint16_t)len : (uint16_t)rnd());
        put16(p + 6, 0);
    }
    if (proto == IPPROTO_ICMP && len >= 4) {
        p[0] = below(2) ? 8 : (uint8_t)below(20);
        put16(p + 2, 0);
        put16(p + 2, cksum_fold(cksum_add(0, p, len)));
    }
    return len;
}

/* One frame for stack B (dst MAC b_mac); returns its length. */
static size_t make_frame(struct pair *p, uint8_t *f)
{
    unsigned kind = below(16);
    if (kind == 0) {                          /* noise */
        size_t len = below(NET_MBUF_DATA + 200);
        for (size_t i = 0; i < len; i++)
            f[i] = (uint8_t)rnd();
        if (below(2) && len >= 14)
            memcpy(f, p->nif[1].mac, 6);
        return len;
    }
    memcpy(f, below(16) ? p->nif[1].mac : (const uint8_t *)"\xff\xff\xff\xff\xff\xff", 6);
    memcpy(f + 6, p->nif[0].mac, 6);
    if (kind == 1) {                          /* ARP */
        put16(f + 12, ETHERTYPE_ARP);
        for (int i = 14; i < 42; i++)
            f[i] = (uint8_t)rnd();
        if (below(2)) {
            put16(f + 14, 1); put16(f + 16, ETHERTYPE_IP); f[18] = 6; f[19] = 4;
            put16(f + 20, (uint16_t)(1 + below(2)));
            put32(f + 28, below(2) ? PAIR_IP_A : (uint32_t)rnd());
            put32(f + 38, below(2) ? PAIR_IP_B : (uint32_t)rnd());
        }
        return 42 + below(20);
    }
    put16(f + 12, ETHERTYPE_IP);
    uint8_t *ip = f + 14;
    unsigned ihl = below(8) ? 5 : 5 + below(11);
    uint8_t proto = below(8) < 6 ? IPPROTO_TCP : below(2) ? IPPROTO_UDP : IPPROTO_ICMP;
    if (!below(32))
        proto = (uint8_t)rnd();
    size_t room = 1500 - ihl * 4;
    size_t plen = make_payload(p->st[1], proto, ip + ihl * 4, room);
    ip[0] = (uint8_t)(0x40 | ihl);
    ip[1] = 0;
    put16(ip + 2, (uint16_t)(below(16) ? ihl * 4 + plen : rnd()));
    put16(ip + 4, (uint16_t)rnd());
    put16(ip + 6, below(8) ? 0x4000 : (uint16_t)rnd());
    ip[8] = (uint8_t)(1 + below(255));
    ip[9] = proto;
    put16(ip + 10, 0);
    put32(ip + 12, below(16) ? PAIR_IP_A : (uint32_t)rnd());
    put32(ip + 16, below(16) ? PAIR_IP_B : (uint32_t)rnd());
    for (unsigned i = 20; i < ihl * 4; i++)
        ip[i] = (uint8_t)rnd();
    uint8_t *l4 = ip + ihl * 4;
    if (below(16)) {                          /* transport checksum right, mostly */
        unsigned off = proto == IPPROTO_TCP ? 16 : proto == IPPROTO_UDP ? 6 : 0;
        if (off && plen >= off + 2u) {
            put16(l4 + off, 0);
            uint32_t sum = cksum_pseudo(get32(ip + 12), get32(ip + 16), proto, (uint16_t)plen);
            put16(l4 + off, cksum_fold(cksum_add(sum, l4, plen)));
        }
    }
    if (below(16))
        put16(ip + 10, cksum_fold(cksum_add(0, ip, ihl * 4)));
    size_t len = 14 + ihl * 4 + plen;
    if (!below(16))
        len = below((unsigned)len + 1);       /* truncated */
    else if (!below(16))
        len += below(40);                     /* padded */
    return len;
}

/* ---- super-segments (receive segmentation offload) ---- */
static uint64_t supers_judged, supers_refused, supers_direct;

/* A virtio header and super-segment for B, in buf: mostly what a host would send (a live
 * connection's sequence space, the pseudo-header sum left to finish), a few bytes spoilt
 * sometimes. Returns the frame's length (after the header). */
static size_t make_super(struct pair *p, uint8_t *buf)
{
    uint8_t *hdr = buf, *f = buf + VNET_HDR_LEN, *ip = f + ETH_HLEN, *t = ip + IP_HLEN;
    size_t dlen = below(4) ? 2920 + below(62000) : below(65496);
    size_t len = ETH_HLEN + IP_HLEN + TCP_HLEN + dlen;
    memcpy(f, p->nif[1].mac, 6);
    memcpy(f + 6, p->nif[0].mac, 6);
    put16(f + 12, ETHERTYPE_IP);
    memset(ip, 0, IP_HLEN);
    ip[0] = 0x45;
    put16(ip + 2, (uint16_t)(len - ETH_HLEN));
    put16(ip + 6, 0x4000);
    ip[8] = 64;
    ip[9] = IPPROTO_TCP;
    put32(ip + 12, PAIR_IP_A);
    put32(ip + 16, PAIR_IP_B);
    put16(ip + 10, cksum_fold(cksum_add(0, ip, IP_HLEN)));
    struct sock *c = some_conn(p->st[1]);              /* a live connection, mostly */
    put16(t, c && below(8) ? c->rport : (uint16_t)(49152 + below(64)));
    put16(t + 2, c && below(8) ? c->lport : 80);
    put32(t + 4, c ? near(c->rcv_nxt) : (uint32_t)rnd());
    put32(t + 8, c ? near(c->snd_una) : (uint32_t)rnd());
    put16(t + 14, (uint16_t)rnd());
    t[12] = TCP_HLEN / 4 << 4;
    t[13] = below(8) ? TH_ACK | (below(4) ? 0 : TH_PSH | (uint8_t)below(2)) : (uint8_t)below(64);
    for (size_t i = 0; i < dlen; i++)
        t[TCP_HLEN + i] = (uint8_t)i;
    put16(t + 16, (uint16_t)~cksum_fold(cksum_pseudo(PAIR_IP_A, PAIR_IP_B, IPPROTO_TCP,
                                                     (uint16_t)(len - ETH_HLEN - IP_HLEN))));
    memset(hdr, 0, VNET_HDR_LEN);
    hdr[0] = VNET_HDR_NEEDS_CSUM;
    hdr[VNET_HDR_GSO_TYPE] = VNET_HDR_GSO_TCPV4;
    vnet_put_le16(hdr + VNET_HDR_HDR_LEN, 54);
    vnet_put_le16(hdr + VNET_HDR_GSO_SIZE, below(8) ? 1460 : below(2000));
    vnet_put_le16(hdr + VNET_HDR_CSUM_START, 34);
    vnet_put_le16(hdr + VNET_HDR_CSUM_OFFSET, 16);
    for (unsigned k = below(4) ? 0 : 1 + below(4); k > 0; k--)
        buf[below(VNET_HDR_LEN + 60)] = (uint8_t)rnd();  /* a spoilt header field */
    if (!below(16))
        len = below((unsigned)len + 1);                /* cut short */
    return len;
}

/* One super-segment for B: through the driver's checks, or straight to the stack. */
static void feed_super(struct pair *p)
{
    static uint8_t buf[VNET_HDR_LEN + VNET_TSO_MAX];
    size_t len = make_super(p, buf);
    const uint8_t *f = buf + VNET_HDR_LEN;
    if (!below(4)) {
        supers_direct++;
        net_input_flags(p->st[1], f, len, NET_RX_SUPER | (below(2) ? NET_RX_CSUM_OK : 0));
        return;
    }
    supers_judged++;
    enum vnet_rx_verdict v = vnet_rx_judge(buf, f, len, true);
    if (v == VNET_RX_SUPER)
        net_input_flags(p->st[1], f, len, NET_RX_SUPER | NET_RX_CSUM_OK);
    else if (v == VNET_RX_PLAIN)
        net_input(p->st[1], f, len);
    else
        supers_refused++;
}

/* Real traffic: connections from A to B that come and go, with data both ways. */
static void traffic(struct pair *p, int listener)
{
    static int conns[8] = {-1, -1, -1, -1, -1, -1, -1, -1};
    int i = (int)below(8);
    uint8_t buf[3000];
    if (conns[i] < 0) {
        conns[i] = net_socket(p->st[0], NET_SOCK_STREAM);
        if (conns[i] >= 0)
            net_connect(p->st[0], conns[i], PAIR_IP_B, 80);
    } else if (below(16) == 0) {
        below(2) ? net_close(p->st[0], conns[i]) : net_abort(p->st[0], conns[i]);
        conns[i] = -1;
    } else {
        net_send(p->st[0], conns[i], buf, below(sizeof buf));
        while (net_recv(p->st[0], conns[i], buf, sizeof buf) > 0)
            ;
    }
    int s;
    while ((s = net_accept(p->st[1], listener, 0, 0)) >= 0)
        ;
    for (int sd = 0; sd < NET_MAX_SOCKETS; sd++) {    /* B echoes what it can */
        if (sd == listener)
            continue;
        long r = net_recv(p->st[1], sd, buf, sizeof buf);
        if (r > 0)
            net_send(p->st[1], sd, buf, (size_t)r);
        else if (r == 0 || (r < 0 && r != -NET_EAGAIN && r != -NET_EBADF && !below(4)))
            net_close(p->st[1], sd);
    }
}

/* ---- the DHCP client ---------------------------------------------------------------- */
static void drop_frame(struct netif *nif, const void *frame, size_t len,
                        struct net_offload csum)
{
    (void)csum;                       /* hosted interfaces offload nothing */
    (void)nif;
    (void)frame;
    (void)len;
}

/* A DHCP reply (UDP 67 -> 68, to broadcast) for the client c: right or nearly right. */
static size_t make_dhcp_frame(struct netstack *c, const struct netif *nif, uint8_t *f)
{
    uint8_t *eth = f, *ih = f + ETH_HLEN, *uh = ih + IP_HLEN, *m = uh + UDP_HLEN;
    size_t dlen = below(8) ? 240 + below(200) : below(600);
    memset(m, 0, dlen);
    for (size_t i = 0; i < dlen; i++)
        m[i] = below(4) ? 0 : (uint8_t)rnd();
    if (dlen >= 240) {
        m[0] = below(16) ? 2 : (uint8_t)rnd();
        m[1] = 1;
        m[2] = 6;
        put32(m + 4, below(8) ? net_dhcp(c)->xid : (uint32_t)rnd());
        memcpy(m + 28, nif->mac, 6);
        const struct dhcp *d = net_dhcp(c);
        if (below(4))                            /* yiaddr: the offered one, or others */
            put32(m + 16, below(2) && d->offered ? d->offered
                          : below(2) ? 0x0a000000u | below(256) : (uint32_t)rnd());
        put32(m + 236, 0x63825363u);
        size_t i = 240;                          /* plausible options, then noise */
        while (i + 6 < dlen && below(8)) {
            static const uint8_t codes[] = {53, 54, 1, 3, 51, 58, 59, 0, 255, 52};
            m[i] = below(8) ? codes[below(sizeof codes)] : (uint8_t)rnd();
            m[i + 1] = below(8) ? (m[i] == 53 ? 1 : 4) : (uint8_t)rnd();
            if (m[i] == 53 && m[i + 1] == 1)
                m[i + 2] = (uint8_t)(below(4) ? 2 + 3 * below(2) : below(9));
            if (m[i] == 54 && m[i + 1] == 4)
                put32(m + i + 2, below(4) ? (d->server ? d->server : 0x0a000001u) : (uint32_t)rnd());
            if (m[i] == 1 && m[i + 1] == 4 && below(2))
                put32(m + i + 2, 0xffffff00u);
            i += 2u + (m[i + 1] < 8 ? m[i + 1] : 8);
        }
    }
    memset(eth, 0xff, 6);
    memcpy(eth + 6, "\x02\x00\x00\x00\x00\x09", 6);
    put16(eth + 12, ETHERTYPE_IP);
    memset(ih, 0, IP_HLEN);
    ih[0] = 0x45;
    put16(ih + 2, (uint16_t)(IP_HLEN + UDP_HLEN + dlen));
    ih[8] = 64;
    ih[9] = IPPROTO_UDP;
    put32(ih + 12, 0x0a000001u);
    put32(ih + 16, 0xffffffffu);
    put16(ih + 10, cksum_fold(cksum_add(0, ih, IP_HLEN)));
    put16(uh, 67);
    put16(uh + 2, 68);
    put16(uh + 4, (uint16_t)(UDP_HLEN + dlen));
    put16(uh + 6, 0);                            /* no checksum: allowed, and always reaches */
    return ETH_HLEN + IP_HLEN + UDP_HLEN + dlen;
}

/* The client's state is one of its states, and an address it holds is one it was given
 * as usable (not 0, not broadcast, its mask contiguous). */
static void check_dhcp(const struct netstack *c)
{
    enum dhcp_state st = net_dhcp_state(c);
    if (st < DHCP_SELECTING || st > DHCP_REBINDING)
        abort();
    uint32_t ip, mask, gw;
    net_address(c, &ip, &mask, &gw);
    int bound = st == DHCP_BOUND || st == DHCP_RENEWING || st == DHCP_REBINDING;
    if (bound != (ip != 0) || (bound && ((~mask & (~mask + 1)) != 0 || (ip | mask) == 0xffffffffu)))
        abort();
}

static int fuzz_dhcp(uint64_t n)
{
    struct netif nif = {.mac = {2, 0, 0, 0, 0, 7}, .mtu = 1500, .send = drop_frame};
    struct netstack *c = calloc(1, net_stack_size());
    if (!c)
        abort();
    uint64_t now = 1000;
    net_init(c, &nif, 0, 0, 0, now, rng);
    net_dhcp_start(c);
    static uint8_t frame[NET_MBUF_DATA + 256];
    uint64_t bound = 0;
    for (uint64_t i = 0; i < n; i++) {
        net_input(c, frame, make_dhcp_frame(c, &nif, frame));
        check_dhcp(c);
        bound += net_dhcp_state(c) == DHCP_BOUND;
        if (below(4) == 0) {
            now += below(8) ? below(100) : below(4000000);
            net_tick(c, now);
            check_dhcp(c);
        }
    }
    net_tick(c, now + 600000);                   /* ARP gives up on a renewal's server */
    net_tick(c, now + 1200000);
    unsigned left = net_mbufs_in_use(c);
    printf("netfuzz dhcp: %llu frames; %llu leases, %llu ignored, bound after %llu frames; mbufs %u\n",
           (unsigned long long)n, (unsigned long long)net_dhcp(c)->leases,
           (unsigned long long)net_dhcp(c)->dropped, (unsigned long long)bound, left);
    uint64_t leases = net_dhcp(c)->leases;
    free(c);
    if (n >= 10000 && leases == 0)
        printf("netfuzz dhcp: never bound: the frames test too little\n");
    return left != 0 || (n >= 10000 && leases == 0);
}


int main(int argc, char **argv)
{
    uint64_t seed = argc > 1 ? strtoull(argv[1], 0, 0) : 1;
    uint64_t n = argc > 2 ? strtoull(argv[2], 0, 0) : 100000;
    rng = seed * 0x9e3779b97f4a7c15ull + 12345;
    struct pair p;
    pair_init(&p, &(struct link_params){10, 10, 10, 1, 2, seed}, 1500);
    if (seed & 1) {                   /* odd seeds: both stacks send super-segments */
        p.nif[0].offload = p.nif[1].offload = NETIF_TX_CSUM | NETIF_TX_TSO;
        p.finish_csum = true;
    }
    p.nif[1].offload |= NETIF_RX_CSUM | NETIF_RX_TSO;   /* B takes super-segments */
    int listener = net_socket(p.st[1], NET_SOCK_STREAM);
    net_bind(p.st[1], listener, 0, 80);
    net_listen(p.st[1], listener, 16);
    int udp = net_socket(p.st[1], NET_SOCK_DGRAM);
    net_bind(p.st[1], udp, 0, 7);
    static uint8_t frame[NET_MBUF_DATA + 256];
    for (uint64_t i = 0; i < n; i++) {
        if (i % 8 == 7) {
            feed_super(&p);
        } else {
            size_t len = make_frame(&p, frame);
            net_input(p.st[1], frame, len);
        }
        check_invariants(p.st[1]);
        if (i % 4 == 0)
            traffic(&p, listener);
        if (i % 2 == 0)
            pair_step(&p, below(8) ? 2 : 5000);
        uint8_t d[2048];
        uint32_t ip;
        uint16_t port;
        while (net_recvfrom(p.st[1], udp, d, sizeof d, &ip, &port) >= 0)
            ;
    }
    for (int i = 0; i < 2; i++)
        for (int sd = 0; sd < NET_MAX_SOCKETS; sd++)
            net_abort(p.st[i], sd);
    uint64_t until = p.now + 600000;
    while (p.now < until && (net_next_timer(p.st[0]) != UINT64_MAX ||     /* ARP queues too */
                             net_next_timer(p.st[1]) != UINT64_MAX ||
                             link_next_due(&p.link) != UINT64_MAX))
        pair_step(&p, 1000);
    const struct net_stats *st = net_stats(p.st[1]);
    printf("netfuzz seed %llu: %llu frames; B dropped ether %llu ip %llu tcp-cksum %llu "
           "rst-sent %llu challenge %llu; super-segments %llu bad %llu; received whole %llu "
           "(judged %llu refused %llu direct %llu); sockets %u/%u mbufs %u/%u\n",
           (unsigned long long)seed, (unsigned long long)n,
           (unsigned long long)st->rx_drop_ether, (unsigned long long)st->rx_drop_ip,
           (unsigned long long)st->tcp_bad_cksum, (unsigned long long)st->tcp_rst_sent,
           (unsigned long long)st->tcp_challenge_ack, (unsigned long long)p.tso_frames,
           (unsigned long long)p.tso_bad, (unsigned long long)st->rx_super,
           (unsigned long long)supers_judged, (unsigned long long)supers_refused,
           (unsigned long long)supers_direct, net_sockets_in_use(p.st[0]),
           net_sockets_in_use(p.st[1]), net_mbufs_in_use(p.st[0]), net_mbufs_in_use(p.st[1]));
    int leak = net_sockets_in_use(p.st[0]) || net_sockets_in_use(p.st[1]) ||
               net_mbufs_in_use(p.st[0]) || net_mbufs_in_use(p.st[1]);
    if (p.tso_bad)
        abort();                      /* a super-segment a device would not take */
    pair_free(&p);
    leak |= fuzz_dhcp(n / 4);
    if (leak) {
        printf("netfuzz: LEAK\n");
        return 1;
    }
    printf("netfuzz: ok\n");
    return 0;
}
