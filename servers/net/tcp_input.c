/*
 * TCP input (RFC 9293 3.10.7, "SEGMENT ARRIVES", in the order of 4.4BSD's tcp_input):
 * checksum and header checks, connection lookup, header prediction for the two common
 * cases of an established connection (a pure ACK for new data; in-order data with nothing
 * outstanding), then the general path: LISTEN and SYN-SENT, trimming to the receive
 * window, RST (RFC 5961: only an exact sequence number resets, others get a challenge
 * ACK), SYN in a synchronized state (challenge ACK), ACK processing with duplicate-ACK
 * counting and NewReno (tcp_cc.c), window update, in-order data and reassembly of
 * out-of-order segments, FIN and the closing states.
 *
 * Receive segmentation offload (NETIF_RX_TSO, docs/net.md "Receive segmentation
 * offload"): a segment may be a super-segment, many MSS of data in one, read in place
 * (mbuf_in). The window, sequence and ACK checks are the same for it; its in-order data
 * goes into the receive buffer straight from the driver's buffer, and only out-of-order
 * data is copied, into mbufs of its own (the frame is gone after the call). ACKs follow
 * the bytes (tcp_ack_rule): a segment holding two full-sized segments' worth is
 * acknowledged at once, as Linux's quick-ACK rule does ("more than one full frame
 * received"), so a super-segment never waits for the delayed-ACK timer.
 */
#include "net_priv.h"

/* A parsed segment. */
struct seg {
    uint32_t src, dst, seq, ack;
    uint16_t sport, dport, wnd, mss;
    uint8_t flags, wscale, has_ws, optlen;
    uint32_t tlen;                 /* data bytes (after trimming) */
};

static void tcp_discard(struct netstack *s, struct mbuf *m)
{
    if (m)
        mbuf_free(&s->pool, m);
}

/* The MSS and window-scale options; anything malformed ends the parse (options ignored). */
static void tcp_parse_options(struct seg *sg, const uint8_t *o, unsigned len)
{
    while (len > 0) {
        uint8_t kind = o[0];
        if (kind == 0)
            return;
        if (kind == 1) {
            o++;
            len--;
            continue;
        }
        if (len < 2 || o[1] < 2 || o[1] > len)
            return;
        if (kind == 2 && o[1] == 4)
            sg->mss = get16(o + 2);
        if (kind == 3 && o[1] == 3) {
            sg->has_ws = 1;
            sg->wscale = o[2] > 14 ? 14 : o[2];   /* RFC 7323: larger shifts mean 14 */
        }
        len -= o[1];
        o += o[1];
    }
}

/* RST in answer to a segment that belongs to no connection (RFC 9293 CLOSED state). */
static void tcp_reset_reply(struct netstack *s, const struct seg *sg)
{
    if (sg->flags & TH_RST)
        return;
    s->st.tcp_rst_sent++;
    if (sg->flags & TH_ACK) {
        tcp_respond(s, sg->src, sg->dport, sg->sport, sg->ack, 0, TH_RST, 0);
    } else {
        uint32_t len = sg->tlen + ((sg->flags & TH_SYN) ? 1 : 0) + ((sg->flags & TH_FIN) ? 1 : 0);
        tcp_respond(s, sg->src, sg->dport, sg->sport, 0, sg->seq + len, TH_RST | TH_ACK, 0);
    }
}

/* Take the peer's SYN options: MSS and, if both sides offered it, window scaling. */
static void tcp_syn_options(struct netstack *s, struct sock *tp, const struct seg *sg)
{
    uint32_t ours = (uint32_t)s->nif->mtu - IP_HLEN - TCP_HLEN;
    uint32_t mss = sg->mss ? sg->mss : 536;
    tp->snd_mss = mss < ours ? (mss < 64 ? 64 : mss) : ours;
    if (sg->has_ws) {
        tp->flags |= TF_RCVD_WS;
        tp->snd_scale = sg->wscale;
        uint8_t shift = 0;
        while (shift < 14 && ((uint32_t)NET_SOCKBUF >> shift) > 65535)
            shift++;
        tp->rcv_scale = shift;
    } else {
        tp->snd_scale = tp->rcv_scale = 0;
    }
}

/* Step 1 of the common path: new connection on a listener (SYN-flood bounded by
 * the backlog: a full listener drops the SYN and the peer retries). */
