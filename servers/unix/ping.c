/*
 * Linux's ping sockets, socket(AF_INET, SOCK_DGRAM, IPPROTO_ICMP) (docs/net.md, "Sockets of
 * Linux programs"), over the network server's raw ICMP socket: the program writes an ICMP
 * echo request (type 8, code 0, else EINVAL; at least the 8-byte header), the socket puts
 * its own identifier in it and the checksum; it reads only the echo replies carrying that
 * identifier, without their IP header. Linux lets the groups of net.ipv4.ping_group_range
 * open one; ondol lets every process (systemd's setting, 0 to 2^31-1). socket.c calls
 * these around its datagram sends and receives.
 */
#include "socket.h"

#define ICMP_ECHOREPLY 0
#define ICMP_ECHO 8
#define ICMP_HDR 8u
#define IP_MIN_HDR 20u

static uint16_t next_id;

/* A new socket's identifier: 1, 2, ... (65,535 sockets before one repeats). */
uint16_t ping_id_new(void)
{
    if (++next_id == 0)
        next_id = 1;
    return next_id;
}

/* The Internet checksum of n bytes (RFC 1071), as stored in the header. */
static uint16_t inet_cksum(const uint8_t *p, size_t n)
{
    uint32_t sum = 0;
    for (size_t i = 0; i + 1 < n; i += 2)
        sum += (uint32_t)p[i] << 8 | p[i + 1];
    if (n & 1)
        sum += (uint32_t)p[n - 1] << 8;
    while (sum >> 16)
        sum = (sum & 0xffff) + (sum >> 16);
    return (uint16_t)~sum;
}

long ping_out(uint8_t *msg, size_t n, uint16_t id)
{
    if (n < ICMP_HDR || msg[0] != ICMP_ECHO || msg[1] != 0)
        return -EINVAL;
    msg[4] = (uint8_t)(id >> 8);
    msg[5] = (uint8_t)id;
    msg[2] = msg[3] = 0;
    uint16_t c = inet_cksum(msg, n);
    msg[2] = (uint8_t)(c >> 8);
    msg[3] = (uint8_t)c;
    return 0;
}

long ping_in(const uint8_t *pkt, size_t n, uint16_t id, size_t *off)
{
    if (n < IP_MIN_HDR)
        return -1;
    size_t ihl = (size_t)(pkt[0] & 0xf) * 4;
    if (ihl < IP_MIN_HDR || n < ihl + ICMP_HDR)
        return -1;
    const uint8_t *icmp = pkt + ihl;
    if (icmp[0] != ICMP_ECHOREPLY || icmp[1] != 0 || (icmp[4] << 8 | icmp[5]) != id)
        return -1;
    *off = ihl;
    return (long)(n - ihl);
}
