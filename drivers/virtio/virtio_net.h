/*
 * The virtio-net driver (virtio 1.0, 5.1), MK or IK alike (drvplat.h). Frames go out and
 * come in as whole Ethernet frames without FCS; each travels behind the 12-byte
 * virtio_net_hdr of a VERSION_1 device, which the driver adds and strips. No offloads are
 * negotiated: checksums are computed by the stack and frames are at most one MTU.
 *
 * Many buffers are in flight both ways: every receive buffer is offered to the device at
 * start and offered again once its frame is delivered; transmit buffers are reused when
 * the device reports them used.
 */
#ifndef VIRTIO_NET_H
#define VIRTIO_NET_H
#include <stddef.h>
#include <stdint.h>
#include "virtio.h"

#define VNET_HDR_LEN   12           /* struct virtio_net_hdr with num_buffers (VERSION_1) */
#define VNET_FRAME_MAX 1514         /* Ethernet header + 1500 bytes, no FCS */
#define VNET_QUEUE     128          /* entries (and buffers) per queue */

struct vnet_stats {
    uint64_t tx_frames, rx_frames, tx_full, rx_bad, irqs;
};

struct vnet {
    struct virtio_dev dev;
    struct virtq rx, tx;
    uint16_t tx_free[VNET_QUEUE];   /* transmit buffers the device has given back */
    uint16_t tx_nfree;
    uint8_t mac[6];
    struct vnet_stats stats;
};

/* Find, claim and start the index-th virtio-net device (PCI 1af4:1041, or the transitional
 * 1af4:1000 through its modern interface). 0 or E_NOENT, E_NOTSUP, E_NOMEM, ... */
int vnet_open(struct vnet *n, unsigned index);
/* Queue one frame (len bytes, at most VNET_FRAME_MAX) for sending; it is copied. 0,
 * E_INVAL (length), or E_NOMEM while all transmit buffers are in flight. */
int vnet_send(struct vnet *n, const void *frame, size_t len);
/* Deliver every received frame to `deliver` (the frame is valid during the call only)
 * and offer its buffer again; returns the number delivered. */
typedef void vnet_deliver_fn(void *ctx, const uint8_t *frame, size_t len);
unsigned vnet_poll(struct vnet *n, vnet_deliver_fn *deliver, void *ctx);
/* The device interrupted: clear its status (so the line is released) and take back used
 * transmit buffers. Receive work is left to vnet_poll. */
void vnet_interrupt(struct vnet *n);
#endif
