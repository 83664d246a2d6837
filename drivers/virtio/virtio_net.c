/* The virtio-net driver: queue 0 receives, queue 1 transmits (virtio 1.0, 5.1.2). */
#include <ondol/abi.h>
#include <string.h>
#include "virtio_net.h"

#define VIRTIO_NET_F_CSUM       (1ull << 0)
#define VIRTIO_NET_F_GUEST_CSUM (1ull << 1)
#define VIRTIO_NET_F_MAC        (1ull << 5)
#define VIRTIO_NET_F_GUEST_TSO4 (1ull << 7)
#define VIRTIO_NET_F_HOST_TSO4  (1ull << 11)
#define VIRTIO_ID_NET_MODERN       0x1041
#define VIRTIO_ID_NET_TRANSITIONAL 0x1000

static int open_modern_or_transitional(struct vnet *n, unsigned index, unsigned want)
{
    uint64_t wanted = VIRTIO_F_VERSION_1 | VIRTIO_NET_F_MAC;
    bool csum = want & (VNET_TX_CSUM | VNET_RX_CSUM);
    if (csum)
        wanted |= VIRTIO_NET_F_CSUM | VIRTIO_NET_F_GUEST_CSUM;
    if (csum && (want & VNET_TX_TSO))
        wanted |= VIRTIO_NET_F_HOST_TSO4;  /* requires CSUM (virtio 1.0, 5.1.3.1) */
    if (csum && (want & VNET_RX_TSO))
        wanted |= VIRTIO_NET_F_GUEST_TSO4; /* requires GUEST_CSUM (likewise) */
    int err = virtio_open(&n->dev, VIRTIO_ID_NET_MODERN, index, wanted);
    if (err == E_NOENT)
        err = virtio_open(&n->dev, VIRTIO_ID_NET_TRANSITIONAL, index, wanted);
    return err;
}

static void offer_all_rx(struct vnet *n)
{
    for (uint16_t id = 0; id < n->rx.size; id++)
        virtq_offer(&n->rx, id, n->rx.buf_size, true);
    virtq_kick(&n->rx);
}

/* The receive queue: VNET_QUEUE one-frame buffers, or with receive segmentation offload
 * fewer that each hold a super-segment (without mergeable buffers the device needs one
 * buffer that holds the whole frame, virtio 1.0 5.1.6.3.1). */
static int setup_rx(struct vnet *n)
{
    bool tso = n->dev.features & VIRTIO_NET_F_GUEST_TSO4;
    return virtq_setup(&n->dev, &n->rx, 0, tso ? VNET_RX_TSO_QUEUE : VNET_QUEUE,
                       tso ? VNET_TSO_BUF : VNET_BUF);
}

/* The transmit queue: VNET_QUEUE one-frame buffers, or with segmentation offload fewer
 * that each hold a super-segment (a frame is one descriptor, virtio.h). */
static int setup_tx(struct vnet *n)
{
    bool tso = n->dev.features & VIRTIO_NET_F_HOST_TSO4;
    return virtq_setup(&n->dev, &n->tx, 1, tso ? VNET_TSO_QUEUE : VNET_QUEUE,
                       tso ? VNET_TSO_BUF : VNET_BUF);
}

