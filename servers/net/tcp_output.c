/*
 * TCP output (RFC 9293 3.8, after 4.4BSD's tcp_output): decide whether a segment is due
 * and build it. Called after anything that may let data, a FIN, an ACK or a window update
 * go out; sends as many segments as the send window min(snd_wnd, cwnd) allows.
 * Sender silly-window avoidance and Nagle (RFC 896): a short segment goes only when
 * nothing is outstanding (or TCP_NODELAY) and it empties the buffer, or on a probe or a
 * retransmission. Receiver side: the window never shrinks and small increases are not
 * announced (RFC 9293 3.8.6.2.2). SYNs carry MSS and window scale (RFC 7323).
 *
 * Segmentation offload (NETIF_TX_TSO, docs/net.md "Segmentation offload"): new data may go
 * as one super-segment of up to NET_TSO_DATA bytes that the device cuts into MSS-sized
 * segments on the wire. The rules keep every wire segment what it would be without it: a
 * super-segment holds whole MSS pieces only (a shorter tail is a segment of its own,
 * which Nagle decides on as before), stays within min(snd_wnd, cwnd), and never
 * carries a retransmission (snd_nxt < snd_max: those go one MSS at a time, as after a
 * timeout or in fast retransmit). Sequence space, RTT timing and the retransmission
 * timer count its bytes like any segment's; the peer's ACKs may cover part of it.
 */
#include "net_priv.h"

static const uint8_t tcp_outflags[] = {
    [TCPS_CLOSED] = TH_RST | TH_ACK, [TCPS_LISTEN] = 0, [TCPS_SYN_SENT] = TH_SYN,
    [TCPS_SYN_RECEIVED] = TH_SYN | TH_ACK, [TCPS_ESTABLISHED] = TH_ACK,
    [TCPS_CLOSE_WAIT] = TH_ACK, [TCPS_FIN_WAIT_1] = TH_FIN | TH_ACK,
    [TCPS_CLOSING] = TH_FIN | TH_ACK, [TCPS_LAST_ACK] = TH_FIN | TH_ACK,
    [TCPS_FIN_WAIT_2] = TH_ACK, [TCPS_TIME_WAIT] = TH_ACK,
};

/* Our window shift: the smallest that lets the whole receive buffer be announced. */
static uint8_t our_wscale(void)
{
    uint8_t shift = 0;
    while (shift < 14 && ((uint32_t)NET_SOCKBUF >> shift) > 65535)
        shift++;
    return shift;
}

/* The window to announce, in bytes, and the header field for it; updates rcv_adv. */
uint16_t tcp_window_field(struct sock *tp, int syn)
{
    uint32_t space = tcp_rcv_space(tp);
    if (space < NET_SOCKBUF / 4 && space < tp->snd_mss)
        space = 0;                            /* receiver SWS avoidance */
    uint32_t cap = syn ? 65535u : 65535u << tp->rcv_scale;
    if (space > cap)
        space = cap;
    if (SEQ_LT(tp->rcv_nxt + space, tp->rcv_adv))
        space = tp->rcv_adv - tp->rcv_nxt;    /* never shrink the window */
    uint32_t field = syn ? space : space >> tp->rcv_scale;
    uint32_t adv = syn ? field : field << tp->rcv_scale;
    if (SEQ_GT(tp->rcv_nxt + adv, tp->rcv_adv))
        tp->rcv_adv = tp->rcv_nxt + adv;
    return (uint16_t)field;
}

static unsigned put_syn_options(const struct sock *tp, uint8_t *o, uint16_t mtu)
{
    o[0] = 2;                                 /* MSS */
    o[1] = 4;
    put16(o + 2, (uint16_t)(mtu - IP_HLEN - TCP_HLEN));
    if (tp->state == TCPS_SYN_SENT || (tp->flags & TF_RCVD_WS)) {
        o[4] = 1;                             /* NOP, window scale */
        o[5] = 3;
        o[6] = 3;
        o[7] = our_wscale();
        return 8;
    }
    return 4;
}

static void tcp_fill_header(uint8_t *h, uint16_t sport, uint16_t dport, uint32_t seq,
                            uint32_t ack, uint8_t flags, uint16_t win, unsigned hlen)
{
    put16(h, sport);
    put16(h + 2, dport);
    put32(h + 4, seq);
    put32(h + 8, ack);
    h[12] = (uint8_t)(hlen / 4 << 4);
    h[13] = flags;
    put16(h + 14, win);
    put32(h + 16, 0);                         /* checksum, urgent pointer */
}