static void tcp_listen_input(struct netstack *s, struct sock *lp, const struct seg *sg)
{
    if (sg->flags & TH_RST)
        return;
    if (sg->flags & TH_ACK) {
        tcp_reset_reply(s, sg);
        return;
    }
    if (!(sg->flags & TH_SYN))
        return;
    struct sock *tp = lp->qlen < lp->backlog ? sock_alloc(s, NET_SOCK_STREAM) : 0;
    if (!tp) {
        s->st.tcp_syn_dropped++;
        return;
    }
    tp->lip = sg->dst;
    tp->lport = sg->dport;
    tp->rip = sg->src;
    tp->rport = sg->sport;
    tp->parent = (int)(lp - s->socks);
    tp->flags |= lp->flags & (TF_NODELAY | TF_KEEPALIVE);
    lp->qlen++;
    tcp_syn_options(s, tp, sg);
    tp->irs = sg->seq;
    tp->rcv_nxt = tp->rcv_adv = sg->seq + 1;
    tp->iss = tcp_new_iss(s);
    tp->snd_una = tp->snd_nxt = tp->snd_max = tp->recover = tp->iss;
    tp->snd_wnd = sg->wnd;
    tp->snd_wl1 = sg->seq;
    tp->last_rcv = s->now;
    tp->state = TCPS_SYN_RECEIVED;
    tcp_output(s, tp);
}

static void tcp_established(struct netstack *s, struct sock *tp, const struct seg *sg)
{
    tp->state = TCPS_ESTABLISHED;
    tp->snd_wnd = (uint32_t)sg->wnd << tp->snd_scale;
    tp->max_sndwnd = tp->snd_wnd;
    tp->snd_wl1 = sg->seq;
    tp->snd_wl2 = sg->ack;
    tcp_cc_init(tp);
    if (tp->flags & TF_KEEPALIVE)
        tp->t_keep = s->now + TCP_KEEP_IDLE_MS;
}

static void tcp_syn_sent_input(struct netstack *s, struct sock *tp, const struct seg *sg)
{
    int ack = sg->flags & TH_ACK;
    if (ack && (SEQ_LEQ(sg->ack, tp->iss) || SEQ_GT(sg->ack, tp->snd_max))) {
        tcp_reset_reply(s, sg);
        return;
    }
    if (sg->flags & TH_RST) {
        if (ack)
            tcp_drop(s, tp, NET_ECONNREFUSED);
        return;
    }
    if (!(sg->flags & TH_SYN))
        return;
    tcp_syn_options(s, tp, sg);
    tp->irs = sg->seq;
    tp->rcv_nxt = tp->rcv_adv = sg->seq + 1;
    tp->flags |= TF_ACKNOW;
    if (ack) {
        tp->snd_una = sg->ack;
        tp->flags &= ~TF_TIMING;
        tcp_rtt_sample(tp, (uint32_t)(s->now - tp->rtt_start));
        tp->t_rexmt = 0;
        tp->rexmt_shift = 0;
        tcp_established(s, tp, sg);
        tp->snd_wnd = tp->max_sndwnd = sg->wnd;  /* a SYN's window is never scaled */
    } else {
        tp->state = TCPS_SYN_RECEIVED;        /* simultaneous open: resend SYN as SYN,ACK */
        tp->snd_nxt = tp->snd_una;
        tp->snd_wnd = sg->wnd;
    }
    tcp_output(s, tp);
}

/* Step 4: RST in a synchronized state (tp may be freed). */
static void tcp_rst_input(struct netstack *s, struct sock *tp, const struct seg *sg)
{
    uint32_t wnd = tcp_rcv_space(tp);
    if (sg->seq != tp->rcv_nxt) {
        if (SEQ_GEQ(sg->seq, tp->rcv_nxt) && SEQ_LT(sg->seq, tp->rcv_nxt + (wnd ? wnd : 1))) {
            s->st.tcp_challenge_ack++;        /* RFC 5961 3.2 */
            tp->flags |= TF_ACKNOW;
            tcp_output(s, tp);
        }
        return;
    }
    switch (tp->state) {
    case TCPS_SYN_RECEIVED:                   /* never answer a RST with a RST */
        tp->error = tp->parent >= 0 ? NET_ECONNRESET : NET_ECONNREFUSED;
        tcp_closed(s, tp);
        break;
    case TCPS_CLOSING: case TCPS_LAST_ACK: case TCPS_TIME_WAIT:
        tcp_closed(s, tp);
        break;
    default:
        tp->error = NET_ECONNRESET;
        tcp_closed(s, tp);
    }
}

