/*
 * UDP (RFC 768): checksum checked when present, datagrams queued on the bound socket (at
 * most NET_UDP_QUEUE, then dropped with a count), port unreachable when none is bound.
 * Output always computes the checksum. Datagrams must fit one frame (no fragmentation).
 */
#include "net_priv.h"

static struct sock *udp_lookup(struct netstack *s, uint16_t port)
{
    for (unsigned i = 0; i < s->nsocks; i++) {
        struct sock *so = &s->socks[i];
        if (so->used && so->type == NET_SOCK_DGRAM && so->lport == port)
            return so;
    }
    return 0;
}

static void udp_drop(struct netstack *s, struct mbuf *m, uint64_t *counter)
{
    (*counter)++;
    mbuf_free(&s->pool, m);
}

void udp_input(struct netstack *s, struct mbuf *m, uint32_t src, uint32_t dst,
               const uint8_t *iphdr)
{
    uint8_t *h = mbuf_data(m);
    if (m->len < UDP_HLEN)
        return udp_drop(s, m, &s->st.rx_drop_udp);
    uint16_t ulen = get16(h + 4);
    if (ulen < UDP_HLEN || ulen > m->len)
        return udp_drop(s, m, &s->st.rx_drop_udp);
    if (get16(h + 6) && !m->csum_ok &&
        cksum_fold(cksum_add(cksum_pseudo(src, dst, IPPROTO_UDP, ulen), h, ulen)) != 0)
        return udp_drop(s, m, &s->st.udp_bad_cksum);
    if (dhcp_port(s, get16(h), get16(h + 2))) {
        m->len = ulen;
        mbuf_adj(m, UDP_HLEN);
        return dhcp_input(s, m);
    }
    struct sock *so = udp_lookup(s, get16(h + 2));
    if (!so) {
        if (iphdr && dst == s->ip)
            icmp_port_unreachable(s, iphdr, IP_HLEN + 8);
        return udp_drop(s, m, &s->st.udp_noport);
    }
    if (so->rport && (src != so->rip || get16(h) != so->rport))
        return udp_drop(s, m, &s->st.udp_not_peer);    /* connected: its peer's only */
    if (so->nreass >= NET_UDP_QUEUE)
        return udp_drop(s, m, &s->st.rx_drop_udp);
    m->peer_ip = src;
    m->peer_port = get16(h);
    m->len = ulen;
    mbuf_adj(m, UDP_HLEN);
    dgram_enqueue(so, m);
}

void dgram_enqueue(struct sock *so, struct mbuf *m)
{
    struct mbuf **tail = &so->reass;
    while (*tail)
        tail = &(*tail)->next;
    *tail = m;
    so->nreass++;
}

long net_sendto(struct netstack *s, int sd, const void *buf, size_t len, uint32_t ip,
                uint16_t port)
{
    if (sd < 0 || sd >= NET_MAX_SOCKETS || !s->socks[sd].used ||
        s->socks[sd].type == NET_SOCK_STREAM)
        return -NET_EBADF;
    struct sock *so = &s->socks[sd];
    if (so->type == NET_SOCK_RAW)
        return icmp_raw_send(s, buf, len, ip);
    if (len > (size_t)s->nif->mtu - IP_HLEN - UDP_HLEN)
        return -NET_EMSGSIZE;
    if (net_route(s, ip))
        return -NET_ENETUNREACH;
    if (!so->lport)
        so->lport = net_ephemeral_port(s, NET_SOCK_DGRAM);
    struct mbuf *m = mbuf_get(&s->pool, NET_HEADROOM);
    if (!m) {
        s->st.mbuf_exhausted++;
        return -NET_EAGAIN;
    }
    uint8_t *h = mbuf_data(m);
    uint16_t ulen = (uint16_t)(UDP_HLEN + len);
    put16(h, so->lport);
    put16(h + 2, port);
    put16(h + 4, ulen);
    put16(h + 6, 0);
    net_memcpy(h + UDP_HLEN, buf, len);
    m->len = ulen;
    uint32_t pseudo = cksum_pseudo(s->ip, ip, IPPROTO_UDP, ulen);
    if (!cksum_offload(s, m, 6, pseudo)) {
        uint16_t c = cksum_fold(cksum_add(pseudo, h, ulen));
        put16(h + 6, c ? c : 0xffff);
    }
    ip_output(s, m, ip, IPPROTO_UDP);
    return (long)len;
}

/* The next datagram (UDP) or packet (raw ICMP) queued on the socket. */
long net_recvfrom(struct netstack *s, int sd, void *buf, size_t len, uint32_t *ip,
                  uint16_t *port)
{
    if (sd < 0 || sd >= NET_MAX_SOCKETS || !s->socks[sd].used ||
        s->socks[sd].type == NET_SOCK_STREAM)
        return -NET_EBADF;
    struct sock *so = &s->socks[sd];
    struct mbuf *m = so->reass;
    if (!m)
        return -NET_EAGAIN;
    so->reass = m->next;
    so->nreass--;
    size_t n = m->len < len ? m->len : len;  /* the rest of a long datagram is lost */
    net_memcpy(buf, mbuf_data(m), n);
    if (ip)
        *ip = m->peer_ip;
    if (port)
        *port = m->peer_port;
    mbuf_free(&s->pool, m);
    return (long)n;
}
