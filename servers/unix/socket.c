/*
 * AF_INET sockets of Linux programs (docs/unix.md "Sockets", docs/net.md "Sockets of Linux
 * programs"): a socket is an open file whose state lives in the network server's stack;
 * this file maps the Linux calls onto the server's ops (interfaces/net.idl), which never
 * wait. The dependency is one-way: the UNIX server calls the network server
 * (rt_srv_call), never the reverse.
 *
 * Waiting: a call that cannot go on (read with no data, accept with an empty queue,
 * connect during the handshake, write into a full send ring) is parked on sock_waiters
 * with ucall_block, as a pipe read is; no Linux call ever waits inside the network
 * server, so a blocked accept holds up no other process. Parked calls and waiting
 * poll/select run again whenever the stack's activity count (frames received, timer
 * runs) changed. Who tells: with net_thread (the default) the runtime's event thread
 * (rt_net_watch), which waits in the network server's op waitevents and passes each new
 * count to unix_net_event, so a call runs again right after the interrupt that made it
 * ready. With net_thread=off, while any socket is open, a timer of the server's own (the
 * pulse, every PULSE_NS) asks the network server to run its stack once and returns the
 * count: up to one pulse of latency for a call that waited.
 *
 * Addresses: struct sockaddr_in, port and address in network byte order; the stack's are
 * host order. Results of the stack are negated Linux errno values, passed through.
 */
#include "runtime.h"
#include "socket.h"
#include "net_server.h"            /* the generated op numbers (NET_IFACE, NET_OPEN...) */

#define PULSE_NS 10000000ull       /* 10 ms: one kernel tick at hz=100 */
#define CHUNK 4096u                /* bytes per call to the network server (its buffer) */
#define STREAM 1                   /* the stack's NET_SOCK_STREAM / _DGRAM / _RAW */
#define DGRAM 2
#define RAW 3                      /* raw ICMP (ping): datagram calls, the IP header in */
#define PING 4                     /* a ping socket (ping.c): the stack's RAW underneath */
#define UDP_MAX 1472u              /* one Ethernet frame's UDP payload */
#define RAW_MAX 1480u              /* ...and an ICMP message's */
#define SOCK_BUF 65536             /* the stack's fixed per-socket rings (SO_RCVBUF) */

#define IPPROTO_ICMP 1
#define IPPROTO_TCP 6
#define IPPROTO_UDP 17
#define SO_REUSEADDR 2
#define SO_ERROR 4
#define SO_BROADCAST 6
#define SO_KEEPALIVE 9
#define SO_LINGER 13
#define SO_RCVTIMEO 20
#define SO_SNDTIMEO 21
#define TCP_NODELAY 1
#define NET_OPT_NODELAY 1
#define NET_OPT_KEEPALIVE 2
#define MSG_NOSIGNAL 0x4000
#define SHUT_RD 0
#define SHUT_WR 1
#define SHUT_RDWR 2

struct linux_sockaddr_in {
    uint16_t family;
    uint16_t port;                 /* network order */
    uint32_t addr;                 /* network order */
    uint8_t zero[8];
};

struct linux_msghdr {
    uint64_t name;
    uint32_t namelen, pad0;
    uint64_t iov, iovlen, control, controllen;
    int32_t flags, pad1;
};

struct usock {
    int sd;                        /* the network server's socket */
    int type;                      /* STREAM, DGRAM or RAW (also for a ping socket) */
    uint16_t ping_id;              /* a ping socket's echo identifier; 0: not one */
    bool connecting;               /* a TCP connect whose handshake has not ended */
    bool rd_shut;                  /* shutdown(SHUT_RD): reads return 0 */
    bool has_peer;                 /* UDP connect: the default destination */
    uint32_t peer_ip;
    uint16_t peer_port;
    int opts[16];                  /* stored SOL_SOCKET values (REUSEADDR, LINGER...) */
    uint64_t timeo_ns[2];          /* SO_RCVTIMEO, SO_SNDTIMEO (0: wait for ever) */
};

enum { RCV, SND };                 /* timeo_ns[]: which direction's timeout */

static struct waitlist sock_waiters;
static unsigned open_socks;
static uint64_t seen_gen;
static unsigned char chunk[CHUNK];
/* The data channel (docs/net.md, "The data channel"): a window of ours the network server
 * maps, through which stream data moves (ops chwrite, chread) instead of the IPC buffer;
 * NULL when the server takes none (IK, or it refused): then chunk and the buffer ops. */
#define CHANNEL_SIZE SOCK_BUF
static unsigned char *channel;
static const struct file_ops sock_ops;

/* ---- the network server ---- */

#define NET_TIMEOUT_S 20            /* net_timeout's default (kernel/boot/options.def) */

uint64_t unix_net_timeout_s(void)
{
    char v[12];
    if (rt_option("net_timeout", v, sizeof v) <= 0)
        return NET_TIMEOUT_S;
    uint64_t s = 0;
    for (const char *p = v; *p >= '0' && *p <= '9'; p++)
        s = s * 10 + (uint64_t)(*p - '0');
    return s;
}

/* One op: the stack's result (w[1]: a count, 0 or -errno), or -ENETDOWN when the server
 * is not there or failed. */
static long net(unsigned op, uint64_t w[IPC_MRS], const void *in, size_t in_len, void *out,
                size_t cap, size_t *out_len)
{
    w[0] = SRV_LABEL(NET_IFACE, op, cap);
    long r = rt_srv_call(NET_IFACE, w, in, in_len, out, cap, out_len);
    if (r == E_PERM)
        return -EPERM;                 /* a privileged op refused (the server said so) */
    return r < 0 ? -ENETDOWN : (long)w[1];
}