/* Trim the segment to the receive window (RFC 9293 acceptability test). Returns the
 * byte offset of the first new data byte; clears FIN and data that fall outside. */
static uint32_t tcp_trim(struct netstack *s, struct sock *tp, struct seg *sg)
{
    uint32_t skip = 0;
    int32_t todrop = (int32_t)(tp->rcv_nxt - sg->seq);
    if (todrop > 0) {
        if ((uint32_t)todrop > sg->tlen || ((uint32_t)todrop == sg->tlen && !(sg->flags & TH_FIN))) {
            if (sg->tlen || (sg->flags & TH_FIN))
                s->st.tcp_dup_data++;
            tp->flags |= TF_ACKNOW;           /* a duplicate: tell the peer where we are */
            if ((uint32_t)todrop > sg->tlen)
                sg->flags &= (uint8_t)~TH_FIN;
            todrop = (int32_t)sg->tlen;
        }
        skip = (uint32_t)todrop;
        sg->seq += skip;
        sg->tlen -= skip;
    }
    uint32_t wnd = tcp_rcv_space(tp);
    int32_t over = (int32_t)(sg->seq + sg->tlen - (tp->rcv_nxt + wnd));
    if (over > 0) {
        tp->flags |= TF_ACKNOW;               /* beyond the window, or a window probe */
        sg->flags &= (uint8_t)~TH_FIN;
        sg->tlen = (uint32_t)over >= sg->tlen ? 0 : sg->tlen - (uint32_t)over;
    }
    return skip;
}

static void tcp_fin_input(struct netstack *s, struct sock *tp)
{
    tp->rcv_nxt++;
    tp->flags |= TF_RCVDFIN | TF_ACKNOW;
    tp->flags &= ~TF_OOOFIN;
    switch (tp->state) {
    case TCPS_SYN_RECEIVED: case TCPS_ESTABLISHED:
        tp->state = TCPS_CLOSE_WAIT;
        break;
    case TCPS_FIN_WAIT_1:
        tp->state = TCPS_CLOSING;
        break;
    case TCPS_FIN_WAIT_2:
        tcp_enter_time_wait(s, tp);
        break;
    default:
        break;
    }
}

/* An in-order segment of tlen data bytes was taken: acknowledge it at once if an ACK was
 * owed already (at least every second segment) or if it alone is two full-sized
 * segments' worth (a super-segment); else delay the ACK. */
static void tcp_ack_rule(struct netstack *s, struct sock *tp, uint32_t tlen)
{
    uint32_t full = (uint32_t)s->nif->mtu - IP_HLEN - TCP_HLEN;   /* the MSS we offered */
    if ((tp->flags & TF_DELACK) || tlen >= 2 * full) {
        tp->flags |= TF_ACKNOW;
    } else {
        tp->flags |= TF_DELACK;
        tp->t_delack = s->now + TCP_DELACK_MS;
    }
}

/* Put m (data seq .. seq + len, fin) in order into the queue of out-of-order segments. */
static void tcp_reass_link(struct sock *tp, struct mbuf *m)
{
    struct mbuf **pp = &tp->reass;
    while (*pp && SEQ_LEQ((*pp)->seq, m->seq))
        pp = &(*pp)->next;
    m->next = *pp;
    *pp = m;
    tp->nreass++;
}

/* An out-of-order super-segment: its data copied into mbufs of up to NET_MBUF_DATA bytes
 * (it lives in the driver's buffer only during the call), each queued, the FIN on the
 * last; what does not fit the queue or the pool is dropped (the peer sends it again). */
static void tcp_reass_copy(struct netstack *s, struct sock *tp, const struct mbuf *m,
                           const struct seg *sg)
{
    for (uint32_t done = 0; done < sg->tlen && tp->nreass < NET_TCP_REASS_MAX;) {
        struct mbuf *piece = mbuf_get(&s->pool, 0);
        if (!piece) {
            s->st.mbuf_exhausted++;
            return;
        }
        uint32_t n = sg->tlen - done < NET_MBUF_DATA ? sg->tlen - done : NET_MBUF_DATA;
        net_memcpy(piece->buf, mbuf_in(m) + done, n);
        piece->len = n;
        piece->seq = sg->seq + done;
        done += n;
        piece->fin = done == sg->tlen && (sg->flags & TH_FIN);
        tcp_reass_link(tp, piece);
    }
}

/* Queue an out-of-order segment (sorted by sequence; overlaps resolved on delivery).
 * Returns m if it was not kept. */
