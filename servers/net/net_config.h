/*
 * Sizes and constants of the stack, in one place (docs/net.md, "Limits").
 * A platform may override any of them with -D before including net.h.
 */
#ifndef ONDOL_NET_CONFIG_H
#define ONDOL_NET_CONFIG_H

#ifndef NET_MAX_SOCKETS
#define NET_MAX_SOCKETS 160        /* TCP and UDP sockets, including TIME_WAIT */
#endif
#ifndef NET_SOCKBUF
#define NET_SOCKBUF 65536          /* TCP send and receive buffer, bytes (power of two) */
#endif
#ifndef NET_MBUFS
#define NET_MBUFS 512              /* packet buffers per stack */
#endif
#define NET_MBUF_DATA 1600         /* bytes per mbuf: one Ethernet frame and head room */
#define NET_ARP_ENTRIES 16
#define NET_ARP_PENDING 4          /* frames held per unresolved address */
#define NET_ARP_EXPIRE_MS 60000
#define NET_ARP_RETRY_MS 1000
#define NET_ARP_TRIES 3
#define NET_ARP_REACHABLE_MS 30000   /* a confirmed entry is REACHABLE this long (Linux's
                                       base_reachable_time), then STALE */
#define NET_UDP_QUEUE 32           /* datagrams queued per UDP socket */
#define NET_TCP_REASS_MAX 64       /* out-of-order segments held per connection */

/* TCP timers (RFC 6298 and RFC 9293 values, milliseconds). */
#define TCP_RTO_INIT 1000
#define TCP_RTO_MIN 200            /* RFC 6298 says 1 s; 200 ms as Linux and BSD do */
#define TCP_RTO_MAX 60000
#define TCP_MAX_REXMT 12           /* retransmissions before the connection is dropped */
#define TCP_DELACK_MS 40
#define TCP_MSL_MS 30000           /* TIME_WAIT lasts 2 MSL */
#define TCP_KEEP_IDLE_MS 7200000
#define TCP_KEEP_INTVL_MS 75000
#define TCP_KEEP_PROBES 9
#define TCP_PERSIST_MIN 500
#define TCP_PERSIST_MAX 60000

#endif
