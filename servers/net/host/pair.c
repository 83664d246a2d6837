/* The two-stack harness (pair.h). */
#include "pair.h"
#include "../net_priv.h"

#include <stdlib.h>
#include <string.h>

/* What a device with checksum offload does before the frame leaves (virtio 5.1.6.2). */
static void finish_checksum(uint8_t *frame, size_t len, struct net_offload csum)
{
    uint16_t c = cksum_fold(cksum_add(0, frame + csum.start, len - csum.start));
    put16(frame + csum.start + csum.offset, c);
}

/* Offsets in an Ethernet frame carrying IPv4 without options, and TCP. */
enum { IPH = 14, TCPH = 34 };

/* Whether a super-segment is what HOST_TSO4 expects (virtio 1.0, 5.1.6.2) and what the
 * stack promises (whole pieces of its MSS, the pseudo-header sum of the whole length in
 * the checksum field). */
static bool super_segment_ok(struct pair *p, int from, const uint8_t *f, size_t len,
                             const struct net_offload *off)
{
    if (!(p->nif[from].offload & NETIF_TX_TSO) || len < TCPH + 20 || get16(f + 12) != 0x0800 ||
        f[IPH] != 0x45 || f[IPH + 9] != 6 || get16(f + IPH + 2) != len - IPH)
        return false;
    size_t hdr = TCPH + (size_t)(f[TCPH + 12] >> 4) * 4;
    if (off->start != TCPH || off->offset != 16 || off->hdr_len != hdr || hdr >= len)
        return false;
    uint16_t mss = (uint16_t)(p->nif[!from].mtu - 40);   /* what the peer's SYN said */
    uint32_t pseudo = cksum_pseudo(get32(f + IPH + 12), get32(f + IPH + 16), 6,
                                   (uint16_t)(len - TCPH));
    uint16_t field = (uint16_t)~cksum_fold(pseudo);
    return off->gso_size == mss && len - hdr > mss && (len - hdr) % mss == 0 &&
           get16(f + TCPH + 16) == field;
}

/* Piece i of a super-segment, n data bytes from `done` on: the first frame's headers
 * with its own IP length, id (the first's + i) and checksum, sequence number, FIN and PSH
 * only on the last piece, and the TCP checksum computed over it all. */
static size_t cut_piece(uint8_t *out, const uint8_t *f, size_t hdr, unsigned i, size_t done,
                        size_t n, bool last)
{
    memcpy(out, f, hdr);
    memcpy(out + hdr, f + hdr + done, n);
    put16(out + IPH + 2, (uint16_t)(hdr - IPH + n));
    put16(out + IPH + 4, (uint16_t)(get16(f + IPH + 4) + i));
    put16(out + IPH + 10, 0);
    put16(out + IPH + 10, cksum_fold(cksum_add(0, out + IPH, 20)));
    put32(out + TCPH + 4, get32(f + TCPH + 4) + (uint32_t)done);
    if (!last)
        out[TCPH + 13] &= (uint8_t)~0x09;                 /* FIN, PSH */
    size_t tcplen = hdr - TCPH + n;
    put16(out + TCPH + 16, 0);
    uint32_t sum = cksum_pseudo(get32(f + IPH + 12), get32(f + IPH + 16), 6, (uint16_t)tcplen);
    put16(out + TCPH + 16, cksum_fold(cksum_add(sum, out + TCPH, tcplen)));
    return hdr + n;
}

static void link_out(struct pair *p, int from, const uint8_t *frame, size_t len)
{
    if (p->tap)
        p->tap(p, from, frame, len);
    if (!p->rx_super[!from]) {
        link_send(&p->link, from, frame, len, p->now);
        return;
    }
    static uint8_t buf[VNET_HDR_LEN + VNET_TSO_MAX];     /* behind a zero virtio header */
    memset(buf, 0, VNET_HDR_LEN);
    memcpy(buf + VNET_HDR_LEN, frame, len);
    link_send(&p->link, from, buf, VNET_HDR_LEN + len, p->now);
}

/* A checked super-segment to a side with rx_super: whole, behind the virtio header a
 * device with GUEST_TSO4 writes (the TCP checksum left to it: NEEDS_CSUM), spoilt first
 * if the test asks. */
static void send_whole(struct pair *p, int from, const uint8_t *f, size_t len,
                       const struct net_offload *off)
{
    static uint8_t buf[VNET_HDR_LEN + VNET_TSO_MAX];
    uint8_t *hdr = buf;
    memset(hdr, 0, VNET_HDR_LEN);
    hdr[0] = VNET_HDR_NEEDS_CSUM;
    hdr[VNET_HDR_GSO_TYPE] = VNET_HDR_GSO_TCPV4;
    vnet_put_le16(hdr + VNET_HDR_HDR_LEN, off->hdr_len);
    vnet_put_le16(hdr + VNET_HDR_GSO_SIZE, off->gso_size);
    vnet_put_le16(hdr + VNET_HDR_CSUM_START, off->start);
    vnet_put_le16(hdr + VNET_HDR_CSUM_OFFSET, off->offset);
    memcpy(buf + VNET_HDR_LEN, f, len);
    if (p->rx_spoil)
        p->rx_spoil(p, hdr, buf + VNET_HDR_LEN, &len);
    link_send(&p->link, from, buf, VNET_HDR_LEN + len, p->now);
}

