/*
 * TCP timers, driven by net_tick (absolute deadlines in ms, 0 = off; no periodic scan of
 * idle connections beyond the check of their deadlines):
 *   retransmit  RTO << backoff (RFC 6298 5.5), slow start again, dropped after
 *               TCP_MAX_REXMT tries with ETIMEDOUT;
 *   persist     a one-byte probe into a zero window, with backoff;
 *   delayed ACK the ACK owed for a single segment after TCP_DELACK_MS;
 *   keep-alive  after TCP_KEEP_IDLE_MS idle, probes every TCP_KEEP_INTVL_MS, dropped
 *               after TCP_KEEP_PROBES unanswered ones (RFC 9293 3.8.4);
 *   2MSL        TIME_WAIT, and FIN_WAIT_2 of a closed socket.
 */
#include "net_priv.h"

void tcp_set_rexmt(struct netstack *s, struct sock *tp)
{
    uint64_t rto = (uint64_t)tp->rto << (tp->rexmt_shift < 16 ? tp->rexmt_shift : 16);
    tp->t_rexmt = s->now + (rto < TCP_RTO_MAX ? rto : TCP_RTO_MAX);
}

void tcp_enter_time_wait(struct netstack *s, struct sock *tp)
{
    tp->state = TCPS_TIME_WAIT;
    tp->t_rexmt = tp->t_persist = tp->t_keep = 0;
    tp->t_2msl = s->now + 2 * TCP_MSL_MS;
    ring_drop(&tp->snd, tp->snd.len);
}

static int tcp_rexmt_timeout(struct netstack *s, struct sock *tp)
{
    tp->t_rexmt = 0;
    if (++tp->rexmt_shift > TCP_MAX_REXMT) {
        tcp_drop(s, tp, NET_ETIMEDOUT);
        return 1;
    }
    s->st.tcp_rexmt++;
    tcp_cc_timeout(tp);
    tp->snd_nxt = tp->snd_una;
    tcp_output(s, tp);
    if (!tp->t_rexmt && tp->snd_nxt != tp->snd_una)
        tcp_set_rexmt(s, tp);
    return 0;
}

static void tcp_persist_timeout(struct netstack *s, struct sock *tp)
{
    s->st.tcp_persist++;
    tp->t_persist = 0;
    if (tp->snd_wnd == 0)
        tp->snd_nxt = tp->snd_una;            /* the probe resends the first byte */
    tp->flags |= TF_FORCE;
    tcp_output(s, tp);
    tp->flags &= ~TF_FORCE;
    if (tp->snd_wnd == 0 && tp->snd.len) {
        uint64_t t = (uint64_t)(tp->rto > TCP_PERSIST_MIN ? tp->rto : TCP_PERSIST_MIN)
                     << (tp->persist_shift < 16 ? tp->persist_shift : 16);
        tp->persist_shift++;
        tp->t_persist = s->now + (t < TCP_PERSIST_MAX ? t : TCP_PERSIST_MAX);
        tp->t_rexmt = 0;
    }
}

static int tcp_keep_timeout(struct netstack *s, struct sock *tp)
{
    tp->t_keep = 0;
    if (!(tp->flags & TF_KEEPALIVE) || tp->state < TCPS_ESTABLISHED ||
        tp->state > TCPS_CLOSE_WAIT)
        return 0;
    if (s->now - tp->last_rcv < TCP_KEEP_IDLE_MS) {
        tp->t_keep = tp->last_rcv + TCP_KEEP_IDLE_MS;
        return 0;
    }
    if (tp->keep_probes >= TCP_KEEP_PROBES) {
        tcp_drop(s, tp, NET_ETIMEDOUT);
        return 1;
    }
    s->st.tcp_keepalive++;
    tp->keep_probes++;
    tcp_respond(s, tp->rip, tp->lport, tp->rport, tp->snd_una - 1, tp->rcv_nxt, TH_ACK,
                tcp_window_field(tp, 0));
    tp->t_keep = s->now + TCP_KEEP_INTVL_MS;
    return 0;
}

int tcp_timers(struct netstack *s, struct sock *tp)
{
    uint64_t now = s->now;
    if (tp->t_2msl && now >= tp->t_2msl) {
        tp->t_2msl = 0;
        if (tp->state == TCPS_TIME_WAIT || tp->state == TCPS_FIN_WAIT_2) {
            tcp_closed(s, tp);                /* FIN_WAIT_2 is timed only for orphans */
            return !tp->used;
        }
    }
    if (tp->t_delack && now >= tp->t_delack) {
        tp->t_delack = 0;
        tp->flags |= TF_ACKNOW;
        tcp_output(s, tp);
    }
    if (tp->t_rexmt && now >= tp->t_rexmt && tcp_rexmt_timeout(s, tp))
        return 1;
    if (tp->t_persist && now >= tp->t_persist)
        tcp_persist_timeout(s, tp);
    if (tp->t_keep && now >= tp->t_keep && tcp_keep_timeout(s, tp))
        return 1;
    return 0;
}

uint64_t tcp_next_timer(const struct sock *tp)
{
    uint64_t t = UINT64_MAX;
    const uint64_t all[] = {tp->t_rexmt, tp->t_persist, tp->t_delack, tp->t_keep, tp->t_2msl};
    for (unsigned i = 0; i < sizeof all / sizeof all[0]; i++)
        if (all[i] && all[i] < t)
            t = all[i];
    return t;
}
