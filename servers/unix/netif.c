/*
 * The network interface as Linux programs see it (docs/net.md, "Sockets of Linux
 * programs"): the read-only interface ioctls on any socket (busybox ifconfig) and the
 * view behind /proc/net/dev and /proc/net/route (procfs.c formats them; ifconfig and
 * route read them). ondol has one interface, NETIF_NAME, the network server's virtio-net
 * device, and no loopback; its address, netmask, gateway and MAC come from op config, its
 * traffic from op ifstats. Changing them (SIOCSIF*, SIOCADDRT) is -EOPNOTSUPP: the
 * address is a boot option (ip=, gw=) or DHCP's.
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
#define ENODEV 19
#define EADDRNOTAVAIL 99


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

bool netif_config(struct netif_config *n)
{
    uint64_t w[IPC_MRS] = {0};
    if (sock_net_op(NET_CONFIG, w) < 0)
        return false;
    n->ip = (uint32_t)w[1];
    n->mask = (uint32_t)w[2];
    n->gw = (uint32_t)w[3];
    for (int i = 0; i < 6; i++)
        n->mac[i] = (uint8_t)(w[4] >> (40 - 8 * i));
    return true;
}

bool netif_view(struct procfs_netif *v)
{
    struct netif_config n;
    uint64_t w[IPC_MRS] = {0};
    vfs_memset(v, 0, sizeof *v);
    if (!netif_config(&n) || sock_net_op(NET_IFSTATS, w) < 0)
        return false;
    *v = (struct procfs_netif){.present = true, .ip = n.ip, .mask = n.mask, .gw = n.gw,
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
    switch (cmd) {
    case SIOCGIFFLAGS: r->u.flags = IFF_UP | IFF_BROADCAST | IFF_RUNNING; return 0;
    case SIOCGIFADDR:
    case SIOCGIFDSTADDR: put_addr(r, n->ip); return 0;   /* not point-to-point: its own */
    case SIOCGIFBRDADDR: put_addr(r, n->ip | ~n->mask); return 0;
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

static bool settable(unsigned long cmd)
{
    return cmd == SIOCSIFFLAGS || cmd == SIOCSIFADDR || cmd == SIOCSIFNETMASK ||
           cmd == SIOCSIFMTU || cmd == SIOCADDRT || cmd == SIOCDELRT;
}

long netif_ioctl(struct ucall *c, unsigned long cmd, uint64_t arg)
{
    if (settable(cmd))
        return -EOPNOTSUPP;
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