static struct mbuf *tcp_reass_insert(struct netstack *s, struct sock *tp, struct mbuf *m,
                                     const struct seg *sg)
{
    s->st.tcp_ooo++;
    if (tp->nreass >= NET_TCP_REASS_MAX)
        return m;
    if (m->ext && sg->tlen) {
        tcp_reass_copy(s, tp, m, sg);
        return m;
    }
    m->ext = 0;                               /* no data left to read in place */
    m->seq = sg->seq;
    m->len = sg->tlen;
    m->fin = (sg->flags & TH_FIN) != 0;
    tcp_reass_link(tp, m);
    return 0;
}

/* Deliver queued segments that have become in-order. */
static void tcp_reass_pull(struct netstack *s, struct sock *tp)
{
    while (tp->reass && SEQ_LEQ(tp->reass->seq, tp->rcv_nxt) && !(tp->flags & TF_RCVDFIN)) {
        struct mbuf *m = tp->reass;
        tp->reass = m->next;
        tp->nreass--;
        uint32_t skip = tp->rcv_nxt - m->seq;
        if (skip < m->len) {
            uint32_t n = ring_write(&tp->rcv, mbuf_data(m) + skip, m->len - skip);
            tp->rcv_nxt += n;
        }
        if (m->fin && skip <= m->len)
            tcp_fin_input(s, tp);
        mbuf_free(&s->pool, m);
    }
}

/* Data and FIN of an acceptable segment; m's data starts at the first new byte.
 * Returns the mbuf if it was not kept. */
static struct mbuf *tcp_data_input(struct netstack *s, struct sock *tp, struct mbuf *m,
                                   struct seg *sg)
{
    if (tp->state > TCPS_FIN_WAIT_2 || tp->state == TCPS_CLOSE_WAIT ||
        tp->state == TCPS_CLOSING || tp->state == TCPS_LAST_ACK || (tp->flags & TF_RCVDFIN)) {
        if (tp->state == TCPS_TIME_WAIT && (sg->flags & TH_FIN)) {
            tp->flags |= TF_ACKNOW;           /* the peer resent its FIN */
            tp->t_2msl = s->now + 2 * TCP_MSL_MS;
        }
        return m;
    }
    if (sg->seq == tp->rcv_nxt && !tp->reass) {
        if (sg->tlen) {
            tp->rcv_nxt += ring_write(&tp->rcv, mbuf_in(m), sg->tlen);
            tcp_ack_rule(s, tp, sg->tlen);
        }
        if (sg->flags & TH_FIN)
            tcp_fin_input(s, tp);
        return m;
    }
    if (sg->tlen || (sg->flags & TH_FIN)) {
        tp->flags |= TF_ACKNOW;               /* out of order: duplicate ACK at once */
        m = tcp_reass_insert(s, tp, m, sg);
        tcp_reass_pull(s, tp);
        return m;
    }
    return m;
}

/* Step 5: the ACK field in a synchronized state; returns 1 if tp is gone. */
static int tcp_ack_input(struct netstack *s, struct sock *tp, const struct seg *sg)
{
    if (SEQ_LEQ(sg->ack, tp->snd_una)) {
        if (sg->tlen == 0 && !(sg->flags & TH_FIN) && sg->ack == tp->snd_una &&
            ((uint32_t)sg->wnd << tp->snd_scale) == tp->snd_wnd && tp->snd_max != tp->snd_una)
            tcp_cc_dupack(s, tp);
        else
            tp->dupacks = 0;
        return 0;
    }
    if (SEQ_GT(sg->ack, tp->snd_max)) {
        tp->flags |= TF_ACKNOW;               /* acknowledges something not yet sent */
        return 0;
    }
    uint32_t acked = sg->ack - tp->snd_una;
    if ((tp->flags & TF_TIMING) && SEQ_GT(sg->ack, tp->rtt_seq)) {
        tp->flags &= ~TF_TIMING;
        tcp_rtt_sample(tp, (uint32_t)(s->now - tp->rtt_start));
    }
    tp->rexmt_shift = 0;
    int finacked = (tp->flags & TF_SENTFIN) && acked > tp->snd.len;
    ring_drop(&tp->snd, finacked ? tp->snd.len : acked);
    tp->snd_una = sg->ack;
    if (SEQ_LT(tp->snd_nxt, tp->snd_una))
        tp->snd_nxt = tp->snd_una;
    if (tp->flags & TF_INRECOVERY)
        tcp_cc_recovery_ack(s, tp, acked);
    else
        tcp_cc_ack(tp, acked);
    if (tp->snd_una == tp->snd_max)
        tp->t_rexmt = 0;
    else
        tcp_set_rexmt(s, tp);
    if (!finacked)
        return 0;
    if (tp->state == TCPS_FIN_WAIT_1) {
        tp->state = TCPS_FIN_WAIT_2;
        if (tp->flags & TF_ORPHAN)            /* nobody will read: do not wait forever */
            tp->t_2msl = s->now + 2 * TCP_MSL_MS;
    } else if (tp->state == TCPS_CLOSING) {
        tcp_enter_time_wait(s, tp);
    } else if (tp->state == TCPS_LAST_ACK) {
        tcp_closed(s, tp);
        return 1;
    }
    return 0;
}

