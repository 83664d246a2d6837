/*
 * AF_NETLINK sockets, protocol NETLINK_ROUTE only (docs/net.md, "Netlink"): what busybox
 * `ip addr`, `ip link` and `ip route` ask for. The UNIX server itself is the "kernel" end:
 * a request sent to port 0 is answered at once into the socket's receive queue, from the
 * interface netif.c reports (the network server's device, eth0). Facts from Linux's uapi
 * (linux/netlink.h, linux/rtnetlink.h, linux/if_link.h, linux/if_addr.h) and its
 * af_netlink.c/rtnetlink.c behaviour:
 *   - a send carries any number of messages; each is processed in turn, and a message
 *     whose nlmsg_len is below the header or beyond the data ends the processing
 *     silently (the send still returns its length);
 *   - a message without NLM_F_REQUEST, or of a control type (< NLMSG_MIN_TYPE), does
 *     nothing; one shorter than a struct rtgenmsg is ignored;
 *   - RTM_GETLINK, RTM_GETADDR, RTM_GETROUTE with NLM_F_DUMP (either bit) answer one datagram of
 *     NLM_F_MULTI entries, then one holding NLMSG_DONE; RTM_GETLINK without it answers
 *     the one link (by ifi_index or IFLA_IFNAME: ENODEV if none, EINVAL if neither);
 *   - RTM_GETNEIGH with NLM_F_DUMP answers the ARP cache (netif_neighbours);
 *   - RTM_GETROUTE without NLM_F_DUMP looks up RTA_DST: the route (RTM_NEWROUTE, flagged
 *     RTM_F_CLONED) or ENETUNREACH;
 *   - a type above RTM_MAX is EOPNOTSUPP; any other non-GET type is EPERM without root
 *     (CAP_NET_ADMIN); RTM_NEWADDR, RTM_DELADDR, RTM_NEWROUTE, RTM_DELROUTE change the
 *     configuration (netif.c, op setconfig) with Linux's checks: a body shorter than its
 *     struct EINVAL, a family other than AF_INET EOPNOTSUPP, an unknown ifindex ENODEV,
 *     an address attribute shorter than 4 bytes ERANGE, a missing IFA_LOCAL EINVAL, the
 *     address there already EEXIST, one not there EADDRNOTAVAIL, the default route there
 *     already (NLM_F_EXCL) EEXIST, none to replace without NLM_F_CREATE ENOENT, none to
 *     delete ESRCH, a gateway off the subnet ENETUNREACH; beyond the limits (a second
 *     address or default route, any other route) EOPNOTSUPP; other types EOPNOTSUPP;
 *   - an error, or NLM_F_ACK, answers NLMSG_ERROR (the errno negated, then the request:
 *     whole for an error, its header only for an acknowledgement or with NETLINK_CAP_ACK,
 *     flagged NLM_F_CAPPED).
 * Nothing from the client is trusted: every length is checked against what was copied
 * in, attributes are walked with their lengths checked, and a reply that does not fit the
 * receive queue is dropped with ENOBUFS reported by the next receive (as Linux's overrun).
 * Receive is datagram-like: one queued datagram a call; a smaller buffer gets its start,
 * MSG_TRUNC, and loses the rest. There are no notifications: multicast groups may be
 * joined (bind, NETLINK_ADD_MEMBERSHIP) but nothing is ever sent to them.
 */
#include "netlink_abi.h"
#include "socket.h"
#include "net_server.h"            /* NET_CF_UP, NET_CF_BRD (interfaces/net.idl) */

#define NETLINK_ROUTE 0
#define SO_PROTOCOL 38
#define SO_DOMAIN 39
#define SOL_NETLINK 270
#define NETLINK_ADD_MEMBERSHIP 1
#define NETLINK_DROP_MEMBERSHIP 2
#define NETLINK_NO_ENOBUFS 5
#define NETLINK_CAP_ACK 10
#define NETLINK_EXT_ACK 11

#define AF_INET6 10
#define IFLA_ADDRESS 1
#define IFLA_BROADCAST 2
#define IFLA_IFNAME 3
#define IFLA_MTU 4
#define IFLA_QDISC 6
#define IFLA_STATS 7
#define IFLA_TXQLEN 13
#define IFLA_OPERSTATE 16
#define IFLA_LINKMODE 17
#define IF_OPER_DOWN 2
#define IF_OPER_UP 6
#define IFF_LOWER_UP 0x10000
#define IFA_ADDRESS 1
#define IFA_LOCAL 2
#define IFA_LABEL 3
#define IFA_BROADCAST 4
#define IFA_CACHEINFO 6
#define IFA_FLAGS 8
#define IFA_F_PERMANENT 0x80
#define RTA_DST 1
#define RTA_OIF 4
#define RTA_GATEWAY 5
#define RTA_PREFSRC 7
#define RTA_TABLE 15
#define RT_TABLE_MAIN 254
#define RT_TABLE_LOCAL 255
#define RT_SCOPE_UNIVERSE 0
#define RT_SCOPE_LINK 253
#define RT_SCOPE_HOST 254
#define RTN_UNICAST 1
#define RTN_LOCAL 2
#define RTN_BROADCAST 3
#define RTPROT_KERNEL 2
#define RTPROT_BOOT 3
#define RTN_UNSPEC 0
#define RTM_F_CLONED 0x200
#define RT_TABLE_UNSPEC 0
#define NDA_DST 1
#define NDA_LLADDR 2
#define NDA_CACHEINFO 3
#define NDA_PROBES 4
#define NUD_INCOMPLETE 0x01
#define NUD_REACHABLE 0x02
#define NUD_STALE 0x04

