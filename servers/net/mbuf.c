/* Packet buffer pool (mbuf.h): a free list threaded through the buffers. */
#include "mbuf.h"

void mbuf_pool_init(struct mbuf_pool *p)
{
    p->free = 0;
    p->in_use = 0;
    for (unsigned i = 0; i < NET_MBUFS; i++) {
        p->m[i].next = p->free;
        p->free = &p->m[i];
    }
}

struct mbuf *mbuf_get(struct mbuf_pool *p, unsigned headroom)
{
    struct mbuf *m = p->free;
    if (!m)
        return 0;
    p->free = m->next;
    p->in_use++;
    m->next = 0;
    m->off = headroom;
    m->ext = 0;
    m->len = 0;
    m->fin = 0;
    m->csum_ok = 0;
    m->csum_off = 0;
    m->tso_len = 0;
    m->tso_mss = 0;
    return m;
}

void mbuf_free(struct mbuf_pool *p, struct mbuf *m)
{
    m->next = p->free;
    p->free = m;
    p->in_use--;
}

void mbuf_free_chain(struct mbuf_pool *p, struct mbuf *m)
{
    while (m) {
        struct mbuf *next = m->next;
        mbuf_free(p, m);
        m = next;
    }
}