static void tcp_window_update(struct sock *tp, const struct seg *sg)
{
    if (SEQ_LT(tp->snd_wl1, sg->seq) ||
        (tp->snd_wl1 == sg->seq && SEQ_LEQ(tp->snd_wl2, sg->ack))) {
        tp->snd_wnd = (uint32_t)sg->wnd << tp->snd_scale;
        if (tp->snd_wnd > tp->max_sndwnd)
            tp->max_sndwnd = tp->snd_wnd;
        tp->snd_wl1 = sg->seq;
        tp->snd_wl2 = sg->ack;
        if (tp->snd_wnd)
            tp->t_persist = 0;
    }
}

/* SYN-RECEIVED: the ACK completing the handshake; returns 1 if tp is gone. */
static int tcp_syn_received_ack(struct netstack *s, struct sock *tp, const struct seg *sg)
{
    if (!SEQ_GT(sg->ack, tp->snd_una) || SEQ_GT(sg->ack, tp->snd_max)) {
        tcp_reset_reply(s, sg);
        return 1;
    }
    tcp_established(s, tp, sg);
    tp->snd_una++;                            /* our SYN is acknowledged */
    if (tp->flags & TF_TIMING) {
        tp->flags &= ~TF_TIMING;
        tcp_rtt_sample(tp, (uint32_t)(s->now - tp->rtt_start));
    }
    tp->rexmt_shift = 0;
    tp->t_rexmt = 0;
    if (tp->parent >= 0) {
        tp->flags |= TF_ACCEPTQ;
        tp->qorder = s->accept_seq++;
    }
    return 0;
}

/* Header prediction (Van Jacobson, 4.4BSD): returns 1 if the segment was handled. */
static int tcp_predicted(struct netstack *s, struct sock *tp, struct mbuf *m,
                         const struct seg *sg)
{
    if (tp->state != TCPS_ESTABLISHED || (sg->flags & (TH_SYN | TH_FIN | TH_RST | TH_URG | TH_ACK)) != TH_ACK ||
        sg->optlen || sg->seq != tp->rcv_nxt || ((uint32_t)sg->wnd << tp->snd_scale) != tp->snd_wnd ||
        tp->snd_nxt != tp->snd_max || (tp->flags & TF_INRECOVERY))
        return 0;
    if (sg->tlen == 0) {
        if (!SEQ_GT(sg->ack, tp->snd_una) || SEQ_GT(sg->ack, tp->snd_max) || tp->dupacks)
            return 0;
        s->st.tcp_hdrpred_ack++;
        uint32_t acked = sg->ack - tp->snd_una;
        if ((tp->flags & TF_TIMING) && SEQ_GT(sg->ack, tp->rtt_seq)) {
            tp->flags &= ~TF_TIMING;
            tcp_rtt_sample(tp, (uint32_t)(s->now - tp->rtt_start));
        }
        tcp_cc_ack(tp, acked);
        ring_drop(&tp->snd, acked);
        tp->snd_una = sg->ack;
        tp->snd_wl2 = sg->ack;
        tp->rexmt_shift = 0;
        if (tp->snd_una == tp->snd_max)
            tp->t_rexmt = 0;
        else
            tcp_set_rexmt(s, tp);
        mbuf_free(&s->pool, m);
        if (tp->snd.len > tp->snd_nxt - tp->snd_una)
            tcp_output(s, tp);
        return 1;
    }
    if (sg->ack != tp->snd_una || tp->reass || sg->tlen > tcp_rcv_space(tp))
        return 0;
    s->st.tcp_hdrpred_data++;
    tp->rcv_nxt += ring_write(&tp->rcv, mbuf_in(m), sg->tlen);
    mbuf_free(&s->pool, m);
    tcp_ack_rule(s, tp, sg->tlen);
    if (tp->flags & TF_ACKNOW)
        tcp_output(s, tp);
    return 1;
}

