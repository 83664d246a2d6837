/*
 * ondol's TCP/IP stack: the public interface (docs/net.md).
 *
 * One `struct netstack` holds every piece of state (no globals), so a test can run two
 * stacks in one process. The stack never blocks and never reads a clock: the platform
 * layer (a driver loop, the hosted tap program, the in-memory harness, later the MK/IK
 * server) does three things only:
 *   - net_input(): hand over one received Ethernet frame (the stack copies it);
 *   - net_tick():  tell the stack the time in milliseconds; timers run from here; call
 *                  it before net_input whenever the time has moved (RTT samples and
 *                  timers are stamped with the last time given);
 *   - implement netif.send(): put one finished frame on the wire (called synchronously
 *     from inside net_input/net_tick/the socket calls; the frame is not kept after return).
 * Above, a small socket API (net_socket .. net_close) is what the UNIX server's socket
 * calls map onto: every call is non-blocking and returns a byte count, a handle, 0, or a
 * negated NET_E* code (Linux errno values, so the mapping is the identity); readiness is
 * net_events().
 *
 * Freestanding C11: needs only memcpy/memset/memmove/memcmp (lib/libc or the host's).
 */
#ifndef ONDOL_NET_H
#define ONDOL_NET_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "net_config.h"

/* Errors: negated Linux errno numbers (the UNIX server passes them through unchanged). */
#define NET_EBADF        9
#define NET_EAGAIN      11
#define NET_ENOMEM      12
#define NET_EINVAL      22
#define NET_EPIPE       32
#define NET_EDESTADDRREQ 89
#define NET_EMSGSIZE    90
#define NET_EOPNOTSUPP  95
#define NET_EADDRINUSE  98
#define NET_ENETUNREACH 101
#define NET_ECONNABORTED 103
#define NET_ECONNRESET  104
#define NET_EISCONN     106
#define NET_ENOTCONN    107
#define NET_ETIMEDOUT   110
#define NET_ECONNREFUSED 111
#define NET_EALREADY    114
#define NET_EINPROGRESS 115

/* Socket types and options. */
#define NET_SOCK_STREAM 1
#define NET_SOCK_DGRAM  2
#define NET_SOCK_RAW    3   /* raw ICMP: every ICMP packet in, with its IP header */
#define NET_OPT_NODELAY   1   /* TCP_NODELAY: no Nagle */
#define NET_OPT_KEEPALIVE 2   /* SO_KEEPALIVE */

/* Readiness bits (net_events), the meanings of poll's POLLIN/POLLOUT/POLLERR/POLLHUP. */
#define NET_EV_IN   0x1
#define NET_EV_OUT  0x4
#define NET_EV_ERR  0x8
#define NET_EV_HUP  0x10

/* Checksum and segmentation offload (docs/net.md, "Checksum offload on and off",
 * "Segmentation offload"): bits of netif.offload, set by the driver from what its device
 * agreed to (off unless the platform asks). */
#define NETIF_TX_CSUM 0x1   /* send() finishes TCP/UDP checksums where its `off` says */
#define NETIF_RX_CSUM 0x2   /* the driver may pass NET_RX_CSUM_OK to net_input_flags() */
#define NETIF_TX_TSO  0x4   /* send() takes TCP super-segments (needs NETIF_TX_CSUM) */
#define NETIF_RX_TSO  0x8   /* the driver may pass NET_RX_SUPER to net_input_flags()
                               (docs/net.md "Receive segmentation offload") */
#define NET_TSO_MAX 65535   /* largest IP packet of a super-segment */

/* What send() must do to a frame before it leaves (passed by value: it fits a register).
 * start 0: nothing. Else the checksum: the ones' complement of the sum of the bytes from
 * `start` to the end of the frame, stored big-endian at start + offset (the field holds
 * the pseudo-header sum already, with the length of the whole frame's TCP or UDP part, so
 * the result is the transport checksum). The segmentation
 * (gso_size > 0, only with NETIF_TX_TSO; always with the TCP checksum): the frame is one
 * TCP/IPv4 super-segment whose data after its first hdr_len bytes (Ethernet, IP and TCP
 * headers) goes out as segments of gso_size data bytes (the last may be shorter), each
 * with those headers, its own IP length, id and sequence number, FIN and PSH only on the
 * last, and its checksums finished: what virtio-net's HOST_TSO4 does. */
struct net_offload {
    uint16_t start, offset;
    uint16_t gso_size, hdr_len;
};

/* A network interface below Ethernet: the driver fills in mac, mtu, send, ctx, offload. */
struct netif {
    uint8_t mac[6];
    uint16_t mtu;                          /* IP MTU, 1500 for Ethernet */
    /* off: what the device must do to the frame (start 0: nothing; else only with
     * NETIF_TX_CSUM); a frame is at most mtu + 14 bytes, a super-segment NET_TSO_MAX + 14 */
    void (*send)(struct netif *nif, const void *frame, size_t len, struct net_offload off);
    void *ctx;                             /* the driver's own state */
    unsigned offload;                      /* NETIF_* */
};

