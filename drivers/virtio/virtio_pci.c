/*
 * The virtio PCI transport (virtio 1.0, 4.1): vendor capabilities locate the common
 * configuration, notification, interrupt-status and device-specific structures inside the
 * device's memory BARs. Initialisation follows 3.1.1: reset, ACKNOWLEDGE, DRIVER, features,
 * FEATURES_OK (checked), queues, DRIVER_OK.
 */
#include <ondol/abi.h>
#include <string.h>
#include "virtio.h"

/* struct virtio_pci_common_cfg, byte offsets */
enum {
    CC_DEVICE_FEATURE_SELECT = 0, CC_DEVICE_FEATURE = 4, CC_DRIVER_FEATURE_SELECT = 8,
    CC_DRIVER_FEATURE = 12, CC_NUM_QUEUES = 18, CC_DEVICE_STATUS = 20, CC_QUEUE_SELECT = 22,
    CC_QUEUE_SIZE = 24, CC_QUEUE_MSIX_VECTOR = 26, CC_QUEUE_ENABLE = 28,
    CC_QUEUE_NOTIFY_OFF = 30, CC_QUEUE_DESC = 32, CC_QUEUE_DRIVER = 40, CC_QUEUE_DEVICE = 48,
};
/* virtio_pci_cap.cfg_type */
enum { CAP_COMMON = 1, CAP_NOTIFY = 2, CAP_ISR = 3, CAP_DEVICE = 4 };
#define PCI_CAP_VENDOR   0x09
#define PCI_STATUS_CAPS  0x10
#define VIRTIO_NO_VECTOR 0xffff

static void w8(volatile uint8_t *b, unsigned off, uint8_t v) { b[off] = v; }
static void w16(volatile uint8_t *b, unsigned off, uint16_t v) { *(volatile uint16_t *)(b + off) = v; }
static void w32(volatile uint8_t *b, unsigned off, uint32_t v) { *(volatile uint32_t *)(b + off) = v; }
static uint8_t r8(volatile uint8_t *b, unsigned off) { return b[off]; }
static uint16_t r16(volatile uint8_t *b, unsigned off) { return *(volatile uint16_t *)(b + off); }
static uint32_t r32(volatile uint8_t *b, unsigned off) { return *(volatile uint32_t *)(b + off); }

/* A 64-bit queue address as two 32-bit writes (allowed by 4.1.3.1). */
static void w64(volatile uint8_t *b, unsigned off, uint64_t v)
{
    w32(b, off, (uint32_t)v);
    w32(b, off + 4, (uint32_t)(v >> 32));
}

/* Where one capability's structure lies: its BAR mapped (each BAR once), plus offset. */
static volatile uint8_t *cap_target(struct virtio_dev *v, volatile uint8_t *bars[6], unsigned cap)
{
    unsigned bar = drv_cfg_read(&v->pci, cap + 4, 1);
    uint32_t off = drv_cfg_read(&v->pci, cap + 8, 4);
    if (bar > 5)
        return NULL;
    if (!bars[bar])
        bars[bar] = drv_map_bar(&v->pci, (int)bar);
    return bars[bar] ? bars[bar] + off : NULL;
}

/* Walk the PCI capability list and record the four structures. */
static int find_structures(struct virtio_dev *v)
{
    volatile uint8_t *bars[6] = {0};
    if (!(drv_cfg_read(&v->pci, 0x06, 2) & PCI_STATUS_CAPS))
        return E_NOTSUP;
    unsigned cap = drv_cfg_read(&v->pci, 0x34, 1) & 0xfc;
    for (int guard = 0; cap && guard < 48; guard++) {
        if (drv_cfg_read(&v->pci, cap, 1) == PCI_CAP_VENDOR) {
            unsigned type = drv_cfg_read(&v->pci, cap + 3, 1);
            volatile uint8_t **slot = type == CAP_COMMON ? &v->common : type == CAP_NOTIFY ? &v->notify_base
                                    : type == CAP_ISR ? &v->isr : type == CAP_DEVICE ? &v->device_cfg : NULL;
            if (slot && !*slot)
                *slot = cap_target(v, bars, cap);
            if (type == CAP_NOTIFY)
                v->notify_mult = drv_cfg_read(&v->pci, cap + 16, 4);
        }
        cap = drv_cfg_read(&v->pci, cap + 1, 1) & 0xfc;
    }
    return v->common && v->notify_base && v->isr && v->device_cfg ? 0 : E_NOTSUP;
}

static uint64_t device_features(struct virtio_dev *v)
{
    w32(v->common, CC_DEVICE_FEATURE_SELECT, 0);
    uint64_t lo = r32(v->common, CC_DEVICE_FEATURE);
    w32(v->common, CC_DEVICE_FEATURE_SELECT, 1);
    return lo | (uint64_t)r32(v->common, CC_DEVICE_FEATURE) << 32;
}