/* Steps 2-8 for a synchronized connection (or SYN-RECEIVED). */
static void tcp_sync_input(struct netstack *s, struct sock *tp, struct mbuf *m, struct seg *sg)
{
    if (sg->flags & TH_RST) {
        tcp_rst_input(s, tp, sg);
        return tcp_discard(s, m);
    }
    if ((sg->flags & TH_SYN) && sg->seq == tp->irs && (sg->flags & TH_ACK)) {
        sg->flags &= (uint8_t)~TH_SYN;        /* a repeated SYN,ACK (or simultaneous */
        sg->seq++;                            /* open): drop the SYN, use the ACK */
        tp->flags |= TF_ACKNOW;
    }
    if (sg->flags & TH_SYN) {
        if (tp->state == TCPS_SYN_RECEIVED && sg->seq == tp->irs) {
            tp->snd_nxt = tp->snd_una;        /* our SYN,ACK was lost: resend it */
        } else {
            s->st.tcp_challenge_ack++;        /* RFC 5961 4.2 */
            tp->flags |= TF_ACKNOW;
        }
        tcp_output(s, tp);
        return tcp_discard(s, m);
    }
    mbuf_adj(m, tcp_trim(s, tp, sg));
    m->len = sg->tlen;
    if (!(sg->flags & TH_ACK)) {
        tcp_output(s, tp);
        return tcp_discard(s, m);
    }
    if (tp->state == TCPS_SYN_RECEIVED && tcp_syn_received_ack(s, tp, sg))
        return tcp_discard(s, m);
    if (tcp_ack_input(s, tp, sg))
        return tcp_discard(s, m);
    tcp_window_update(tp, sg);
    m = tcp_data_input(s, tp, m, sg);
    tcp_discard(s, m);
    if (tp->used)
        tcp_output(s, tp);
}

static void tcp_segment_input(struct netstack *s, struct mbuf *m, uint32_t src, uint32_t dst)
{
    const uint8_t *h = mbuf_in(m);
    unsigned hlen = m->len >= TCP_HLEN ? (h[12] >> 4) * 4u : 0;
    if (m->len < TCP_HLEN || hlen < TCP_HLEN || hlen > m->len) {
        s->st.rx_drop_tcp++;
        return tcp_discard(s, m);
    }
    if (!m->csum_ok &&
        cksum_fold(cksum_add(cksum_pseudo(src, dst, IPPROTO_TCP, m->len), h, m->len)) != 0) {
        s->st.tcp_bad_cksum++;
        return tcp_discard(s, m);
    }
    struct seg sg = {
        .src = src, .dst = dst, .sport = get16(h), .dport = get16(h + 2), .seq = get32(h + 4),
        .ack = get32(h + 8), .flags = h[13] & 0x3f, .wnd = get16(h + 14),
        .optlen = (uint8_t)(hlen - TCP_HLEN), .tlen = m->len - hlen,
    };
    tcp_parse_options(&sg, h + TCP_HLEN, hlen - TCP_HLEN);
    mbuf_adj(m, hlen);
    struct sock *tp = tcp_lookup(s, dst, sg.dport, src, sg.sport);
    if (!tp) {
        tcp_reset_reply(s, &sg);
        return tcp_discard(s, m);
    }
    if (tp->state == TCPS_LISTEN) {
        tcp_listen_input(s, tp, &sg);
        return tcp_discard(s, m);
    }
    if (tp->state == TCPS_SYN_SENT) {
        tcp_syn_sent_input(s, tp, &sg);
        return tcp_discard(s, m);
    }
    tp->last_rcv = s->now;
    tp->keep_probes = 0;
    if (tp->t_keep)
        tp->t_keep = s->now + TCP_KEEP_IDLE_MS;
    if (tcp_predicted(s, tp, m, &sg))
        return;
    tcp_sync_input(s, tp, m, &sg);
}

void tcp_input(struct netstack *s, struct mbuf *m, uint32_t src, uint32_t dst)
{
    NET_PROBE_ENTER(NET_L_TCP_IN);
    tcp_segment_input(s, m, src, dst);
    NET_PROBE_LEAVE(NET_L_TCP_IN);
}
