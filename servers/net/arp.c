/*
 * ARP (RFC 826) for IPv4 over Ethernet: a small cache with expiry, and per unresolved
 * address a queue of up to NET_ARP_PENDING frames that go out when the reply comes.
 * A request is retried every NET_ARP_RETRY_MS, NET_ARP_TRIES times; then the queued
 * frames are dropped (arp_timeouts). When the cache is full the oldest entry is reused.
 */
#include "net_priv.h"

#define ARP_FREE 0
#define ARP_RESOLVING 1
#define ARP_RESOLVED 2
#define ARP_LEN 28

static struct arp_entry *arp_find(struct netstack *s, uint32_t ip)
{
    for (unsigned i = 0; i < NET_ARP_ENTRIES; i++)
        if (s->arp[i].state != ARP_FREE && s->arp[i].ip == ip)
            return &s->arp[i];
    return 0;
}

static void arp_clear(struct netstack *s, struct arp_entry *e)
{
    mbuf_free_chain(&s->pool, e->pending);
    e->pending = 0;
    e->npending = 0;
    e->state = ARP_FREE;
}

/* A free entry, else the one expiring first (its queued frames are dropped). */
static struct arp_entry *arp_slot(struct netstack *s)
{
    struct arp_entry *victim = &s->arp[0];
    for (unsigned i = 0; i < NET_ARP_ENTRIES; i++) {
        if (s->arp[i].state == ARP_FREE)
            return &s->arp[i];
        if (s->arp[i].expires < victim->expires)
            victim = &s->arp[i];
    }
    arp_clear(s, victim);
    return victim;
}

static void arp_send(struct netstack *s, uint16_t op, const uint8_t *tha, uint32_t tip)
{
    struct mbuf *m = mbuf_get(&s->pool, ETH_HLEN);
    if (!m) {
        s->st.mbuf_exhausted++;
        return;
    }
    uint8_t *p = mbuf_data(m);
    put16(p, 1);                 /* Ethernet */
    put16(p + 2, ETHERTYPE_IP);
    p[4] = 6;
    p[5] = 4;
    put16(p + 6, op);
    net_memcpy(p + 8, s->nif->mac, 6);
    put32(p + 14, s->ip);
    if (tha)
        net_memcpy(p + 18, tha, 6);
    else
        net_memset(p + 18, 0, 6);
    put32(p + 24, tip);
    m->len = ARP_LEN;
    ether_output(s, m, tha, ETHERTYPE_ARP);
}

/* Send every frame waiting for `e` now that its address is known. */
static void arp_flush(struct netstack *s, struct arp_entry *e)
{
    struct mbuf *m = e->pending;
    e->pending = 0;
    e->npending = 0;
    while (m) {
        struct mbuf *next = m->next;
        m->next = 0;
        ether_output(s, m, e->mac, ETHERTYPE_IP);
        m = next;
    }
}

/* What a packet from ip at mac teaches: a reply confirms the entry (Linux: REACHABLE); a
 * request creates an unconfirmed one (STALE) and, with the same MAC, leaves a confirmed
 * one as it is, as Linux does. */
static void arp_learn(struct netstack *s, uint32_t ip, const uint8_t *mac, int create,
                      bool reply)
{
    struct arp_entry *e = arp_find(s, ip);
    if (!e && !create)
        return;
    if (!e) {
        e = arp_slot(s);
        e->ip = ip;
        e->confirmed = 0;
    }
    if (reply)
        e->confirmed = s->now ? s->now : 1;
    else if (e->state != ARP_RESOLVED || net_memcmp(e->mac, mac, 6))
        e->confirmed = 0;
    net_memcpy(e->mac, mac, 6);
    e->state = ARP_RESOLVED;
    e->expires = s->now + NET_ARP_EXPIRE_MS;
    arp_flush(s, e);
}

