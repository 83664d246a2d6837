/*
 * TCP RTT estimation and congestion control.
 * RTO (RFC 6298): SRTT and RTTVAR kept in ms << 3; one segment timed at a time; samples
 * of retransmitted segments are not taken (Karn); RTO = SRTT + max(1 ms, 4 RTTVAR),
 * clamped to [TCP_RTO_MIN, TCP_RTO_MAX].
 * Congestion control (RFC 5681): initial window min(4 MSS, max(2 MSS, 4380)), slow start
 * below ssthresh (cwnd += min(acked, MSS)), congestion avoidance above (MSS*MSS/cwnd per
 * ACK), fast retransmit on the third duplicate ACK and NewReno recovery (RFC 6582):
 * partial ACKs retransmit the next hole and deflate cwnd, a full ACK (covering `recover`)
 * ends recovery with cwnd = min(ssthresh, flight + MSS).
 */
#include "net_priv.h"

void tcp_rtt_sample(struct sock *tp, uint32_t rtt_ms)
{
    uint32_t r8 = rtt_ms << 3;
    if (!tp->srtt) {
        tp->srtt = r8;
        tp->rttvar = r8 / 2;
    } else {
        int32_t err = (int32_t)(r8 - tp->srtt);
        tp->srtt = (uint32_t)((int32_t)tp->srtt + err / 8);
        uint32_t aerr = (uint32_t)(err < 0 ? -err : err);
        tp->rttvar = (uint32_t)((int32_t)tp->rttvar + ((int32_t)aerr - (int32_t)tp->rttvar) / 4);
    }
    uint32_t var4 = tp->rttvar >> 1;          /* 4 RTTVAR in ms (rttvar is ms << 3) */
    uint32_t rto = (tp->srtt >> 3) + (var4 ? var4 : 1);
    tp->rto = rto < TCP_RTO_MIN ? TCP_RTO_MIN : rto > TCP_RTO_MAX ? TCP_RTO_MAX : rto;
}

void tcp_cc_init(struct sock *tp)
{
    uint32_t iw = 4 * tp->snd_mss;
    uint32_t cap = 2 * tp->snd_mss > 4380 ? 2 * tp->snd_mss : 4380;
    tp->cwnd = iw < cap ? iw : cap;
    tp->ssthresh = 0x7fffffff;
    tp->dupacks = 0;
}

static uint32_t flight_half(const struct sock *tp)
{
    uint32_t half = (tp->snd_max - tp->snd_una) / 2;
    return half > 2 * tp->snd_mss ? half : 2 * tp->snd_mss;
}

/* New data acknowledged outside recovery. */
void tcp_cc_ack(struct sock *tp, uint32_t acked)
{
    tp->dupacks = 0;
    if (tp->cwnd >= 1u << 30)
        return;                               /* far beyond any window: stop growing */
    if (tp->cwnd <= tp->ssthresh) {
        tp->cwnd += acked < tp->snd_mss ? acked : tp->snd_mss;
    } else {
        uint32_t inc = tp->snd_mss * tp->snd_mss / tp->cwnd;
        tp->cwnd += inc ? inc : 1;
    }
}

/* Resend the first unacknowledged segment now, whatever cwnd allows. */
static void retransmit_first(struct netstack *s, struct sock *tp)
{
    uint32_t onxt = tp->snd_nxt, ocwnd = tp->cwnd;
    tp->snd_nxt = tp->snd_una;
    tp->cwnd = tp->snd_mss;
    tp->flags &= ~TF_TIMING;                  /* Karn: no sample from a resent segment */
    tcp_output(s, tp);
    tp->cwnd = ocwnd;
    if (SEQ_GT(onxt, tp->snd_nxt))
        tp->snd_nxt = onxt;
}

/* A duplicate ACK (caller checked: no data, same window, outstanding data). */
void tcp_cc_dupack(struct netstack *s, struct sock *tp)
{
    tp->dupacks++;
    if (tp->flags & TF_INRECOVERY) {
        tp->cwnd += tp->snd_mss;              /* a segment left the network */
        tcp_output(s, tp);
        return;
    }
    if (tp->dupacks != 3 || SEQ_LT(tp->snd_una, tp->recover))
        return;                               /* RFC 6582: one recovery per window */
    s->st.tcp_fast_rexmt++;
    tp->ssthresh = flight_half(tp);
    tp->recover = tp->snd_max;
    tp->flags |= TF_INRECOVERY;
    tp->t_rexmt = 0;
    retransmit_first(s, tp);
    tp->cwnd = tp->ssthresh + 3 * tp->snd_mss;
    tcp_set_rexmt(s, tp);
    tcp_output(s, tp);
}

/* New data acknowledged during recovery; snd_una already advanced past `acked`. */
void tcp_cc_recovery_ack(struct netstack *s, struct sock *tp, uint32_t acked)
{
    if (SEQ_GEQ(tp->snd_una, tp->recover)) {  /* full ACK: recovery ends */
        uint32_t flight = tp->snd_max - tp->snd_una + tp->snd_mss;
        tp->cwnd = flight < tp->ssthresh ? flight : tp->ssthresh;
        tp->flags &= ~TF_INRECOVERY;
        tp->dupacks = 0;
        return;
    }
    tp->cwnd = tp->cwnd > acked ? tp->cwnd - acked : 0;   /* partial ACK: deflate, */
    tp->cwnd += tp->snd_mss;                             /* resend the next hole */
    retransmit_first(s, tp);
}

void tcp_cc_timeout(struct sock *tp)
{
    tp->ssthresh = flight_half(tp);
    tp->cwnd = tp->snd_mss;
    tp->recover = tp->snd_max;
    tp->flags &= ~(TF_INRECOVERY | TF_TIMING);
    tp->dupacks = 0;
}
