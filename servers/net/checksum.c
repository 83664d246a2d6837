/*
 * The Internet checksum (RFC 1071): a 32-bit accumulator of big-endian 16-bit words,
 * folded at the end. cksum_add may be chained over several pieces as long as every piece
 * but the last has an even length.
 */
#include "net_priv.h"

uint32_t cksum_add(uint32_t sum, const void *data, size_t len)
{
    /* RFC 1071 2(B): the sum is byte-order independent, so add native 64-bit loads as
     * 32-bit halves and swap the folded result once on a little-endian machine. */
    const uint8_t *p = data;
    uint64_t acc = 0;
    while (len >= 8) {
        uint64_t w;
        net_memcpy(&w, p, 8);
        acc += (w & 0xffffffffu) + (w >> 32);
        p += 8;
        len -= 8;
    }
    while (len >= 2) {
        uint16_t w;
        net_memcpy(&w, p, 2);
        acc += w;
        p += 2;
        len -= 2;
    }
    if (len) {
        uint16_t w = 0;
        net_memcpy(&w, p, 1);                 /* the odd byte is the high byte of a word */
        acc += w;
    }
    while (acc >> 16)
        acc = (acc & 0xffff) + (acc >> 16);
#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
    acc = ((acc & 0xff) << 8) | (acc >> 8);
#endif
    return sum + (uint32_t)acc;
}

uint16_t cksum_fold(uint32_t sum)
{
    while (sum >> 16)
        sum = (sum & 0xffff) + (sum >> 16);
    return (uint16_t)~sum;
}

/* The TCP/UDP pseudo-header sum: addresses, protocol and the transport length. */
uint32_t cksum_pseudo(uint32_t src, uint32_t dst, uint8_t proto, uint16_t len)
{
    return (src >> 16) + (src & 0xffff) + (dst >> 16) + (dst & 0xffff) + proto + len;
}

bool cksum_offload(struct netstack *s, struct mbuf *m, unsigned field, uint32_t pseudo)
{
    if (!(s->nif->offload & NETIF_TX_CSUM))
        return false;
    put16(mbuf_data(m) + field, (uint16_t)~cksum_fold(pseudo));
    m->csum_off = (uint8_t)field;
    return true;
}
