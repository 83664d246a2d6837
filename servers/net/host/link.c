/* Simulated lossy link (link.h). */
#include "link.h"

#include <stdlib.h>
#include <string.h>

struct link_frame {
    struct link_frame *next;
    uint64_t due, order;
    int dir;
    size_t len;
    unsigned char data[];
};

static uint64_t link_rand(struct link *l)
{
    l->rng ^= l->rng << 13;
    l->rng ^= l->rng >> 7;
    l->rng ^= l->rng << 17;
    return l->rng;
}

static int chance(struct link *l, unsigned pm) { return pm && link_rand(l) % 1000 < pm; }

void link_init(struct link *l, const struct link_params *p)
{
    memset(l, 0, sizeof *l);
    l->p = *p;
    l->rng = p->seed * 0x9e3779b97f4a7c15ull + 0x632be59bd9b4e019ull;
    if (!l->rng)
        l->rng = 1;
}

static void enqueue(struct link *l, int dir, const void *frame, size_t len, uint64_t due)
{
    struct link_frame *f = malloc(sizeof *f + len);
    if (!f)
        abort();
    f->dir = dir;
    f->len = len;
    f->due = due;
    f->order = l->order++;
    memcpy(f->data, frame, len);
    struct link_frame **pp = &l->q;
    while (*pp && ((*pp)->due < due || ((*pp)->due == due && (*pp)->order < f->order)))
        pp = &(*pp)->next;
    f->next = *pp;
    *pp = f;
}

void link_send(struct link *l, int dir, const void *frame, size_t len, uint64_t now)
{
    l->sent++;
    if (chance(l, l->p.loss_pm)) {
        l->lost++;
        return;
    }
    uint64_t due = now + l->p.delay_ms + (l->p.jitter_ms ? link_rand(l) % (l->p.jitter_ms + 1) : 0);
    if (chance(l, l->p.reorder_pm)) {
        l->reordered++;
        due += 1 + link_rand(l) % 10;         /* held back: later frames overtake it */
    }
    enqueue(l, dir, frame, len, due);
    if (chance(l, l->p.dup_pm)) {
        l->duplicated++;
        enqueue(l, dir, frame, len, due + link_rand(l) % 5);
    }
}

size_t link_recv(struct link *l, uint64_t now, int *dir, void *buf, size_t cap)
{
    struct link_frame *f = l->q;
    if (!f || f->due > now)
        return 0;
    l->q = f->next;
    size_t n = f->len < cap ? f->len : cap;
    memcpy(buf, f->data, n);
    *dir = f->dir;
    free(f);
    return n;
}

uint64_t link_next_due(const struct link *l) { return l->q ? l->q->due : UINT64_MAX; }

void link_free(struct link *l)
{
    while (l->q) {
        struct link_frame *f = l->q;
        l->q = f->next;
        free(f);
    }
}