long sock_net_op(unsigned op, uint64_t w[IPC_MRS])
{
    long r = net(op, w, NULL, 0, NULL, 0, NULL);
    return r == -ENETDOWN || r == -EPERM ? r : 0;
}

static long net_words(unsigned op, uint64_t a, uint64_t b, uint64_t c, uint64_t w[IPC_MRS])
{
    w[1] = a;
    w[2] = b;
    w[3] = c;
    return net(op, w, NULL, 0, NULL, 0, NULL);
}

static long net1(unsigned op, uint64_t a, uint64_t b, uint64_t c)
{
    uint64_t w[IPC_MRS] = {0};
    return net_words(op, a, b, c, w);
}

static void pulse_fire(struct unix_timer *t);
static struct unix_timer pulse = {.fire = pulse_fire};

/* The pulse: run the stack once; wake the parked calls when something happened there. It
 * goes on while a socket is open or the stack still holds one (a closing connection). */
static void pulse_fire(struct unix_timer *t)
{
    uint64_t w[IPC_MRS] = {0};
    long r = net(NET_PULSE, w, NULL, 0, NULL, 0, NULL);
    if (r < 0) {
        poll_wake(&sock_waiters);   /* the server failed: the parked calls get its error */
        return;
    }
    if (w[1] != seen_gen) {
        seen_gen = w[1];
        poll_wake(&sock_waiters);
    }
    if (open_socks || w[2])
        unix_timer_arm(t, unix_now_ns() + PULSE_NS);
}

/* A new count from the event thread (runtime.h), or UNIX_NET_GONE: wake the parked calls
 * (after the server's failure their ops fail: -ENETDOWN). */
void unix_net_event(uint64_t gen)
{
    if (gen != seen_gen) {
        seen_gen = gen;
        poll_wake(&sock_waiters);
    }
}

/* Once, at the first socket (unless net_channel=off): make the window and offer it to the
 * network server; its answer may name a thread for our calls without buffers (their IPC
 * fastpath). */
static void channel_open(void)
{
    static bool tried;
    uint64_t handle;
    unsigned char *data;
    char v[8];
    if (tried || (rt_option("net_channel", v, sizeof v) > 0 && v[0] == 'o' && v[1] == 'f'))
        return;
    tried = true;
    if (rt_file_new(CHANNEL_SIZE, &handle, &data) < 0)
        return;
    uint64_t w[IPC_MRS] = {0};
    if (net_words(NET_CHANNEL, (uint64_t)(uintptr_t)data, CHANNEL_SIZE,
                  (uint64_t)rt_task_self(), w) != 0) {
        rt_file_free(handle);
        return;
    }
    channel = data;
    if (w[2] > 0 && w[2] <= 0x7fffffff)
        rt_srv_words(NET_IFACE, (long)w[2]);
}

/* At each new socket: the event thread (started once), or the pulse (net_thread=off, or
 * no thread could start). */
static void events_start(void)
{
    channel_open();
    static bool watching;
    if (!watching) {
        char v[8];
        bool thread = !(rt_option("net_thread", v, sizeof v) > 0 && v[0] == 'o' && v[1] == 'f');
        watching = thread && rt_net_watch() == 0;
    }
    if (!watching && !pulse.armed)
        unix_timer_arm(&pulse, unix_now_ns() + PULSE_NS);
}

/* ---- user buffers: one range or a vector of iovecs (socket.h) ---- */
size_t uvec_total(struct ucall *c, const struct uvec *u)
{
    if (!u->cnt)
        return u->one.iov_len;
    size_t total = 0;
    for (uint64_t i = 0; i < u->cnt; i++) {
        struct linux_iovec v;
        copy_in(c->proc, &v, u->uiov + i * sizeof v, sizeof v);
        total += v.iov_len;
    }
    return total;
}

long uvec_copy(struct ucall *c, const struct uvec *u, size_t off, void *buf, size_t k, bool out)
{
    uint64_t n = u->cnt ? u->cnt : 1;
    for (uint64_t i = 0; i < n && k; i++) {
        struct linux_iovec v = u->one;
        if (u->cnt && copy_in(c->proc, &v, u->uiov + i * sizeof v, sizeof v))
            return -EFAULT;
        if (off >= v.iov_len) {
            off -= v.iov_len;
            continue;
        }
        size_t m = v.iov_len - off < k ? v.iov_len - off : k;
        long e = out ? copy_out(c->proc, v.iov_base + off, buf, m)
                     : copy_in(c->proc, buf, v.iov_base + off, m);
        if (e)
            return -EFAULT;
        buf = (unsigned char *)buf + m;
        k -= m;
        off = 0;
    }
    return 0;
}

/* ---- addresses ---- */
static uint32_t swap32(uint32_t v)
{
    return v >> 24 | (v >> 8 & 0xff00) | (v << 8 & 0xff0000) | v << 24;
}
static uint16_t swap16(uint16_t v) { return (uint16_t)(v >> 8 | v << 8); }

static long addr_in(struct ucall *c, uint64_t uaddr, uint64_t len, uint32_t *ip, uint16_t *port,
                    uint16_t *family)
{
    struct linux_sockaddr_in sa;
    if (len < sizeof(uint16_t) || len > 128)
        return -EINVAL;
    vfs_memset(&sa, 0, sizeof sa);
    if (copy_in(c->proc, &sa, uaddr, len < sizeof sa ? len : sizeof sa))
        return -EFAULT;
    *family = sa.family;
    if (sa.family == AF_INET && len < sizeof sa)
        return -EINVAL;
    *ip = swap32(sa.addr);
    *port = swap16(sa.port);
    return 0;
}

