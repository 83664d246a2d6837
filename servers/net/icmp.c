/*
 * ICMP (RFC 792): answer echo requests, send port-unreachable for UDP datagrams nobody
 * listens to; every other type is counted and dropped (no path-MTU discovery).
 */
#include "net_priv.h"

#define ICMP_ECHOREPLY 0
#define ICMP_UNREACH 3
#define ICMP_UNREACH_PORT 3
#define ICMP_ECHO 8

void icmp_input(struct netstack *s, struct mbuf *m, uint32_t src)
{
    uint8_t *p = mbuf_data(m);
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
