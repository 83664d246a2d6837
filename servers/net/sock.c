/*
 * The stack's entry points (net.h): initialisation, frame input, time, and the socket
 * calls. Every call is non-blocking; a caller that would wait polls net_events() after
 * the next net_input/net_tick (the UNIX server will turn that into blocking and poll).
 */
#include "net_priv.h"

size_t net_stack_size(void) { return sizeof(struct netstack); }

void net_init(struct netstack *s, struct netif *nif, uint32_t ip, uint32_t mask,
              uint32_t gw, uint64_t now_ms, uint64_t seed)
{
    net_memset(s, 0, offsetof(struct netstack, socks));
    for (unsigned i = 0; i < NET_MAX_SOCKETS; i++)
        s->socks[i].used = 0;
    s->nif = nif;
    s->ip = ip;
    s->mask = mask;
    s->gw = gw;
    s->now = now_ms;
    s->rand = seed ? seed : 0x9e3779b97f4a7c15ull;
    s->next_port = (uint16_t)net_random(s);
    s->ip_id = (uint16_t)net_random(s);
    mbuf_pool_init(&s->pool);
}

/* A super-segment (NET_RX_SUPER) stays where it is: its mbuf points at it (mbuf.h). */
static bool frame_fits(const struct netstack *s, size_t len, unsigned flags)
{
    if (flags & NET_RX_SUPER)
        return (s->nif->offload & NETIF_RX_TSO) && len <= NET_TSO_MAX + ETH_HLEN;
    return len <= NET_MBUF_DATA;
}

static void frame_input(struct netstack *s, const void *frame, size_t len, unsigned flags)
{
    s->st.rx_frames++;
    s->st.rx_bytes += len;
    if (!frame_fits(s, len, flags)) {
        s->st.rx_drop_ether++;
        return;
    }
    struct mbuf *m = mbuf_get(&s->pool, 0);
    if (!m) {
        s->st.mbuf_exhausted++;
        return;
    }
    if (flags & NET_RX_SUPER) {
        m->ext = frame;
        s->st.rx_super++;
    } else {
        net_memcpy(m->buf, frame, len);
    }
    m->len = (uint32_t)len;
    m->csum_ok = (flags & NET_RX_CSUM_OK) && (s->nif->offload & NETIF_RX_CSUM);
    ether_input(s, m);
}

void net_input_flags(struct netstack *s, const void *frame, size_t len, unsigned flags)
{
    NET_PROBE_ENTER(NET_L_DRV_IN);
    frame_input(s, frame, len, flags);
    NET_PROBE_LEAVE(NET_L_DRV_IN);
}

void net_input(struct netstack *s, const void *frame, size_t len)
{
    net_input_flags(s, frame, len, 0);
}

void net_tick(struct netstack *s, uint64_t now_ms)
{
    net_clock(s, now_ms);
    arp_timer(s);
    dhcp_timer(s);
    for (unsigned i = 0; i < s->nsocks; i++) {
        struct sock *tp = &s->socks[i];
        if (tp->used && tp->type == NET_SOCK_STREAM && tcp_next_timer(tp) <= s->now)
            tcp_timers(s, tp);
    }
}

void net_clock(struct netstack *s, uint64_t now_ms)
{
    if (now_ms > s->now)
        s->now = now_ms;
}

uint64_t net_next_timer(const struct netstack *s)
{
    uint64_t t = arp_next_timer(s), d = dhcp_next_timer(s);
    if (d < t)
        t = d;
    for (unsigned i = 0; i < s->nsocks; i++) {
        const struct sock *tp = &s->socks[i];
        if (tp->used && tp->type == NET_SOCK_STREAM) {
            uint64_t x = tcp_next_timer(tp);
            if (x < t)
                t = x;
        }
    }
    return t;
}

const struct net_stats *net_stats(const struct netstack *s) { return &s->st; }
unsigned net_mbufs_in_use(const struct netstack *s) { return s->pool.in_use; }

unsigned net_sockets_in_use(const struct netstack *s)
{
    unsigned n = 0;
    for (unsigned i = 0; i < NET_MAX_SOCKETS; i++)
        n += s->socks[i].used;
    return n;
}