long value_out(struct ucall *c, uint64_t uaddr, uint64_t ulen, const void *a, size_t size)
{
    if (!uaddr)
        return 0;
    int32_t len;
    if (copy_in(c->proc, &len, ulen, sizeof len))
        return -EFAULT;
    if (len < 0)
        return -EINVAL;
    size_t k = (size_t)len < size ? (size_t)len : size;
    int32_t full = (int32_t)size;
    if (copy_out(c->proc, uaddr, a, k) || copy_out(c->proc, ulen, &full, sizeof full))
        return -EFAULT;
    return 0;
}

/* An AF_INET address out, as value_out. */
static long addr_out(struct ucall *c, uint64_t uaddr, uint64_t ulen, uint32_t ip, uint16_t port)
{
    struct linux_sockaddr_in sa = {.family = AF_INET, .port = swap16(port), .addr = swap32(ip)};
    return value_out(c, uaddr, ulen, &sa, sizeof sa);
}

/* Can an address be written there? Checked before a call that cannot be undone. */
static long addr_probe(struct ucall *c, uint64_t uaddr, uint64_t ulen)
{
    return addr_out(c, uaddr, ulen, 0, 0);
}

/* ---- the file ---- */
bool sock_file(const struct file *f) { return f && (f->ops == &sock_ops || nl_file(f)); }

/* An AF_INET socket's state; NULL with -EBADF, -ENOTSOCK, or -EOPNOTSUPP for a netlink
 * socket (a call netlink.c does not take: listen, accept, shutdown). */
static struct usock *sock_of(struct ucall *c, long fd, long *err)
{
    struct file *f = fd_file(c->proc, fd);
    *err = !f ? -EBADF : nl_file(f) ? -EOPNOTSUPP : f->ops != &sock_ops ? -ENOTSOCK : 0;
    return *err ? NULL : f->priv;
}

/* The netlink socket at the call's fd (a[0]), or NULL: then the call is AF_INET's. */
static struct file *nl_at(struct ucall *c)
{
    struct file *f = fd_file(c->proc, (long)c->a[0]);
    return nl_file(f) ? f : NULL;
}

/* Wait for the stack (its next event re-runs the call), or return `again` at once when
 * non-blocking or once the socket's timeout (SO_RCVTIMEO/SO_SNDTIMEO, timeo_ns) has passed
 * since the call began. */
static long park(struct ucall *c, bool nonblock, long again, uint64_t timeo_ns)
{
    if (nonblock)
        return again;
    uint64_t deadline = UNIX_NO_DEADLINE;
    if (timeo_ns) {
        deadline = ucall_start_ns(c) + timeo_ns;
        if (unix_now_ns() >= deadline)
            return again;
    }
    return ucall_block(c, &sock_waiters, deadline);
}

/* A connect in progress ends when the socket is writable or has an error. */
static void connect_progress(struct usock *s)
{
    if (s->connecting && (net1(NET_READINESS, (uint64_t)s->sd, 0, 0) & (POLLOUT | POLLERR | POLLHUP)))
        s->connecting = false;
}

/* Write's op with the IPC buffer: k bytes of chunk. */
static long net_send_chunk(int sd, size_t k)
{
    uint64_t w[IPC_MRS] = {0, (uint64_t)sd, 0};
    return net(NET_WRITE, w, chunk, k, NULL, 0, NULL);
}

/* Read's (or with peek, recvpeek's from offset off) op: at most k bytes, into the channel
 * when there is one (chread, chpeek), else chunk; *got the bytes there, never more than k
 * (a bad server's count is an error, -EIO), *from where they are. */
static long net_recv_chunk(int sd, bool peek, size_t off, size_t k, size_t *got,
                           unsigned char **from)
{
    long r;
    *got = 0;
    if (channel) {
        r = peek ? net1(NET_CHPEEK, (uint64_t)sd, off, k) : net1(NET_CHREAD, (uint64_t)sd, k, 0);
        *got = r > 0 ? (size_t)r : 0;
        *from = channel;
    } else {
        uint64_t w[IPC_MRS] = {0, (uint64_t)sd, peek ? off : 0};
        r = net(peek ? NET_RECVPEEK : NET_READ, w, NULL, 0, chunk, k, got);
        *got = r > 0 && *got > (size_t)r ? (size_t)r : *got;
        *from = chunk;
    }
    return r > (long)k ? -EIO : r;
}

/* TCP send: chunks of up to CHUNK bytes (the channel's size with a channel) until all is queued; a full send ring parks the
 * call with its progress in c->done (as a pipe write). */
static long stream_send(struct usock *s, struct ucall *c, const struct uvec *u, size_t n,
                        bool nonblock, bool nosignal)
{
    size_t done = c->done;
    c->done = 0;                    /* only a parked call's progress is kept (writev's next
                                       vector starts at 0) */
    size_t step = channel ? CHANNEL_SIZE : CHUNK;
    unsigned char *buf = channel ? channel : chunk;
    while (done < n) {
        size_t k = n - done < step ? n - done : step;
        if (uvec_copy(c, u, done, buf, k, false))
            return done ? (long)done : -EFAULT;
        long r = channel ? net1(NET_CHWRITE, (uint64_t)s->sd, k, 0) : net_send_chunk(s->sd, k);
        if (r == -EPIPE && !nosignal)
            signal_send_pipe(c->proc);
        if (r < 0 && r != -EAGAIN)
            return done ? (long)done : r;
        if (r > (long)k)                /* a bad server's count */
            return done ? (long)done : -EIO;
        done += r > 0 ? (size_t)r : 0;
        if (r != (long)k) {
            c->done = done;
            long p = park(c, nonblock, -EAGAIN, s->timeo_ns[SND]);
            if (p != -EAGAIN)
                return p;
            c->done = 0;
            return done ? (long)done : -EAGAIN;
        }
    }
    return (long)done;
}