static void set_status(struct virtio_dev *v, uint8_t bits)
{
    w8(v->common, CC_DEVICE_STATUS, r8(v->common, CC_DEVICE_STATUS) | bits);
}

static int negotiate(struct virtio_dev *v, uint64_t wanted)
{
    v->features = device_features(v) & wanted;
    if (!(v->features & VIRTIO_F_VERSION_1))
        return E_NOTSUP;
    w32(v->common, CC_DRIVER_FEATURE_SELECT, 0);
    w32(v->common, CC_DRIVER_FEATURE, (uint32_t)v->features);
    w32(v->common, CC_DRIVER_FEATURE_SELECT, 1);
    w32(v->common, CC_DRIVER_FEATURE, (uint32_t)(v->features >> 32));
    set_status(v, VIRTIO_FEATURES_OK);
    return r8(v->common, CC_DEVICE_STATUS) & VIRTIO_FEATURES_OK ? 0 : E_NOTSUP;
}

int virtio_open(struct virtio_dev *v, uint16_t device, unsigned index, uint64_t wanted)
{
    memset(v, 0, sizeof(*v));
    int err = drv_find(VIRTIO_VENDOR, device, index, &v->pci);
    if (!err)
        err = find_structures(v);
    if (err)
        return err;
    w8(v->common, CC_DEVICE_STATUS, 0);                  /* reset; done when it reads 0 */
    for (int spin = 0; r8(v->common, CC_DEVICE_STATUS) != 0; spin++)
        if (spin > 1000000)
            return E_TIMEOUT;
    set_status(v, VIRTIO_ACKNOWLEDGE);
    set_status(v, VIRTIO_DRIVER);
    err = negotiate(v, wanted);
    if (err)
        set_status(v, VIRTIO_FAILED);
    return err;
}

/* The rings of one queue in one DMA area: descriptors, then the driver (avail) ring, then
 * the device (used) ring on the next page, then the buffers. */
static int alloc_rings(struct virtq *q, uint32_t buf_size, uint64_t *ring_phys)
{
    size_t rings = 3 * 4096, bufs = (size_t)q->size * buf_size;
    uint8_t *mem = drv_dma_alloc(rings + bufs, ring_phys);
    if (!mem)
        return E_NOMEM;
    q->desc = (volatile struct virtq_desc *)mem;
    q->avail = (volatile uint16_t *)(mem + 4096);
    q->used = (volatile uint16_t *)(mem + 8192);
    q->bufs = mem + rings;
    q->bufs_phys = *ring_phys + rings;
    q->buf_size = buf_size;
    for (uint16_t i = 0; i < q->size; i++)
        q->desc[i] = (struct virtq_desc){.addr = q->bufs_phys + (uint64_t)i * buf_size};
    return 0;
}

int virtq_setup(struct virtio_dev *v, struct virtq *q, uint16_t index, uint16_t size, uint32_t buf_size)
{
    memset(q, 0, sizeof(*q));
    w16(v->common, CC_QUEUE_SELECT, index);
    uint16_t max = r16(v->common, CC_QUEUE_SIZE);
    if (max == 0 || index >= r16(v->common, CC_NUM_QUEUES))
        return E_NOENT;
    q->index = index;
    q->size = size < max ? size : max;
    uint64_t pa;
    int err = alloc_rings(q, buf_size, &pa);
    if (err)
        return err;
    w16(v->common, CC_QUEUE_SIZE, q->size);
    /* with MSI-X (the kernel chose it: dev_info.msix) every queue uses table entry 0; a
     * device that cannot map it answers NO_VECTOR, and would never interrupt */
    uint16_t vector = v->pci.info.msix ? 0 : VIRTIO_NO_VECTOR;
    w16(v->common, CC_QUEUE_MSIX_VECTOR, vector);
    if (r16(v->common, CC_QUEUE_MSIX_VECTOR) != vector)
        return E_NOTSUP;
    w64(v->common, CC_QUEUE_DESC, pa);
    w64(v->common, CC_QUEUE_DRIVER, pa + 4096);
    w64(v->common, CC_QUEUE_DEVICE, pa + 8192);
    uint32_t off = r16(v->common, CC_QUEUE_NOTIFY_OFF) * v->notify_mult;
    q->notify = (volatile uint16_t *)(v->notify_base + off);
    w16(v->common, CC_QUEUE_ENABLE, 1);
    return 0;
}

void virtio_ready(struct virtio_dev *v) { set_status(v, VIRTIO_DRIVER_OK); }
uint8_t virtio_isr(struct virtio_dev *v) { return r8(v->isr, 0); }