#define NL_QUEUE 32768u            /* a socket's receive queue (Linux's default is larger) */
#define NL_SEND_MAX 16384u         /* the largest send; above it EMSGSIZE */
#define NL_DGRAM_MAX 8192u         /* the largest answer datagram built */
#define NL_AUTOBIND_FIRST 0xfffff000u   /* Linux's autobind rover: -4096 downwards */

struct nlmsghdr {
    uint32_t len;
    uint16_t type, flags;
    uint32_t seq, pid;
};
struct sockaddr_nl {
    uint16_t family, pad;
    uint32_t pid, groups;
};
struct ifinfomsg {
    uint8_t family, pad;
    uint16_t type;
    int32_t index;
    uint32_t flags, change;
};
struct ifaddrmsg {
    uint8_t family, prefixlen, flags, scope;
    uint32_t index;
};
struct rtmsg {
    uint8_t family, dst_len, src_len, tos, table, protocol, scope, type;
    uint32_t flags;
};
struct rtattr {
    uint16_t len, type;
};
struct ndmsg {
    uint8_t family, pad1;
    uint16_t pad2;
    int32_t index;
    uint16_t state;
    uint8_t flags, type;
};

#define NL_ALIGN(n) (((n) + 3u) & ~3u)
#define NL_HDR ((uint32_t)sizeof(struct nlmsghdr))

struct nl_sock {
    struct nl_sock *next;          /* every netlink socket: port ids are unique */
    uint32_t portid;               /* 0 until bound (bind, or a send's autobind) */
    uint32_t groups;               /* joined multicast groups 1..32 (never sent to) */
    int type;                      /* SOCK_RAW or SOCK_DGRAM (the same behaviour) */
    bool cap_ack;                  /* NETLINK_CAP_ACK: errors carry the header only */
    int err;                       /* a dropped answer's ENOBUFS, for the next receive */
    size_t head, tail;             /* queued datagrams in q[head, tail): [u32 len][data] */
    unsigned char q[NL_QUEUE];
};

static struct nl_sock *all_socks;
static struct waitlist nl_waiters; /* blocked receives (woken by a send on the socket) */
static uint32_t rover = NL_AUTOBIND_FIRST;
static unsigned char in_buf[NL_SEND_MAX], out_buf[NL_DGRAM_MAX];
static const struct file_ops nl_ops;

bool nl_file(const struct file *f) { return f && f->ops == &nl_ops; }

static bool is_root(struct ucall *c) { return c->proc->uid[ID_EFFECTIVE] == 0; }

/* ---- the receive queue ---- */

/* Queue one datagram; when it does not fit, drop it and note ENOBUFS. */
static void queue_put(struct nl_sock *s, const void *d, uint32_t n)
{
    size_t need = sizeof n + n;
    if (s->tail + need > NL_QUEUE && s->head) {
        vfs_memmove(s->q, s->q + s->head, s->tail - s->head);
        s->tail -= s->head;
        s->head = 0;
    }
    if (s->tail + need > NL_QUEUE) {
        s->err = ENOBUFS;
        return;
    }
    vfs_memcpy(s->q + s->tail, &n, sizeof n);
    vfs_memcpy(s->q + s->tail + sizeof n, d, n);
    s->tail += need;
    poll_wake(&nl_waiters);
}

/* The first datagram's length and data, or false when none is queued. */
static bool queue_peek(struct nl_sock *s, const unsigned char **d, uint32_t *n)
{
    if (s->head == s->tail)
        return false;
    vfs_memcpy(n, s->q + s->head, sizeof *n);
    *d = s->q + s->head + sizeof *n;
    return true;
}

static void queue_drop(struct nl_sock *s, uint32_t n)
{
    s->head += sizeof n + n;
    if (s->head == s->tail)
        s->head = s->tail = 0;
}

/* ---- building answers: messages and attributes into out_buf ---- */
struct nlb {
    uint32_t len;                  /* bytes built in out_buf */
    bool full;                     /* something did not fit: the datagram is not sent */
};

/* n bytes (zeroed, padded to 4) at the end of out_buf, or NULL when they do not fit. */
static void *nlb_room(struct nlb *b, uint32_t n)
{
    if (b->full || n > NL_DGRAM_MAX || NL_ALIGN(n) > NL_DGRAM_MAX - b->len) {
        b->full = true;
        return NULL;
    }
    void *p = out_buf + b->len;
    vfs_memset(p, 0, NL_ALIGN(n));
    b->len += NL_ALIGN(n);
    return p;
}

/* Start a message with its fixed part (flen bytes); returns its offset for msg_end. */
static uint32_t msg_begin(struct nlb *b, const struct nlmsghdr *h, const void *fixed,
                          uint32_t flen)
{
    uint32_t at = b->len;
    struct nlmsghdr *p = nlb_room(b, NL_HDR);
    void *f = nlb_room(b, flen);
    if (p)
        *p = *h;
    if (f)
        vfs_memcpy(f, fixed, flen);
    return at;
}

static void msg_end(struct nlb *b, uint32_t at)
{
    if (!b->full)
        ((struct nlmsghdr *)(void *)(out_buf + at))->len = b->len - at;
}

static void attr(struct nlb *b, uint16_t type, const void *data, uint32_t n)
{
    struct rtattr *a = nlb_room(b, sizeof *a + n);
    if (!a)
        return;
    *a = (struct rtattr){.len = (uint16_t)(sizeof *a + n), .type = type};
    vfs_memcpy(a + 1, data, n);
}

