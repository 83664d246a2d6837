/* AF_NETLINK/NETLINK_ROUTE sockets (netlink.c; docs/net.md, "Netlink"): port ids, the
 * three dumps busybox ip uses with their contents, NLMSG_ERROR for what is not supported
 * and for bad requests, acknowledgements, MSG_PEEK/MSG_TRUNC/EAGAIN, and a seeded fuzz
 * of malformed sends (truncated headers and attributes, bad lengths, random bytes) under
 * ASan and UBSan: every send answers its length or an error, every queued answer is a
 * well-formed datagram of whole messages; the configuration changes. The network server
 * is faked here: op config says 10.79.0.2/24 via 10.79.0.1, MAC 52:54:00:12:34:56, until
 * op setconfig changes it. */
#include <stdio.h>
#include "net_server.h"
#include "vfs_test.h"
#include "netlink_abi.h"

#define AF_NETLINK 16
#define SOCK_STREAM 1
#define SOCK_RAW 3
#define MSG_PEEK 2
#define MSG_TRUNC 0x20
#define MSG_DONTWAIT 0x40
#define ESOCKTNOSUPPORT 94
#define EPROTONOSUPPORT 93
#define ECONNREFUSED 111
#define ENODEV 19
#define EMSGSIZE 90
#define ENOBUFS 105
#define EADDRNOTAVAIL 99
#define ENETUNREACH 101

struct nlh {
    uint32_t len;
    uint16_t type, flags;
    uint32_t seq, pid;
};

static bool net_up = true;

/* The network server's configuration (ip, mask, gw, flags), as op setconfig left it. */
static const uint64_t boot_cfg[4] = {0x0a4f0002, 0xffffff00, 0x0a4f0001, NET_CF_UP | NET_CF_BRD};
static uint64_t cfg[4] = {0x0a4f0002, 0xffffff00, 0x0a4f0001, NET_CF_UP | NET_CF_BRD};

/* The network server, faked: op config, op ifstats, op setconfig (taking any words: the
 * real server's checks are tested with it), op neigh (slot 0 holds 10.79.0.1, reachable;
 * 16 slots); nothing else. */
long rt_srv_call(unsigned iface, uint64_t w[IPC_MRS], const void *in, size_t in_len,
                 void *out, size_t out_cap, size_t *out_len)
{
    (void)iface; (void)in; (void)in_len; (void)out; (void)out_cap;
    if (out_len)
        *out_len = 0;
    unsigned op = srv_label_op(w[0]);
    if (!net_up)
        return E_NOENT;
    if (op == NET_SETCONFIG) {
        memcpy(cfg, w + 1, sizeof cfg);
        w[1] = 0;
    } else if (op == NET_NEIGH) {
        w[1] = w[1] >= 16 ? (uint64_t)-22 : w[1] == 0 ? 2 : 0;
        w[2] = 0x0a4f0001;
        w[3] = 0x020000000001ull;
    } else if (op == NET_CONFIG) {
        w[1] = cfg[0];
        w[2] = cfg[1];
        w[3] = cfg[2];
        w[4] = 0x525400123456ull;
        w[5] = cfg[3];
    } else if (op == NET_IFSTATS) {
        for (int i = 1; i < 7; i++)
            w[i] = (uint64_t)i * 10;
    } else {
        return E_NOENT;
    }
    return 0;
}

static long nl_open(void)
{
    long fd = SYS(socket, AF_NETLINK, SOCK_RAW, 0);
    CHECK(fd >= 0);
    uint64_t a = ubuf(12);
    *(uint16_t *)host(a) = AF_NETLINK;
    CHECK_EQ(SYS(bind, (uint64_t)fd, a, 12), 0);
    return fd;
}

/* Send one request of `type` with `flags` and a body. */
static long request(long fd, uint16_t type, uint16_t flags, uint32_t seq, const void *body,
                    uint32_t n)
{
    uint64_t u = ubuf(sizeof(struct nlh) + n);
    struct nlh h = {.len = (uint32_t)sizeof h + n, .type = type, .flags = flags, .seq = seq};
    memcpy(host(u), &h, sizeof h);
    memcpy((char *)host(u) + sizeof h, body, n);
    return SYS(sendto, (uint64_t)fd, u, h.len, 0, 0, 0);
}

/* recvmsg into buf (cap bytes): the count; *mflags msg_flags, the source checked to be the
 * kernel's (AF_NETLINK, port 0, namelen 12). */
