/*
 * ICMP (RFC 792): answer echo requests, send port-unreachable for UDP datagrams nobody
 * listens to, send echo requests for the platform's ping and note the last intact reply;
 * every other type is counted and dropped (no path-MTU discovery).
 */
#include "net_priv.h"

#define ICMP_ECHOREPLY 0
#define ICMP_UNREACH 3
#define ICMP_UNREACH_PORT 3
#define ICMP_ECHO 8

/* Byte i of the data of echo request seq: replies are checked against it. */
static uint8_t ping_byte(uint16_t seq, size_t i) { return (uint8_t)(seq + i); }

static int ping_data_ok(const uint8_t *p, size_t len)
{
    uint16_t seq = get16(p + 6);
    for (size_t i = 8; i < len; i++)
        if (p[i] != ping_byte(seq, i - 8))
            return 0;
    return 1;
}

/* An echo reply: remembered when its data is the pattern net_ping sent. */
static void echo_reply_input(struct netstack *s, struct mbuf *m, const uint8_t *p)
{
    if (ping_data_ok(p, m->len)) {
        s->st.icmp_echo_reply++;
        s->ping_reply = (uint32_t)get16(p + 4) << 16 | get16(p + 6);
    } else {
        s->st.rx_drop_icmp++;
    }
    mbuf_free(&s->pool, m);
}

int net_ping(struct netstack *s, uint32_t ip, uint16_t id, uint16_t seq, size_t len)
{
    if (len > NET_PING_MAX)
        return -NET_EMSGSIZE;
    struct mbuf *m = mbuf_get(&s->pool, NET_HEADROOM);
    if (!m) {
        s->st.mbuf_exhausted++;
        return -NET_ENOMEM;
    }
    uint8_t *p = mbuf_data(m);
    p[0] = ICMP_ECHO;
    p[1] = 0;
    put16(p + 2, 0);
    put16(p + 4, id);
    put16(p + 6, seq);
    for (size_t i = 0; i < len; i++)
        p[8 + i] = ping_byte(seq, i);
    m->len = (uint16_t)(8 + len);
    put16(p + 2, cksum_fold(cksum_add(0, p, m->len)));
    ip_output(s, m, ip, IPPROTO_ICMP);
    return 0;
}

int net_ping_answered(const struct netstack *s, uint16_t id, uint16_t seq)
{
    return s->ping_reply == ((uint32_t)id << 16 | seq);
}

void icmp_input(struct netstack *s, struct mbuf *m, uint32_t src)
{
    uint8_t *p = mbuf_data(m);
    if (m->len >= 8 && p[0] == ICMP_ECHOREPLY && cksum_fold(cksum_add(0, p, m->len)) == 0) {
        echo_reply_input(s, m, p);
        return;
    }
    if (m->len < 8 || cksum_fold(cksum_add(0, p, m->len)) != 0 || p[0] != ICMP_ECHO) {
        s->st.rx_drop_icmp++;
        mbuf_free(&s->pool, m);
        return;
    }
    s->st.icmp_echo++;
    p[0] = ICMP_ECHOREPLY;                   /* reply in place: same id, sequence, data */
    put16(p + 2, 0);
    put16(p + 2, cksum_fold(cksum_add(0, p, m->len)));
    if (m->off < NET_HEADROOM) {             /* an IP header with options was stripped */
        net_memmove(m->buf + NET_HEADROOM, p, m->len);
        m->off = NET_HEADROOM;
    }
    ip_output(s, m, src, IPPROTO_ICMP);
}

/* Port unreachable about the datagram whose first 28 bytes are `iphdr`. */
void icmp_port_unreachable(struct netstack *s, const uint8_t *iphdr, size_t len)
{
    struct mbuf *m = mbuf_get(&s->pool, NET_HEADROOM);
    if (!m) {
        s->st.mbuf_exhausted++;
        return;
    }
    uint8_t *p = mbuf_data(m);
    p[0] = ICMP_UNREACH;
    p[1] = ICMP_UNREACH_PORT;
    net_memset(p + 2, 0, 6);
    net_memcpy(p + 8, iphdr, len);
    m->len = (uint16_t)(8 + len);
    put16(p + 2, cksum_fold(cksum_add(0, p, m->len)));
    ip_output(s, m, get32(iphdr + 12), IPPROTO_ICMP);
}

void icmp_raw_input(struct netstack *s, const uint8_t *pkt, unsigned len, uint32_t src)
{
    for (unsigned i = 0; i < s->nsocks; i++) {
        struct sock *so = &s->socks[i];
        if (!so->used || so->type != NET_SOCK_RAW)
            continue;
        struct mbuf *m = so->nreass < NET_UDP_QUEUE ? mbuf_get(&s->pool, 0) : 0;
        if (!m) {
            s->st.raw_dropped++;
            continue;
        }
        net_memcpy(mbuf_data(m), pkt, len);
        m->len = (uint16_t)len;
        m->peer_ip = src;
        m->peer_port = 0;
        dgram_enqueue(so, m);
    }
}

long icmp_raw_send(struct netstack *s, const void *msg, size_t len, uint32_t ip)
{
    if (len > (size_t)s->nif->mtu - IP_HLEN)
        return -NET_EMSGSIZE;
    if (len < 8)
        return -NET_EINVAL;                  /* not even an ICMP header */
    if (net_route(s, ip))
        return -NET_ENETUNREACH;
    struct mbuf *m = mbuf_get(&s->pool, NET_HEADROOM);
    if (!m) {
        s->st.mbuf_exhausted++;
        return -NET_EAGAIN;
    }
    net_memcpy(mbuf_data(m), msg, len);
    m->len = (uint16_t)len;
    ip_output(s, m, ip, IPPROTO_ICMP);
    return (long)len;
}