/* Counters, one per event a test or a reader may want (docs/net.md). */
struct net_stats {
    uint64_t rx_frames, tx_frames, rx_drop_ether, rx_drop_arp, rx_drop_ip, ip_bad_cksum,
        ip_frag_dropped, rx_drop_icmp, icmp_echo, rx_drop_udp, udp_bad_cksum, udp_noport,
        rx_drop_tcp, tcp_bad_cksum, tcp_rst_sent, tcp_rexmt, tcp_fast_rexmt, tcp_persist,
        tcp_keepalive, tcp_hdrpred_ack, tcp_hdrpred_data, tcp_syn_dropped, tcp_ooo,
        tcp_dup_data, tcp_challenge_ack, arp_timeouts, mbuf_exhausted, icmp_echo_reply,
        udp_not_peer, rx_bytes, tx_bytes, raw_dropped, tcp_tso, tcp_tso_arp_dropped,
        rx_super;                          /* super-segments taken in place (NET_RX_SUPER) */
};

struct netstack;

/* Size of a struct netstack: the platform provides the (zeroed or not) memory. */
size_t net_stack_size(void);
/* Initialise `s` (net_stack_size() bytes) on interface `nif` with address `ip`, netmask
 * and gateway (host byte order; gw 0 = none), starting time `now_ms`, and a seed for the
 * initial sequence numbers and ephemeral ports. */
void net_init(struct netstack *s, struct netif *nif, uint32_t ip, uint32_t mask,
              uint32_t gw, uint64_t now_ms, uint64_t seed);
/* One received frame (copied; `frame` may be reused on return). */
void net_input(struct netstack *s, const void *frame, size_t len);
/* The same with what the device knows about it: NET_RX_CSUM_OK, its TCP/UDP checksum was
 * checked by the device or was never computed because the frame did not cross a wire
 * (virtio's DATA_VALID and NEEDS_CSUM); honoured only with NETIF_RX_CSUM. */
#define NET_RX_CSUM_OK 0x1
/* NET_RX_SUPER, honoured only with NETIF_RX_TSO: the frame is one TCP/IPv4 super-segment
 * of up to NET_TSO_MAX + 14 bytes whose data the device did not cut into MSS pieces (its
 * driver checked the device's word for it; the stack checks every header again). It is
 * not copied: the stack reads it in place during the call, and TCP takes its data into
 * the receive buffer from there. Without NETIF_RX_TSO, or too long, it is dropped. */
#define NET_RX_SUPER 0x2
void net_input_flags(struct netstack *s, const void *frame, size_t len, unsigned flags);
/* The time is now `now_ms` (never goes backwards): run due timers. */
void net_tick(struct netstack *s, uint64_t now_ms);
/* The time is now `now_ms`, its timers left for the next net_tick: for a socket call on a
 * platform whose timers run elsewhere (the server's stack thread), so that what the call
 * arms and stamps counts from now. */
void net_clock(struct netstack *s, uint64_t now_ms);
/* Earliest time at which net_tick has work to do (UINT64_MAX if none): a platform may
 * sleep until then or until a frame arrives. */
uint64_t net_next_timer(const struct netstack *s);
const struct net_stats *net_stats(const struct netstack *s);
/* Buffers (mbufs) currently allocated: 0 after every socket is closed and gone. */
unsigned net_mbufs_in_use(const struct netstack *s);
/* Sockets currently allocated (including TIME_WAIT and not-yet-accepted ones). */
unsigned net_sockets_in_use(const struct netstack *s);

/* Sockets. Addresses and ports are host byte order. */
int net_socket(struct netstack *s, int type);
int net_bind(struct netstack *s, int sd, uint32_t ip, uint16_t port);
int net_listen(struct netstack *s, int sd, int backlog);
int net_accept(struct netstack *s, int sd, uint32_t *ip, uint16_t *port);
/* TCP: an active open (-NET_EINPROGRESS). UDP: the default peer, whose datagrams alone
 * are then taken (ip 0, port 0: none again). */
int net_connect(struct netstack *s, int sd, uint32_t ip, uint16_t port);
long net_send(struct netstack *s, int sd, const void *buf, size_t len);
long net_recv(struct netstack *s, int sd, void *buf, size_t len);
long net_sendto(struct netstack *s, int sd, const void *buf, size_t len, uint32_t ip,
                uint16_t port);
long net_recvfrom(struct netstack *s, int sd, void *buf, size_t len, uint32_t *ip,
                  uint16_t *port);
