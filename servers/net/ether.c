/*
 * Ethernet II framing: accept frames for our MAC or broadcast, dispatch IPv4 and ARP,
 * and prepend the 14-byte header on output. No VLANs, no multicast. While the interface
 * is down (net_set_down) every frame in and out is dropped, as by a device switched off.
 */
#include "net_priv.h"

static const uint8_t ether_bcast[6] = {0xff, 0xff, 0xff, 0xff, 0xff, 0xff};

void ether_input(struct netstack *s, struct mbuf *m)
{
    const uint8_t *h = mbuf_in(m);
    if (s->down || m->len < ETH_HLEN ||
        (net_memcmp(h, s->nif->mac, 6) && net_memcmp(h, ether_bcast, 6))) {
        s->st.rx_drop_ether++;
        mbuf_free(&s->pool, m);
        return;
    }
    uint16_t type = get16(h + 12);
    mbuf_adj(m, ETH_HLEN);
    if (type == ETHERTYPE_IP) {
        ip_input(s, m);
    } else if (type == ETHERTYPE_ARP && !m->ext) {
        arp_input(s, m);
    } else {
        s->st.rx_drop_ether++;
        mbuf_free(&s->pool, m);
    }
}

/* A super-segment's frame: its headers (in m, from h) copied in front of its data in
 * tso_frame, which makes one contiguous frame for the driver. */
static const uint8_t *tso_frame(struct netstack *s, const struct mbuf *m, const uint8_t *h)
{
    uint8_t *frame = s->tso_frame + NET_TSO_HEAD - m->len;
    net_memcpy(frame, h, m->len);
    return frame;
}

/* Prepend the header and hand the frame to the driver; the mbuf is freed here. A checksum
 * left to the device starts after our IP header, which never has options. */
void ether_output(struct netstack *s, struct mbuf *m, const uint8_t dst[6], uint16_t type)
{
    if (s->down) {
        mbuf_free(&s->pool, m);
        return;
    }
    struct net_offload off = {m->csum_off ? ETH_HLEN + IP_HLEN : 0, m->csum_off, m->tso_mss, 0};
    NET_PROBE_ENTER(NET_L_DRV_OUT);
    uint8_t *h = mbuf_prepend(m, ETH_HLEN);
    net_memcpy(h, dst ? dst : ether_bcast, 6);
    net_memcpy(h + 6, s->nif->mac, 6);
    put16(h + 12, type);
    const uint8_t *frame = h;
    if (m->tso_len) {
        off.hdr_len = m->len;
        frame = tso_frame(s, m, h);
    }
    s->st.tx_frames++;
    s->st.tx_bytes += mbuf_pktlen(m);
    s->nif->send(s->nif, frame, mbuf_pktlen(m), off);
    mbuf_free(&s->pool, m);
    NET_PROBE_LEAVE(NET_L_DRV_OUT);
}
