/*
 * Two stacks, A (10.0.0.1) and B (10.0.0.2), joined by a simulated link (link.h), with a
 * simulated clock: pair_step delivers the frames that are due, runs both stacks' timers
 * and advances the clock to the next event. Deterministic for a given seed.
 */
#ifndef ONDOL_NET_HOST_PAIR_H
#define ONDOL_NET_HOST_PAIR_H

#include <stdbool.h>

#include "../net.h"
#include "link.h"
#include "vnet_rx.h"

#define PAIR_IP_A 0x0a000001u
#define PAIR_IP_B 0x0a000002u

struct pair {
    struct netif nif[2];
    struct netstack *st[2];
    struct link link;
    uint64_t now;
    uint64_t frames[2];                     /* frames sent by each side */
    void (*tap)(struct pair *p, int from, const uint8_t *frame, size_t len);
    /* Checksum offload as a virtio-net device does it (default: none): with finish_csum
     * the link finishes the checksum a frame asks for (NETIF_TX_CSUM), else the frame
     * goes on with the pseudo-header sum only; rx_flags[i] go with every frame side i
     * receives (net_input_flags). tx_csum counts the frames that asked. */
    bool finish_csum;
    unsigned rx_flags[2];
    uint64_t tx_csum;
    /* Segmentation offload as virtio-net's HOST_TSO4 does it: a frame sent with a gso_size
     * is checked (tso_bad counts super-segments whose headers or virtio fields are wrong,
     * which are not sent) and cut by a reference splitter into frames of at most gso_size
     * data bytes, checksums finished; tso_frames counts them. With one connection at a
     * time, tso_resent counts those that resent data (the stack never puts a
     * retransmission in one): tso_seq_end[i] is the sequence number after the data side
     * i sent last. */
    uint64_t tso_frames, tso_bad, tso_resent;
    uint32_t tso_seq_end[2];
    void (*tso_tap)(struct pair *p, int from, const uint8_t *frame, size_t len); /* each
                                               super-segment as the stack sent it */
    /* Receive segmentation offload as virtio-net's GUEST_TSO4 (with a host that does not
     * cut, as a tap does): with rx_super[i], every frame to side i travels behind a
     * virtio_net_hdr, and a checked super-segment of the other side stays whole, its
     * header saying gso TCPV4, its gso_size and hdr_len, NEEDS_CSUM at the TCP checksum.
     * On arrival the driver's vnet_rx_judge decides, as in vnet_poll: a plain frame goes
     * to the stack with rx_flags[i], a super-segment with NET_RX_SUPER | NET_RX_CSUM_OK
     * (rx_supers[i] counts them), a bad one is dropped and counted in rx_bad[i] and by its
     * kind. rx_spoil, when set, may change a super-segment's header and frame (and its
     * length, up to the room given) before it goes on the link. */
    bool rx_super[2];
    uint64_t rx_supers[2], rx_bad[2], rx_bad_kind[VNET_RX_KINDS];
    void (*rx_spoil)(struct pair *p, uint8_t *hdr, uint8_t *frame, size_t *len);
};

void pair_init(struct pair *p, const struct link_params *lp, uint16_t mtu_b);
void pair_free(struct pair *p);
/* Advance the clock to the next event (by at least 1 ms, at most max_ms), deliver the
 * frames due and run both stacks' timers. */
void pair_step(struct pair *p, uint64_t max_ms);

#endif