static void tcp_checksum_and_send(struct netstack *s, struct mbuf *m, uint32_t dst)
{
    uint32_t sum = cksum_pseudo(s->ip, dst, IPPROTO_TCP, (uint16_t)mbuf_pktlen(m));
    if (!cksum_offload(s, m, 16, sum)) {
        uint8_t *h = mbuf_data(m);
        put16(h + 16, cksum_fold(cksum_add(sum, h, m->len)));
    }
    ip_output(s, m, dst, IPPROTO_TCP);
}

void tcp_respond(struct netstack *s, uint32_t dst, uint16_t sport, uint16_t dport,
                 uint32_t seq, uint32_t ack, uint8_t flags, uint16_t win)
{
    struct mbuf *m = mbuf_get(&s->pool, NET_HEADROOM);
    if (!m) {
        s->st.mbuf_exhausted++;
        return;
    }
    tcp_fill_header(mbuf_data(m), sport, dport, seq, ack, flags, win, TCP_HLEN);
    m->len = TCP_HLEN;
    tcp_checksum_and_send(s, m, dst);
}

/* The most data the next segment may carry: one MSS, or a super-segment's worth of whole
 * MSS pieces when the interface cuts them and the data is new (see the top). */
static uint32_t tcp_seg_max(const struct netstack *s, const struct sock *tp)
{
    if ((s->nif->offload & (NETIF_TX_TSO | NETIF_TX_CSUM)) != (NETIF_TX_TSO | NETIF_TX_CSUM) ||
        tp->snd_nxt != tp->snd_max || (tp->flags & TF_FORCE))
        return tp->snd_mss;
    return NET_TSO_DATA / tp->snd_mss * tp->snd_mss;      /* snd_mss >= 64 (tcp_input.c) */
}

/* How many data bytes may go now (0 if none), and whether more segments follow. */
static uint32_t tcp_send_len(const struct netstack *s, const struct sock *tp, int *more)
{
    uint32_t off = tp->snd_nxt - tp->snd_una;
    uint32_t win = tp->snd_wnd < tp->cwnd ? tp->snd_wnd : tp->cwnd;
    if ((tp->flags & TF_FORCE) && win == 0)
        win = 1;                              /* window probe */
    uint32_t avail = tp->snd.len < win ? tp->snd.len : win;
    *more = 0;
    if (tp->state < TCPS_ESTABLISHED || avail <= off)
        return 0;
    uint32_t len = avail - off;
    if (len > tp->snd_mss) {
        uint32_t max = tcp_seg_max(s, tp);
        /* a super-segment of whole MSS pieces: a short tail goes on its own, after Nagle */
        uint32_t cut = len > max ? max : len - len % tp->snd_mss;
        *more = cut < len;
        len = cut;
    }
    return len;
}

/* Is a segment with `len` data bytes and `flags` worth sending now? */
static int tcp_should_send(struct sock *tp, uint32_t len, uint8_t flags)
{
    uint32_t off = tp->snd_nxt - tp->snd_una;
    if (len) {
        int idle = tp->snd_max == tp->snd_una;
        if (len >= tp->snd_mss || (tp->flags & TF_FORCE) || SEQ_LT(tp->snd_nxt, tp->snd_max))
            return 1;
        if ((idle || (tp->flags & TF_NODELAY)) && off + len >= tp->snd.len)
            return 1;
        if (tp->max_sndwnd && len >= tp->max_sndwnd / 2)
            return 1;
    }
    if (tp->state >= TCPS_ESTABLISHED && !(tp->flags & TF_RCVDFIN)) {
        uint32_t space = tcp_rcv_space(tp), cap = 65535u << tp->rcv_scale;
        int64_t adv = (int64_t)(space < cap ? space : cap) - (int64_t)(tp->rcv_adv - tp->rcv_nxt);
        if (adv >= 2 * (int64_t)tp->snd_mss || 2 * adv >= NET_SOCKBUF)
            return 1;                         /* window update */
    }
    if (tp->flags & TF_ACKNOW)
        return 1;
    if (flags & (TH_SYN | TH_RST))
        return 1;
    if ((flags & TH_FIN) && (!(tp->flags & TF_SENTFIN) || tp->snd_nxt == tp->snd_una))
        return 1;
    return 0;
}

/* A super-segment's len data bytes from offset off of the send buffer, into tso_frame
 * (ether_output puts the headers, which stay in m, in front of them). */