/* MSG_PEEK: as net_recv / net_recvfrom (ip and port: a datagram's source), data left. */
long net_peek(struct netstack *s, int sd, size_t off, void *buf, size_t len, uint32_t *ip,
              uint16_t *port);
/* Bytes unread (a datagram socket: its first datagram's length) and bytes sent but not yet
 * acknowledged: FIONREAD/SIOCINQ and SIOCOUTQ. */
int net_queued(struct netstack *s, int sd, uint32_t *inq, uint32_t *outq);
int net_shutdown_write(struct netstack *s, int sd);
int net_close(struct netstack *s, int sd);
/* Abortive close: send RST, free at once (SO_LINGER 0). */
int net_abort(struct netstack *s, int sd);
int net_setopt(struct netstack *s, int sd, int opt, int value);
unsigned net_events(struct netstack *s, int sd);
/* Nothing in flight: all sent data acknowledged, none queued, no ACK owed (benchmarks
 * wait for it between measured steps). */
bool net_quiet(struct netstack *s, int sd);
/* The pending error (SO_ERROR): returned once, then cleared. */
int net_error(struct netstack *s, int sd);
int net_sockname(struct netstack *s, int sd, uint32_t *ip, uint16_t *port);
int net_peername(struct netstack *s, int sd, uint32_t *ip, uint16_t *port);
/* ICMP echo (ping): send request `seq` with `len` bytes of a pattern (at most
 * NET_PING_MAX): 0, -NET_EMSGSIZE or -NET_ENOMEM. A reply whose data is intact is noted;
 * net_ping_answered says whether the last such reply was this id and seq. */
#define NET_PING_MAX 1472
int net_ping(struct netstack *s, uint32_t ip, uint16_t id, uint16_t seq, size_t len);
int net_ping_answered(const struct netstack *s, uint16_t id, uint16_t seq);
/* DHCP (dhcp.c, RFC 2131): net_dhcp_start drops the address and asks for one; the stack
 * then runs the client from net_input/net_tick, renews the lease, and drops the address
 * when the lease runs out. net_address tells what is configured now. */
enum dhcp_state { DHCP_OFF, DHCP_SELECTING, DHCP_REQUESTING, DHCP_BOUND, DHCP_RENEWING,
                  DHCP_REBINDING };
struct dhcp {
    enum dhcp_state state;
    uint32_t xid, offered, server;
    uint64_t started, timer, t1, t2, expires;   /* ms; t1, t2, expires absolute */
    unsigned backoff, tries;
    uint64_t sent, leases, naks, dropped;       /* messages sent, ACKs bound, NAKs, replies
                                                   ignored (invalid or unexpected) */
};
void net_dhcp_start(struct netstack *s);
enum dhcp_state net_dhcp_state(const struct netstack *s);
const struct dhcp *net_dhcp(const struct netstack *s);
void net_address(const struct netstack *s, uint32_t *ip, uint32_t *mask, uint32_t *gw);
/* Configuration changes (ifconfig, ip; docs/net.md "Changing the configuration"): the
 * address, netmask and gateway (0: none) become these, and DHCP stops (a manual change
 * wins, as on Linux, where a DHCP client is a program the administrator stops). The
 * caller checks the values (netsrv.c); sockets keep their local address. */
void net_set_address(struct netstack *s, uint32_t ip, uint32_t mask, uint32_t gw);
/* The interface down (every frame in or out dropped) or up again. */
void net_set_down(struct netstack *s, bool down);
bool net_is_down(const struct netstack *s);
/* Whether dst has a route (the interface up with an address, and dst on its subnet, the
 * limited broadcast, or a gateway set): 0, or -NET_ENETUNREACH, which connect, sendto and
 * raw sends return as Linux does rather than dropping the packet. */
int net_route(const struct netstack *s, uint32_t dst);
/* The ARP cache entry in slot i (< NET_ARP_ENTRIES) for `ip neigh` and /proc/net/arp:
 * NET_NEIGH_NONE (a free slot), NET_NEIGH_INCOMPLETE (asked, no answer yet; mac zero),
 * NET_NEIGH_REACHABLE (confirmed by a reply within NET_ARP_REACHABLE_MS) or
 * NET_NEIGH_STALE (older, or learned from a request). */
enum net_neigh_state { NET_NEIGH_NONE, NET_NEIGH_INCOMPLETE, NET_NEIGH_REACHABLE,
                       NET_NEIGH_STALE };
enum net_neigh_state net_neighbour(const struct netstack *s, unsigned i, uint32_t *ip,
                                   uint8_t mac[6]);

/* TCP state name (tests, debugging): "ESTABLISHED", "TIME_WAIT", ... */
const char *net_state_name(struct netstack *s, int sd);

#endif
