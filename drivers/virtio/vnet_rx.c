/* The receive side's checks of a virtio-net buffer (vnet_rx.h). */
#include "vnet_rx.h"

#define ETH_LEN 14
#define IP_MIN 20
#define TCP_MIN 20
#define TCP_CSUM_FIELD 16
#define TH_SYN 0x02
#define TH_RST 0x04
#define TH_URG 0x20

static unsigned be16(const uint8_t *p) { return (unsigned)p[0] << 8 | p[1]; }

/* The Ethernet, IP and TCP headers of a super-segment: their length (with Ethernet's),
 * or 0 and *why. ip_len: the IP header's length. */
static size_t super_headers(const uint8_t *f, size_t len, size_t *ip_len,
                            enum vnet_rx_verdict *why)
{
    *why = VNET_RX_BAD_LENGTH;
    if (len < ETH_LEN + IP_MIN + TCP_MIN || len > VNET_TSO_MAX)
        return 0;
    const uint8_t *ip = f + ETH_LEN;
    *ip_len = (size_t)(ip[0] & 0xfu) * 4;
    *why = VNET_RX_BAD_IP;
    if (be16(f + 12) != 0x0800 || ip[0] >> 4 != 4 || *ip_len < IP_MIN || ip[9] != 6 ||
        (be16(ip + 6) & 0x3fff))                     /* MF or a fragment offset */
        return 0;
    *why = VNET_RX_BAD_TOTAL;
    if (be16(ip + 2) != len - ETH_LEN)
        return 0;
    *why = VNET_RX_BAD_TCP;
    size_t tcp = ETH_LEN + *ip_len;
    if (tcp + TCP_MIN > len)
        return 0;
    size_t tcp_len = (size_t)(f[tcp + 12] >> 4) * 4;
    if (tcp_len < TCP_MIN || tcp + tcp_len > len || (f[tcp + 13] & (TH_SYN | TH_RST | TH_URG)))
        return 0;
    return tcp + tcp_len;
}

/* A GSO buffer: every field of its header against its frame. */
static enum vnet_rx_verdict judge_super(const uint8_t *hdr, const uint8_t *f, size_t len)
{
    if (hdr[VNET_HDR_GSO_TYPE] != VNET_HDR_GSO_TCPV4)
        return VNET_RX_BAD_TYPE;
    size_t ip_len = 0;
    enum vnet_rx_verdict why;
    size_t headers = super_headers(f, len, &ip_len, &why);
    if (!headers)
        return why;
    if (headers == len)
        return VNET_RX_BAD_EMPTY;
    if (vnet_le16(hdr + VNET_HDR_HDR_LEN) < headers || vnet_le16(hdr + VNET_HDR_HDR_LEN) > len)
        return VNET_RX_BAD_HDRLEN;
    unsigned gso_size = vnet_le16(hdr + VNET_HDR_GSO_SIZE);
    if (gso_size == 0 || headers + gso_size > VNET_FRAME_MAX)
        return VNET_RX_BAD_SIZE;
    bool needs = hdr[0] & VNET_HDR_NEEDS_CSUM;
    if (!(hdr[0] & (VNET_HDR_NEEDS_CSUM | VNET_HDR_DATA_VALID)) ||
        (needs && (vnet_le16(hdr + VNET_HDR_CSUM_START) != ETH_LEN + ip_len ||
                   vnet_le16(hdr + VNET_HDR_CSUM_OFFSET) != TCP_CSUM_FIELD)))
        return VNET_RX_BAD_CSUM;
    return VNET_RX_SUPER;
}

enum vnet_rx_verdict vnet_rx_judge(const uint8_t *hdr, const uint8_t *frame, size_t len,
                                   bool gso_ok)
{
    if (hdr[VNET_HDR_GSO_TYPE] == 0)                 /* gso_type NONE */
        return len > 0 && len <= VNET_BUF - VNET_HDR_LEN ? VNET_RX_PLAIN : VNET_RX_BAD_LENGTH;
    if (!gso_ok)
        return VNET_RX_BAD_TYPE;
    return judge_super(hdr, frame, len);
}