/* TCP receive: what is there, up to n (more calls while chunks come full); parks when
 * nothing is there yet. MSG_PEEK leaves the bytes in the socket (chunk after chunk from
 * the offset reached); MSG_TRUNC discards them without a copy (Linux's TCP: the buffer
 * is not touched). */
static long stream_recv(struct usock *s, struct ucall *c, const struct uvec *u, size_t n,
                        bool nonblock, uint64_t flags)
{
    if (s->rd_shut || n == 0)
        return 0;
    bool peek = flags & MSG_PEEK;
    size_t done = 0, step = channel ? CHANNEL_SIZE : CHUNK;
    while (done < n) {
        size_t k = n - done < step ? n - done : step, got;
        unsigned char *from;
        long r = net_recv_chunk(s->sd, peek, done, k, &got, &from);
        if (r < 0 && done)
            break;
        if (r < 0)
            return r == -EAGAIN ? park(c, nonblock, r, s->timeo_ns[RCV]) : r;
        if (r == 0)
            break;
        if (!(flags & MSG_TRUNC) && uvec_copy(c, u, done, from, got, true))
            return -EFAULT;
        done += got;
        if (got < k)
            break;
    }
    return (long)done;
}

/* One datagram of n bytes (copied from the program into the channel, else chunk) to
 * ip:port: chsendto, else senddgram with the IPC buffer. */
static long dgram_send(struct usock *s, struct ucall *c, const struct uvec *u, size_t n,
                       uint32_t ip, uint16_t port)
{
    if (n > (s->type == RAW ? RAW_MAX : UDP_MAX))
        return -EMSGSIZE;
    unsigned char *buf = channel ? channel : chunk;
    if (uvec_copy(c, u, 0, buf, n, false))
        return -EFAULT;
    long e = s->ping_id ? ping_out(buf, n, s->ping_id) : 0;
    if (e)
        return e;
    uint64_t w[IPC_MRS] = {0, (uint64_t)s->sd, ip, port, n};
    return channel ? net(NET_CHSENDTO, w, NULL, 0, NULL, 0, NULL)
                   : net(NET_SENDDGRAM, w, chunk, n, NULL, 0, NULL);
}

/* The next datagram (peek: left queued) into chunk: recvdgram or recvpeek with the IPC
 * buffer, or with a channel chrecvfrom or chpeek and a copy from the channel (so that
 * what is checked below is read once: the network server may change the channel at any
 * time). *got its length (all of it: it fits CHUNK), w[2] and w[3] its source. */
static long dgram_take(struct usock *s, bool peek, uint64_t w[IPC_MRS], size_t *got)
{
    w[1] = (uint64_t)s->sd;
    w[2] = 0;
    *got = 0;
    if (!channel) {
        long r = net(peek ? NET_RECVPEEK : NET_RECVDGRAM, w, NULL, 0, chunk, CHUNK, got);
        *got = r > 0 && *got > (size_t)r ? (size_t)r : *got;
        return r;
    }
    w[peek ? 3 : 2] = CHUNK;                 /* chpeek(sd, off 0, cap), chrecvfrom(sd, cap) */
    long r = net(peek ? NET_CHPEEK : NET_CHRECVFROM, w, NULL, 0, NULL, 0, NULL);
    if (r > (long)CHUNK)
        return -EIO;                       /* a bad server's count */
    *got = r > 0 ? (size_t)r : 0;
    vfs_memmove(chunk, channel, *got);
    return r;
}

/* A ping socket's next echo reply at the head of the raw queue: its ICMP part moved to
 * the start of chunk (*got its length); packets that are not its replies are dropped on
 * the way (every raw socket has its own copy). 0, or the stack's -EAGAIN or error. */
static long ping_head(struct usock *s, bool peek, uint64_t w[IPC_MRS], size_t *got)
{
    for (;;) {
        long r = dgram_take(s, peek, w, got);
        if (r < 0)
            return r;
        size_t off = 0;
        long k = ping_in(chunk, *got, s->ping_id, &off);
        if (k >= 0) {
            vfs_memmove(chunk, chunk + off, (size_t)k);
            *got = (size_t)k;
            w[3] = 0;                      /* no port in the source address */
            return 0;
        }
        if (peek)
            net1(NET_RECVDGRAM, (uint64_t)s->sd, 0, 0);   /* drop the peeked one */
    }
}

/* One datagram, whole (it fits CHUNK): the first n bytes copied, its length in *full
 * (the rest is lost unless peeking, as on Linux). */
static long dgram_recv(struct usock *s, struct ucall *c, const struct uvec *u, size_t n,
                       bool nonblock, bool peek, uint32_t *ip, uint16_t *port, size_t *full)
{
    size_t got = 0;
    uint64_t w[IPC_MRS] = {0};
    long r = s->ping_id ? ping_head(s, peek, w, &got) : dgram_take(s, peek, w, &got);
    if (r == -EAGAIN)
        return park(c, nonblock, r, s->timeo_ns[RCV]);
    if (r < 0)
        return r;
    *ip = (uint32_t)w[2];
    *port = (uint16_t)w[3];
    *full = got;
    size_t k = got < n ? got : n;
    return uvec_copy(c, u, 0, chunk, k, true) ? -EFAULT : (long)k;
}

static long sock_read(struct file *f, struct ucall *c, uint64_t uaddr, size_t n, uint64_t *off)
{
    (void)off;
    struct usock *s = f->priv;
    struct uvec u = {.one = {uaddr, n}};
    uint32_t ip;
    uint16_t port;
    size_t full;
    if (s->type != STREAM)
        return dgram_recv(s, c, &u, n, f->flags & O_NONBLOCK, false, &ip, &port, &full);
    return stream_recv(s, c, &u, n, f->flags & O_NONBLOCK, 0);
}

