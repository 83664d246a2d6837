/*
 * Internal declarations shared by the layers of the stack (not for platforms: see net.h).
 * Ownership rule for packet buffers: every *_input function owns the mbuf it is given and
 * either frees it or hands it on; every *_output function takes the mbuf and frees it once
 * the frame is sent (or keeps it in the ARP pending queue).
 */
#ifndef ONDOL_NET_PRIV_H
#define ONDOL_NET_PRIV_H

#include "net.h"
#include "mbuf.h"
#include "net_probe.h"

#define ETH_HLEN 14
#define IP_HLEN 20
#define TCP_HLEN 20
#define UDP_HLEN 8
#define ETHERTYPE_IP 0x0800
#define ETHERTYPE_ARP 0x0806
#define IPPROTO_ICMP 1
#define IPPROTO_TCP 6
#define IPPROTO_UDP 17
#define NET_HEADROOM (ETH_HLEN + IP_HLEN)
#define TCP_HLEN_MAX 60
/* A super-segment (NETIF_TX_TSO) in the stack's tso_frame: its data at NET_TSO_HEAD, its
 * headers copied in front of it by ether_output. */
#define NET_TSO_HEAD (ETH_HLEN + IP_HLEN + TCP_HLEN_MAX)
#define NET_TSO_DATA (NET_TSO_MAX - IP_HLEN - TCP_HLEN)

static inline uint16_t get16(const uint8_t *p) { return (uint16_t)(p[0] << 8 | p[1]); }
static inline uint32_t get32(const uint8_t *p)
{
    return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}
static inline void put16(uint8_t *p, uint16_t v) { p[0] = (uint8_t)(v >> 8); p[1] = (uint8_t)v; }
static inline void put32(uint8_t *p, uint32_t v)
{
    p[0] = (uint8_t)(v >> 24); p[1] = (uint8_t)(v >> 16); p[2] = (uint8_t)(v >> 8);
    p[3] = (uint8_t)v;
}
#define net_memcpy __builtin_memcpy
#define net_memset __builtin_memset
#define net_memcmp __builtin_memcmp
#define net_memmove __builtin_memmove

/* TCP sequence-number comparisons (modulo 2^32). */
#define SEQ_LT(a, b) ((int32_t)((a) - (b)) < 0)
#define SEQ_LEQ(a, b) ((int32_t)((a) - (b)) <= 0)
#define SEQ_GT(a, b) ((int32_t)((a) - (b)) > 0)
#define SEQ_GEQ(a, b) ((int32_t)((a) - (b)) >= 0)

enum tcp_state {
    TCPS_CLOSED, TCPS_LISTEN, TCPS_SYN_SENT, TCPS_SYN_RECEIVED, TCPS_ESTABLISHED,
    TCPS_CLOSE_WAIT, TCPS_FIN_WAIT_1, TCPS_CLOSING, TCPS_LAST_ACK, TCPS_FIN_WAIT_2,
    TCPS_TIME_WAIT
};
/* States at and after ESTABLISHED in which our FIN has been queued. */
#define TCPS_HAVE_SYNCED(st) ((st) >= TCPS_ESTABLISHED)

#define TH_FIN 0x01
#define TH_SYN 0x02
#define TH_RST 0x04
#define TH_PSH 0x08
#define TH_ACK 0x10
#define TH_URG 0x20

/* pcb flags */
#define TF_ACKNOW    0x0001   /* send an ACK at the next tcp_output */
#define TF_DELACK    0x0002   /* an ACK is owed; the delayed-ACK timer runs */
#define TF_NODELAY   0x0004   /* no Nagle */
#define TF_SENTFIN   0x0008   /* our FIN has been sent at least once */
#define TF_FINQUEUED 0x0010   /* the application closed the sending side */
#define TF_RCVD_WS   0x0020   /* the peer sent window scale in its SYN */
#define TF_INRECOVERY 0x0040  /* NewReno fast recovery */
#define TF_KEEPALIVE 0x0080
#define TF_RCVDFIN   0x0100   /* the peer's FIN is accounted in rcv_nxt */
#define TF_FORCE     0x0200   /* window probe: send one byte into a zero window */
#define TF_TIMING    0x0400   /* an RTT measurement is running (rtt_seq, rtt_start) */
#define TF_OOOFIN    0x0800   /* a FIN arrived out of order at fin_seq */
#define TF_ORPHAN    0x1000   /* closed by the application: free when the protocol ends */
#define TF_ACCEPTQ   0x2000   /* a child on its listener's accept queue */

