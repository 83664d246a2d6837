/*
 * The network interface as Linux programs see it (docs/net.md, "Sockets of Linux
 * programs"): the read-only interface ioctls on any socket (busybox ifconfig) and the
 * view behind /proc/net/dev and /proc/net/route (procfs.c formats them; ifconfig and
 * route read them). ondol has one interface, NETIF_NAME, the network server's virtio-net
 * device, and no loopback; its address, netmask, gateway and MAC come from op config, its
 * traffic from op ifstats. Root (Linux: CAP_NET_ADMIN) changes them (SIOCSIFADDR,
 * SIOCSIFNETMASK, SIOCSIFFLAGS's IFF_UP, SIOCADDRT and SIOCDELRT of a default route)
 * through op setconfig, with Linux's checks in Linux's order (EPERM, EINVAL for a family
 * that is not AF_INET, ENODEV, EADDRNOTAVAIL, EINVAL for a bad mask) and Linux's
 * side effects (a changed address or netmask takes the default route with it; so does
 * down). Limits (docs/net.md): one address and one default route, other routes
 * EOPNOTSUPP; a change stops DHCP; SIOCSIFMTU is EOPNOTSUPP.
 */
#include "devices.h"
#include "net_server.h"            /* the generated op numbers (NET_CONFIG, NET_IFSTATS) */

#define SIOC_FIRST 0x8900         /* linux/sockios.h: the socket requests */
#define SIOC_LAST 0x89ff
#define SIOCADDRT 0x890B
#define SIOCDELRT 0x890C
#define SIOCGIFNAME 0x8910
#define SIOCGIFCONF 0x8912
#define SIOCGIFFLAGS 0x8913
#define SIOCSIFFLAGS 0x8914
#define SIOCGIFADDR 0x8915
#define SIOCSIFADDR 0x8916
#define SIOCGIFDSTADDR 0x8917
#define SIOCGIFBRDADDR 0x8919
#define SIOCGIFNETMASK 0x891B
#define SIOCSIFNETMASK 0x891C
#define SIOCGIFMETRIC 0x891D
#define SIOCGIFMTU 0x8921
#define SIOCSIFMTU 0x8922
#define SIOCGIFHWADDR 0x8927
#define SIOCGIFINDEX 0x8933
#define SIOCGIFTXQLEN 0x8942
#define SIOCGIFMAP 0x8970
#define RTF_GATEWAY 0x2            /* struct rtentry's flags */
#define RTF_HOST 0x4


struct linux_ifreq {
    char name[16];
    union {
        struct {
            uint16_t family;
            uint8_t data[14];      /* sockaddr_in: port, address; or a MAC */
        } addr;
        int16_t flags;
        int32_t value;             /* metric, MTU, index, queue length */
        uint8_t map[24];           /* struct ifmap: the largest member */
    } u;
};

struct linux_ifconf {
    int32_t len, pad;
    uint64_t buf;
};

struct linux_sockaddr {
    uint16_t family;
    uint8_t data[14];
};

struct linux_rtentry {             /* SIOCADDRT, SIOCDELRT */
    uint64_t pad1;
    struct linux_sockaddr dst, gateway, genmask;
    uint16_t flags;
    int16_t pad2;
    uint64_t pad3, pad4;
    int16_t metric;
    uint64_t dev;                  /* a char *: the device's name, or 0 */
    uint64_t mtu, window;
    uint16_t irtt;
};

static void mac_of(uint64_t w, uint8_t mac[6])
{
    for (int i = 0; i < 6; i++)
        mac[i] = (uint8_t)(w >> (40 - 8 * i));
}

bool netif_config(struct netif_config *n)
{
    uint64_t w[IPC_MRS] = {0};
    if (sock_net_op(NET_CONFIG, w) < 0)
        return false;
    n->ip = (uint32_t)w[1];
    n->mask = (uint32_t)w[2];
    n->gw = (uint32_t)w[3];
    mac_of(w[4], n->mac);
    n->flags = (unsigned)w[5];
    return true;
}

/* ---- changes ---- */

/* Make n the configuration (op setconfig): 0 or -errno. */
static long apply(const struct netif_config *n)
{
    uint64_t w[IPC_MRS] = {0, n->ip, n->mask, n->gw, n->flags};
    long r = sock_net_op(NET_SETCONFIG, w);
    return r ? r : (long)w[1];
}