/* The reference splitter: a device's segmentation of a checked super-segment. */
static void split_super_segment(struct pair *p, int from, const uint8_t *f, size_t len,
                                const struct net_offload *off)
{
    static uint8_t piece[2048];
    if (!super_segment_ok(p, from, f, len, off)) {
        p->tso_bad++;
        return;
    }
    size_t hdr = off->hdr_len, data = len - hdr;
    p->tso_frames++;
    p->tso_resent += get32(f + TCPH + 4) != p->tso_seq_end[from];
    p->tso_seq_end[from] = get32(f + TCPH + 4) + (uint32_t)data;
    if (p->tso_tap)
        p->tso_tap(p, from, f, len);
    if (p->rx_super[!from]) {
        send_whole(p, from, f, len, off);
        return;
    }
    unsigned i = 0;
    for (size_t done = 0; done < data; done += off->gso_size, i++) {
        size_t n = data - done < off->gso_size ? data - done : off->gso_size;
        link_out(p, from, piece, cut_piece(piece, f, hdr, i, done, n, done + n == data));
    }
}

/* After each frame of side `from` that is not a super-segment: where its TCP data ends,
 * if it went beyond what was sent (tso_resent). */
static void note_seq_end(struct pair *p, int from, const uint8_t *f, size_t len)
{
    if (len < TCPH + 20 || get16(f + 12) != 0x0800 || f[IPH + 9] != 6)
        return;
    size_t hdr = TCPH + (size_t)(f[TCPH + 12] >> 4) * 4;
    uint32_t end = get32(f + TCPH + 4) + (uint32_t)(len > hdr ? len - hdr : 0);
    if (f[TCPH + 13] & 0x03)                            /* SYN or FIN */
        end++;
    if ((int32_t)(end - p->tso_seq_end[from]) > 0 || (f[TCPH + 13] & 0x02))
        p->tso_seq_end[from] = end;
}

static void pair_send(struct netif *nif, const void *frame, size_t len,
                      struct net_offload csum)
{
    static uint8_t copy[2048];
    struct pair *p = nif->ctx;
    int from = nif == &p->nif[1];
    p->frames[from]++;
    if (csum.gso_size) {
        p->tx_csum++;
        split_super_segment(p, from, frame, len, &csum);
        return;
    }
    note_seq_end(p, from, frame, len);
    if (csum.start) {
        p->tx_csum++;
        if (p->finish_csum && len <= sizeof copy && csum.start + csum.offset + 2u <= len) {
            memcpy(copy, frame, len);
            finish_checksum(copy, len, csum);
            frame = copy;
        }
    }
    link_out(p, from, frame, len);
}

void pair_init(struct pair *p, const struct link_params *lp, uint16_t mtu_b)
{
    memset(p, 0, sizeof *p);
    link_init(&p->link, lp);
    p->now = 1000;
    for (int i = 0; i < 2; i++) {
        struct netif *nif = &p->nif[i];
        static const uint8_t base[6] = {0x02, 0, 0, 0, 0, 0};
        memcpy(nif->mac, base, 6);
        nif->mac[5] = (uint8_t)(i + 1);
        nif->mtu = i ? mtu_b : 1500;
        nif->send = pair_send;
        nif->ctx = p;
        p->st[i] = calloc(1, net_stack_size());
        if (!p->st[i])
            abort();
        net_init(p->st[i], nif, i ? PAIR_IP_B : PAIR_IP_A, 0xffffff00u, 0, p->now,
                 lp->seed * 2 + (uint64_t)i + 1);
    }
}

void pair_free(struct pair *p)
{
    link_free(&p->link);
    free(p->st[0]);
    free(p->st[1]);
}

/* A frame that arrived for side `to` (with rx_super, behind its virtio header): what the
 * driver does with it (vnet_poll), then the stack. */
static void arrive(struct pair *p, int to, const uint8_t *buf, size_t n)
{
    if (!p->rx_super[to]) {
        net_input_flags(p->st[to], buf, n, p->rx_flags[to]);
        return;
    }
    size_t len = n > VNET_HDR_LEN ? n - VNET_HDR_LEN : 0;
    enum vnet_rx_verdict v = vnet_rx_judge(buf, buf + VNET_HDR_LEN, len, true);
    if (v == VNET_RX_PLAIN) {
        net_input_flags(p->st[to], buf + VNET_HDR_LEN, len, p->rx_flags[to]);
    } else if (v == VNET_RX_SUPER) {
        p->rx_supers[to]++;
        net_input_flags(p->st[to], buf + VNET_HDR_LEN, len, NET_RX_SUPER | NET_RX_CSUM_OK);
    } else {
        p->rx_bad[to]++;
        p->rx_bad_kind[v]++;
    }
}

void pair_step(struct pair *p, uint64_t max_ms)
{
    static uint8_t buf[VNET_HDR_LEN + VNET_TSO_MAX];
    uint64_t next = link_next_due(&p->link);
    for (int i = 0; i < 2; i++) {
        uint64_t t = net_next_timer(p->st[i]);
        if (t < next)
            next = t;
    }
    if (next <= p->now)
        next = p->now + 1;
    if (next > p->now + max_ms)
        next = p->now + max_ms;
    p->now = next;                            /* the stacks and the application agree */
    net_tick(p->st[0], p->now);               /* time first: input sees the new time */
    net_tick(p->st[1], p->now);
    int dir;
    size_t n;
    while ((n = link_recv(&p->link, p->now, &dir, buf, sizeof buf)) > 0)
        arrive(p, !dir, buf, n);
}