static long sock_write(struct file *f, struct ucall *c, uint64_t uaddr, size_t n, uint64_t *off)
{
    (void)off;
    struct usock *s = f->priv;
    struct uvec u = {.one = {uaddr, n}};
    if (s->type != STREAM)
        return s->has_peer ? dgram_send(s, c, &u, n, s->peer_ip, s->peer_port) : -EDESTADDRREQ;
    return stream_send(s, c, &u, n, f->flags & O_NONBLOCK, false);
}

static unsigned sock_poll(struct file *f, struct waitlist **w)
{
    struct usock *s = f->priv;
    if (w)
        *w = &sock_waiters;
    long ev = net1(NET_READINESS, (uint64_t)s->sd, 0, 0);
    if (ev < 0)
        return POLLERR;
    unsigned m = (unsigned)ev & (POLLIN | POLLOUT | POLLERR | POLLHUP);
    return m | (m & POLLIN ? POLLRDNORM : 0) | (m & POLLOUT ? POLLWRNORM : 0);
}

/* ioctl: FIONREAD (SIOCINQ) and SIOCOUTQ (TIOCOUTQ's number): the stack's unread and
 * unacknowledged bytes (a datagram socket: its next datagram's length, and 0); the
 * interface requests (netif.c). */
static long sock_ioctl(struct file *f, struct ucall *c, unsigned long cmd, uint64_t arg)
{
    struct usock *s = f->priv;
    if (cmd != FIONREAD && cmd != TIOCOUTQ)
        return netif_ioctl(c, cmd, arg);     /* the interface's: ifconfig, route */
    uint64_t w[IPC_MRS] = {0, (uint64_t)s->sd};
    long r = net(NET_PENDING, w, NULL, 0, NULL, 0, NULL);
    if (r < 0)
        return r;
    int32_t v = (int32_t)(cmd == FIONREAD ? w[2] : w[3]);
    return copy_out(c->proc, arg, &v, sizeof v) ? -EFAULT : 0;
}

static void sock_release(struct file *f)
{
    struct usock *s = f->priv;
    net1(NET_RELEASE, (uint64_t)s->sd, 0, 0);
    unix_free(s);
    open_socks--;
    poll_wake(&sock_waiters);
}

static const struct file_ops sock_ops = {
    .read = sock_read,
    .write = sock_write,
    .poll = sock_poll,
    .ioctl = sock_ioctl,
    .release = sock_release,
};

/* A file for the stack's socket sd, installed at the lowest free fd (PING: a ping socket
 * over the stack's RAW one). */
static long sock_install(struct ucall *c, int sd, int type, unsigned flags)
{
    struct usock *s = unix_alloc(sizeof *s);
    struct file *f = s ? file_new(&sock_ops, NULL, O_RDWR | (flags & O_NONBLOCK)) : NULL;
    if (!f) {
        unix_free(s);
        net1(NET_RELEASE, (uint64_t)sd, 0, 0);
        return -ENOMEM;
    }
    *s = (struct usock){.sd = sd, .type = type == PING ? RAW : type,
                        .ping_id = type == PING ? ping_id_new() : 0};
    f->priv = s;
    open_socks++;
    events_start();
    return fd_install(c->proc, f, 0, flags & O_CLOEXEC);
}

/* ---- the calls ---- */

/* The stack's socket type for socket(AF_INET, type, proto), or -EPROTONOSUPPORT; a raw
 * socket is ICMP's only (busybox ping's) and needs root, as CAP_NET_RAW on Linux; a ping
 * socket (datagram ICMP) is anyone's (ping.c). */
static long stack_type(struct ucall *c, unsigned type, long proto)
{
    if (type == SOCK_STREAM && (!proto || proto == IPPROTO_TCP))
        return STREAM;
    if (type == SOCK_DGRAM && (!proto || proto == IPPROTO_UDP))
        return DGRAM;
    if (type == SOCK_DGRAM && proto == IPPROTO_ICMP)
        return PING;
    if (type == SOCK_RAW && proto == IPPROTO_ICMP)
        return c->proc->uid[ID_EFFECTIVE] ? -EPERM : RAW;
    return -EPROTONOSUPPORT;
}

/* socket(domain, type, protocol) */
long lx_socket(struct ucall *c)
{
    unsigned type = (unsigned)c->a[1] & SOCK_TYPE_MASK, flags = (unsigned)c->a[1] & ~SOCK_TYPE_MASK;
    int32_t family = (int32_t)c->a[0];
    if (family != AF_INET && family != AF_NETLINK)
        return -EAFNOSUPPORT;
    if (flags & ~(unsigned)(O_NONBLOCK | O_CLOEXEC))
        return -EINVAL;
    if (family == AF_NETLINK)
        return nl_socket(c, type, flags, (long)(int32_t)c->a[2]);
    long st = stack_type(c, type, (long)(int32_t)c->a[2]);
    if (st < 0)
        return st;
    long sd = net1(NET_OPEN, (uint64_t)(st == PING ? RAW : st), 0, 0);
    if (sd == -ENETDOWN)
        return -EAFNOSUPPORT;            /* no network server or device: no AF_INET */
    if (sd < 0)
        return sd;
    return sock_install(c, (int)sd, (int)st, flags);
}

