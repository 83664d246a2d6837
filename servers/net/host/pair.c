/* The two-stack harness (pair.h). */
#include "pair.h"
#include "../net_priv.h"

#include <stdlib.h>
#include <string.h>

/* What a device with checksum offload does before the frame leaves (virtio 5.1.6.2). */
static void finish_checksum(uint8_t *frame, size_t len, const struct net_csum *csum)
{
    uint16_t c = cksum_fold(cksum_add(0, frame + csum->start, len - csum->start));
    put16(frame + csum->start + csum->offset, c);
}

static void pair_send(struct netif *nif, const void *frame, size_t len,
                      const struct net_csum *csum)
{
    static uint8_t copy[2048];
    struct pair *p = nif->ctx;
    int from = nif == &p->nif[1];
    p->frames[from]++;
    if (csum) {
        p->tx_csum++;
        if (p->finish_csum && len <= sizeof copy && csum->start + csum->offset + 2u <= len) {
            memcpy(copy, frame, len);
            finish_checksum(copy, len, csum);
            frame = copy;
        }
    }
    if (p->tap)
        p->tap(p, from, frame, len);
    link_send(&p->link, from, frame, len, p->now);
}

void pair_init(struct pair *p, const struct link_params *lp, uint16_t mtu_b)
{
    memset(p, 0, sizeof *p);
    link_init(&p->link, lp);
    p->now = 1000;
    for (int i = 0; i < 2; i++) {
        struct netif *nif = &p->nif[i];
        static const uint8_t base[6] = {0x02, 0, 0, 0, 0, 0};
        memcpy(nif->mac, base, 6);
        nif->mac[5] = (uint8_t)(i + 1);
        nif->mtu = i ? mtu_b : 1500;
        nif->send = pair_send;
        nif->ctx = p;
        p->st[i] = calloc(1, net_stack_size());
        if (!p->st[i])
            abort();
        net_init(p->st[i], nif, i ? PAIR_IP_B : PAIR_IP_A, 0xffffff00u, 0, p->now,
                 lp->seed * 2 + (uint64_t)i + 1);
    }
}

void pair_free(struct pair *p)
{
    link_free(&p->link);
    free(p->st[0]);
    free(p->st[1]);
}

void pair_step(struct pair *p, uint64_t max_ms)
{
    static uint8_t buf[2048];
    uint64_t next = link_next_due(&p->link);
    for (int i = 0; i < 2; i++) {
        uint64_t t = net_next_timer(p->st[i]);
        if (t < next)
            next = t;
    }
    if (next <= p->now)
        next = p->now + 1;
    if (next > p->now + max_ms)
        next = p->now + max_ms;
    p->now = next;                            /* the stacks and the application agree */
    net_tick(p->st[0], p->now);               /* time first: input sees the new time */
    net_tick(p->st[1], p->now);
    int dir;
    size_t n;
    while ((n = link_recv(&p->link, p->now, &dir, buf, sizeof buf)) > 0)
        net_input_flags(p->st[!dir], buf, n, p->rx_flags[!dir]);
}