/* A byte ring (TCP send and receive buffers). */
struct ring {
    uint32_t start, len;
    uint8_t data[NET_SOCKBUF];
};

struct sock {
    uint8_t used, type, state;
    uint8_t snd_scale, rcv_scale;
    uint16_t lport, rport;
    uint32_t lip, rip;
    int error;                      /* pending error, positive NET_E* */
    uint32_t flags;
    /* send sequence space */
    uint32_t iss, snd_una, snd_nxt, snd_max, snd_wnd, snd_wl1, snd_wl2, max_sndwnd;
    uint32_t snd_mss, cwnd, ssthresh, recover;
    unsigned dupacks;
    /* receive sequence space */
    uint32_t irs, rcv_nxt, rcv_adv, fin_seq;
    /* RTT estimation (RFC 6298): srtt in ms << 3, rttvar in ms << 2 */
    uint32_t srtt, rttvar, rto, rtt_seq;
    uint64_t rtt_start;
    unsigned rexmt_shift, persist_shift, keep_probes;
    /* timers: absolute ms, 0 = off */
    uint64_t t_rexmt, t_persist, t_delack, t_keep, t_2msl;
    uint64_t last_rcv;
    /* listener */
    int parent;                     /* listener of an embryonic/accept-queued child, or -1 */
    unsigned backlog, qlen;         /* children of a listener (queued + embryonic) */
    uint32_t qorder;                /* accept-queue order of an established child */
    struct mbuf *reass;             /* out-of-order segments, sorted by seq (TCP), or
                                       queued datagrams (UDP) */
    unsigned nreass;
    struct ring snd, rcv;
};

struct arp_entry {
    uint32_t ip;
    uint8_t mac[6];
    uint8_t state;                  /* 0 free, 1 resolving, 2 resolved */
    uint8_t tries;
    uint64_t confirmed;             /* when a reply last confirmed it (0: learned from a
                                       request only): Linux's REACHABLE or STALE */
    uint64_t expires;               /* resolved: expiry; resolving: next retry */
    struct mbuf *pending;
    unsigned npending;
};

struct netstack {
    struct netif *nif;
    uint32_t ip, mask, gw;
    bool down;                      /* the interface is down: nothing sent or received */
    uint64_t now;
    uint64_t rand;
    uint16_t ip_id, next_port;
    uint32_t accept_seq;
    uint32_t ping_reply;            /* id << 16 | seq of the last intact echo reply */
    unsigned nsocks;                /* 1 + highest socket index in use: loops stop here */
    struct net_stats st;
    struct mbuf_pool pool;
    struct arp_entry arp[NET_ARP_ENTRIES];
    struct dhcp dhcp;
    struct sock socks[NET_MAX_SOCKETS];
    uint8_t tso_frame[NET_TSO_HEAD + NET_TSO_DATA];   /* the one super-segment being sent */
};

/* checksum.c */
uint32_t cksum_add(uint32_t sum, const void *data, size_t len);
uint16_t cksum_fold(uint32_t sum);
uint32_t cksum_pseudo(uint32_t src, uint32_t dst, uint8_t proto, uint16_t len);
/* With the device's checksum offload (NETIF_TX_CSUM): store the pseudo-header sum in the
 * checksum field at `field` of m's transport header and mark m so that ether_output asks
 * the device to finish it; true. Without it, false: the caller computes the checksum. */