static long receive(long fd, void *buf, size_t cap, long flags, int32_t *mflags)
{
    uint64_t data = ubuf(cap), name = ubuf(12), iov = ubuf(16), msg = ubuf(56);
    uint64_t v[2] = {data, cap};
    memcpy(host(iov), v, sizeof v);
    uint64_t m[7] = {name, 12, iov, 1, 0, 0, 0};
    memcpy(host(msg), m, sizeof m);
    long r = SYS(recvmsg, (uint64_t)fd, msg, (uint64_t)flags);
    if (r < 0)
        return r;
    uint32_t namelen;
    memcpy(&namelen, (char *)host(msg) + 8, 4);
    CHECK_EQ(namelen, 12);
    CHECK_EQ(*(uint16_t *)host(name), AF_NETLINK);
    CHECK_EQ(*(uint32_t *)((char *)host(name) + 4), 0);
    memcpy(mflags, (char *)host(msg) + 48, 4);
    memcpy(buf, host(data), (size_t)r < cap ? (size_t)r : cap);
    return r;
}

/* The attribute `type` of a message whose fixed part is `fixed` bytes, or NULL. */
static const unsigned char *attr_of(const unsigned char *msg, uint32_t fixed, uint16_t type,
                                    uint16_t *len)
{
    struct nlh h;
    memcpy(&h, msg, sizeof h);
    uint32_t off = (uint32_t)sizeof h + ((fixed + 3) & ~3u);
    while (off + 4 <= h.len) {
        uint16_t l, t;
        memcpy(&l, msg + off, 2);
        memcpy(&t, msg + off + 2, 2);
        CHECK(l >= 4 && off + l <= h.len);
        if (t == type) {
            *len = (uint16_t)(l - 4);
            return msg + off + 4;
        }
        off += (l + 3u) & ~3u;
    }
    return NULL;
}

/* A dump: the entries' datagram (returned in buf, their count in *count; none when the
 * dump is empty), then NLMSG_DONE. Every message has the request's seq, the socket's
 * port and NLM_F_MULTI. */
static long dump(long fd, uint16_t type, uint8_t family, uint32_t seq, unsigned char *buf,
                 size_t cap, int *count)
{
    CHECK_EQ(request(fd, type, NLM_F_REQUEST | NLM_F_DUMP, seq, &family, 1), 17);
    int32_t mf;
    long n = receive(fd, buf, cap, MSG_DONTWAIT, &mf);
    CHECK(n >= 20 && mf == 0);
    *count = 0;
    bool done = false;
    for (long off = 0; off < n;) {
        struct nlh h;
        memcpy(&h, buf + off, sizeof h);
        CHECK(h.len >= sizeof h && off + h.len <= n && h.seq == seq && h.pid == 1);
        CHECK_EQ(h.flags, NLM_F_MULTI);
        done = h.type == NLMSG_DONE;
        CHECK(done ? h.len == 20 && n == 20 : h.type == type - 2);
        *count += !done;
        off += (h.len + 3) & ~3u;
    }
    unsigned char last[64];
    if (!done) {
        CHECK_EQ(receive(fd, last, sizeof last, MSG_DONTWAIT, &mf), 20);
        struct nlh h;
        memcpy(&h, last, sizeof h);
        CHECK(h.type == NLMSG_DONE && h.flags == NLM_F_MULTI && h.seq == seq && h.len == 20);
    }
    CHECK_EQ(receive(fd, last, sizeof last, MSG_DONTWAIT, &mf), -EAGAIN);
    return n;
}