/* bind(fd, addr, addrlen) */
long lx_bind(struct ucall *c)
{
    if (nl_at(c))
        return nl_bind(c, nl_at(c));
    long err;
    struct usock *s = sock_of(c, (long)c->a[0], &err);
    uint32_t ip;
    uint16_t port, family;
    if (!s || (err = addr_in(c, c->a[1], c->a[2], &ip, &port, &family)))
        return err;
    if (family != AF_INET)
        return -EAFNOSUPPORT;
    return net1(NET_BINDTO, (uint64_t)s->sd, ip, port);
}

/* listen(fd, backlog) */
long lx_listen(struct ucall *c)
{
    long err;
    struct usock *s = sock_of(c, (long)c->a[0], &err);
    if (!s)
        return err;
    if (s->type != STREAM)
        return -EOPNOTSUPP;
    int32_t backlog = (int32_t)c->a[1];
    return net1(NET_LISTENON, (uint64_t)s->sd, backlog < 0 ? 0 : (uint64_t)backlog, 0);
}

static long do_accept(struct ucall *c, unsigned flags)
{
    long err;
    struct usock *s = sock_of(c, (long)c->a[0], &err);
    if (!s)
        return err;
    if (flags & ~(unsigned)(O_NONBLOCK | O_CLOEXEC))
        return -EINVAL;
    if (s->type != STREAM)
        return -EOPNOTSUPP;
    if ((err = addr_probe(c, c->a[1], c->a[2])))
        return err;
    uint64_t w[IPC_MRS] = {0};
    long sd = net_words(NET_ACCEPTFROM, (uint64_t)s->sd, 0, 0, w);
    if (sd == -EAGAIN)
        return park(c, fd_file(c->proc, (long)c->a[0])->flags & O_NONBLOCK, sd,
                    s->timeo_ns[RCV]);
    if (sd < 0)
        return sd;
    long fd = sock_install(c, (int)sd, STREAM, flags);
    if (fd >= 0 && addr_out(c, c->a[1], c->a[2], (uint32_t)w[2], (uint16_t)w[3])) {
        fd_close(c->proc, fd);
        return -EFAULT;
    }
    return fd;
}

long lx_accept(struct ucall *c) { return do_accept(c, 0); }
long lx_accept4(struct ucall *c) { return do_accept(c, (unsigned)c->a[3]); }

/* UDP connect: the default peer, and the stack then takes only its datagrams; AF_UNSPEC
 * (or the address 0.0.0.0:0) clears it. */
static long dgram_connect(struct usock *s, uint16_t family, uint32_t ip, uint16_t port)
{
    if (family != AF_INET && family != AF_UNSPEC)
        return -EAFNOSUPPORT;
    bool peer = family == AF_INET;
    long r = net1(NET_CONNECTNB, (uint64_t)s->sd, peer ? ip : 0, peer ? port : 0);
    if (r < 0)
        return r;
    s->has_peer = peer;
    s->peer_ip = ip;
    s->peer_port = port;
    return 0;
}

/* connect(fd, addr, addrlen): TCP waits for the handshake (parks; -EINPROGRESS when
 * non-blocking); UDP sets the default peer (AF_UNSPEC clears it). */
long lx_connect(struct ucall *c)
{
    if (nl_at(c))
        return nl_connect(c, nl_at(c));
    long err;
    struct usock *s = sock_of(c, (long)c->a[0], &err);
    uint32_t ip;
    uint16_t port, family;
    if (!s || (err = addr_in(c, c->a[1], c->a[2], &ip, &port, &family)))
        return err;
    bool nonblock = fd_file(c->proc, (long)c->a[0])->flags & O_NONBLOCK;
    if (s->type != STREAM)
        return dgram_connect(s, family, ip, port);
    if (s->connecting) {
        connect_progress(s);
        if (s->connecting)   /* a timed-out blocking connect says EINPROGRESS, as Linux */
            return park(c, nonblock, nonblock ? -EALREADY : -EINPROGRESS, s->timeo_ns[SND]);
        long e = net1(NET_SOCKERROR, (uint64_t)s->sd, 0, 0);
        return e > 0 ? -e : e;
    }
    if (family != AF_INET)
        return -EAFNOSUPPORT;
    long r = net1(NET_CONNECTNB, (uint64_t)s->sd, ip, port);
    if (r != -EINPROGRESS)
        return r;
    s->connecting = true;
    return park(c, nonblock, -EINPROGRESS, s->timeo_ns[SND]);
}

static long do_send(struct ucall *c, const struct uvec *u, uint64_t flags, uint64_t uaddr,
                    uint64_t alen)
{
    if (nl_at(c))
        return nl_send(c, nl_at(c), u, flags, uaddr, alen);
    long err;
    struct usock *s = sock_of(c, (long)c->a[0], &err);
    if (!s)
        return err;
    bool nonblock = (fd_file(c->proc, (long)c->a[0])->flags & O_NONBLOCK) || (flags & MSG_DONTWAIT);
    size_t n = uvec_total(c, u);
    if (s->type == STREAM)
        return stream_send(s, c, u, n, nonblock, flags & MSG_NOSIGNAL);
    uint32_t ip = s->peer_ip;
    uint16_t port = s->peer_port, family = AF_INET;
    if (uaddr && (err = addr_in(c, uaddr, alen, &ip, &port, &family)))
        return err;
    if (family != AF_INET)
        return -EAFNOSUPPORT;
    if (!uaddr && !s->has_peer)
        return -EDESTADDRREQ;
    return dgram_send(s, c, u, n, ip, port);
}

/* The flags that change a receive: MSG_DONTWAIT, MSG_PEEK, MSG_TRUNC (UDP: the
 * datagram's whole length is returned; TCP: the bytes are discarded); *mflags gets recvmsg's MSG_TRUNC when a datagram
 * did not fit. */
