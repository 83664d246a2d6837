/*
 * Split virtqueues, the driver's side (virtio 1.0, 2.4): the driver fills descriptors and
 * appends their ids to the available ring, then publishes the new index; the device
 * appends finished ids to the used ring. Indices run freely modulo 2^16, the ring
 * position is index mod size (the size is a power of two).
 */
#include "virtio.h"

enum { RING_FLAGS = 0, RING_IDX = 1, RING_ENTRIES = 2 };

void virtq_offer(struct virtq *q, uint16_t id, uint32_t len, bool device_writes)
{
    q->desc[id].len = len;
    q->desc[id].flags = device_writes ? VIRTQ_DESC_F_WRITE : 0;
    q->avail[RING_ENTRIES + (q->avail_idx & (q->size - 1))] = id;
    q->avail_idx++;
}

void virtq_quiet(struct virtq *q)
{
    q->avail[RING_FLAGS] = VIRTQ_AVAIL_F_NO_INTERRUPT;
}

void virtq_kick(struct virtq *q)
{
    drv_barrier();                       /* descriptors and ring entries before the index */
    q->avail[RING_IDX] = q->avail_idx;
    drv_barrier();                       /* the index before the doorbell */
    *q->notify = q->index;
}

/* An id the device made up (not below the queue size) is skipped: the driver trusts the
 * device with its buffers' contents, not with its own memory. */
bool virtq_next_used(struct virtq *q, uint16_t *id, uint32_t *len)
{
    volatile struct virtq_used_elem *ring = (volatile struct virtq_used_elem *)(q->used + 2);
    while (q->used[RING_IDX] != q->used_seen) {
        drv_barrier();                   /* the entry after seeing the index move */
        volatile struct virtq_used_elem *e = &ring[q->used_seen & (q->size - 1)];
        q->used_seen++;
        if (e->id < q->size) {
            *id = (uint16_t)e->id;
            *len = e->len < q->buf_size ? e->len : q->buf_size;
            return true;
        }
    }
    return false;
}