static void test_socket_and_ports(void)
{
    CHECK_EQ(SYS(socket, AF_NETLINK, SOCK_STREAM, 0), -ESOCKTNOSUPPORT);
    CHECK_EQ(SYS(socket, AF_NETLINK, SOCK_RAW, 99), -EPROTONOSUPPORT);
    long a = nl_open(), b = nl_open();
    uint64_t sa = ubuf(16), len = ubuf(4);
    *(int32_t *)host(len) = 16;
    CHECK_EQ(SYS(getsockname, (uint64_t)a, sa, len), 0);
    CHECK_EQ(*(int32_t *)host(len), 12);
    CHECK_EQ(*(uint32_t *)((char *)host(sa) + 4), 1);            /* the process id */
    CHECK_EQ(SYS(getsockname, (uint64_t)b, sa, len), 0);
    CHECK_EQ(*(uint32_t *)((char *)host(sa) + 4), 0xfffff000u);   /* Linux's -4096 */
    long c = SYS(socket, AF_NETLINK, 2, 0);                      /* SOCK_DGRAM */
    uint64_t v = ubuf(4), vlen = ubuf(4);
    *(int32_t *)host(vlen) = 4;
    CHECK(SYS(getsockopt, (uint64_t)c, 1, 3, v, vlen) == 0 && *(int32_t *)host(v) == 2);
    *(uint32_t *)((char *)host(sa) + 4) = 1;
    CHECK_EQ(SYS(bind, (uint64_t)c, sa, 12), -EADDRINUSE);
    CHECK_EQ(SYS(bind, (uint64_t)c, sa, 8), -EINVAL);
    CHECK_EQ(SYS(bind, (uint64_t)c, BADPTR, 12), -EFAULT);
    CHECK_EQ(SYS(connect, (uint64_t)c, sa, 12), -ECONNREFUSED);   /* port 1 is no kernel */
    CHECK_EQ(SYS(sendto, (uint64_t)c, ubuf(20), 20, 0, sa, 12), -ECONNREFUSED);
    CHECK_EQ(SYS(listen, (uint64_t)c, 1), -EOPNOTSUPP);
    SYS(close, (uint64_t)a);
    SYS(close, (uint64_t)b);
    SYS(close, (uint64_t)c);
}

static void test_dumps(void)
{
    long fd = nl_open();
    unsigned char buf[8192];
    int count;
    uint16_t n;
    dump(fd, RTM_GETLINK, 0, 7, buf, sizeof buf, &count);
    CHECK_EQ(count, 1);
    CHECK_EQ(*(int32_t *)(buf + 16 + 4), 1);                      /* ifi_index */
    CHECK(!strcmp((const char *)attr_of(buf, 16, 3, &n), "eth0"));
    CHECK(!memcmp(attr_of(buf, 16, 1, &n), "\x52\x54\x00\x12\x34\x56", 6) && n == 6);

    dump(fd, RTM_GETADDR, 2, 8, buf, sizeof buf, &count);
    CHECK_EQ(count, 1);
    CHECK(buf[16] == 2 && buf[17] == 24);                         /* AF_INET, /24 */
    CHECK(!memcmp(attr_of(buf, 8, 2, &n), "\x0a\x4f\x00\x02", 4));
    CHECK(!memcmp(attr_of(buf, 8, 4, &n), "\x0a\x4f\x00\xff", 4));
    dump(fd, RTM_GETADDR, 10, 9, buf, sizeof buf, &count);        /* AF_INET6: none */
    CHECK_EQ(count, 0);

    long len = dump(fd, RTM_GETROUTE, 0, 10, buf, sizeof buf, &count);
    CHECK_EQ(count, 4);                                           /* main, then local */
    CHECK_EQ(buf[16 + 1], 0);                                     /* default first */
    CHECK(!memcmp(attr_of(buf, 12, 5, &n), "\x0a\x4f\x00\x01", 4));
    uint32_t first = *(uint32_t *)buf;
    CHECK(first < (uint32_t)len && buf[first + 16 + 1] == 24);
    CHECK(!memcmp(attr_of(buf + first, 12, 1, &n), "\x0a\x4f\x00\x00", 4));
    uint32_t second = first + *(uint32_t *)(buf + first);
    CHECK(buf[second + 16 + 4] == 255 && buf[second + 16 + 7] == 2);   /* local table, local */
    CHECK(!memcmp(attr_of(buf + second, 12, 1, &n), "\x0a\x4f\x00\x02", 4));

    uint8_t fam = 0;                                              /* NLM_F_ROOT alone */
    CHECK_EQ(request(fd, RTM_GETLINK, NLM_F_REQUEST | 0x100, 12, &fam, 1), 17);
    int32_t mf;
    CHECK(receive(fd, buf, sizeof buf, MSG_DONTWAIT, &mf) > 16 && buf[4] == RTM_NEWLINK);
    CHECK_EQ(receive(fd, buf, sizeof buf, MSG_DONTWAIT, &mf), 20);
    net_up = false;                                               /* no network server */
    dump(fd, RTM_GETLINK, 0, 11, buf, sizeof buf, &count);
    CHECK_EQ(count, 0);
    net_up = true;
    SYS(close, (uint64_t)fd);
}