static void tcp_put_super(struct netstack *s, struct sock *tp, struct mbuf *m, uint32_t off,
                          uint32_t len)
{
    ring_peek(&tp->snd, off, s->tso_frame + NET_TSO_HEAD, len);
    m->tso_len = (uint16_t)len;
    m->tso_mss = (uint16_t)tp->snd_mss;
    s->st.tcp_tso++;
}

/* Build and send one segment of `len` bytes at snd_nxt; advance the send state. */
static int tcp_send_segment(struct netstack *s, struct sock *tp, uint32_t len, uint8_t flags)
{
    struct mbuf *m = mbuf_get(&s->pool, NET_HEADROOM);
    if (!m) {
        s->st.mbuf_exhausted++;
        if (!tp->t_rexmt && !tp->t_persist)
            tcp_set_rexmt(s, tp);             /* try again later */
        return -NET_ENOMEM;
    }
    uint8_t *h = mbuf_data(m);
    unsigned hlen = TCP_HLEN;
    if (flags & TH_SYN)
        hlen += put_syn_options(tp, h + TCP_HLEN, s->nif->mtu);
    uint32_t off = tp->snd_nxt - tp->snd_una;
    if (len) {
        if (len > tp->snd_mss)
            tcp_put_super(s, tp, m, off, len);
        else
            ring_peek(&tp->snd, off, h + hlen, len);
        if (off + len == tp->snd.len)
            flags |= TH_PSH;
    }
    uint16_t win = tcp_window_field(tp, flags & TH_SYN);
    tcp_fill_header(h, tp->lport, tp->rport, tp->snd_nxt, tp->rcv_nxt, flags, win, hlen);
    m->len = (uint16_t)(hlen + len - m->tso_len);

    uint32_t startseq = tp->snd_nxt;
    tp->snd_nxt += len + ((flags & TH_SYN) ? 1 : 0) + ((flags & TH_FIN) ? 1 : 0);
    if (flags & TH_FIN)
        tp->flags |= TF_SENTFIN;
    if (SEQ_GT(tp->snd_nxt, tp->snd_max)) {
        tp->snd_max = tp->snd_nxt;
        if (!(tp->flags & TF_TIMING)) {
            tp->flags |= TF_TIMING;
            tp->rtt_seq = startseq;
            tp->rtt_start = s->now;
        }
    }
    if (!tp->t_rexmt && !tp->t_persist && tp->snd_nxt != tp->snd_una)
        tcp_set_rexmt(s, tp);
    tp->flags &= ~(TF_ACKNOW | TF_DELACK);
    tp->t_delack = 0;
    tcp_checksum_and_send(s, m, tp->rip);
    return 0;
}

static int tcp_output_segments(struct netstack *s, struct sock *tp)
{
    if (tp->state == TCPS_CLOSED || tp->state == TCPS_LISTEN)
        return 0;
    for (;;) {
        uint8_t flags = tcp_outflags[tp->state];
        if ((flags & TH_SYN) && tp->snd_nxt != tp->snd_una)
            flags &= (uint8_t)~TH_SYN;        /* our SYN is out and not yet acknowledged */
        if ((flags & TH_SYN) == 0 && tp->state < TCPS_ESTABLISHED && !(tp->flags & TF_ACKNOW))
            return 0;
        int more;
        uint32_t len = tcp_send_len(s, tp, &more);
        if ((flags & TH_FIN) && SEQ_LT(tp->snd_nxt + len, tp->snd_una + tp->snd.len))
            flags &= (uint8_t)~TH_FIN;        /* data still follows */
        if ((flags & TH_FIN) && (tp->flags & TF_SENTFIN) &&
            tp->snd_nxt == tp->snd_una + tp->snd.len + 1)
            flags &= (uint8_t)~TH_FIN;        /* FIN out, not being retransmitted */
        if (!tcp_should_send(tp, len, flags)) {
            if (tp->snd.len > tp->snd_nxt - tp->snd_una && !tp->t_rexmt && !tp->t_persist) {
                tp->persist_shift = 0;        /* data waits for a (larger) window: probe */
                tp->t_persist = s->now + (tp->rto > TCP_PERSIST_MIN ? tp->rto : TCP_PERSIST_MIN);
            }
            return 0;
        }
        int r = tcp_send_segment(s, tp, len, flags);
        if (r || !more)
            return r;
    }
}

int tcp_output(struct netstack *s, struct sock *tp)
{
    NET_PROBE_ENTER(NET_L_TCP_OUT);
    int r = tcp_output_segments(s, tp);
    NET_PROBE_LEAVE(NET_L_TCP_OUT);
    return r;
}
