/* The virtio-net driver: queue 0 receives, queue 1 transmits (virtio 1.0, 5.1.2). */
#include <ondol/abi.h>
#include <string.h>
#include "virtio_net.h"

#define VIRTIO_NET_F_MAC (1ull << 5)
#define VIRTIO_ID_NET_MODERN       0x1041
#define VIRTIO_ID_NET_TRANSITIONAL 0x1000
#define VNET_BUF 2048                /* header + frame, rounded up */

static int open_modern_or_transitional(struct vnet *n, unsigned index)
{
    uint64_t wanted = VIRTIO_F_VERSION_1 | VIRTIO_NET_F_MAC;
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

int vnet_open(struct vnet *n, unsigned index)
{
    memset(n, 0, sizeof(*n));
    int err = open_modern_or_transitional(n, index);
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

int vnet_send(struct vnet *n, const void *frame, size_t len)
{
    if (len == 0 || len > VNET_FRAME_MAX)
        return E_INVAL;
    if (n->tx_nfree == 0)
        reclaim_tx(n);
    if (n->tx_nfree == 0) {
        n->stats.tx_full++;
        return E_NOMEM;
    }
    uint16_t id = n->tx_free[--n->tx_nfree];
    uint8_t *buf = virtq_buf(&n->tx, id);
    memset(buf, 0, VNET_HDR_LEN);                       /* no checksum, no segmentation */
    memcpy(buf + VNET_HDR_LEN, frame, len);
    virtq_offer(&n->tx, id, (uint32_t)(VNET_HDR_LEN + len), false);
    virtq_kick(&n->tx);
    n->stats.tx_frames++;
    return 0;
}

unsigned vnet_poll(struct vnet *n, vnet_deliver_fn *deliver, void *ctx)
{
    unsigned got = 0, offered = 0;
    uint16_t id;
    uint32_t len;
    while (virtq_next_used(&n->rx, &id, &len)) {
        if (len > VNET_HDR_LEN) {
            deliver(ctx, virtq_buf(&n->rx, id) + VNET_HDR_LEN, len - VNET_HDR_LEN);
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
    (void)virtio_isr(&n->dev);
    reclaim_tx(n);
}