bool netif_may_change(const struct ucall *c) { return c->proc->uid[ID_EFFECTIVE] == 0; }

long netif_set_address(uint32_t ip, uint32_t mask, bool brd)
{
    struct netif_config n;
    if (!netif_config(&n))
        return -ENODEV;
    n.ip = ip;
    n.mask = ip ? mask : 0;
    n.gw = 0;
    n.flags = (n.flags & NET_CF_UP) | (ip && brd ? NET_CF_BRD : 0);
    return apply(&n);
}

long netif_set_up(bool up)
{
    struct netif_config n;
    if (!netif_config(&n))
        return -ENODEV;
    if (!!(n.flags & NET_CF_UP) == up)
        return 0;
    n.flags = up ? n.flags | NET_CF_UP : n.flags & ~NET_CF_UP;
    n.gw = 0;
    return apply(&n);
}

long netif_gateway_check(const struct netif_config *n, uint32_t gw)
{
    bool onlink = n->ip && (gw & n->mask) == (n->ip & n->mask);
    return onlink && (n->flags & NET_CF_UP) ? 0 : -ENETUNREACH;
}

long netif_set_gateway(uint32_t gw)
{
    struct netif_config n;
    if (!netif_config(&n))
        return -ENODEV;
    long err = gw ? netif_gateway_check(&n, gw) : 0;
    n.gw = gw;
    return err ? err : apply(&n);
}

/* The server's cache has NET_ARP_ENTRIES slots (16) and says EINVAL past the last; the
 * walk stops at this many whatever it says. */
#define NEIGH_SLOTS_MAX 64

int netif_neighbours(struct netif_neigh *out, int max)
{
    int k = 0;
    for (uint64_t slot = 0; k < max && slot < NEIGH_SLOTS_MAX; slot++) {
        uint64_t w[IPC_MRS] = {0, slot};
        if (sock_net_op(NET_NEIGH, w) < 0 || (int64_t)w[1] < 0)
            break;
        if (w[1] == 0 || w[1] > NEIGH_STALE)
            continue;
        out[k] = (struct netif_neigh){.ip = (uint32_t)w[2], .state = (uint8_t)w[1]};
        mac_of(w[3], out[k].mac);
        k++;
    }
    return k;
}

bool netif_view(struct procfs_netif *v)
{
    struct netif_config n;
    uint64_t w[IPC_MRS] = {0};
    vfs_memset(v, 0, sizeof *v);
    if (!netif_config(&n) || sock_net_op(NET_IFSTATS, w) < 0)
        return false;
    *v = (struct procfs_netif){.present = true, .up = n.flags & NET_CF_UP, .ip = n.ip,
                               .mask = n.mask, .gw = n.gw,
                               .rx_frames = w[1], .rx_bytes = w[2], .tx_frames = w[3],
                               .tx_bytes = w[4], .rx_dropped = w[5], .tx_dropped = w[6]};
    return true;
}

/* An IPv4 address (host order) as the sockaddr_in of an ifreq. */
static void put_addr(struct linux_ifreq *r, uint32_t ip)
{
    vfs_memset(&r->u, 0, sizeof r->u);
    r->u.addr.family = 2;          /* AF_INET */
    r->u.addr.data[2] = (uint8_t)(ip >> 24);
    r->u.addr.data[3] = (uint8_t)(ip >> 16);
    r->u.addr.data[4] = (uint8_t)(ip >> 8);
    r->u.addr.data[5] = (uint8_t)ip;
}

/* SIOCGIFCONF: one ifreq (name and address) for the interface when it has an address;
 * a NULL buffer asks for the length needed. */
static long get_conf(struct ucall *c, uint64_t arg, const struct netif_config *n)
{
    struct linux_ifconf ifc;
    if (copy_in(c->proc, &ifc, arg, sizeof ifc))
        return -EFAULT;
    int32_t need = n->ip ? (int32_t)sizeof(struct linux_ifreq) : 0;
    if (ifc.buf && ifc.len >= need && need) {
        struct linux_ifreq r;
        vfs_memset(&r, 0, sizeof r);
        vfs_memcpy(r.name, NETIF_NAME, sizeof NETIF_NAME);
        put_addr(&r, n->ip);
        if (copy_out(c->proc, ifc.buf, &r, sizeof r))
            return -EFAULT;
    } else if (ifc.buf) {
        need = 0;
    }
    ifc.len = need;
    return copy_out(c->proc, arg, &ifc.len, sizeof ifc.len) ? -EFAULT : 0;
}