static void attr32(struct nlb *b, uint16_t type, uint32_t v) { attr(b, type, &v, sizeof v); }
static void attr8(struct nlb *b, uint16_t type, uint8_t v) { attr(b, type, &v, sizeof v); }

/* An IPv4 address attribute (host order in, network order out). */
static void attr_ip(struct nlb *b, uint16_t type, uint32_t ip)
{
    uint8_t a[4] = {(uint8_t)(ip >> 24), (uint8_t)(ip >> 16), (uint8_t)(ip >> 8), (uint8_t)ip};
    attr(b, type, a, sizeof a);
}

static void send_built(struct nl_sock *s, const struct nlb *b)
{
    if (b->full)
        s->err = ENOBUFS;
    else if (b->len)
        queue_put(s, out_buf, b->len);
}

/* ---- the answers ---- */
struct req {
    const struct nlmsghdr *h;      /* the request, h->len checked against the data */
    const unsigned char *body;     /* after the header */
    uint32_t body_len;
};

static struct nlmsghdr reply_hdr(struct nl_sock *s, const struct req *r, uint16_t type,
                                 uint16_t flags)
{
    return (struct nlmsghdr){.type = type, .flags = flags, .seq = r->h->seq, .pid = s->portid};
}

static int prefix_len(uint32_t mask)
{
    int n = 0;
    for (; mask & 0x80000000u; mask <<= 1)
        n++;
    return n;
}

/* RTM_NEWLINK for eth0: its flags as SIOCGIFFLAGS says, with the link up (LOWER_UP), the
 * MAC, MTU, queue length and traffic. ondol has no queueing discipline: Linux's name for
 * that is "noqueue". */
static void link_msg(struct nlb *b, struct nlmsghdr h, const struct netif_config *n)
{
    bool up = n->flags & NET_CF_UP;
    struct ifinfomsg ifi = {.type = ARPHRD_ETHER, .index = NETIF_INDEX,
                            .flags = up ? IFF_UP | IFF_BROADCAST | IFF_RUNNING | IFF_LOWER_UP
                                        : IFF_BROADCAST};
    struct procfs_netif v;
    uint32_t stats[24] = {0};      /* struct rtnl_link_stats: packets, bytes, errors... */
    if (netif_view(&v)) {
        stats[0] = (uint32_t)v.rx_frames;
        stats[1] = (uint32_t)v.tx_frames;
        stats[2] = (uint32_t)v.rx_bytes;
        stats[3] = (uint32_t)v.tx_bytes;
        stats[6] = (uint32_t)v.rx_dropped;
        stats[7] = (uint32_t)v.tx_dropped;
    }
    static const uint8_t bcast[6] = {0xff, 0xff, 0xff, 0xff, 0xff, 0xff};
    uint32_t at = msg_begin(b, &h, &ifi, sizeof ifi);
    attr(b, IFLA_IFNAME, NETIF_NAME, sizeof NETIF_NAME);
    attr32(b, IFLA_TXQLEN, NETIF_TXQLEN);
    attr8(b, IFLA_OPERSTATE, up ? IF_OPER_UP : IF_OPER_DOWN);
    attr8(b, IFLA_LINKMODE, 0);
    attr32(b, IFLA_MTU, NETIF_MTU);
    attr(b, IFLA_QDISC, "noqueue", sizeof "noqueue");
    attr(b, IFLA_ADDRESS, n->mac, sizeof n->mac);
    attr(b, IFLA_BROADCAST, bcast, sizeof bcast);
    attr(b, IFLA_STATS, stats, sizeof stats);
    msg_end(b, at);
}

/* RTM_NEWADDR for eth0's IPv4 address: permanent, global, for ever (as ifconfig sets). */
static void addr_msg(struct nlb *b, struct nlmsghdr h, const struct netif_config *n)
{
    struct ifaddrmsg ifa = {.family = AF_INET, .prefixlen = (uint8_t)prefix_len(n->mask),
                            .flags = IFA_F_PERMANENT, .scope = RT_SCOPE_UNIVERSE,
                            .index = NETIF_INDEX};
    uint32_t cache[4] = {0xffffffffu, 0xffffffffu, 0, 0};   /* preferred, valid, stamps */
    uint32_t at = msg_begin(b, &h, &ifa, sizeof ifa);
    attr_ip(b, IFA_ADDRESS, n->ip);
    attr_ip(b, IFA_LOCAL, n->ip);
    if (n->flags & NET_CF_BRD)
        attr_ip(b, IFA_BROADCAST, n->ip | ~n->mask);
    attr(b, IFA_LABEL, NETIF_NAME, sizeof NETIF_NAME);
    attr32(b, IFA_FLAGS, IFA_F_PERMANENT);
    attr(b, IFA_CACHEINFO, cache, sizeof cache);
    msg_end(b, at);
}

/* One route: the table's entry as Linux's fib dumps it (attributes RTA_TABLE, RTA_DST
 * when the prefix is not 0, RTA_PREFSRC and RTA_GATEWAY when set, RTA_OIF). */
struct route {
    uint32_t dst, gw, src;         /* host order; 0: none */
    uint8_t dst_len, table, protocol, scope, type;
};

