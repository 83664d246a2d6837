/*
 * virtio 1.0 over PCI ("modern" devices; virtio spec 1.0, sections 2 and 4.1), the
 * transport half of a virtio driver: find the device's configuration structures through
 * its vendor capabilities, negotiate features, set up split virtqueues, notify the device,
 * read the interrupt status. Runs wherever drvplat.h does (MK or IK).
 */
#ifndef VIRTIO_H
#define VIRTIO_H
#include <stdbool.h>
#include <stdint.h>
#include "drvplat.h"

#define VIRTIO_VENDOR          0x1af4
#define VIRTIO_F_VERSION_1     (1ull << 32)

/* Device status bits (virtio 1.0, 2.1). */
#define VIRTIO_ACKNOWLEDGE 1u
#define VIRTIO_DRIVER      2u
#define VIRTIO_DRIVER_OK   4u
#define VIRTIO_FEATURES_OK 8u
#define VIRTIO_FAILED      128u

#define VIRTQ_MAX 256               /* largest queue this driver sets up */

/* The split virtqueue as the device sees it (virtio 1.0, 2.4). */
struct virtq_desc {
    uint64_t addr;
    uint32_t len;
    uint16_t flags;
    uint16_t next;
};
#define VIRTQ_DESC_F_NEXT  1
#define VIRTQ_DESC_F_WRITE 2        /* the device writes this buffer (receive) */
struct virtq_used_elem {
    uint32_t id, len;
};

/* One virtqueue and its driver-side state. Descriptor i always describes buffer i of
 * the queue's buffer area: a packet is one descriptor (header and data contiguous). */
struct virtq {
    uint16_t index, size;
    volatile struct virtq_desc *desc;
    volatile uint16_t *avail;       /* flags, idx, ring[size], used_event */
    volatile uint16_t *used;        /* flags, idx, then struct virtq_used_elem ring[size] */
    volatile uint16_t *notify;      /* this queue's doorbell */
    uint16_t avail_idx;             /* next avail->idx the driver publishes */
    uint16_t used_seen;             /* used->idx up to which the driver has looked */
    uint8_t *bufs;                  /* size buffers of buf_size bytes */
    uint64_t bufs_phys;
    uint32_t buf_size;
};

struct virtio_dev {
    struct drv_dev pci;
    volatile uint8_t *common;       /* struct virtio_pci_common_cfg */
    volatile uint8_t *notify_base;
    uint32_t notify_mult;
    volatile uint8_t *isr;
    volatile uint8_t *device_cfg;
    uint64_t features;              /* negotiated */
};

/* Claim and reset the index-th virtio device with PCI id `device` and map its structures;
 * negotiate: the device's features & `wanted` must include VIRTIO_F_VERSION_1. */
int virtio_open(struct virtio_dev *v, uint16_t device, unsigned index, uint64_t wanted);
/* Queue `index` with up to `size` entries (a power of two) and buffers of buf_size bytes. */
int virtq_setup(struct virtio_dev *v, struct virtq *q, uint16_t index, uint16_t size, uint32_t buf_size);
/* The device may run: DRIVER_OK. */
void virtio_ready(struct virtio_dev *v);
/* Read (and so clear and deassert) the interrupt status: bit 0 a queue, bit 1 config. */
uint8_t virtio_isr(struct virtio_dev *v);

/* Offer descriptor `id` (its buffer, len bytes; writable for the device or not). */
void virtq_offer(struct virtq *q, uint16_t id, uint32_t len, bool device_writes);
/* Ask the device not to interrupt when it uses this queue's buffers (a hint, virtio 1.0
 * 2.4.7): the transmit queue, whose buffers are reclaimed when the driver runs out. */
#define VIRTQ_AVAIL_F_NO_INTERRUPT 1
void virtq_quiet(struct virtq *q);
/* Publish offered descriptors and ring the doorbell. */
void virtq_kick(struct virtq *q);
/* The next buffer the device has finished with: true and *id, *len; false when none. */
bool virtq_next_used(struct virtq *q, uint16_t *id, uint32_t *len);
static inline uint8_t *virtq_buf(struct virtq *q, uint16_t id) { return q->bufs + (uint32_t)id * q->buf_size; }
#endif
