/*
 * DHCP client (RFC 2131, options RFC 2132): the stack configures its own address.
 *
 *   INIT -> SELECTING  DISCOVER broadcast; the first valid OFFER is taken
 *   SELECTING -> REQUESTING  REQUEST broadcast (requested address, server id)
 *   REQUESTING -> BOUND  ACK: address, netmask (option 1), router (option 3), lease (51)
 *                        NAK: back to INIT
 *   BOUND -> RENEWING    at T1 (option 58, else lease/2): REQUEST unicast to the server
 *   RENEWING -> REBINDING  at T2 (option 59, else 7/8 lease): REQUEST broadcast
 *   RENEWING/REBINDING -> BOUND on ACK; -> INIT on NAK or when the lease runs out, which
 *                        also drops the address (the stack answers nothing until bound)
 *
 * Messages go out with the BROADCAST flag, so replies come to 255.255.255.255 and the
 * stack need not accept unicast before it has an address. Retransmission while
 * selecting or requesting: 4, 8, 16, 32, 64, 64 ... s, each +-1 s at random (RFC 2131
 * 4.1); four unanswered REQUESTs send the client back to INIT. Renewing and rebinding
 * retry at half the time left, at least 60 s. Every reply is checked (BOOTREPLY,
 * Ethernet, our xid and MAC, a message type, a server id, options within the message)
 * before anything is taken from it; anything else is counted in dhcp_dropped.
 * Not done: the ARP probe of an offered address (DECLINE), INIT-REBOOT, options beyond
 * the five above (no DNS), and releasing the lease at shutdown.
 */
#include "net_priv.h"

#define DHCP_SERVER_PORT 67
#define DHCP_CLIENT_PORT 68
#define BOOTREQUEST 1
#define BOOTREPLY 2
#define DHCP_FIXED 236                /* op .. file, before the magic cookie */
#define DHCP_COOKIE 0x63825363u
#define DHCP_MIN_LEN 300              /* BOOTP's minimum message (RFC 1542) */
#define DHCP_FLAG_BROADCAST 0x8000

enum { DHCPDISCOVER = 1, DHCPOFFER, DHCPREQUEST, DHCPDECLINE, DHCPACK, DHCPNAK };
enum { OPT_PAD = 0, OPT_MASK = 1, OPT_ROUTER = 3, OPT_REQUESTED_IP = 50, OPT_LEASE = 51,
       OPT_MSG_TYPE = 53, OPT_SERVER_ID = 54, OPT_PARAMS = 55, OPT_T1 = 58, OPT_T2 = 59,
       OPT_END = 255 };

#define RETRY_FIRST_MS 4000
#define RETRY_MAX_MS 64000
#define REQUEST_TRIES 4
#define RENEW_RETRY_MIN_MS 60000

/* What a valid reply carried. */
struct dhcp_reply {
    uint8_t type;
    uint32_t yiaddr, server, mask, router, lease, t1, t2;
};

static uint64_t jitter(struct netstack *s, uint64_t ms)
{
    return ms - 1000 + net_random(s) % 2001;   /* +-1 s */
}

/* A UDP datagram from port 68 to dst:67 with the message m (payload at m's data). */
static void dhcp_send(struct netstack *s, struct mbuf *m, uint32_t dst)
{
    uint8_t *h = mbuf_prepend(m, UDP_HLEN);
    put16(h, DHCP_CLIENT_PORT);
    put16(h + 2, DHCP_SERVER_PORT);
    put16(h + 4, m->len);
    put16(h + 6, 0);
    uint16_t c = cksum_fold(cksum_add(cksum_pseudo(s->ip, dst, IPPROTO_UDP, m->len), h, m->len));
    put16(h + 6, c ? c : 0xffff);
    s->dhcp.sent++;
    ip_output(s, m, dst, IPPROTO_UDP);
}

static uint8_t *put_option(uint8_t *p, uint8_t code, const void *val, uint8_t len)
{
    p[0] = code;
    p[1] = len;
    net_memcpy(p + 2, val, len);
    return p + 2 + len;
}

