/*
 * What the virtio-net driver accepts from its device on the receive side (virtio 1.0,
 * 5.1.6.3-4). The device is not trusted: each used buffer's virtio_net_hdr is checked
 * against the frame that follows it before the stack sees either. Pure code without a
 * platform (no drvplat.h), so the hosted stack tests (servers/net/host) run the same
 * checks on the frames they make up.
 *
 * A plain frame (gso_type NONE) goes up as it is, the stack checks the rest. A GSO frame
 * (gso_type TCPV4, only when the driver offered GUEST_TSO4) is one TCP/IPv4
 * super-segment that the host's stack did not cut into MSS pieces; it goes up only if
 * its header and frame agree in every point below, each refusal of its own kind.
 */
#ifndef VNET_RX_H
#define VNET_RX_H
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define VNET_HDR_LEN   12           /* struct virtio_net_hdr with num_buffers (VERSION_1) */
#define VNET_FRAME_MAX 1514         /* Ethernet header + 1500 bytes, no FCS */
#define VNET_TSO_MAX   (14 + 65535) /* a super-segment: Ethernet header + largest IP packet */
#define VNET_BUF       2048         /* a buffer for header + frame, rounded up */
#define VNET_TSO_BUF   69632        /* header + super-segment, rounded up to pages (68 KiB) */

/* virtio_net_hdr (5.1.6): flags, gso_type, then little-endian 16-bit hdr_len, gso_size,
 * csum_start, csum_offset, num_buffers */
#define VNET_HDR_NEEDS_CSUM 1u
#define VNET_HDR_DATA_VALID 2u
#define VNET_HDR_GSO_TYPE   1
#define VNET_HDR_GSO_TCPV4  1u
#define VNET_HDR_HDR_LEN    2
#define VNET_HDR_GSO_SIZE   4
#define VNET_HDR_CSUM_START 6
#define VNET_HDR_CSUM_OFFSET 8
static inline unsigned vnet_le16(const uint8_t *p) { return (unsigned)p[0] | (unsigned)p[1] << 8; }
static inline void vnet_put_le16(uint8_t *p, unsigned v)
{
    p[0] = (uint8_t)v;
    p[1] = (uint8_t)(v >> 8);
}

/* The verdict on one received buffer: take it as a frame, as a super-segment, or one of
 * the kinds of refusal (each is counted in the driver's rx_bad; the tests name them). */
enum vnet_rx_verdict {
    VNET_RX_PLAIN,
    VNET_RX_SUPER,
    VNET_RX_BAD_LENGTH,     /* no frame, too long for its kind, or too short for its headers */
    VNET_RX_BAD_TYPE,       /* a gso_type other than TCPV4 (or ECN), or GSO not offered */
    VNET_RX_BAD_SIZE,       /* gso_size 0, or a piece of it would not fit one MTU frame */
    VNET_RX_BAD_HDRLEN,     /* hdr_len shorter than the headers or beyond the frame */
    VNET_RX_BAD_TOTAL,      /* the IP total length is not the frame's */
    VNET_RX_BAD_IP,         /* not IPv4, header length, not TCP, or a fragment */
    VNET_RX_BAD_TCP,        /* TCP header length, or SYN, RST or URG on a super-segment */
    VNET_RX_BAD_CSUM,       /* neither NEEDS_CSUM nor DATA_VALID, or the sum not the TCP one */
    VNET_RX_BAD_EMPTY,      /* a super-segment without data */
    VNET_RX_KINDS
};

/* The verdict on a buffer the device used: hdr its VNET_HDR_LEN bytes, then len frame
 * bytes (len already bounded by the buffer); gso_ok: the driver offered GUEST_TSO4. */
enum vnet_rx_verdict vnet_rx_judge(const uint8_t *hdr, const uint8_t *frame, size_t len,
                                   bool gso_ok);
#endif
