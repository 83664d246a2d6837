/*
 * Connection blocks: allocation, lookup, teardown, sequence numbers, ports, and the byte
 * rings that hold the TCP send and receive buffers. A struct sock is both the socket and
 * its protocol control block; sockets are indices into the stack's fixed array.
 */
#include "net_priv.h"

uint64_t net_random(struct netstack *s)
{
    uint64_t x = s->rand;                     /* xorshift64 */
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    s->rand = x;
    return x;
}

/* RFC 6528 in spirit: a clock part (one step per 4 us) plus a per-stack random offset. */
uint32_t tcp_new_iss(struct netstack *s)
{
    return (uint32_t)(s->now * 250) + (uint32_t)net_random(s);
}

static int port_in_use(const struct netstack *s, int type, uint16_t port)
{
    for (unsigned i = 0; i < NET_MAX_SOCKETS; i++)
        if (s->socks[i].used && s->socks[i].type == type && s->socks[i].lport == port)
            return 1;
    return 0;
}

uint16_t net_ephemeral_port(struct netstack *s, int type)
{
    for (unsigned tries = 0; tries < 16384; tries++) {
        uint16_t p = (uint16_t)(49152 + s->next_port++ % 16384);
        if (!port_in_use(s, type, p))
            return p;
    }
    return 0;
}

struct sock *sock_alloc(struct netstack *s, int type)
{
    for (unsigned i = 0; i < NET_MAX_SOCKETS; i++) {
        struct sock *so = &s->socks[i];
        if (so->used)
            continue;
        net_memset(so, 0, offsetof(struct sock, snd));
        so->snd.start = so->snd.len = 0;
        so->rcv.start = so->rcv.len = 0;
        so->used = 1;
        so->type = (uint8_t)type;
        so->parent = -1;
        so->rto = TCP_RTO_INIT;
        so->snd_mss = 536;
        if (i + 1 > s->nsocks)
            s->nsocks = i + 1;
        return so;
    }
    return 0;
}

void sock_free(struct netstack *s, struct sock *tp)
{
    if (tp->parent >= 0)
        s->socks[tp->parent].qlen--;
    mbuf_free_chain(&s->pool, tp->reass);
    tp->reass = 0;
    tp->used = 0;
    while (s->nsocks && !s->socks[s->nsocks - 1].used)
        s->nsocks--;
}

/* The connection is over. A socket the application still holds stays, CLOSED, so it
 * can read the error or EOF; an orphan or a child nobody accepted yet is freed. */
void tcp_closed(struct netstack *s, struct sock *tp)
{
    if ((tp->flags & TF_ORPHAN) || tp->parent >= 0) {
        sock_free(s, tp);
        return;
    }
    tp->state = TCPS_CLOSED;
    tp->t_rexmt = tp->t_persist = tp->t_delack = tp->t_keep = tp->t_2msl = 0;
    mbuf_free_chain(&s->pool, tp->reass);
    tp->reass = 0;
    tp->nreass = 0;
}

/* Abort with error `err`: RST to the peer if it knows the connection. */
void tcp_drop(struct netstack *s, struct sock *tp, int err)
{
    if (tp->state >= TCPS_SYN_RECEIVED)
        tcp_respond(s, tp->rip, tp->lport, tp->rport, tp->snd_nxt, tp->rcv_nxt,
                    TH_RST | TH_ACK, 0);
    if (tp->state >= TCPS_SYN_RECEIVED)
        s->st.tcp_rst_sent++;
    tp->error = err;
    tcp_closed(s, tp);
}

/* Exact 4-tuple first, then a listener on the port. */
struct sock *tcp_lookup(struct netstack *s, uint32_t lip, uint16_t lport, uint32_t rip,
                        uint16_t rport)
{
    struct sock *listener = 0;
    for (unsigned i = 0; i < s->nsocks; i++) {
        struct sock *so = &s->socks[i];
        if (!so->used || so->type != NET_SOCK_STREAM || so->lport != lport)
            continue;
        if (so->state == TCPS_LISTEN) {
            if (!so->lip || so->lip == lip)
                listener = so;
        } else if (so->state != TCPS_CLOSED && so->rport == rport && so->rip == rip &&
                   so->lip == lip) {
            return so;
        }
    }
    return listener;
}

uint32_t tcp_rcv_space(const struct sock *tp) { return ring_space(&tp->rcv); }

uint32_t ring_write(struct ring *r, const void *src, uint32_t len)
{
    uint32_t space = ring_space(r), n = len < space ? len : space;
    uint32_t at = (r->start + r->len) & (NET_SOCKBUF - 1);
    uint32_t first = NET_SOCKBUF - at < n ? NET_SOCKBUF - at : n;
    net_memcpy(r->data + at, src, first);
    net_memcpy(r->data, (const uint8_t *)src + first, n - first);
    r->len += n;
    return n;
}

/* Copy len bytes starting `off` bytes after the ring's start (off + len <= r->len). */
void ring_peek(const struct ring *r, uint32_t off, void *dst, uint32_t len)
{
    uint32_t at = (r->start + off) & (NET_SOCKBUF - 1);
    uint32_t first = NET_SOCKBUF - at < len ? NET_SOCKBUF - at : len;
    net_memcpy(dst, r->data + at, first);
    net_memcpy((uint8_t *)dst + first, r->data, len - first);
}

void ring_drop(struct ring *r, uint32_t len)
{
    r->start = (r->start + len) & (NET_SOCKBUF - 1);
    r->len -= len;
}