static long do_recv(struct ucall *c, const struct uvec *u, uint64_t flags, uint64_t uaddr,
                    uint64_t ulen, int32_t *mflags)
{
    if (nl_at(c))
        return nl_recv(c, nl_at(c), u, flags, uaddr, ulen, mflags);
    long err;
    struct usock *s = sock_of(c, (long)c->a[0], &err);
    if (!s)
        return err;
    bool nonblock = (fd_file(c->proc, (long)c->a[0])->flags & O_NONBLOCK) || (flags & MSG_DONTWAIT);
    bool peek = flags & MSG_PEEK;
    size_t n = uvec_total(c, u);
    *mflags = 0;
    if (s->type == STREAM) {
        long r = stream_recv(s, c, u, n, nonblock, flags);
        int32_t zero = 0;                /* TCP reports no source address */
        if (r >= 0 && uaddr && copy_out(c->proc, ulen, &zero, sizeof zero))
            return -EFAULT;
        return r;
    }
    /* The source address is written after the datagram is taken, as Linux's recvfrom
     * does (move_addr_to_user after sock_recvmsg): an unwritable one is EFAULT and the
     * datagram is gone. (accept probes first: a connection must not be lost.) */
    uint32_t ip = 0;
    uint16_t port = 0;
    size_t full = 0;
    long r = dgram_recv(s, c, u, n, nonblock, peek, &ip, &port, &full);
    if (r < 0)
        return r;
    if (addr_out(c, uaddr, ulen, ip, port))
        return -EFAULT;
    *mflags = full > n ? MSG_TRUNC : 0;
    return flags & MSG_TRUNC ? (long)full : r;
}

/* sendto(fd, buf, len, flags, addr, addrlen) */
long lx_sendto(struct ucall *c)
{
    struct uvec u = {.one = {c->a[1], c->a[2]}};
    if (!user_range_ok(c->a[1], c->a[2]))
        return -EFAULT;
    return do_send(c, &u, c->a[3], c->a[4], c->a[5]);
}

/* recvfrom(fd, buf, len, flags, addr, addrlen) */
long lx_recvfrom(struct ucall *c)
{
    struct uvec u = {.one = {c->a[1], c->a[2]}};
    int32_t mflags;
    if (!user_range_ok(c->a[1], c->a[2]))
        return -EFAULT;
    return do_recv(c, &u, c->a[3], c->a[4], c->a[5], &mflags);
}

/* A msghdr read from user space at umsg, and its iovecs checked as readv's (a count above
 * IOV_MAX is -EMSGSIZE here, as on Linux) into u. */
static long msg_in(struct ucall *c, uint64_t umsg, struct linux_msghdr *m, struct uvec *u)
{
    if (copy_in(c->proc, m, umsg, sizeof *m))
        return -EFAULT;
    if (m->iovlen > IOV_MAX)
        return -EMSGSIZE;
    long err = vfs_check_iov(c, m->iov, m->iovlen);
    if (err)
        return err;
    *u = m->iovlen ? (struct uvec){.uiov = m->iov, .cnt = m->iovlen} : (struct uvec){0};
    return 0;
}

/* sendmsg(fd, msg, flags): the iovecs, no ancillary data */
long lx_sendmsg(struct ucall *c)
{
    struct linux_msghdr m;
    struct uvec u;
    long err = msg_in(c, c->a[1], &m, &u);
    if (err)
        return err;
    return do_send(c, &u, c->a[2], m.name, m.namelen);
}

/* recvmsg(fd, msg, flags): the iovecs; msg_namelen and msg_flags (MSG_TRUNC) written
 * back, no ancillary data (msg_controllen 0). */
long lx_recvmsg(struct ucall *c)
{
    struct linux_msghdr m;
    struct uvec u;
    long err = msg_in(c, c->a[1], &m, &u);
    if (err)
        return err;
    uint64_t ulen = c->a[1] + __builtin_offsetof(struct linux_msghdr, namelen);
    long r = do_recv(c, &u, c->a[2], m.name, ulen, &m.flags);
    if (r < 0)
        return r;
    m.controllen = 0;
    if (copy_out(c->proc, c->a[1] + __builtin_offsetof(struct linux_msghdr, controllen),
                 &m.controllen, sizeof m.controllen + sizeof m.flags))
        return -EFAULT;
    return r;
}

/* shutdown(fd, how) */
long lx_shutdown(struct ucall *c)
{
    long err;
    struct usock *s = sock_of(c, (long)c->a[0], &err);
    if (!s)
        return err;
    int32_t how = (int32_t)c->a[1];
    if (how < SHUT_RD || how > SHUT_RDWR)
        return -EINVAL;
    if (s->type != STREAM && !s->has_peer)
        return -ENOTCONN;
    long r = 0;
    if (how != SHUT_RD && s->type == STREAM)
        r = net1(NET_SHUTWR, (uint64_t)s->sd, 0, 0);
    if (!r && how != SHUT_WR)
        s->rd_shut = true;
    poll_wake(&sock_waiters);
    return r;
}

#define NS_PER_US 1000ull
#define US_PER_S 1000000

/* SO_RCVTIMEO/SO_SNDTIMEO from a struct timeval, as Linux's sock_set_timeout: tv_usec
 * outside [0, 1 s) is EDOM, {0, 0} waits for ever, a negative time does not wait. */
static long set_timeo(struct ucall *c, struct usock *s, int dir)
{
    struct linux_timeval tv;
    if ((uint32_t)c->a[4] < sizeof tv)
        return -EINVAL;
    if (copy_in(c->proc, &tv, c->a[3], sizeof tv))
        return -EFAULT;
    if (tv.tv_usec < 0 || tv.tv_usec >= US_PER_S)
        return -EDOM;
    if (tv.tv_sec < 0)
        s->timeo_ns[dir] = 1;
    else if ((uint64_t)tv.tv_sec >= UINT64_MAX / (US_PER_S * NS_PER_US) - 1)
        s->timeo_ns[dir] = 0;
    else
        s->timeo_ns[dir] = ((uint64_t)tv.tv_sec * US_PER_S + (uint64_t)tv.tv_usec) * NS_PER_US;
    return 0;
}