/* The socket `sd`, or 0 if it is not an open handle of the application (a child still
 * on a listener's queue is not one yet). */
static struct sock *sock_get(struct netstack *s, int sd)
{
    if (sd < 0 || sd >= NET_MAX_SOCKETS)
        return 0;
    struct sock *so = &s->socks[sd];
    return so->used && so->parent < 0 && !(so->flags & TF_ORPHAN) ? so : 0;
}

int net_socket(struct netstack *s, int type)
{
    if (type != NET_SOCK_STREAM && type != NET_SOCK_DGRAM && type != NET_SOCK_RAW)
        return -NET_EINVAL;
    struct sock *so = sock_alloc(s, type);
    return so ? (int)(so - s->socks) : -NET_ENOMEM;
}

static int bound_elsewhere(struct netstack *s, const struct sock *me, uint16_t port)
{
    for (unsigned i = 0; i < NET_MAX_SOCKETS; i++) {
        const struct sock *so = &s->socks[i];
        if (so != me && so->used && so->type == me->type && so->lport == port &&
            (so->type == NET_SOCK_DGRAM || so->state == TCPS_LISTEN ||
             (so->state == TCPS_CLOSED && so->parent < 0)))
            return 1;
    }
    return 0;
}

int net_bind(struct netstack *s, int sd, uint32_t ip, uint16_t port)
{
    struct sock *so = sock_get(s, sd);
    if (!so)
        return -NET_EBADF;
    if (so->lport || so->state != TCPS_CLOSED || (ip && ip != s->ip))
        return -NET_EINVAL;
    if (port && bound_elsewhere(s, so, port))
        return -NET_EADDRINUSE;
    so->lip = ip;
    so->lport = port ? port : net_ephemeral_port(s, so->type);
    return 0;
}

int net_listen(struct netstack *s, int sd, int backlog)
{
    struct sock *so = sock_get(s, sd);
    if (!so)
        return -NET_EBADF;
    if (so->type != NET_SOCK_STREAM || so->state != TCPS_CLOSED)
        return -NET_EINVAL;
    if (!so->lport)
        so->lport = net_ephemeral_port(s, NET_SOCK_STREAM);
    so->backlog = backlog < 1 ? 1 : backlog > 128 ? 128 : (unsigned)backlog;
    so->state = TCPS_LISTEN;
    return 0;
}

int net_accept(struct netstack *s, int sd, uint32_t *ip, uint16_t *port)
{
    struct sock *lp = sock_get(s, sd);
    if (!lp || lp->state != TCPS_LISTEN)
        return lp ? -NET_EINVAL : -NET_EBADF;
    struct sock *first = 0;
    for (unsigned i = 0; i < NET_MAX_SOCKETS; i++) {
        struct sock *c = &s->socks[i];
        if (c->used && c->parent == sd && (c->flags & TF_ACCEPTQ) &&
            (!first || (int32_t)(c->qorder - first->qorder) < 0))
            first = c;
    }
    if (!first)
        return -NET_EAGAIN;
    lp->qlen--;
    first->parent = -1;
    first->flags &= ~TF_ACCEPTQ;
    if (ip)
        *ip = first->rip;
    if (port)
        *port = first->rport;
    return (int)(first - s->socks);
}

/* A datagram socket's default peer (ip 0 and port 0: none): sends without an address go
 * there, and only its datagrams are taken (udp_input). Binds an ephemeral port. A peer
 * without a route is -NET_ENETUNREACH, as Linux's connect. */
static int dgram_connect(struct netstack *s, struct sock *so, uint32_t ip, uint16_t port)
{
    if (ip && net_route(s, ip))
        return -NET_ENETUNREACH;
    if (!so->lport)
        so->lport = net_ephemeral_port(s, so->type);
    so->rip = ip;
    so->rport = port;
    return 0;
}