static void route_msg(struct nlb *b, struct nlmsghdr h, const struct route *r)
{
    struct rtmsg rt = {.family = AF_INET, .dst_len = r->dst_len, .table = r->table,
                       .protocol = r->protocol, .scope = r->scope, .type = r->type};
    uint32_t at = msg_begin(b, &h, &rt, sizeof rt);
    attr32(b, RTA_TABLE, r->table);
    if (r->dst_len)
        attr_ip(b, RTA_DST, r->dst);
    if (r->src)
        attr_ip(b, RTA_PREFSRC, r->src);
    if (r->gw)
        attr_ip(b, RTA_GATEWAY, r->gw);
    attr32(b, RTA_OIF, NETIF_INDEX);
    msg_end(b, at);
}

/* The main table as /proc/net/route has it: the default route through the gateway (as
 * `route add default gw` makes it: proto boot), then the subnet's (proto kernel, scope
 * link, the address as preferred source); then the local table, what the stack takes as
 * its own (ip.c): its address (scope host) and the subnet's broadcast (scope link). */
static void route_msgs(struct nlb *b, struct nlmsghdr h, const struct netif_config *n)
{
    uint32_t net = n->ip & n->mask;
    uint8_t plen = (uint8_t)prefix_len(n->mask);
    const struct route routes[] = {
        {.gw = n->gw, .table = RT_TABLE_MAIN, .protocol = RTPROT_BOOT,
         .scope = RT_SCOPE_UNIVERSE, .type = RTN_UNICAST},
        {.dst = net, .dst_len = plen, .src = n->ip, .table = RT_TABLE_MAIN,
         .protocol = RTPROT_KERNEL, .scope = RT_SCOPE_LINK, .type = RTN_UNICAST},
        {.dst = n->ip, .dst_len = 32, .src = n->ip, .table = RT_TABLE_LOCAL,
         .protocol = RTPROT_KERNEL, .scope = RT_SCOPE_HOST, .type = RTN_LOCAL},
        {.dst = net | ~n->mask, .dst_len = 32, .src = n->ip, .table = RT_TABLE_LOCAL,
         .protocol = RTPROT_KERNEL, .scope = RT_SCOPE_LINK, .type = RTN_BROADCAST},
    };
    unsigned last = n->flags & NET_CF_BRD ? 4 : 3;   /* the broadcast route with brd */
    for (unsigned i = n->gw ? 0 : 1; i < last && (n->flags & NET_CF_UP); i++)
        route_msg(b, h, &routes[i]);
}

/* RTM_NEWNEIGH for each ARP cache entry, as Linux's neighbour dump: NDA_DST, NDA_LLADDR
 * once known, NDA_PROBES and NDA_CACHEINFO (times not kept: 0). */
static void neigh_msgs(struct nlb *b, struct nlmsghdr h)
{
    static struct netif_neigh nb[NETIF_NEIGH_MAX];
    static const uint16_t nud[] = {0, NUD_INCOMPLETE, NUD_REACHABLE, NUD_STALE};
    int count = netif_neighbours(nb, NETIF_NEIGH_MAX);
    for (int i = 0; i < count; i++) {
        struct ndmsg nd = {.family = AF_INET, .index = NETIF_INDEX,
                           .state = nud[nb[i].state], .type = RTN_UNICAST};
        uint32_t cache[4] = {0, 0, 0, 1};        /* confirmed, used, updated, refcnt */
        uint32_t at = msg_begin(b, &h, &nd, sizeof nd);
        attr_ip(b, NDA_DST, nb[i].ip);
        if (nb[i].state != NEIGH_INCOMPLETE)
            attr(b, NDA_LLADDR, nb[i].mac, sizeof nb[i].mac);
        attr32(b, NDA_PROBES, 0);
        attr(b, NDA_CACHEINFO, cache, sizeof cache);
        msg_end(b, at);
    }
}

/* A dump: the entries of `type` (IPv4 ones unless the request names AF_INET6) in one
 * datagram, then NLMSG_DONE in the next. */
static void dump(struct nl_sock *s, const struct req *r, uint8_t family)
{
    struct netif_config n;
    struct nlb b = {0};
    bool any = netif_config(&n);
    struct nlmsghdr h = reply_hdr(s, r, (uint16_t)(r->h->type - 2), NLM_F_MULTI);
    if (any && r->h->type == RTM_GETLINK)
        link_msg(&b, h, &n);
    else if (any && n.ip && family != AF_INET6 && r->h->type == RTM_GETADDR)
        addr_msg(&b, h, &n);
    else if (any && n.ip && family != AF_INET6 && r->h->type == RTM_GETROUTE)
        route_msgs(&b, h, &n);
    else if (any && family != AF_INET6 && r->h->type == RTM_GETNEIGH)
        neigh_msgs(&b, h);
    send_built(s, &b);
    struct nlb d = {0};
    int32_t zero = 0;
    uint32_t at = msg_begin(&d, &(struct nlmsghdr){.type = NLMSG_DONE, .flags = NLM_F_MULTI,
                                                   .seq = r->h->seq, .pid = s->portid},
                            &zero, sizeof zero);
    msg_end(&d, at);
    send_built(s, &d);
}

/* The value of attribute `type` among those after a fixed part of `skip` bytes, walked
 * with every length checked: NULL when absent; a malformed attribute ends the walk (as
 * Linux's liberal parser does). */
static const struct rtattr *find_attr(const struct req *r, uint32_t skip, uint16_t type)
{
    uint32_t off = NL_ALIGN(skip);
    while (off + sizeof(struct rtattr) <= r->body_len) {
        struct rtattr a;
        vfs_memcpy(&a, r->body + off, sizeof a);
        if (a.len < sizeof a || a.len > r->body_len - off)
            return NULL;
        if (a.type == type)
            return (const struct rtattr *)(const void *)(r->body + off);
        off += NL_ALIGN(a.len) < r->body_len - off ? NL_ALIGN(a.len) : r->body_len - off;
    }
    return NULL;
}