void arp_input(struct netstack *s, struct mbuf *m)
{
    const uint8_t *p = mbuf_data(m);
    if (m->len < ARP_LEN || get16(p) != 1 || get16(p + 2) != ETHERTYPE_IP || p[4] != 6 ||
        p[5] != 4) {
        s->st.rx_drop_arp++;
        mbuf_free(&s->pool, m);
        return;
    }
    uint16_t op = get16(p + 6);
    uint32_t sip = get32(p + 14), tip = get32(p + 24);
    uint8_t sha[6];
    net_memcpy(sha, p + 8, 6);
    mbuf_free(&s->pool, m);
    if (sip == 0 || sip == s->ip)
        return;
    int for_us = tip == s->ip && s->ip != 0;   /* no address yet (DHCP): answer nothing */
    arp_learn(s, sip, sha, for_us, op == 2);   /* RFC 826: merge, add only if for us */
    if (for_us && op == 1)
        arp_send(s, 2, sha, sip);
}

void arp_resolve_and_send(struct netstack *s, struct mbuf *m, uint32_t nexthop)
{
    struct arp_entry *e = arp_find(s, nexthop);
    if (e && e->state == ARP_RESOLVED && e->expires > s->now) {
        ether_output(s, m, e->mac, ETHERTYPE_IP);
        return;
    }
    if (!e) {
        e = arp_slot(s);
        e->ip = nexthop;
        e->tries = 0;
        e->confirmed = 0;
    }
    if (e->state != ARP_RESOLVING) {         /* new, or an expired entry: ask again */
        e->state = ARP_RESOLVING;
        e->tries = 1;
        e->expires = s->now + NET_ARP_RETRY_MS;
        arp_send(s, 1, 0, nexthop);
    }
    if (m->tso_len) {                        /* its data is not in m: TCP sends it again */
        s->st.tcp_tso_arp_dropped++;
        mbuf_free(&s->pool, m);
        return;
    }
    if (e->npending >= NET_ARP_PENDING) {
        s->st.arp_timeouts++;
        mbuf_free(&s->pool, m);
        return;
    }
    struct mbuf **tail = &e->pending;
    while (*tail)
        tail = &(*tail)->next;
    m->next = 0;
    *tail = m;
    e->npending++;
}

void arp_timer(struct netstack *s)
{
    for (unsigned i = 0; i < NET_ARP_ENTRIES; i++) {
        struct arp_entry *e = &s->arp[i];
        if (e->state == ARP_FREE || e->expires > s->now)
            continue;
        if (e->state == ARP_RESOLVED) {
            arp_clear(s, e);
        } else if (e->tries >= NET_ARP_TRIES) {
            s->st.arp_timeouts += e->npending;
            arp_clear(s, e);
        } else {
            e->tries++;
            e->expires = s->now + NET_ARP_RETRY_MS;
            arp_send(s, 1, 0, e->ip);
        }
    }
}

uint64_t arp_next_timer(const struct netstack *s)
{
    uint64_t t = UINT64_MAX;
    for (unsigned i = 0; i < NET_ARP_ENTRIES; i++)
        if (s->arp[i].state != ARP_FREE && s->arp[i].expires < t)
            t = s->arp[i].expires;
    return t;
}

enum net_neigh_state net_neighbour(const struct netstack *s, unsigned i, uint32_t *ip,
                                   uint8_t mac[6])
{
    const struct arp_entry *e = i < NET_ARP_ENTRIES ? &s->arp[i] : 0;
    if (!e || e->state == ARP_FREE)
        return NET_NEIGH_NONE;
    *ip = e->ip;
    if (e->state == ARP_RESOLVING) {
        net_memset(mac, 0, 6);
        return NET_NEIGH_INCOMPLETE;
    }
    net_memcpy(mac, e->mac, 6);
    bool fresh = e->confirmed && s->now - e->confirmed < NET_ARP_REACHABLE_MS;
    return fresh ? NET_NEIGH_REACHABLE : NET_NEIGH_STALE;
}
