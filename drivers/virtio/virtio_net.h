/*
 * The virtio-net driver (virtio 1.0, 5.1), MK or IK alike (drvplat.h). Frames go out and
 * come in as whole Ethernet frames without FCS; each travels behind the 12-byte
 * virtio_net_hdr of a VERSION_1 device, which the driver adds and strips. Frames are at
 * most one MTU, except TCP super-segments with segmentation offload (below). Checksum
 * offload only when asked (vnet_open's csum; the option net_csum): then the device
 * finishes the TCP/UDP checksums of frames
 * sent with a vnet_csum (VIRTIO_NET_F_CSUM, NEEDS_CSUM in the header), and a received
 * frame whose header says DATA_VALID (the device checked it) or NEEDS_CSUM (it never
 * crossed a wire: the host's own stack left the sum to the device) is delivered with
 * csum_ok (VIRTIO_NET_F_GUEST_CSUM); every other frame is checked by the stack.
 * Segmentation offload only when asked too (vnet_open's tso; the option net_tso; it
 * needs the checksum offload): then a TCP/IPv4 frame of up to 64 KiB sent with gso_size
 * is cut by the device into segments of gso_size payload bytes each, every one with the
 * headers of the first (hdr_len bytes), its own sequence number, IP length and id and
 * checksums (VIRTIO_NET_F_HOST_TSO4, gso_type TCPV4). Receive segmentation offload only
 * when asked (vnet_open's VNET_RX_TSO; the option net_rxtso; it needs the checksum
 * offload): the driver offers GUEST_TSO4 and posts fewer, larger receive buffers
 * (VNET_RX_TSO_QUEUE of VNET_TSO_BUF), and the device may hand it a TCP/IPv4
 * super-segment of up to 64 KiB whose data the host did not cut, delivered whole with
 * VNET_DELIVER_SUPER after vnet_rx.h's checks of its GSO header against the frame. Every
 * buffer that fails them, and a GSO buffer when GUEST_TSO4 was not offered, is dropped
 * and counted in rx_bad.
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
#include "vnet_rx.h"

#define VNET_QUEUE     128          /* entries (and buffers) per queue */
#define VNET_TSO_QUEUE 32           /* transmit entries with segmentation offload (each
                                       buffer holds a super-segment: 2.2 MB in all) */
#define VNET_RX_TSO_QUEUE 32        /* receive entries with receive segmentation offload
                                       (each VNET_TSO_BUF: 2.2 MB in all) */

struct vnet_stats {
    uint64_t tx_frames, rx_frames, tx_full, rx_bad, irqs;
    uint64_t tx_csum, rx_csum_ok;   /* frames whose checksum the device finished / vouched for */
    uint64_t tx_tso;                /* super-segments the device cut into segments */
    uint64_t rx_tso;                /* super-segments received whole */
};

/* vnet.offload: what the device agreed to */
#define VNET_TX_CSUM 0x1            /* VIRTIO_NET_F_CSUM */
#define VNET_RX_CSUM 0x2            /* VIRTIO_NET_F_GUEST_CSUM */
#define VNET_TX_TSO  0x4            /* VIRTIO_NET_F_HOST_TSO4 */
#define VNET_RX_TSO  0x8            /* VIRTIO_NET_F_GUEST_TSO4 */

/* What the device does to a frame before it leaves (passed by value: it fits a register):
 * csum_start 0, nothing; else it finishes the checksum over the bytes from csum_start and
 * stores it at csum_start + csum_offset; gso_size 0, nothing more; else (a TCP/IPv4
 * frame, the checksum asked at the TCP header) it cuts the data after the first hdr_len
 * bytes into gso_size pieces. */
struct vnet_offload {
    uint16_t csum_start, csum_offset, gso_size, hdr_len;
};
#define VNET_NO_OFFLOAD ((struct vnet_offload){0, 0, 0, 0})

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
 * 1af4:1000 through its modern interface), asking for the offloads in `want` (VNET_*
 * bits): VNET_TX_CSUM or VNET_RX_CSUM ask for checksum offload both ways, VNET_TX_TSO
 * and VNET_RX_TSO for segmentation offload on sending and on receiving, each only with
 * the checksum offload (virtio 1.0, 5.1.3.1). n->offload says what the device agreed to.
 * 0 or E_NOENT, E_NOTSUP, E_NOMEM, ... */
int vnet_open(struct vnet *n, unsigned index, unsigned want);
/* Queue one frame (len bytes, at most VNET_FRAME_MAX, or VNET_TSO_MAX with a gso_size)
 * for sending; it is copied. off: what the device must do to it (a checksum only with
 * VNET_TX_CSUM, a segmentation only with VNET_TX_TSO). 0, E_INVAL (length, or an offload
 * the device cannot do), or E_NOMEM while all transmit buffers are in flight. */
int vnet_send(struct vnet *n, const void *frame, size_t len, struct vnet_offload off);
/* Deliver every received frame to `deliver` (the frame is valid during the call only)
 * with VNET_DELIVER_* flags and offer its buffer again; returns the number delivered. */
#define VNET_DELIVER_CSUM_OK 0x1    /* the device vouched for the TCP/UDP checksum (above) */
#define VNET_DELIVER_SUPER   0x2    /* a checked TCP/IPv4 super-segment (VNET_RX_TSO) */
typedef void vnet_deliver_fn(void *ctx, const uint8_t *frame, size_t len, unsigned flags);
unsigned vnet_poll(struct vnet *n, vnet_deliver_fn *deliver, void *ctx);
/* The device interrupted: clear its status (so the line is released) and take back used
 * transmit buffers. Receive work is left to vnet_poll. */
void vnet_interrupt(struct vnet *n);
#endif