/* RTM_GETLINK without NLM_F_DUMP: the one link, by index or by IFLA_IFNAME. */
static long get_link(struct nl_sock *s, const struct req *r)
{
    struct ifinfomsg ifi;
    if (r->body_len < sizeof ifi)
        return -EINVAL;
    vfs_memcpy(&ifi, r->body, sizeof ifi);
    struct netif_config n;
    bool have = netif_config(&n);
    if (ifi.index > 0) {
        if (!have || ifi.index != NETIF_INDEX)
            return -ENODEV;
    } else {
        const struct rtattr *a = find_attr(r, sizeof ifi, IFLA_IFNAME);
        if (!a)
            return -EINVAL;
        uint32_t k = a->len - (uint32_t)sizeof *a;
        if (k > IFNAMSIZ)
            return -EINVAL;
        char name[IFNAMSIZ + 1] = {0};
        vfs_memcpy(name, a + 1, k);
        if (!have || vfs_memcmp(name, NETIF_NAME, sizeof NETIF_NAME))
            return -ENODEV;
    }
    struct nlb b = {0};
    link_msg(&b, reply_hdr(s, r, RTM_NEWLINK, 0), &n);
    send_built(s, &b);
    return 0;
}

/* ---- changes (netif.c does them) ---- */

/* IPv4 address attribute `type` after a fixed part of skip bytes into *ip (host order):
 * 0, 1 when absent, or -ERANGE when shorter than an address (Linux's policy check). */
static int addr_attr(const struct req *r, uint32_t skip, uint16_t type, uint32_t *ip)
{
    const struct rtattr *a = find_attr(r, skip, type);
    if (!a)
        return 1;
    if (a->len < sizeof *a + 4)
        return -ERANGE;
    const uint8_t *v = (const uint8_t *)(a + 1);
    *ip = (uint32_t)v[0] << 24 | (uint32_t)v[1] << 16 | (uint32_t)v[2] << 8 | v[3];
    return 0;
}

static uint32_t mask_of(unsigned plen) { return plen ? ~0u << (32 - plen) : 0; }

/* RTM_NEWADDR, RTM_DELADDR (Linux's inet_rtm_newaddr, inet_rtm_deladdr): the one
 * address; IFA_BROADCAST asks for the subnet's broadcast. */
static long change_addr(const struct req *r, bool add)
{
    struct ifaddrmsg ifa;
    if (r->body_len < sizeof ifa)
        return -EINVAL;
    vfs_memcpy(&ifa, r->body, sizeof ifa);
    if (ifa.family != AF_INET)
        return -EOPNOTSUPP;
    uint32_t local = 0, address = 0, brd = 0;
    int l = addr_attr(r, sizeof ifa, IFA_LOCAL, &local);
    int a = addr_attr(r, sizeof ifa, IFA_ADDRESS, &address);
    int b = addr_attr(r, sizeof ifa, IFA_BROADCAST, &brd);
    if (l < 0 || a < 0 || b < 0)
        return -ERANGE;
    if (add && (ifa.prefixlen > 32 || l))
        return -EINVAL;
    struct netif_config n;
    if (ifa.index != NETIF_INDEX || !netif_config(&n))
        return -ENODEV;
    uint32_t mask = mask_of(ifa.prefixlen > 32 ? 32 : ifa.prefixlen);
    if (!add) {
        bool match = n.ip && (l || local == n.ip) &&
                     (a || (mask == n.mask && (address & mask) == (n.ip & mask)));
        return match ? netif_set_address(0, 0, false) : -EADDRNOTAVAIL;
    }
    if (n.ip)
        return n.ip == local && n.mask == mask ? -EEXIST : -EOPNOTSUPP;
    return netif_set_address(local, mask, b == 0 && ifa.prefixlen < 31);
}

/* A route request's fixed part and gateway: 0, or Linux's error for the request. */
static long route_req(const struct req *r, struct rtmsg *rt, uint32_t *gw, bool *has_gw)
{
    if (r->body_len < sizeof *rt)
        return -EINVAL;
    vfs_memcpy(rt, r->body, sizeof *rt);
    if (rt->family != AF_INET)
        return -EOPNOTSUPP;
    if (rt->dst_len > 32)
        return -EINVAL;
    uint32_t oif = 0, dst = 0;
    const struct rtattr *o = find_attr(r, sizeof *rt, RTA_OIF);
    if (o && o->len < sizeof *o + 4)
        return -ERANGE;
    if (o)
        vfs_memcpy(&oif, o + 1, 4);
    int g = addr_attr(r, sizeof *rt, RTA_GATEWAY, gw);
    int d = addr_attr(r, sizeof *rt, RTA_DST, &dst);
    if (g < 0 || d < 0)
        return -ERANGE;
    *has_gw = g == 0 && *gw;
    if (o && oif != NETIF_INDEX)             /* a gateway through no interface: no route */
        return *has_gw ? -ENETUNREACH : -ENODEV;
    return rt->dst_len || dst ? -EOPNOTSUPP : 0;   /* the default route only */
}

/* RTM_NEWROUTE, RTM_DELROUTE of the default route through a gateway (the one route that
 * can be changed): NLM_F_EXCL, NLM_F_REPLACE and NLM_F_CREATE as Linux's fib. */