/* Builds and sends a DISCOVER or REQUEST for the current state. */
static void dhcp_send_message(struct netstack *s, uint8_t type)
{
    struct dhcp *d = &s->dhcp;
    struct mbuf *m = mbuf_get(&s->pool, NET_HEADROOM + UDP_HLEN);
    if (!m) {
        s->st.mbuf_exhausted++;
        return;                       /* the retry timer sends it again */
    }
    uint8_t *b = mbuf_data(m);
    net_memset(b, 0, DHCP_MIN_LEN);
    b[0] = BOOTREQUEST;
    b[1] = 1;                         /* Ethernet */
    b[2] = 6;
    put32(b + 4, d->xid);
    put16(b + 8, (uint16_t)((s->now - d->started) / 1000));
    bool renewing = d->state == DHCP_RENEWING || d->state == DHCP_REBINDING;
    put16(b + 10, renewing ? 0 : DHCP_FLAG_BROADCAST);
    if (renewing)
        put32(b + 12, s->ip);         /* ciaddr */
    net_memcpy(b + 28, s->nif->mac, 6);
    put32(b + DHCP_FIXED, DHCP_COOKIE);
    uint8_t *p = b + DHCP_FIXED + 4;
    p = put_option(p, OPT_MSG_TYPE, &type, 1);
    if (d->state == DHCP_REQUESTING) {
        uint8_t v[4];
        put32(v, d->offered);
        p = put_option(p, OPT_REQUESTED_IP, v, 4);
        put32(v, d->server);
        p = put_option(p, OPT_SERVER_ID, v, 4);
    }
    static const uint8_t params[] = {OPT_MASK, OPT_ROUTER, OPT_LEASE, OPT_T1, OPT_T2};
    p = put_option(p, OPT_PARAMS, params, sizeof params);
    *p++ = OPT_END;
    size_t len = (size_t)(p - b);
    m->len = (uint16_t)(len < DHCP_MIN_LEN ? DHCP_MIN_LEN : len);
    dhcp_send(s, m, d->state == DHCP_RENEWING ? d->server : 0xffffffffu);
}

static void dhcp_enter(struct netstack *s, enum dhcp_state st);

/* INIT: a new transaction, no address. */
static void dhcp_restart(struct netstack *s)
{
    struct dhcp *d = &s->dhcp;
    s->ip = s->mask = s->gw = 0;
    d->xid = (uint32_t)net_random(s);
    d->started = s->now;
    d->backoff = RETRY_FIRST_MS;
    d->tries = 0;
    dhcp_enter(s, DHCP_SELECTING);
}

/* Sends the state's message now and sets its retry. */
static void dhcp_enter(struct netstack *s, enum dhcp_state st)
{
    struct dhcp *d = &s->dhcp;
    d->state = st;
    if (st == DHCP_BOUND) {
        d->timer = d->t1;
        return;
    }
    dhcp_send_message(s, st == DHCP_SELECTING ? DHCPDISCOVER : DHCPREQUEST);
    if (st == DHCP_SELECTING || st == DHCP_REQUESTING) {
        d->timer = s->now + jitter(s, d->backoff);
        d->backoff = d->backoff * 2 > RETRY_MAX_MS ? RETRY_MAX_MS : d->backoff * 2;
        return;
    }
    uint64_t until = st == DHCP_RENEWING ? d->t2 : d->expires;
    uint64_t half = until > s->now ? (until - s->now) / 2 : 0;
    uint64_t next = s->now + (half > RENEW_RETRY_MIN_MS ? half : RENEW_RETRY_MIN_MS);
    d->timer = next < until ? next : until;
}

void net_dhcp_start(struct netstack *s)
{
    dhcp_restart(s);
}

/* Reads the options of a reply into r; false when they run past the message. */
static bool dhcp_options(const uint8_t *p, size_t len, struct dhcp_reply *r)
{
    size_t i = 0;
    while (i < len) {
        uint8_t code = p[i];
        if (code == OPT_END)
            return true;
        if (code == OPT_PAD) {
            i++;
            continue;
        }
        if (i + 2 > len || i + 2 + p[i + 1] > len)
            return false;
        uint8_t olen = p[i + 1];
        const uint8_t *v = p + i + 2;
        if (code == OPT_MSG_TYPE && olen == 1)
            r->type = v[0];
        else if (olen == 4) {
            uint32_t x = get32(v);
            if (code == OPT_SERVER_ID) r->server = x;
            else if (code == OPT_MASK) r->mask = x;
            else if (code == OPT_ROUTER) r->router = x;
            else if (code == OPT_LEASE) r->lease = x;
            else if (code == OPT_T1) r->t1 = x;
            else if (code == OPT_T2) r->t2 = x;
        } else if (code == OPT_ROUTER && olen > 4 && olen % 4 == 0) {
            r->router = get32(v);     /* the first router */
        }
        i += 2u + olen;
    }
    return true;                      /* no END: tolerated, as many servers pad */
}

/* A reply to our transaction, parsed: false for anything that is not. */
static bool dhcp_parse(const struct netstack *s, const uint8_t *b, size_t len, struct dhcp_reply *r)
{
    if (len < DHCP_FIXED + 4 || b[0] != BOOTREPLY || b[1] != 1 || b[2] != 6 ||
        get32(b + 4) != s->dhcp.xid || net_memcmp(b + 28, s->nif->mac, 6) != 0 ||
        get32(b + DHCP_FIXED) != DHCP_COOKIE)
        return false;
    net_memset(r, 0, sizeof *r);
    r->yiaddr = get32(b + 16);
    if (!dhcp_options(b + DHCP_FIXED + 4, len - DHCP_FIXED - 4, r))
        return false;
    return r->type != 0 && r->server != 0;
}

/* A usable address for us: not 0, not loopback, not multicast or above, not the broadcast
 * of its own net. */