/* The NLMSG_ERROR answer to the last request: its error; the echoed request's length. */
static int32_t error_of(long fd, uint32_t seq, uint32_t *echoed, uint16_t *flags)
{
    unsigned char buf[512];
    int32_t mf;
    long n = receive(fd, buf, sizeof buf, MSG_DONTWAIT, &mf);
    CHECK(n >= 36);
    struct nlh h, req;
    memcpy(&h, buf, sizeof h);
    CHECK(h.type == NLMSG_ERROR && h.seq == seq && h.len == n);
    memcpy(&req, buf + 20, sizeof req);
    *echoed = (uint32_t)n - 36;
    *flags = h.flags;
    return *(int32_t *)(buf + 16);
}

static void test_errors_and_acks(void)
{
    long fd = nl_open();
    uint32_t echoed;
    uint16_t flags;
    unsigned char body[16] = {0};
    CHECK_EQ(request(fd, RTM_NEWNEIGH, NLM_F_REQUEST, 1, body, 12), 28);
    CHECK_EQ(error_of(fd, 1, &echoed, &flags), -EOPNOTSUPP);
    CHECK(echoed == 12 && flags == 0);                            /* the whole request */
    CHECK_EQ(request(fd, RTM_NEWADDR, NLM_F_REQUEST, 2, body, 8), 24);
    CHECK_EQ(error_of(fd, 2, &echoed, &flags), -EOPNOTSUPP);      /* family 0: not AF_INET */
    vt_proc->uid[ID_EFFECTIVE] = 1000;
    CHECK_EQ(request(fd, RTM_NEWROUTE, NLM_F_REQUEST, 3, body, 12), 28);
    CHECK_EQ(error_of(fd, 3, &echoed, &flags), -EPERM);
    vt_proc->uid[ID_EFFECTIVE] = 0;
    CHECK_EQ(request(fd, 200, NLM_F_REQUEST, 4, body, 4), 20);
    CHECK_EQ(error_of(fd, 4, &echoed, &flags), -EOPNOTSUPP);      /* above RTM_MAX */

    /* RTM_GETLINK of one link: by index, by name, neither; with an acknowledgement */
    *(int32_t *)(body + 4) = 5;
    request(fd, RTM_GETLINK, NLM_F_REQUEST, 5, body, 16);
    CHECK_EQ(error_of(fd, 5, &echoed, &flags), -ENODEV);
    *(int32_t *)(body + 4) = 0;
    request(fd, RTM_GETLINK, NLM_F_REQUEST, 6, body, 16);
    CHECK_EQ(error_of(fd, 6, &echoed, &flags), -EINVAL);
    unsigned char named[28] = {0};
    memcpy(named + 16, "\x09\x00\x03\x00" "eth0", 8);             /* IFLA_IFNAME, len 9 */
    request(fd, RTM_GETLINK, NLM_F_REQUEST | NLM_F_ACK, 7, named, 25);
    unsigned char buf[1024];
    int32_t mf;
    long n = receive(fd, buf, sizeof buf, MSG_DONTWAIT, &mf);
    struct nlh h;
    memcpy(&h, buf, sizeof h);
    CHECK(n > 16 && h.type == RTM_NEWLINK && h.flags == 0 && h.seq == 7);
    CHECK_EQ(error_of(fd, 7, &echoed, &flags), 0);
    CHECK(echoed == 0 && flags == NLM_F_CAPPED);
    memcpy(named + 16, "\x30\x00\x03\x00", 4);                    /* longer than the data */
    request(fd, RTM_GETLINK, NLM_F_REQUEST, 8, named, 25);
    CHECK_EQ(error_of(fd, 8, &echoed, &flags), -EINVAL);

    /* no NLM_F_REQUEST, or a control type: nothing; a bad length ends the send quietly */
    request(fd, RTM_GETLINK, NLM_F_DUMP, 9, body, 1);
    request(fd, 1, NLM_F_REQUEST, 9, body, 1);
    uint64_t u = ubuf(40);
    struct nlh bad = {.len = 400, .type = RTM_GETLINK, .flags = NLM_F_REQUEST | NLM_F_DUMP};
    memcpy(host(u), &bad, sizeof bad);
    CHECK_EQ(SYS(sendto, (uint64_t)fd, u, 40, 0, 0, 0), 40);
    CHECK_EQ(receive(fd, buf, sizeof buf, MSG_DONTWAIT, &mf), -EAGAIN);
    SYS(close, (uint64_t)fd);
}