static long change_route(const struct req *r, bool add)
{
    struct rtmsg rt;
    uint32_t gw = 0;
    bool has_gw = false;
    long err = route_req(r, &rt, &gw, &has_gw);
    struct netif_config n;
    if (err)
        return add || err != -EOPNOTSUPP ? err : -ESRCH;
    if (!netif_config(&n))                   /* no interface: no route, none to reach */
        return !add ? -ESRCH : has_gw ? -ENETUNREACH : -EOPNOTSUPP;
    if (!add)
        return !n.gw || (has_gw && gw != n.gw) ? -ESRCH : netif_set_gateway(0);
    bool table_ok = rt.table == RT_TABLE_MAIN || rt.table == RT_TABLE_UNSPEC;
    if (!has_gw || !table_ok || (rt.type != RTN_UNICAST && rt.type != RTN_UNSPEC))
        return -EOPNOTSUPP;
    uint16_t f = r->h->flags;
    if ((err = netif_gateway_check(&n, gw)))
        return err;
    if (n.gw && (f & NLM_F_EXCL))
        return -EEXIST;
    if (n.gw && !(f & NLM_F_REPLACE))
        return n.gw == gw ? -EEXIST : -EOPNOTSUPP;
    if (!n.gw && !(f & NLM_F_CREATE))
        return -ENOENT;
    return netif_set_gateway(gw);
}

/* RTM_GETROUTE for RTA_DST (Linux's inet_rtm_getroute): the route the stack would take,
 * or ENETUNREACH. */
static long get_route(struct nl_sock *s, const struct req *r)
{
    struct rtmsg rt;
    if (r->body_len < sizeof rt)
        return -EINVAL;
    vfs_memcpy(&rt, r->body, sizeof rt);
    uint32_t dst = 0;
    if (addr_attr(r, sizeof rt, RTA_DST, &dst) < 0)
        return -ERANGE;
    struct netif_config n;
    if (!netif_config(&n))
        return -ENETUNREACH;
    bool onlink = (dst & n.mask) == (n.ip & n.mask);
    if (!n.ip || !(n.flags & NET_CF_UP) || (!onlink && !n.gw))
        return -ENETUNREACH;
    struct nlb b = {0};
    struct rtmsg ans = {.family = AF_INET, .dst_len = 32, .table = RT_TABLE_MAIN,
                        .scope = RT_SCOPE_UNIVERSE, .type = RTN_UNICAST, .flags = RTM_F_CLONED};
    uint32_t at = msg_begin(&b, &(struct nlmsghdr){.type = RTM_NEWROUTE, .seq = r->h->seq,
                                                   .pid = s->portid}, &ans, sizeof ans);
    attr32(&b, RTA_TABLE, RT_TABLE_MAIN);
    attr_ip(&b, RTA_DST, dst);
    attr32(&b, RTA_OIF, NETIF_INDEX);
    attr_ip(&b, RTA_PREFSRC, n.ip);
    if (!onlink)
        attr_ip(&b, RTA_GATEWAY, n.gw);
    msg_end(&b, at);
    send_built(s, &b);
    return 0;
}

/* One rtnetlink request: 0 (answered, or nothing to do) or -errno for NLMSG_ERROR. */
static long rtnl_request(struct nl_sock *s, struct ucall *c, const struct req *r)
{
    uint16_t type = r->h->type;
    if (type > RTM_MAX)
        return -EOPNOTSUPP;
    if (r->body_len < 1)                      /* no struct rtgenmsg: ignored */
        return 0;
    bool get = (type & 3) == 2;
    if (!get && !is_root(c))
        return -EPERM;
    switch (type) {
    case RTM_NEWADDR:
    case RTM_DELADDR: return change_addr(r, type == RTM_NEWADDR);
    case RTM_NEWROUTE:
    case RTM_DELROUTE: return change_route(r, type == RTM_NEWROUTE);
    }
    bool known = type == RTM_GETLINK || type == RTM_GETADDR || type == RTM_GETROUTE ||
                 type == RTM_GETNEIGH;
    if (!known)
        return -EOPNOTSUPP;
    if (r->h->flags & NLM_F_DUMP) {              /* NLM_F_ROOT or NLM_F_MATCH, as Linux */
        dump(s, r, r->body[0]);
        return 0;
    }
    return type == RTM_GETLINK ? get_link(s, r) : type == RTM_GETROUTE ? get_route(s, r)
                                                                       : -EOPNOTSUPP;
}

/* NLMSG_ERROR for request r: err (0: an acknowledgement), then the request's header, and
 * for an error its body too unless NETLINK_CAP_ACK. */
static void ack(struct nl_sock *s, const struct req *r, long err)
{
    bool capped = !err || s->cap_ack;
    uint32_t body = capped ? 0 : r->body_len;
    struct nlb b = {0};
    int32_t e = (int32_t)err;
    uint32_t at = msg_begin(&b, &(struct nlmsghdr){.type = NLMSG_ERROR,
                                                   .flags = capped ? NLM_F_CAPPED : 0,
                                                   .seq = r->h->seq, .pid = s->portid},
                            &e, sizeof e);
    void *p = nlb_room(&b, NL_HDR + body);
    if (p) {
        vfs_memcpy(p, r->h, NL_HDR);
        vfs_memcpy((unsigned char *)p + NL_HDR, r->body, body);
    }
    msg_end(&b, at);
    send_built(s, &b);
}