int vnet_open(struct vnet *n, unsigned index, unsigned want)
{
    memset(n, 0, sizeof(*n));
    int err = open_modern_or_transitional(n, index, want);
    if (!err)
        err = setup_rx(n);
    if (!err)
        err = setup_tx(n);
    if (err)
        return err;
    virtq_quiet(&n->tx);                  /* no interrupt per sent frame */
    for (uint16_t id = 0; id < n->tx.size; id++)
        n->tx_free[n->tx_nfree++] = id;
    for (int i = 0; i < 6; i++)
        n->mac[i] = n->dev.device_cfg[i];
    n->offload = (n->dev.features & VIRTIO_NET_F_CSUM ? VNET_TX_CSUM : 0) |
                 (n->dev.features & VIRTIO_NET_F_GUEST_CSUM ? VNET_RX_CSUM : 0) |
                 (n->dev.features & VIRTIO_NET_F_HOST_TSO4 ? VNET_TX_TSO : 0) |
                 (n->dev.features & VIRTIO_NET_F_GUEST_TSO4 ? VNET_RX_TSO : 0);
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

/* The header of a frame to send: nothing asked, the checksum the device finishes, and
 * the segmentation it does (virtio 1.0, 5.1.6.2: a GSO frame also asks for NEEDS_CSUM). */
static void tx_header(struct vnet *n, uint8_t *hdr, struct vnet_offload off)
{
    memset(hdr, 0, VNET_HDR_LEN);                       /* gso_type NONE */
    if (!off.csum_start)
        return;
    hdr[0] = VNET_HDR_NEEDS_CSUM;
    vnet_put_le16(hdr + VNET_HDR_CSUM_START, off.csum_start);
    vnet_put_le16(hdr + VNET_HDR_CSUM_OFFSET, off.csum_offset);
    n->stats.tx_csum++;
    if (!off.gso_size)
        return;
    hdr[VNET_HDR_GSO_TYPE] = VNET_HDR_GSO_TCPV4;
    vnet_put_le16(hdr + VNET_HDR_HDR_LEN, off.hdr_len);
    vnet_put_le16(hdr + VNET_HDR_GSO_SIZE, off.gso_size);
    n->stats.tx_tso++;
}

/* Whether the device can do what off asks of a frame of len bytes. */
static bool tx_offload_ok(const struct vnet *n, size_t len, struct vnet_offload off)
{
    if (!off.csum_start)
        return len <= VNET_FRAME_MAX && !off.gso_size;
    if (!(n->offload & VNET_TX_CSUM) || (size_t)off.csum_start + off.csum_offset + 2 > len)
        return false;
    if (!off.gso_size)
        return len <= VNET_FRAME_MAX;
    return (n->offload & VNET_TX_TSO) && len <= VNET_TSO_MAX && off.hdr_len > off.csum_start &&
           off.hdr_len < len;
}

int vnet_send(struct vnet *n, const void *frame, size_t len, struct vnet_offload off)
{
    if (len == 0 || !tx_offload_ok(n, len, off))
        return E_INVAL;
    if (n->tx_nfree == 0)
        reclaim_tx(n);
    if (n->tx_nfree == 0) {
        n->stats.tx_full++;
        return E_NOMEM;
    }
    uint16_t id = n->tx_free[--n->tx_nfree];
    uint8_t *buf = virtq_buf(&n->tx, id);
    tx_header(n, buf, off);
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
    bool ok = (n->offload & VNET_RX_CSUM) && (hdr[0] & (VNET_HDR_NEEDS_CSUM | VNET_HDR_DATA_VALID));
    n->stats.rx_csum_ok += ok;
    return ok;
}

/* One used receive buffer (len bounded by the buffer: virtq_next_used): delivered if
 * vnet_rx_judge takes it, else counted in rx_bad. True if delivered. */
static bool rx_one(struct vnet *n, const uint8_t *buf, uint32_t len, vnet_deliver_fn *deliver,
                   void *ctx)
{
    size_t flen = len > VNET_HDR_LEN ? len - VNET_HDR_LEN : 0;
    enum vnet_rx_verdict v = vnet_rx_judge(buf, buf + VNET_HDR_LEN, flen,
                                           n->offload & VNET_RX_TSO);
    if (v != VNET_RX_PLAIN && v != VNET_RX_SUPER) {
        n->stats.rx_bad++;
        return false;
    }
    unsigned flags = rx_csum_ok(n, buf) ? VNET_DELIVER_CSUM_OK : 0;
    if (v == VNET_RX_SUPER) {
        flags |= VNET_DELIVER_SUPER;
        n->stats.rx_tso++;
    }
    deliver(ctx, buf + VNET_HDR_LEN, flen, flags);
    n->stats.rx_frames++;
    return true;
}

unsigned vnet_poll(struct vnet *n, vnet_deliver_fn *deliver, void *ctx)
{
    unsigned got = 0, offered = 0;
    uint16_t id;
    uint32_t len;
    while (virtq_next_used(&n->rx, &id, &len)) {
        got += rx_one(n, virtq_buf(&n->rx, id), len, deliver, ctx);
        virtq_offer(&n->rx, id, n->rx.buf_size, true);
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
