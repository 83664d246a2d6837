/*
 * The virtio-net driver (virtio 1.0, 5.1), MK or IK alike (drvplat.h). Frames go out and
 * come in as whole Ethernet frames without FCS; each travels behind the 12-byte
 * virtio_net_hdr of a VERSION_1 device, which the driver adds and strips. Frames are at
 * most one MTU (no segmentation offload). Checksum offload only when asked (vnet_open's
 * csum; the option net_csum): then the device finishes the TCP/UDP checksums of frames
 * sent with a vnet_csum (VIRTIO_NET_F_CSUM, NEEDS_CSUM in the header), and a received
 * frame whose header says DATA_VALID (the device checked it) or NEEDS_CSUM (it never
 * crossed a wire: the host's own stack left the sum to the device) is delivered with
 * csum_ok (VIRTIO_NET_F_GUEST_CSUM); every other frame is checked by the stack.
 *
 * Many buffers are in flight both ways: every receive buffer is offered to the device at
 * start and offered again once its frame is delivered; transmit buffers are reused when
 * the device reports them used.
 */
#ifndef VIRTIO_NET_H
#define VIRTIO_NET_H
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "virtio.h"

#define VNET_HDR_LEN   12           /* struct virtio_net_hdr with num_buffers (VERSION_1) */
#define VNET_FRAME_MAX 1514         /* Ethernet header + 1500 bytes, no FCS */
#define VNET_QUEUE     128          /* entries (and buffers) per queue */

struct vnet_stats {
    uint64_t tx_frames, rx_frames, tx_full, rx_bad, irqs;
    uint64_t tx_csum, rx_csum_ok;   /* frames whose checksum the device finished / vouched for */
};

/* vnet.offload: what the device agreed to */
#define VNET_TX_CSUM 0x1            /* VIRTIO_NET_F_CSUM */
#define VNET_RX_CSUM 0x2            /* VIRTIO_NET_F_GUEST_CSUM */

struct vnet {
    struct virtio_dev dev;
    struct virtq rx, tx;
    uint16_t tx_free[VNET_QUEUE];   /* transmit buffers the device has given back */
    uint16_t tx_nfree;
    uint8_t mac[6];
    unsigned offload;               /* VNET_* */
    struct vnet_stats stats;
};

/* Find, claim and start the index-th virtio-net device (PCI 1af4:1041, or the transitional
 * 1af4:1000 through its modern interface); with csum, ask for checksum offload both ways
 * (n->offload says what the device agreed to). 0 or E_NOENT, E_NOTSUP, E_NOMEM, ... */
int vnet_open(struct vnet *n, unsigned index, bool csum);
/* Queue one frame (len bytes, at most VNET_FRAME_MAX) for sending; it is copied. With
 * csum_start > 0 (only with VNET_TX_CSUM) the device finishes the checksum over the bytes
 * from csum_start and stores it at csum_start + csum_offset. 0, E_INVAL (length, or a
 * checksum the device cannot do), or E_NOMEM while all transmit buffers are in flight. */
int vnet_send(struct vnet *n, const void *frame, size_t len, uint16_t csum_start,
              uint16_t csum_offset);
/* Deliver every received frame to `deliver` (the frame is valid during the call only;
 * csum_ok as above) and offer its buffer again; returns the number delivered. */
typedef void vnet_deliver_fn(void *ctx, const uint8_t *frame, size_t len, bool csum_ok);
unsigned vnet_poll(struct vnet *n, vnet_deliver_fn *deliver, void *ctx);
/* The device interrupted: clear its status (so the line is released) and take back used
 * transmit buffers. Receive work is left to vnet_poll. */
void vnet_interrupt(struct vnet *n);
#endif