/* Every message of a send, in order (Linux's netlink_rcv_skb). */
static void process(struct nl_sock *s, struct ucall *c, const unsigned char *d, uint32_t n)
{
    while (n >= NL_HDR) {
        struct nlmsghdr h;
        vfs_memcpy(&h, d, sizeof h);
        if (h.len < NL_HDR || h.len > n)
            return;
        struct req r = {.h = &h, .body = d + NL_HDR, .body_len = h.len - NL_HDR};
        long err = 0;
        if ((h.flags & NLM_F_REQUEST) && h.type >= NLMSG_MIN_TYPE)
            err = rtnl_request(s, c, &r);
        if (err || (h.flags & NLM_F_ACK))
            ack(s, &r, err);
        uint32_t step = NL_ALIGN(h.len) < n ? NL_ALIGN(h.len) : n;
        d += step;
        n -= step;
    }
}

/* ---- port ids ---- */
static bool port_used(uint32_t pid)
{
    for (struct nl_sock *o = all_socks; o; o = o->next)
        if (o->portid == pid)
            return true;
    return false;
}

/* An unbound socket's port: the process id if free (as Linux's first socket of a
 * process), else the rover's next free value. */
static void autobind(struct nl_sock *s, struct ucall *c)
{
    if (s->portid)
        return;
    uint32_t pid = (uint32_t)c->proc->pid;
    while (port_used(pid))
        pid = rover--;
    s->portid = pid;
}

/* ---- the socket calls ---- */
static struct nl_sock *nl_of(struct file *f) { return f->priv; }

/* A sockaddr_nl from user space: 0, -EFAULT or -EINVAL (short, or not AF_NETLINK). */
static long addr_in_nl(struct ucall *c, uint64_t uaddr, uint64_t len, struct sockaddr_nl *a)
{
    if (len < sizeof *a)
        return -EINVAL;
    if (copy_in(c->proc, a, uaddr, sizeof *a))
        return -EFAULT;
    return a->family == AF_NETLINK ? 0 : -EINVAL;
}

/* A sockaddr_nl out, as value_out. */
static long addr_out_nl(struct ucall *c, uint64_t uaddr, uint64_t ulen, uint32_t pid,
                        uint32_t groups)
{
    struct sockaddr_nl a = {.family = AF_NETLINK, .pid = pid, .groups = groups};
    return value_out(c, uaddr, ulen, &a, sizeof a);
}

long nl_send(struct ucall *c, struct file *f, const struct uvec *u, uint64_t flags,
             uint64_t uaddr, uint64_t alen)
{
    (void)flags;                               /* a send to the kernel never waits */
    struct nl_sock *s = nl_of(f);
    struct sockaddr_nl to = {.family = AF_NETLINK};
    long err = uaddr ? addr_in_nl(c, uaddr, alen, &to) : 0;
    if (err)
        return err;
    if (to.groups && !is_root(c))
        return -EPERM;
    if (to.pid)
        return -ECONNREFUSED;                  /* no other process listens here */
    size_t n = uvec_total(c, u);
    if (n > NL_SEND_MAX)
        return -EMSGSIZE;
    if (uvec_copy(c, u, 0, in_buf, n, false))
        return -EFAULT;
    autobind(s, c);
    process(s, c, in_buf, (uint32_t)n);
    return (long)n;
}

/* One queued datagram (MSG_PEEK leaves it); an overrun's ENOBUFS first. Blocks while the
 * queue is empty: only a send on the same socket can fill it. */
long nl_recv(struct ucall *c, struct file *f, const struct uvec *u, uint64_t flags,
             uint64_t uaddr, uint64_t ulen, int32_t *mflags)
{
    struct nl_sock *s = nl_of(f);
    *mflags = 0;
    if (s->err) {
        long e = -s->err;
        s->err = 0;
        return e;
    }
    const unsigned char *d;
    uint32_t n;
    if (!queue_peek(s, &d, &n)) {
        if ((f->flags & O_NONBLOCK) || (flags & MSG_DONTWAIT))
            return -EAGAIN;
        return ucall_block(c, &nl_waiters, UNIX_NO_DEADLINE);
    }
    size_t cap = uvec_total(c, u), k = n < cap ? n : cap;
    if (uvec_copy(c, u, 0, (void *)d, k, true) || addr_out_nl(c, uaddr, ulen, 0, 0))
        return -EFAULT;
    if (!(flags & MSG_PEEK))
        queue_drop(s, n);
    *mflags = n > cap ? MSG_TRUNC : 0;
    return flags & MSG_TRUNC ? (long)n : (long)k;
}

/* bind: a port id (0: one is chosen) and the groups to join. Rebinding to another port
 * is EINVAL; a port in use EADDRINUSE. */
long nl_bind(struct ucall *c, struct file *f)
{
    struct nl_sock *s = nl_of(f);
    struct sockaddr_nl a;
    long err = addr_in_nl(c, c->a[1], c->a[2], &a);
    if (err)
        return err;
    if (a.pid && s->portid && a.pid != s->portid)
        return -EINVAL;
    if (a.pid && !s->portid && port_used(a.pid))
        return -EADDRINUSE;
    if (a.pid)
        s->portid = a.pid;
    autobind(s, c);
    s->groups = a.groups;
    return 0;
}

/* connect: the only peer is the kernel (port 0); the socket gets its port. */
long nl_connect(struct ucall *c, struct file *f)
{
    struct sockaddr_nl a;
    long err = addr_in_nl(c, c->a[1], c->a[2], &a);
    if (err)
        return err;
    if (a.pid)
        return -ECONNREFUSED;
    autobind(nl_of(f), c);
    return 0;
}

long nl_name(struct ucall *c, struct file *f, bool peer)
{
    struct nl_sock *s = nl_of(f);
    return peer ? addr_out_nl(c, c->a[1], c->a[2], 0, 0)
                : addr_out_nl(c, c->a[1], c->a[2], s->portid, s->groups);
}