static void test_peek_trunc(void)
{
    long fd = nl_open();
    unsigned char buf[256];
    int32_t mf;
    uint8_t fam = 0;
    request(fd, RTM_GETROUTE, NLM_F_REQUEST | NLM_F_DUMP, 3, &fam, 1);
    long full = receive(fd, buf, sizeof buf, MSG_PEEK, &mf);
    CHECK(full > 60 && mf == 0);
    CHECK_EQ(receive(fd, buf, 16, MSG_TRUNC, &mf), full);          /* the whole length */
    CHECK_EQ(mf, MSG_TRUNC);
    CHECK_EQ(receive(fd, buf, 8, MSG_DONTWAIT, &mf), 8);                      /* DONE, cut: lost */
    CHECK_EQ(mf, MSG_TRUNC);
    CHECK_EQ(receive(fd, buf, sizeof buf, MSG_DONTWAIT, &mf), -EAGAIN);
    SYS(close, (uint64_t)fd);
}

/* Every answer queued on fd is a datagram of whole, aligned messages. */
static void drain_checked(long fd)
{
    unsigned char buf[8192];
    int32_t mf;
    long n;
    while ((n = receive(fd, buf, sizeof buf, MSG_DONTWAIT, &mf)) != -EAGAIN) {
        if (n == -ENOBUFS)
            continue;
        CHECK(n >= 16 && mf == 0);
        for (long off = 0; off < n;) {
            uint32_t len;
            memcpy(&len, buf + off, 4);
            CHECK(len >= 16 && off + len <= n);
            off += (len + 3) & ~3u;
        }
    }
}

static uint64_t rng = 0x9e3779b97f4a7c15ull;
static uint32_t next(void)
{
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return (uint32_t)rng;
}

/* Malformed sends: a valid request's bytes mutated, cut, or padded with random ones. */
static void test_fuzz(void)
{
    long fd = nl_open();
    static const unsigned char seed[] = {
        0x20, 0, 0, 0, RTM_GETLINK, 0, 0x05, 0x03, 1, 0, 0, 0, 0, 0, 0, 0,
        0, 0, 0, 0, 0, 0, 0, 0, 0x09, 0, 0x03, 0, 'e', 't', 'h', '0'};
    unsigned char msg[600];
    uint64_t u = ubuf(sizeof msg);
    for (int i = 0; i < 200000; i++) {
        uint32_t n = next() % sizeof msg;
        for (uint32_t k = 0; k < n; k++)
            msg[k] = k < sizeof seed && next() % 8 ? seed[k] : (uint8_t)next();
        if (n >= 4 && next() % 2) {                                 /* a plausible length */
            uint32_t len = next() % (n + 8);
            memcpy(msg, &len, 4);
        }
        if (n >= 6 && next() % 2)
            msg[4] = (uint8_t)(16 + next() % 16);                   /* an rtnetlink type */
        memcpy(host(u), msg, n);
        CHECK_EQ(SYS(sendto, (uint64_t)fd, u, n, 0, 0, 0), n);
        if (i % 16 == 0)
            drain_checked(fd);
    }
    drain_checked(fd);
    CHECK_EQ(SYS(sendto, (uint64_t)fd, ubuf(20000), 20000, 0, 0, 0), -EMSGSIZE);
    SYS(close, (uint64_t)fd);
}

/* A request with `fixed` (n bytes) and one IPv4 address attribute (type, ip host order;
 * type 0: none); returns the NLMSG_ERROR's errno (0: acknowledged). */
static int32_t change(long fd, uint16_t type, uint16_t flags, const void *fixed, uint32_t n,
                      uint16_t atype, uint32_t ip)
{
    unsigned char body[64] = {0};
    memcpy(body, fixed, n);
    uint32_t len = (n + 3) & ~3u;
    if (atype) {
        uint16_t a[2] = {8, atype};
        uint8_t v[4] = {(uint8_t)(ip >> 24), (uint8_t)(ip >> 16), (uint8_t)(ip >> 8), (uint8_t)ip};
        memcpy(body + len, a, 4);
        memcpy(body + len + 4, v, 4);
        len += 8;
    }
    request(fd, type, (uint16_t)(NLM_F_REQUEST | NLM_F_ACK | flags), 40, body, len);
    uint32_t echoed;
    uint16_t f;
    return error_of(fd, 40, &echoed, &f);
}

/* Changes through the faked op setconfig: the one address, the one default route, their
 * errors, ip route get, the neighbour dump (docs/net.md, "Changing the configuration"). */