/* The answer to one SIOCGIF* request about the interface, into r. */
static long get_one(unsigned long cmd, struct linux_ifreq *r, const struct netif_config *n)
{
    bool addr = cmd == SIOCGIFADDR || cmd == SIOCGIFDSTADDR || cmd == SIOCGIFBRDADDR ||
                cmd == SIOCGIFNETMASK;
    if (addr && !n->ip)
        return -EADDRNOTAVAIL;
    vfs_memset(&r->u, 0, sizeof r->u);
    bool up = n->flags & NET_CF_UP;
    switch (cmd) {
    case SIOCGIFFLAGS: r->u.flags = (int16_t)(up ? IFF_UP | IFF_BROADCAST | IFF_RUNNING
                                                 : IFF_BROADCAST); return 0;
    case SIOCGIFADDR:
    case SIOCGIFDSTADDR: put_addr(r, n->ip); return 0;   /* not point-to-point: its own */
    case SIOCGIFBRDADDR:
        put_addr(r, n->flags & NET_CF_BRD ? n->ip | ~n->mask : 0);
        return 0;
    case SIOCGIFNETMASK: put_addr(r, n->mask); return 0;
    case SIOCGIFMETRIC: r->u.value = 0; return 0;
    case SIOCGIFMTU: r->u.value = NETIF_MTU; return 0;
    case SIOCGIFINDEX: r->u.value = NETIF_INDEX; return 0;
    case SIOCGIFTXQLEN: r->u.value = NETIF_TXQLEN; return 0;
    case SIOCGIFMAP: return 0;
    case SIOCGIFHWADDR:
        r->u.addr.family = ARPHRD_ETHER;
        vfs_memcpy(r->u.addr.data, n->mac, 6);
        return 0;
    }
    return -ENOTTY;
}

/* An ifreq's IPv4 address (host order). */
static uint32_t addr_of(const struct linux_ifreq *r)
{
    const uint8_t *d = r->u.addr.data;
    return (uint32_t)d[2] << 24 | (uint32_t)d[3] << 16 | (uint32_t)d[4] << 8 | d[5];
}

static bool good_mask(uint32_t mask) { return (~mask & (~mask + 1)) == 0; }

/* The class's netmask Linux gives an address SIOCSIFADDR sets (inet_abc_len): 0 for
 * class D and E (EINVAL). */
static uint32_t class_mask(uint32_t ip)
{
    if (!ip || ip >> 31 == 0)
        return ip ? 0xff000000u : 0;
    return ip >> 30 == 2 ? 0xffff0000u : ip >> 29 == 6 ? 0xffffff00u : 0;
}

/* SIOCSIFADDR: the address with its class's netmask and broadcast (0.0.0.0: none); the
 * same address keeps its default route. */
static long set_addr(uint32_t ip, const struct netif_config *n)
{
    uint32_t mask = class_mask(ip);
    if (ip && !mask)
        return -EINVAL;
    uint32_t gw = n->gw;
    long err = netif_set_address(ip, mask, true);
    if (!err && ip == n->ip && gw && (gw & mask) == (ip & mask))
        err = netif_set_gateway(gw);
    return err;
}

/* SIOCSIFNETMASK: needs an address; a changed mask takes the default route with it. */
static long set_mask(uint32_t mask, const struct netif_config *n)
{
    if (!n->ip)
        return -EADDRNOTAVAIL;
    if (!good_mask(mask))
        return -EINVAL;
    return mask == n->mask ? 0 : netif_set_address(n->ip, mask, n->flags & NET_CF_BRD);
}

/* SIOCSIFADDR, SIOCSIFNETMASK, SIOCSIFFLAGS (IFF_UP; the other flags stay as they are),
 * SIOCSIFMTU (EOPNOTSUPP), in Linux's order of checks: EPERM, the family, ENODEV. */