int net_connect(struct netstack *s, int sd, uint32_t ip, uint16_t port)
{
    struct sock *so = sock_get(s, sd);
    if (so && so->type != NET_SOCK_STREAM)
        return dgram_connect(s, so, ip, port);
    if (!so || so->type != NET_SOCK_STREAM)
        return so ? -NET_EOPNOTSUPP : -NET_EBADF;
    if (so->state == TCPS_SYN_SENT)
        return -NET_EALREADY;
    if (so->state != TCPS_CLOSED || so->rport)
        return -NET_EISCONN;
    if (!ip || !port)
        return -NET_EINVAL;
    if (net_route(s, ip))
        return -NET_ENETUNREACH;
    if (!so->lport)
        so->lport = net_ephemeral_port(s, NET_SOCK_STREAM);
    so->lip = s->ip;
    so->rip = ip;
    so->rport = port;
    so->iss = tcp_new_iss(s);
    so->snd_una = so->snd_nxt = so->snd_max = so->recover = so->iss;
    so->state = TCPS_SYN_SENT;
    tcp_output(s, so);
    return -NET_EINPROGRESS;
}

static long sock_send(struct netstack *s, int sd, const void *buf, size_t len)
{
    struct sock *so = sock_get(s, sd);
    if (!so)
        return -NET_EBADF;
    if (so->type != NET_SOCK_STREAM)
        return so->rport ? net_sendto(s, sd, buf, len, so->rip, so->rport) : -NET_EDESTADDRREQ;
    if (so->error) {
        int e = so->error;
        so->error = 0;
        return -e;
    }
    if (so->flags & TF_FINQUEUED)
        return -NET_EPIPE;
    if (so->state == TCPS_SYN_SENT || so->state == TCPS_SYN_RECEIVED)
        return -NET_EAGAIN;
    if (so->state != TCPS_ESTABLISHED && so->state != TCPS_CLOSE_WAIT)
        return -NET_ENOTCONN;
    uint32_t n = ring_write(&so->snd, buf, len > 0x7fffffff ? 0x7fffffff : (uint32_t)len);
    if (!n)
        return len ? -NET_EAGAIN : 0;
    tcp_output(s, so);
    return (long)n;
}

static long sock_recv(struct netstack *s, int sd, void *buf, size_t len)
{
    struct sock *so = sock_get(s, sd);
    if (!so || so->type != NET_SOCK_STREAM)
        return so ? net_recvfrom(s, sd, buf, len, 0, 0) : -NET_EBADF;
    uint32_t n = so->rcv.len < len ? so->rcv.len : (uint32_t)len;
    if (n) {
        ring_peek(&so->rcv, 0, buf, n);
        ring_drop(&so->rcv, n);
        tcp_output(s, so);                    /* perhaps a window update */
        return (long)n;
    }
    if (so->error) {
        int e = so->error;
        so->error = 0;
        return -e;
    }
    if ((so->flags & TF_RCVDFIN) || (so->state == TCPS_CLOSED && so->rport))
        return 0;
    if (so->state == TCPS_CLOSED || so->state == TCPS_LISTEN)
        return -NET_ENOTCONN;
    return -NET_EAGAIN;
}

/* MSG_PEEK: what net_recv would return, left in place. A datagram socket's first
 * datagram (cut to len) and its source; a stream's len bytes from offset off (0 bytes at
 * or past the end of what is there, unless off is 0: then EOF, an error or -EAGAIN). */
long net_peek(struct netstack *s, int sd, size_t off, void *buf, size_t len, uint32_t *ip,
              uint16_t *port)
{
    struct sock *so = sock_get(s, sd);
    if (!so)
        return -NET_EBADF;
    if (so->type != NET_SOCK_STREAM) {
        struct mbuf *m = so->reass;
        if (!m)
            return -NET_EAGAIN;
        size_t n = m->len < len ? m->len : len;
        net_memcpy(buf, mbuf_data(m), n);
        *ip = m->peer_ip;
        *port = m->peer_port;
        return (long)n;
    }
    if (off && off >= so->rcv.len)
        return 0;
    uint32_t left = so->rcv.len - (uint32_t)off;
    uint32_t n = left < len ? left : (uint32_t)len;
    if (!n)
        return len ? sock_recv(s, sd, buf, 0) : 0;   /* EOF, an error, or -EAGAIN */
    ring_peek(&so->rcv, (uint32_t)off, buf, n);
    return (long)n;
}