bool cksum_offload(struct netstack *s, struct mbuf *m, unsigned field, uint32_t pseudo);
/* ether.c */
void ether_input(struct netstack *s, struct mbuf *m);
void ether_output(struct netstack *s, struct mbuf *m, const uint8_t dst[6], uint16_t type);
/* The bytes of m's IP packet: its own, and a super-segment's data in tso_frame. */
static inline unsigned mbuf_pktlen(const struct mbuf *m) { return (unsigned)m->len + m->tso_len; }
/* arp.c */
void arp_input(struct netstack *s, struct mbuf *m);
void arp_resolve_and_send(struct netstack *s, struct mbuf *m, uint32_t nexthop);
void arp_timer(struct netstack *s);
uint64_t arp_next_timer(const struct netstack *s);
/* ip.c */
void ip_input(struct netstack *s, struct mbuf *m);
/* Prepend an IPv4 header to m (payload at m's data) and send it to dst. */
void ip_output(struct netstack *s, struct mbuf *m, uint32_t dst, uint8_t proto);
/* icmp.c */
void icmp_input(struct netstack *s, struct mbuf *m, uint32_t src);
/* Queue a datagram (UDP) or packet (raw ICMP) at the end of a socket's receive queue. */
void dgram_enqueue(struct sock *so, struct mbuf *m);
/* Raw ICMP sockets: a copy of the whole packet (IP header included) to each; a message
 * the application built (its checksum too) sent with an IP header. */
void icmp_raw_input(struct netstack *s, const uint8_t *pkt, unsigned len, uint32_t src);
long icmp_raw_send(struct netstack *s, const void *msg, size_t len, uint32_t ip);
void icmp_port_unreachable(struct netstack *s, const uint8_t *iphdr, size_t len);
/* udp.c */
void udp_input(struct netstack *s, struct mbuf *m, uint32_t src, uint32_t dst,
               const uint8_t *iphdr);
/* dhcp.c: a datagram from sport to dport is the DHCP client's (then dhcp_input takes
 * its payload); its retransmissions and lease timers. */
bool dhcp_port(const struct netstack *s, uint16_t sport, uint16_t dport);
void dhcp_input(struct netstack *s, struct mbuf *m);
void dhcp_timer(struct netstack *s);
uint64_t dhcp_next_timer(const struct netstack *s);
/* tcp_input.c */
void tcp_input(struct netstack *s, struct mbuf *m, uint32_t src, uint32_t dst);
/* tcp_output.c */
int tcp_output(struct netstack *s, struct sock *tp);
/* A bare segment without data or a connection (RST replies, keep-alive probes,
 * challenge ACKs); addresses are ours (src) and the peer's (dst). */
void tcp_respond(struct netstack *s, uint32_t dst, uint16_t sport, uint16_t dport,
                 uint32_t seq, uint32_t ack, uint8_t flags, uint16_t win);
uint16_t tcp_window_field(struct sock *tp, int syn);
/* tcp_timer.c */
/* Run the due timers of tp; returns 1 if tp was freed. */
int tcp_timers(struct netstack *s, struct sock *tp);
uint64_t tcp_next_timer(const struct sock *tp);
void tcp_set_rexmt(struct netstack *s, struct sock *tp);
void tcp_enter_time_wait(struct netstack *s, struct sock *tp);
/* tcp_cc.c: RTT estimation and congestion control */
void tcp_rtt_sample(struct sock *tp, uint32_t rtt_ms);
void tcp_cc_init(struct sock *tp);
void tcp_cc_ack(struct sock *tp, uint32_t acked);
void tcp_cc_dupack(struct netstack *s, struct sock *tp);
void tcp_cc_recovery_ack(struct netstack *s, struct sock *tp, uint32_t acked);
void tcp_cc_timeout(struct sock *tp);
/* tcp_subr.c */
struct sock *tcp_lookup(struct netstack *s, uint32_t lip, uint16_t lport, uint32_t rip,
                        uint16_t rport);
struct sock *sock_alloc(struct netstack *s, int type);
void sock_free(struct netstack *s, struct sock *tp);
void tcp_drop(struct netstack *s, struct sock *tp, int err);
void tcp_closed(struct netstack *s, struct sock *tp);
uint32_t tcp_new_iss(struct netstack *s);
uint32_t tcp_rcv_space(const struct sock *tp);
uint16_t net_ephemeral_port(struct netstack *s, int type);
uint64_t net_random(struct netstack *s);
/* ring */
uint32_t ring_write(struct ring *r, const void *src, uint32_t len);
void ring_peek(const struct ring *r, uint32_t off, void *dst, uint32_t len);
void ring_drop(struct ring *r, uint32_t len);
static inline uint32_t ring_space(const struct ring *r) { return NET_SOCKBUF - r->len; }

#endif