static bool usable_address(uint32_t ip, uint32_t mask)
{
    uint8_t top = (uint8_t)(ip >> 24);
    return ip != 0 && top != 127 && top < 224 && (ip | mask) != 0xffffffffu && (ip & ~mask) != 0;
}

/* A contiguous netmask (ones then zeros), or the class default when the server sent none. */
static uint32_t netmask_for(uint32_t ip, uint32_t mask)
{
    if (mask != 0 && (~mask & (~mask + 1)) == 0)
        return mask;
    uint8_t top = (uint8_t)(ip >> 24);
    return top < 128 ? 0xff000000u : top < 192 ? 0xffff0000u : 0xffffff00u;
}

static void dhcp_bind(struct netstack *s, const struct dhcp_reply *r)
{
    struct dhcp *d = &s->dhcp;
    uint32_t mask = netmask_for(r->yiaddr, r->mask);
    if (!usable_address(r->yiaddr, mask)) {
        d->dropped++;
        return;
    }
    s->ip = r->yiaddr;
    s->mask = mask;
    s->gw = (r->router & mask) == (r->yiaddr & mask) && r->router != r->yiaddr ? r->router : 0;
    d->server = r->server;
    d->leases++;
    if (r->lease == 0xffffffffu) {    /* infinite */
        d->t1 = d->t2 = d->expires = UINT64_MAX;
    } else {
        uint64_t lease = (uint64_t)(r->lease ? r->lease : 3600) * 1000;
        uint64_t t1 = r->t1 ? (uint64_t)r->t1 * 1000 : lease / 2;
        uint64_t t2 = r->t2 ? (uint64_t)r->t2 * 1000 : lease / 8 * 7;
        if (t2 > lease)
            t2 = lease;
        if (t1 > t2)
            t1 = t2;
        d->expires = s->now + lease;
        d->t1 = s->now + t1;
        d->t2 = s->now + t2;
    }
    dhcp_enter(s, DHCP_BOUND);
}

static void dhcp_reply(struct netstack *s, const struct dhcp_reply *r)
{
    struct dhcp *d = &s->dhcp;
    if (d->state == DHCP_SELECTING && r->type == DHCPOFFER && r->yiaddr != 0) {
        d->offered = r->yiaddr;
        d->server = r->server;
        d->backoff = RETRY_FIRST_MS;
        d->tries = 0;
        dhcp_enter(s, DHCP_REQUESTING);
    } else if (d->state != DHCP_SELECTING && d->state != DHCP_BOUND && r->type == DHCPACK &&
               (d->state != DHCP_REQUESTING || (r->server == d->server && r->yiaddr == d->offered))) {
        dhcp_bind(s, r);
    } else if (d->state != DHCP_SELECTING && d->state != DHCP_BOUND && r->type == DHCPNAK &&
               r->server == d->server) {
        d->naks++;
        dhcp_restart(s);
    } else {
        d->dropped++;
    }
}

bool dhcp_port(const struct netstack *s, uint16_t sport, uint16_t dport)
{
    return s->dhcp.state != DHCP_OFF && sport == DHCP_SERVER_PORT && dport == DHCP_CLIENT_PORT;
}

void dhcp_input(struct netstack *s, struct mbuf *m)
{
    struct dhcp_reply r;
    if (dhcp_parse(s, mbuf_data(m), m->len, &r))
        dhcp_reply(s, &r);
    else
        s->dhcp.dropped++;
    mbuf_free(&s->pool, m);
}

void dhcp_timer(struct netstack *s)
{
    struct dhcp *d = &s->dhcp;
    if (d->state == DHCP_OFF || d->timer > s->now)
        return;
    switch (d->state) {
    case DHCP_SELECTING:
        dhcp_enter(s, DHCP_SELECTING);
        break;
    case DHCP_REQUESTING:
        if (++d->tries >= REQUEST_TRIES)
            dhcp_restart(s);
        else
            dhcp_enter(s, DHCP_REQUESTING);
        break;
    case DHCP_BOUND:
        d->xid = (uint32_t)net_random(s);
        dhcp_enter(s, DHCP_RENEWING);
        break;
    default:                           /* RENEWING, REBINDING */
        if (s->now >= d->expires)
            dhcp_restart(s);
        else
            dhcp_enter(s, s->now >= d->t2 ? DHCP_REBINDING : d->state);
        break;
    }
}

uint64_t dhcp_next_timer(const struct netstack *s)
{
    return s->dhcp.state == DHCP_OFF ? UINT64_MAX : s->dhcp.timer;
}

enum dhcp_state net_dhcp_state(const struct netstack *s) { return s->dhcp.state; }

void net_address(const struct netstack *s, uint32_t *ip, uint32_t *mask, uint32_t *gw)
{
    *ip = s->ip;
    *mask = s->mask;
    *gw = s->gw;
}

const struct dhcp *net_dhcp(const struct netstack *s) { return &s->dhcp; }