/* FIONREAD/SIOCINQ and SIOCOUTQ: a stream's unread bytes and its bytes not yet
 * acknowledged (the send ring starts at snd_una); a datagram socket's first datagram's
 * length and 0. A listener has neither (-NET_EINVAL, as Linux). */
int net_queued(struct netstack *s, int sd, uint32_t *inq, uint32_t *outq)
{
    struct sock *so = sock_get(s, sd);
    if (!so)
        return -NET_EBADF;
    if (so->type != NET_SOCK_STREAM) {
        *inq = so->reass ? so->reass->len : 0;
        *outq = 0;
        return 0;
    }
    if (so->state == TCPS_LISTEN)
        return -NET_EINVAL;
    *inq = so->rcv.len;
    *outq = so->snd.len;
    return 0;
}

long net_send(struct netstack *s, int sd, const void *buf, size_t len)
{
    NET_PROBE_ENTER(NET_L_SOCK);
    long r = sock_send(s, sd, buf, len);
    NET_PROBE_LEAVE(NET_L_SOCK);
    return r;
}

long net_recv(struct netstack *s, int sd, void *buf, size_t len)
{
    NET_PROBE_ENTER(NET_L_SOCK);
    long r = sock_recv(s, sd, buf, len);
    NET_PROBE_LEAVE(NET_L_SOCK);
    return r;
}

int net_shutdown_write(struct netstack *s, int sd)
{
    struct sock *so = sock_get(s, sd);
    if (!so || so->type != NET_SOCK_STREAM)
        return so ? -NET_EOPNOTSUPP : -NET_EBADF;
    if (so->flags & TF_FINQUEUED)
        return 0;
    if (so->state == TCPS_ESTABLISHED || so->state == TCPS_SYN_RECEIVED)
        so->state = TCPS_FIN_WAIT_1;
    else if (so->state == TCPS_CLOSE_WAIT)
        so->state = TCPS_LAST_ACK;
    else
        return -NET_ENOTCONN;
    so->flags |= TF_FINQUEUED;
    tcp_output(s, so);
    return 0;
}

static void free_children(struct netstack *s, int sd)
{
    for (unsigned i = 0; i < NET_MAX_SOCKETS; i++) {
        struct sock *c = &s->socks[i];
        if (c->used && c->parent == sd)
            tcp_drop(s, c, NET_ECONNABORTED);
    }
}

int net_abort(struct netstack *s, int sd)
{
    struct sock *so = sock_get(s, sd);
    if (!so)
        return -NET_EBADF;
    if (so->type == NET_SOCK_STREAM) {
        free_children(s, sd);
        if (so->state != TCPS_CLOSED && so->state != TCPS_LISTEN && so->state != TCPS_SYN_SENT)
            tcp_drop(s, so, NET_ECONNABORTED);
    }
    sock_free(s, so);
    return 0;
}

/* Graceful close: the FIN follows the queued data and the connection finishes on its
 * own (orphaned). Unread received data makes it an abort (RFC 2525 2.17). */
int net_close(struct netstack *s, int sd)
{
    struct sock *so = sock_get(s, sd);
    if (!so)
        return -NET_EBADF;
    if (so->type != NET_SOCK_STREAM || so->state == TCPS_CLOSED || so->state == TCPS_LISTEN ||
        so->state == TCPS_SYN_SENT || so->rcv.len)
        return net_abort(s, sd);
    so->flags |= TF_ORPHAN;
    if (!(so->flags & TF_FINQUEUED)) {
        so->flags &= ~TF_ORPHAN;
        net_shutdown_write(s, sd);
        so->flags |= TF_ORPHAN;
    }
    if (so->state == TCPS_FIN_WAIT_2)
        so->t_2msl = s->now + 2 * TCP_MSL_MS;
    return 0;
}