/* getsockopt of a timeout: the timeval (0: none), cut to the caller's length. */
static long get_timeo(struct ucall *c, struct usock *s, int dir, int32_t len)
{
    uint64_t us = s->timeo_ns[dir] / NS_PER_US;
    struct linux_timeval tv = {(int64_t)(us / US_PER_S), (int64_t)(us % US_PER_S)};
    size_t k = (size_t)len < sizeof tv ? (size_t)len : sizeof tv;
    int32_t full = sizeof tv;
    if (copy_out(c->proc, c->a[3], &tv, k) || copy_out(c->proc, c->a[4], &full, sizeof full))
        return -EFAULT;
    return 0;
}

/* setsockopt(fd, level, name, value, len): an int value, or a timeval for the timeouts */
long lx_setsockopt(struct ucall *c)
{
    if (nl_at(c))
        return nl_setsockopt(c, nl_at(c));
    long err;
    struct usock *s = sock_of(c, (long)c->a[0], &err);
    if (!s)
        return err;
    int32_t level = (int32_t)c->a[1], name = (int32_t)c->a[2], v;
    if (level == SOL_SOCKET && (name == SO_RCVTIMEO || name == SO_SNDTIMEO))
        return set_timeo(c, s, name == SO_RCVTIMEO ? RCV : SND);
    if ((uint32_t)c->a[4] < sizeof v)
        return -EINVAL;
    if (copy_in(c->proc, &v, c->a[3], sizeof v))
        return -EFAULT;
    if (level == IPPROTO_TCP && name == TCP_NODELAY && s->type == STREAM) {
        long r = net1(NET_OPTION, (uint64_t)s->sd, NET_OPT_NODELAY, v != 0);
        s->opts[0] = r ? s->opts[0] : v != 0;   /* slot 0: TCP_NODELAY (no SO_ has 0) */
        return r;
    }
    if (level != SOL_SOCKET)
        return -ENOPROTOOPT;
    switch (name) {
    case SO_KEEPALIVE:
        if (s->type == STREAM && (err = net1(NET_OPTION, (uint64_t)s->sd, NET_OPT_KEEPALIVE, v != 0)))
            return err;
        s->opts[name] = v;
        return 0;
    case SO_REUSEADDR:
    case SO_BROADCAST:
    case SO_SNDBUF:
    case SO_RCVBUF:
    case SO_LINGER:
        s->opts[name] = v;
        return 0;
    }
    return -ENOPROTOOPT;
}

/* getsockopt(fd, level, name, value, len pointer) */
long lx_getsockopt(struct ucall *c)
{
    if (nl_at(c))
        return nl_getsockopt(c, nl_at(c));
    long err;
    struct usock *s = sock_of(c, (long)c->a[0], &err);
    if (!s)
        return err;
    int32_t level = (int32_t)c->a[1], name = (int32_t)c->a[2], len, v;
    if (copy_in(c->proc, &len, c->a[4], sizeof len))
        return -EFAULT;
    if (len < 0)
        return -EINVAL;
    if (level == SOL_SOCKET && (name == SO_RCVTIMEO || name == SO_SNDTIMEO))
        return get_timeo(c, s, name == SO_RCVTIMEO ? RCV : SND, len);
    if (level == IPPROTO_TCP && name == TCP_NODELAY && s->type == STREAM)
        v = s->opts[0];
    else if (level != SOL_SOCKET)
        return -ENOPROTOOPT;
    else if (name == SO_TYPE)
        v = s->type == STREAM ? SOCK_STREAM : s->type == DGRAM || s->ping_id ? SOCK_DGRAM : SOCK_RAW;
    else if (name == SO_ERROR) {
        connect_progress(s);
        long e = s->connecting ? 0 : net1(NET_SOCKERROR, (uint64_t)s->sd, 0, 0);
        v = e < 0 ? (int32_t)-e : (int32_t)e;
    } else if (name == SO_SNDBUF || name == SO_RCVBUF)
        v = SOCK_BUF;
    else if (name == SO_REUSEADDR || name == SO_BROADCAST || name == SO_KEEPALIVE)
        v = s->opts[name] != 0;
    else
        return -ENOPROTOOPT;
    return value_out(c, c->a[3], c->a[4], &v, sizeof v);
}

static long names(struct ucall *c, bool peer)
{
    if (nl_at(c))
        return nl_name(c, nl_at(c), peer);
    long err;
    struct usock *s = sock_of(c, (long)c->a[0], &err);
    if (!s)
        return err;
    uint64_t w[IPC_MRS] = {0, (uint64_t)s->sd};
    long r = net(NET_NAMES, w, NULL, 0, NULL, 0, NULL);
    if (r == -ENETDOWN)
        return r;
    if (peer && s->type != STREAM)
        return s->has_peer ? addr_out(c, c->a[1], c->a[2], s->peer_ip, s->peer_port) : -ENOTCONN;
    long res = (long)w[peer ? 4 : 1];
    if (res < 0)
        return res;
    uint16_t port = s->ping_id && !peer ? s->ping_id : (uint16_t)w[peer ? 6 : 3];
    return addr_out(c, c->a[1], c->a[2], (uint32_t)w[peer ? 5 : 2], port);
}

long lx_getsockname(struct ucall *c) { return names(c, false); }
long lx_getpeername(struct ucall *c) { return names(c, true); }
