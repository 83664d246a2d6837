/*
 * Packet buffers: fixed-size mbufs from a per-stack pool (no allocator needed, so the
 * same code runs in the kernel, in a server task and hosted). An mbuf holds one frame:
 * the data lives at buf[off .. off+len); layers prepend headers by lowering off (the
 * output path reserves NET_HEADROOM) and strip them by raising it. A received TCP
 * super-segment (NETIF_RX_TSO) is not copied: its mbuf's ext points at the frame in the
 * driver's buffer, valid only while net_input runs, and its data is ext[off .. off+len),
 * read through mbuf_in; only the input path up to TCP sees such an mbuf.
 */
#ifndef ONDOL_NET_MBUF_H
#define ONDOL_NET_MBUF_H

#include <stddef.h>
#include <stdint.h>
#include "net_config.h"

struct mbuf {
    struct mbuf *next;        /* queue link (free list, ARP pending, reassembly, UDP) */
    uint32_t seq;             /* TCP reassembly: sequence number of the data */
    uint32_t peer_ip;         /* UDP queue: sender */
    uint16_t peer_port;
    uint32_t off, len;        /* 32 bits: a super-segment's frame is longer than 65535 */
    const uint8_t *ext;       /* input, a super-segment: the frame outside (0: in buf) */
    uint8_t fin;              /* TCP reassembly: the segment carried FIN */
    uint8_t csum_ok;          /* input: the device vouched for the TCP/UDP checksum */
    uint8_t csum_off;         /* output: the device finishes the checksum at this offset of
                                 the transport header (0: the frame is complete) */
    uint16_t tso_len;         /* output, a TCP super-segment: its data, tso_len bytes, waits
                                 in the stack's tso_frame after the headers this mbuf holds */
    uint16_t tso_mss;         /* and the device cuts it into pieces of this many bytes */
    uint8_t buf[NET_MBUF_DATA];
};

struct mbuf_pool {
    struct mbuf *free;
    unsigned in_use;
    struct mbuf m[NET_MBUFS];
};

void mbuf_pool_init(struct mbuf_pool *p);
/* A buffer with `headroom` bytes reserved before the data (len 0), or 0 if none left. */
struct mbuf *mbuf_get(struct mbuf_pool *p, unsigned headroom);
void mbuf_free(struct mbuf_pool *p, struct mbuf *m);
void mbuf_free_chain(struct mbuf_pool *p, struct mbuf *m);
static inline uint8_t *mbuf_data(struct mbuf *m) { return m->buf + m->off; }
/* The data of a received mbuf, in buf or outside it (ext): what the input path reads. */
static inline const uint8_t *mbuf_in(const struct mbuf *m)
{
    return (m->ext ? m->ext : m->buf) + m->off;
}
/* Make room for `n` more header bytes in front of the data; returns the new start. */
static inline uint8_t *mbuf_prepend(struct mbuf *m, unsigned n)
{
    m->off -= n;
    m->len += n;
    return m->buf + m->off;
}
/* Strip `n` header bytes (n <= len). */
static inline void mbuf_adj(struct mbuf *m, unsigned n)
{
    m->off += n;
    m->len -= n;
}

#endif