static void test_changes(void)
{
    long fd = nl_open();
    uint8_t ifa[8] = {2, 24, 0, 0, 1, 0, 0, 0};                    /* AF_INET, /24, eth0 */
    CHECK_EQ(change(fd, RTM_NEWADDR, NLM_F_CREATE, ifa, 8, 2, 0x0a4f0009), -EOPNOTSUPP);
    CHECK_EQ(change(fd, RTM_NEWADDR, NLM_F_CREATE, ifa, 8, 2, 0x0a4f0002), -EEXIST);
    CHECK_EQ(change(fd, RTM_DELADDR, 0, ifa, 8, 2, 0x0a4f0002), 0);
    CHECK(cfg[0] == 0 && cfg[2] == 0 && cfg[3] == NET_CF_UP);     /* the route went too */
    CHECK_EQ(change(fd, RTM_DELADDR, 0, ifa, 8, 2, 0x0a4f0002), -EADDRNOTAVAIL);
    CHECK_EQ(change(fd, RTM_NEWADDR, NLM_F_CREATE, ifa, 8, 0, 0), -EINVAL);   /* no local */
    CHECK_EQ(change(fd, RTM_NEWADDR, NLM_F_CREATE, ifa, 8, 2, 0x0a4f0009), 0);
    CHECK(cfg[0] == 0x0a4f0009 && cfg[1] == 0xffffff00 && cfg[3] == NET_CF_UP);   /* no brd */
    uint8_t rt[12] = {2, 0, 0, 0, 254, 3, 0, 1};                  /* default, main, unicast */
    uint16_t excl = NLM_F_CREATE | NLM_F_EXCL;
    CHECK_EQ(change(fd, RTM_NEWROUTE, excl, rt, 12, 5, 0x0a630001), -ENETUNREACH);
    CHECK_EQ(change(fd, RTM_NEWROUTE, NLM_F_REPLACE, rt, 12, 5, 0x0a4f0001), -ENOENT);
    CHECK_EQ(change(fd, RTM_NEWROUTE, excl, rt, 12, 5, 0x0a4f0001), 0);
    CHECK(cfg[2] == 0x0a4f0001);
    CHECK_EQ(change(fd, RTM_NEWROUTE, excl, rt, 12, 5, 0x0a4f0001), -EEXIST);
    CHECK_EQ(change(fd, RTM_NEWROUTE, NLM_F_CREATE, rt, 12, 5, 0x0a4f0003), -EOPNOTSUPP);
    rt[1] = 16;                                                   /* not the default */
    CHECK_EQ(change(fd, RTM_NEWROUTE, excl, rt, 12, 1, 0x0a090000), -EOPNOTSUPP);
    CHECK_EQ(change(fd, RTM_DELROUTE, 0, rt, 12, 1, 0x0a090000), -ESRCH);

    /* ip route get 10.78.0.5: through the gateway, from the address */
    unsigned char get[20] = {2};
    memcpy(get + 12, "\x08\x00\x01\x00\x0a\x4e\x00\x05", 8);      /* RTA_DST */
    CHECK_EQ(request(fd, RTM_GETROUTE, NLM_F_REQUEST, 41, get, 20), 36);
    unsigned char buf[512];
    int32_t mf;
    uint16_t n;
    CHECK(receive(fd, buf, sizeof buf, MSG_DONTWAIT, &mf) > 28 && buf[4] == RTM_NEWROUTE);
    CHECK(!memcmp(attr_of(buf, 12, 5, &n), "\x0a\x4f\x00\x01", 4));   /* RTA_GATEWAY */
    CHECK(!memcmp(attr_of(buf, 12, 7, &n), "\x0a\x4f\x00\x09", 4));   /* RTA_PREFSRC */
    rt[1] = 0;
    CHECK_EQ(change(fd, RTM_DELROUTE, 0, rt, 12, 0, 0), 0);
    CHECK_EQ(change(fd, RTM_DELROUTE, 0, rt, 12, 0, 0), -ESRCH);
    CHECK_EQ(change(fd, RTM_GETROUTE, 0, rt, 12, 1, 0x0a4e0005), -ENETUNREACH);

    /* ip neigh: the one entry */
    int count;
    dump(fd, RTM_GETNEIGH, 0, 42, buf, sizeof buf, &count);
    CHECK_EQ(count, 1);
    CHECK(!memcmp(attr_of(buf, 12, 1, &n), "\x0a\x4f\x00\x01", 4) && buf[16 + 8] == 2);
    memcpy(cfg, boot_cfg, sizeof cfg);
    SYS(close, (uint64_t)fd);
}

int main(void)
{
    vfs_test_begin();
    test_socket_and_ports();
    test_dumps();
    test_errors_and_acks();
    test_changes();
    test_peek_trunc();
    test_fuzz();
    vfs_test_end();
    return fake_done();
}
