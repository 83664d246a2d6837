/*
 * A simulated Ethernet link for the hosted tools: frames sent in either direction are
 * delivered after a delay, and a seeded generator drops, duplicates and reorders some of
 * them. The same seed gives the same run. Used by the two-stack harness (nettest), the
 * cost harness (netcost) and, between the stack and the tap, by nethost.
 */
#ifndef ONDOL_NET_HOST_LINK_H
#define ONDOL_NET_HOST_LINK_H

#include <stddef.h>
#include <stdint.h>

struct link_params {
    unsigned loss_pm, dup_pm, reorder_pm;   /* per mille of frames */
    unsigned delay_ms, jitter_ms;           /* base delay, plus up to jitter_ms */
    uint64_t seed;
};

struct link_frame;
struct link {
    struct link_params p;
    uint64_t rng, order;
    struct link_frame *q;                   /* sorted by due time, then sending order */
    uint64_t sent, lost, duplicated, reordered;
};

void link_init(struct link *l, const struct link_params *p);
/* Queue a frame travelling in direction `dir` (0 or 1), sent at time `now`. */
void link_send(struct link *l, int dir, const void *frame, size_t len, uint64_t now);
/* Take the next frame due at or before `now`: returns its length (0 if none). */
size_t link_recv(struct link *l, uint64_t now, int *dir, void *buf, size_t cap);
/* When the next frame is due (UINT64_MAX if none queued). */
uint64_t link_next_due(const struct link *l);
void link_free(struct link *l);

#endif
