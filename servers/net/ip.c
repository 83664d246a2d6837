/*
 * IPv4 (RFC 791): input checks the version, header length, total length against the
 * frame, the header checksum and the destination (ours or a broadcast), drops fragments
 * with a count (no reassembly: TCP uses MSS and sets DF), strips options and link padding,
 * and dispatches on the protocol (a super-segment, NET_RX_SUPER, only to TCP). Output prepends a 20-byte header with DF set and TTL 64
 * and picks the next hop: the destination when on-link, else the gateway. No forwarding.
 * The routes are those of one interface (net_route): its subnet and a default route
 * through the gateway, both gone while the interface is down or has no address.
 */
#include "net_priv.h"

#define IP_DF 0x4000
#define IP_MF 0x2000
#define IP_OFFMASK 0x1fff
#define IP_TTL 64

static int ip_for_us(const struct netstack *s, uint32_t dst)
{
    uint32_t bcast = (s->ip & s->mask) | ~s->mask;
    return dst == s->ip || dst == 0xffffffffu || dst == bcast;
}

static void ip_drop(struct netstack *s, struct mbuf *m, uint64_t *counter)
{
    (*counter)++;
    mbuf_free(&s->pool, m);
}

static void ip_input_checked(struct netstack *s, struct mbuf *m)
{
    const uint8_t *h = mbuf_in(m);
    if (m->len < IP_HLEN || (h[0] >> 4) != 4)
        return ip_drop(s, m, &s->st.rx_drop_ip);
    unsigned hlen = (h[0] & 0xfu) * 4u, total = get16(h + 2);
    if (hlen < IP_HLEN || total < hlen || total > m->len)
        return ip_drop(s, m, &s->st.rx_drop_ip);
    if (cksum_fold(cksum_add(0, h, hlen)) != 0)
        return ip_drop(s, m, &s->st.ip_bad_cksum);
    uint32_t src = get32(h + 12), dst = get32(h + 16);
    if (!ip_for_us(s, dst) || src == s->ip)
        return ip_drop(s, m, &s->st.rx_drop_ip);
    if (get16(h + 6) & (IP_MF | IP_OFFMASK))
        return ip_drop(s, m, &s->st.ip_frag_dropped);
    uint8_t proto = h[9];
    uint8_t iphdr[IP_HLEN + 8];              /* kept for ICMP errors about this packet */
    unsigned keep = total < sizeof iphdr ? total : (unsigned)sizeof iphdr;
    net_memcpy(iphdr, h, keep);
    m->len = total;                          /* drop Ethernet padding */
    mbuf_adj(m, hlen);
    if (proto == IPPROTO_TCP && dst == s->ip)
        tcp_input(s, m, src, dst);
    else if (m->ext)                         /* in place: only TCP reads it so */
        ip_drop(s, m, &s->st.rx_drop_ip);
    else if (proto == IPPROTO_UDP)
        udp_input(s, m, src, dst, keep >= IP_HLEN + 8 ? iphdr : 0);
    else if (proto == IPPROTO_ICMP) {
        icmp_raw_input(s, h, total, src);
        icmp_input(s, m, src);
    }
    else
        ip_drop(s, m, &s->st.rx_drop_ip);
}

void ip_input(struct netstack *s, struct mbuf *m)
{
    NET_PROBE_ENTER(NET_L_IP_IN);
    ip_input_checked(s, m);
    NET_PROBE_LEAVE(NET_L_IP_IN);
}

static void ip_output_routed(struct netstack *s, struct mbuf *m, uint32_t dst, uint8_t proto)
{
    uint8_t *h = mbuf_prepend(m, IP_HLEN);
    h[0] = 0x45;
    h[1] = 0;
    put16(h + 2, (uint16_t)mbuf_pktlen(m));
    put16(h + 4, s->ip_id++);
    put16(h + 6, IP_DF);
    h[8] = IP_TTL;
    h[9] = proto;
    put16(h + 10, 0);
    put32(h + 12, s->ip);
    put32(h + 16, dst);
    put16(h + 10, cksum_fold(cksum_add(0, h, IP_HLEN)));
    if (dst == 0xffffffffu) {
        ether_output(s, m, 0, ETHERTYPE_IP);
        return;
    }
    if (net_route(s, dst)) {
        mbuf_free(&s->pool, m);              /* no route (any longer): connect and sendto
                                                said ENETUNREACH when there was none */
        return;
    }
    arp_resolve_and_send(s, m, (dst & s->mask) == (s->ip & s->mask) ? dst : s->gw);
}

void ip_output(struct netstack *s, struct mbuf *m, uint32_t dst, uint8_t proto)
{
    NET_PROBE_ENTER(NET_L_IP_OUT);
    ip_output_routed(s, m, dst, proto);
    NET_PROBE_LEAVE(NET_L_IP_OUT);
}

/* ---- the configuration (the one interface's address and its routes) ---- */

int net_route(const struct netstack *s, uint32_t dst)
{
    bool onlink = (dst & s->mask) == (s->ip & s->mask) || dst == 0xffffffffu;
    return !s->down && s->ip && (onlink || s->gw) ? 0 : -NET_ENETUNREACH;
}

void net_set_address(struct netstack *s, uint32_t ip, uint32_t mask, uint32_t gw)
{
    s->ip = ip;
    s->mask = mask;
    s->gw = gw;
    s->dhcp.state = DHCP_OFF;
}

void net_set_down(struct netstack *s, bool down) { s->down = down; }
bool net_is_down(const struct netstack *s) { return s->down; }