int net_setopt(struct netstack *s, int sd, int opt, int value)
{
    struct sock *so = sock_get(s, sd);
    if (!so)
        return -NET_EBADF;
    uint32_t bit = opt == NET_OPT_NODELAY ? TF_NODELAY : opt == NET_OPT_KEEPALIVE ? TF_KEEPALIVE : 0;
    if (!bit || so->type != NET_SOCK_STREAM)
        return -NET_EINVAL;
    so->flags = value ? so->flags | bit : so->flags & ~bit;
    if (bit == TF_KEEPALIVE)
        so->t_keep = value && so->state >= TCPS_ESTABLISHED ? s->now + TCP_KEEP_IDLE_MS : 0;
    if (bit == TF_NODELAY && value)
        tcp_output(s, so);
    return 0;
}

static int accept_ready(const struct netstack *s, int sd)
{
    for (unsigned i = 0; i < NET_MAX_SOCKETS; i++)
        if (s->socks[i].used && s->socks[i].parent == sd && (s->socks[i].flags & TF_ACCEPTQ))
            return 1;
    return 0;
}

unsigned net_events(struct netstack *s, int sd)
{
    struct sock *so = sock_get(s, sd);
    if (!so)
        return NET_EV_ERR;
    if (so->type != NET_SOCK_STREAM)
        return (so->reass ? NET_EV_IN : 0) | NET_EV_OUT;
    if (so->state == TCPS_LISTEN)
        return accept_ready(s, sd) ? NET_EV_IN : 0;
    unsigned ev = 0;
    int closed = so->state == TCPS_CLOSED && so->rport;
    if (so->rcv.len || (so->flags & TF_RCVDFIN) || closed || so->error)
        ev |= NET_EV_IN;
    if ((so->state == TCPS_ESTABLISHED || so->state == TCPS_CLOSE_WAIT) &&
        !(so->flags & TF_FINQUEUED) && ring_space(&so->snd))
        ev |= NET_EV_OUT;
    if (so->error)
        ev |= NET_EV_ERR;
    if (closed || ((so->flags & TF_RCVDFIN) && (so->flags & TF_FINQUEUED)))
        ev |= NET_EV_HUP;
    return ev;
}

/* Quiet: a TCP socket with everything it sent acknowledged, no data waiting to go and no
 * ACK owed (delayed or not); any other socket, or none, is quiet (nothing will come). */
bool net_quiet(struct netstack *s, int sd)
{
    struct sock *so = sock_get(s, sd);
    if (!so || so->type != NET_SOCK_STREAM || so->state == TCPS_CLOSED)
        return true;
    return so->snd.len == 0 && so->snd_una == so->snd_max &&
           !(so->flags & (TF_ACKNOW | TF_DELACK));
}

int net_error(struct netstack *s, int sd)
{
    struct sock *so = sock_get(s, sd);
    if (!so)
        return -NET_EBADF;
    int e = so->error;
    so->error = 0;
    return e;
}

int net_sockname(struct netstack *s, int sd, uint32_t *ip, uint16_t *port)
{
    struct sock *so = sock_get(s, sd);
    if (!so)
        return -NET_EBADF;
    *ip = so->lip ? so->lip : (so->rport ? s->ip : 0);
    *port = so->lport;
    return 0;
}

int net_peername(struct netstack *s, int sd, uint32_t *ip, uint16_t *port)
{
    struct sock *so = sock_get(s, sd);
    if (!so)
        return -NET_EBADF;
    if (!so->rport || so->state == TCPS_SYN_SENT)
        return -NET_ENOTCONN;
    *ip = so->rip;
    *port = so->rport;
    return 0;
}

const char *net_state_name(struct netstack *s, int sd)
{
    static const char *const names[] = {
        "CLOSED", "LISTEN", "SYN_SENT", "SYN_RECEIVED", "ESTABLISHED", "CLOSE_WAIT",
        "FIN_WAIT_1", "CLOSING", "LAST_ACK", "FIN_WAIT_2", "TIME_WAIT"};
    if (sd < 0 || sd >= NET_MAX_SOCKETS || !s->socks[sd].used)
        return "FREE";
    return names[s->socks[sd].state];
}