/* An int option value (the first 4 bytes; shorter is EINVAL). */
static long int_opt(struct ucall *c, int32_t *v)
{
    if ((uint32_t)c->a[4] < sizeof *v)
        return -EINVAL;
    return copy_in(c->proc, v, c->a[3], sizeof *v) ? -EFAULT : 0;
}

/* setsockopt: the buffer sizes (accepted, the queue is fixed), group membership, and
 * NETLINK_CAP_ACK, NETLINK_EXT_ACK (no extended-ack attributes are ever added: allowed),
 * NETLINK_NO_ENOBUFS (accepted); others ENOPROTOOPT. */
long nl_setsockopt(struct ucall *c, struct file *f)
{
    struct nl_sock *s = nl_of(f);
    int32_t level = (int32_t)c->a[1], name = (int32_t)c->a[2], v;
    long err = int_opt(c, &v);
    if (err)
        return err;
    if (level == SOL_SOCKET)
        return name == SO_SNDBUF || name == SO_RCVBUF ? 0 : -ENOPROTOOPT;
    if (level != SOL_NETLINK)
        return -ENOPROTOOPT;
    switch (name) {
    case NETLINK_ADD_MEMBERSHIP:
    case NETLINK_DROP_MEMBERSHIP:
        if (v <= 0 || v > 32)
            return -EINVAL;
        autobind(s, c);
        s->groups = name == NETLINK_ADD_MEMBERSHIP ? s->groups | 1u << (v - 1)
                                                   : s->groups & ~(1u << (v - 1));
        return 0;
    case NETLINK_CAP_ACK:
        s->cap_ack = v != 0;
        return 0;
    case NETLINK_EXT_ACK:
    case NETLINK_NO_ENOBUFS:
        return 0;
    }
    return -ENOPROTOOPT;
}

long nl_getsockopt(struct ucall *c, struct file *f)
{
    struct nl_sock *s = nl_of(f);
    int32_t level = (int32_t)c->a[1], name = (int32_t)c->a[2], len, v;
    if (copy_in(c->proc, &len, c->a[4], sizeof len))
        return -EFAULT;
    if (len < 0)
        return -EINVAL;
    if (level == SOL_SOCKET && name == SO_TYPE)
        v = s->type;
    else if (level == SOL_SOCKET && name == SO_DOMAIN)
        v = AF_NETLINK;
    else if (level == SOL_SOCKET && name == SO_PROTOCOL)
        v = NETLINK_ROUTE;
    else if (level == SOL_SOCKET && (name == SO_SNDBUF || name == SO_RCVBUF))
        v = NL_QUEUE;
    else if (level == SOL_NETLINK && name == NETLINK_CAP_ACK)
        v = s->cap_ack;
    else
        return -ENOPROTOOPT;
    return value_out(c, c->a[3], c->a[4], &v, sizeof v);
}

/* ---- the file: read and write are recv and send without addresses ---- */
static long nl_read(struct file *f, struct ucall *c, uint64_t uaddr, size_t n, uint64_t *off)
{
    (void)off;
    int32_t mflags;
    struct uvec u = {.one = {uaddr, n}};
    return nl_recv(c, f, &u, 0, 0, 0, &mflags);
}

static long nl_write(struct file *f, struct ucall *c, uint64_t uaddr, size_t n, uint64_t *off)
{
    (void)off;
    struct uvec u = {.one = {uaddr, n}};
    return nl_send(c, f, &u, 0, 0, 0);
}

static unsigned nl_poll(struct file *f, struct waitlist **w)
{
    struct nl_sock *s = nl_of(f);
    if (w)
        *w = &nl_waiters;
    unsigned in = s->head != s->tail ? POLLIN | POLLRDNORM : 0;
    return in | (s->err ? POLLERR : 0) | POLLOUT | POLLWRNORM;
}

/* The interface ioctls work on any socket, as on Linux (ip link's SIOCGIFTXQLEN). */
static long nl_ioctl(struct file *f, struct ucall *c, unsigned long cmd, uint64_t arg)
{
    (void)f;
    return netif_ioctl(c, cmd, arg);
}

static void nl_release(struct file *f)
{
    struct nl_sock *s = nl_of(f);
    for (struct nl_sock **p = &all_socks; *p; p = &(*p)->next)
        if (*p == s) {
            *p = s->next;
            break;
        }
    unix_free(s);
}

static const struct file_ops nl_ops = {
    .read = nl_read,
    .write = nl_write,
    .poll = nl_poll,
    .ioctl = nl_ioctl,
    .release = nl_release,
};

/* socket(AF_NETLINK, SOCK_RAW or SOCK_DGRAM, NETLINK_ROUTE) */
long nl_socket(struct ucall *c, unsigned type, unsigned flags, long proto)
{
    if (type != SOCK_RAW && type != SOCK_DGRAM)
        return -ESOCKTNOSUPPORT;
    if (proto != NETLINK_ROUTE)
        return -EPROTONOSUPPORT;
    struct nl_sock *s = unix_alloc_big(sizeof *s);
    struct file *f = s ? file_new(&nl_ops, NULL, O_RDWR | (flags & O_NONBLOCK)) : NULL;
    if (!f) {
        unix_free(s);
        return -ENOMEM;
    }
    f->priv = s;
    s->type = (int)type;
    s->next = all_socks;
    all_socks = s;
    return fd_install(c->proc, f, 0, flags & O_CLOEXEC);
}
