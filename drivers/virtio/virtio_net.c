/* The virtio-net driver: queue 0 receives, queue 1 transmits (virtio 1.0, 5.1.2). */
#include <ondol/abi.h>
#include <string.h>
#include "virtio_net.h"

#define VIRTIO_NET_F_CSUM       (1ull << 0)
#define VIRTIO_NET_F_GUEST_CSUM (1ull << 1)
#define VIRTIO_NET_F_MAC        (1ull << 5)
/* struct virtio_net_hdr (5.1.6): flags, gso_type, hdr_len, gso_size, csum_start,
 * csum_offset, num_buffers; little-endian 16-bit fields */
#define HDR_NEEDS_CSUM 1u
#define HDR_DATA_VALID 2u
#define HDR_CSUM_START 6
#define HDR_CSUM_OFFSET 8
#define VIRTIO_ID_NET_MODERN       0x1041
#define VIRTIO_ID_NET_TRANSITIONAL 0x1000
#define VNET_BUF 2048                /* header + frame, rounded up */

static int open_modern_or_transitional(struct vnet *n, unsigned index, bool csum)
{
    uint64_t wanted = VIRTIO_F_VERSION_1 | VIRTIO_NET_F_MAC;
    if (csum)
        wanted |= VIRTIO_NET_F_CSUM | VIRTIO_NET_F_GUEST_CSUM;
    int err = virtio_open(&n->dev, VIRTIO_ID_NET_MODERN, index, wanted);
    if (err == E_NOENT)
        err = virtio_open(&n->dev, VIRTIO_ID_NET_TRANSITIONAL, index, wanted);
    return err;
}

static void offer_all_rx(struct vnet *n)
{
    for (uint16_t id = 0; id < n->rx.size; id++)
        virtq_offer(&n->rx, id, VNET_BUF, true);
    virtq_kick(&n->rx);
}

int vnet_open(struct vnet *n, unsigned index, bool csum)
{
    memset(n, 0, sizeof(*n));
    int err = open_modern_or_transitional(n, index, csum);
    if (!err)
        err = virtq_setup(&n->dev, &n->rx, 0, VNET_QUEUE, VNET_BUF);
    if (!err)
        err = virtq_setup(&n->dev, &n->tx, 1, VNET_QUEUE, VNET_BUF);
    if (err)
        return err;
    virtq_quiet(&n->tx);                  /* no interrupt per sent frame */
    for (uint16_t id = 0; id < n->tx.size; id++)
        n->tx_free[n->tx_nfree++] = id;
    for (int i = 0; i < 6; i++)
        n->mac[i] = n->dev.device_cfg[i];
    n->offload = (n->dev.features & VIRTIO_NET_F_CSUM ? VNET_TX_CSUM : 0) |
                 (n->dev.features & VIRTIO_NET_F_GUEST_CSUM ? VNET_RX_CSUM : 0);
    virtio_ready(&n->dev);
    offer_all_rx(n);
    return 0;
}

static void reclaim_tx(struct vnet *n)
{
    uint16_t id;
    uint32_t len;
    while (virtq_next_used(&n->tx, &id, &len))
        if (n->tx_nfree < n->tx.size)
            n->tx_free[n->tx_nfree++] = id;
}

static void put_le16(uint8_t *p, uint16_t v)
{
    p[0] = (uint8_t)v;
    p[1] = (uint8_t)(v >> 8);
}

/* The header of a frame to send: nothing asked, or the checksum the device finishes. */
static void tx_header(struct vnet *n, uint8_t *hdr, uint16_t csum_start, uint16_t csum_offset)
{
    memset(hdr, 0, VNET_HDR_LEN);                       /* no segmentation */
    if (!csum_start)
        return;
    hdr[0] = HDR_NEEDS_CSUM;
    put_le16(hdr + HDR_CSUM_START, csum_start);
    put_le16(hdr + HDR_CSUM_OFFSET, csum_offset);
    n->stats.tx_csum++;
}

int vnet_send(struct vnet *n, const void *frame, size_t len, uint16_t csum_start,
              uint16_t csum_offset)
{
    if (len == 0 || len > VNET_FRAME_MAX)
        return E_INVAL;
    if (csum_start && (!(n->offload & VNET_TX_CSUM) || (size_t)csum_start + csum_offset + 2 > len))
        return E_INVAL;
    if (n->tx_nfree == 0)
        reclaim_tx(n);
    if (n->tx_nfree == 0) {
        n->stats.tx_full++;
        return E_NOMEM;
    }
    uint16_t id = n->tx_free[--n->tx_nfree];
    uint8_t *buf = virtq_buf(&n->tx, id);
    tx_header(n, buf, csum_start, csum_offset);
    memcpy(buf + VNET_HDR_LEN, frame, len);
    virtq_offer(&n->tx, id, (uint32_t)(VNET_HDR_LEN + len), false);
    virtq_kick(&n->tx);
    n->stats.tx_frames++;
    return 0;
}

/* Whether the device vouches for a received frame's checksum (only if it agreed to
 * GUEST_CSUM: otherwise the flags are not ours to trust). */
static bool rx_csum_ok(struct vnet *n, const uint8_t *hdr)
{
    bool ok = (n->offload & VNET_RX_CSUM) && (hdr[0] & (HDR_NEEDS_CSUM | HDR_DATA_VALID));
    n->stats.rx_csum_ok += ok;
    return ok;
}

unsigned vnet_poll(struct vnet *n, vnet_deliver_fn *deliver, void *ctx)
{
    unsigned got = 0, offered = 0;
    uint16_t id;
    uint32_t len;
    while (virtq_next_used(&n->rx, &id, &len)) {
        const uint8_t *buf = virtq_buf(&n->rx, id);
        if (len > VNET_HDR_LEN && len <= VNET_BUF && buf[1] == 0) {   /* gso_type NONE */
            bool ok = rx_csum_ok(n, buf);
            deliver(ctx, buf + VNET_HDR_LEN, len - VNET_HDR_LEN, ok);
            n->stats.rx_frames++;
            got++;
        } else {
            n->stats.rx_bad++;
        }
        virtq_offer(&n->rx, id, VNET_BUF, true);
        offered++;
    }
    if (offered)
        virtq_kick(&n->rx);
    return got;
}

void vnet_interrupt(struct vnet *n)
{
    n->stats.irqs++;
    if (!n->dev.pci.info.msix)
        (void)virtio_isr(&n->dev);      /* INTx: clears the cause, releases the line */
    reclaim_tx(n);
}