static long set_one(struct ucall *c, unsigned long cmd, uint64_t arg)
{
    struct linux_ifreq r;
    struct netif_config n;
    if (!netif_may_change(c))
        return -EPERM;
    if (copy_in(c->proc, &r, arg, sizeof r))
        return -EFAULT;
    if ((cmd == SIOCSIFADDR || cmd == SIOCSIFNETMASK) && r.u.addr.family != 2)
        return -EINVAL;
    if (vfs_memcmp(r.name, NETIF_NAME, sizeof NETIF_NAME) || !netif_config(&n))
        return -ENODEV;
    switch (cmd) {
    case SIOCSIFADDR: return set_addr(addr_of(&r), &n);
    case SIOCSIFNETMASK: return set_mask(addr_of(&r), &n);
    case SIOCSIFFLAGS: return netif_set_up(r.u.flags & IFF_UP);
    }
    return -EOPNOTSUPP;
}

static uint32_t sockaddr_ip(const struct linux_sockaddr *a)
{
    return (uint32_t)a->data[2] << 24 | (uint32_t)a->data[3] << 16 |
           (uint32_t)a->data[4] << 8 | a->data[5];
}

/* SIOCADDRT, SIOCDELRT: the default route (destination and genmask 0.0.0.0 with a
 * gateway; a device named, eth0) only; any other route is EOPNOTSUPP, a second default route too. Adding the
 * one there is is EEXIST, deleting one that is not there ESRCH, as Linux. */
static long route_ioctl(struct ucall *c, unsigned long cmd, uint64_t arg)
{
    struct linux_rtentry rt;
    struct netif_config n;
    if (!netif_may_change(c))
        return -EPERM;
    if (copy_in(c->proc, &rt, arg, sizeof rt))
        return -EFAULT;
    if (rt.dst.family != 2)
        return -EAFNOSUPPORT;
    if (rt.dev) {                              /* `dev NAME`: Linux reads 15 bytes of it */
        char name[IFNAMSIZ];
        long k = copy_in_str(c->proc, name, rt.dev, sizeof name);
        if (k == -EFAULT)
            return -EFAULT;
        if (k < 0 || vfs_memcmp(name, NETIF_NAME, sizeof NETIF_NAME))
            return -ENODEV;
    }
    uint32_t dst = sockaddr_ip(&rt.dst), mask = sockaddr_ip(&rt.genmask);
    uint32_t gw = rt.gateway.family == 2 ? sockaddr_ip(&rt.gateway) : 0;
    if (cmd == SIOCADDRT && (rt.flags & RTF_GATEWAY) && !gw)
        return -EINVAL;
    if (!netif_config(&n))
        return -ENODEV;
    bool is_default = !dst && !mask && !(rt.flags & RTF_HOST);
    if (cmd == SIOCDELRT)
        return !is_default || !n.gw || (gw && gw != n.gw) ? -ESRCH : netif_set_gateway(0);
    if (!is_default || !gw)
        return -EOPNOTSUPP;
    long err = netif_gateway_check(&n, gw);
    if (err)
        return err;
    if (n.gw)
        return n.gw == gw ? -EEXIST : -EOPNOTSUPP;
    return netif_set_gateway(gw);
}

long netif_ioctl(struct ucall *c, unsigned long cmd, uint64_t arg)
{
    if (cmd == SIOCSIFADDR || cmd == SIOCSIFNETMASK || cmd == SIOCSIFFLAGS || cmd == SIOCSIFMTU)
        return set_one(c, cmd, arg);
    if (cmd == SIOCADDRT || cmd == SIOCDELRT)
        return route_ioctl(c, cmd, arg);
    struct linux_ifreq r;
    struct netif_config n;
    if (!netif_config(&n))
        return -ENODEV;
    if (cmd == SIOCGIFCONF)
        return get_conf(c, arg, &n);
    if (cmd < SIOC_FIRST || cmd > SIOC_LAST)
        return -ENOTTY;                    /* not a socket request at all (TCGETS...) */
    if (copy_in(c->proc, &r, arg, sizeof r))
        return -EFAULT;
    if (cmd == SIOCGIFNAME) {              /* by index */
        if (r.u.value != NETIF_INDEX)
            return -ENODEV;
        vfs_memset(r.name, 0, sizeof r.name);
        vfs_memcpy(r.name, NETIF_NAME, sizeof NETIF_NAME);
    } else {
        if (vfs_memcmp(r.name, NETIF_NAME, sizeof NETIF_NAME))
            return -ENODEV;
        long err = get_one(cmd, &r, &n);
        if (err)
            return err;
    }
    return copy_out(c->proc, arg, &r, sizeof r) ? -EFAULT : 0;
}
