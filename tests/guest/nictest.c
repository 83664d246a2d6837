/*
 * nictest: the driver-access system calls and the virtio-net driver (drivers/virtio/),
 * driven by tests/test_nic.py. Run as the first task (`init=nictest`, so it is privileged)
 * it checks the calls' errors, starts the first virtio-net device, and then echoes frames
 * for the host: it broadcasts one "hello" frame (EtherType 0x88b5, the local experimental
 * one), then receives NICTEST_FRAMES frames whose payload is a sequence number and a
 * pattern, checks each, and sends each back with source and destination swapped. It waits
 * for the device's interrupt with SYS_IRQ_WAIT between rounds. Prints "FAIL ..." for
 * every broken expectation, "nictest: rx R tx T irqs I bad B", then "nictest ok" or
 * "nictest failed", and powers off.
 * Run from the shell (unprivileged) it checks that every call says E_PERM and exits.
 */
#include <stdio.h>
#include <string.h>

#include <ondol/sys.h>
#include "virtio_net.h"

#define NICTEST_FRAMES 300
#define NICTEST_TYPE   0x88b5
#define WAIT_TICKS     100            /* per SYS_IRQ_WAIT; 10 silent waits end the test */

static int failures;

#define CHECK(cond, ...)                                                                 \
    do {                                                                                 \
        if (!(cond)) {                                                                   \
            failures++;                                                                  \
            printf("FAIL " __VA_ARGS__);                                                 \
            printf("\n");                                                                \
        }                                                                                \
    } while (0)

static void unprivileged_checks(void)
{
    struct dev_info info;
    uint64_t pa;
    CHECK(sys_dev_find(0x1af4, 0x1000, 0, &info) == E_PERM, "dev_find not E_PERM");
    CHECK(sys_dev_cfg_read(0, 0, 4) == E_PERM, "dev_cfg_read not E_PERM");
    CHECK(sys_dma_alloc(4096, &pa) == E_PERM, "dma_alloc not E_PERM");
    CHECK(sys_irq_wait(0, 0) == E_PERM, "irq_wait not E_PERM");
}

/* Errors a privileged driver gets for bad arguments, before it owns anything. */
static void argument_checks(void)
{
    struct dev_info info;
    uint64_t pa = 0;
    CHECK(sys_dev_find(0x1af4, 0xdead, 0, &info) == E_NOENT, "dev_find of no device");
    CHECK(sys_dev_find(0x10000, 0, 0, &info) == E_INVAL, "dev_find vendor > 0xffff");
    CHECK(sys_dev_find(0x1af4, 0x1000, 0, (void *)16) == E_FAULT ||
          sys_dev_find(0x1af4, 0x1041, 0, (void *)16) == E_FAULT, "dev_find bad pointer");
    CHECK(sys_dev_cfg_read(99, 0, 4) == E_INVAL, "dev_cfg_read of no handle");
    CHECK(sys_irq_wait(99, 0) == E_INVAL, "irq_wait of no handle");
    CHECK(sys_dma_alloc(0, &pa) == E_INVAL, "dma_alloc 0 bytes");
    CHECK(sys_dma_alloc(DMA_ALLOC_MAX + 1, &pa) == E_INVAL, "dma_alloc too large");
    CHECK(sys_dma_alloc(4096, (void *)16) == E_FAULT, "dma_alloc bad pointer");
    long a = sys_dma_alloc(3 * 4096, &pa);
    CHECK(a > 0 && pa && !(pa & 4095), "dma_alloc: %ld pa %#lx", a, (unsigned long)pa);
    if (a > 0) {
        memset((void *)a, 0x5a, 3 * 4096);      /* the memory is ours and writable */
        CHECK(sys_vm_unmap((void *)a, 3 * 4096) == 0, "unmap of DMA memory");
    }
}

/* Errors for a device the driver does own. */
static void device_checks(struct vnet *n)
{
    int h = n->dev.pci.handle;
    CHECK(sys_dev_cfg_read(h, 0, 2) == 0x1af4, "vendor id through dev_cfg_read");
    CHECK(sys_dev_cfg_read(h, 1, 2) == E_INVAL, "misaligned dev_cfg_read");
    CHECK(sys_dev_cfg_read(h, 0, 3) == E_INVAL, "dev_cfg_read of 3 bytes");
    CHECK(sys_dev_cfg_read(h, 256, 1) == E_INVAL, "dev_cfg_read beyond 256");
}

static uint8_t pending[NICTEST_FRAMES][VNET_FRAME_MAX];
static uint16_t pending_len[NICTEST_FRAMES];
static unsigned received, echoed, bad;

static bool payload_ok(const uint8_t *f, size_t len, unsigned seq)
{
    if (len < 18 || len > VNET_FRAME_MAX || f[12] != NICTEST_TYPE >> 8 || f[13] != (NICTEST_TYPE & 0xff))
        return false;
    unsigned got = (unsigned)f[14] << 24 | f[15] << 16 | f[16] << 8 | f[17];
    if (got != seq)
        return false;
    for (size_t i = 18; i < len; i++)
        if (f[i] != (uint8_t)(seq * 7 + i))
            return false;
    return true;
}

static void deliver(void *ctx, const uint8_t *frame, size_t len, unsigned flags)
{
    (void)ctx;
    (void)flags;                      /* no offload asked */
    if (received == NICTEST_FRAMES || !payload_ok(frame, len, received)) {
        bad++;
        return;
    }
    uint8_t *copy = pending[received];
    memcpy(copy, frame + 6, 6);                  /* back to the sender */
    memcpy(copy + 6, frame, 6);
    memcpy(copy + 12, frame + 12, len - 12);
    pending_len[received++] = (uint16_t)len;
}

static void send_pending(struct vnet *n)
{
    while (echoed < received && vnet_send(n, pending[echoed], pending_len[echoed], VNET_NO_OFFLOAD) == 0)
        echoed++;
}

static void send_hello(struct vnet *n)
{
    uint8_t f[60] = {0xff, 0xff, 0xff, 0xff, 0xff, 0xff};
    memcpy(f + 6, n->mac, 6);
    f[12] = NICTEST_TYPE >> 8;
    f[13] = NICTEST_TYPE & 0xff;
    memcpy(f + 14, "ondol nictest hello", 19);
    CHECK(vnet_send(n, f, sizeof(f), VNET_NO_OFFLOAD) == 0, "hello not sent");
}

/* Until everything is echoed and every transmit buffer is back (so the device sent it). */
static void echo(struct vnet *n)
{
    int silent = 0;
    send_hello(n);
    while ((echoed < NICTEST_FRAMES || n->tx_nfree < n->tx.size) && silent < 10) {
        long r = sys_irq_wait(n->dev.pci.handle, WAIT_TICKS);
        silent = r == E_TIMEOUT ? silent + 1 : 0;
        CHECK(r > 0 || r == E_TIMEOUT, "irq_wait: %ld", r);
        vnet_interrupt(n);
        vnet_poll(n, deliver, NULL);
        send_pending(n);
    }
    CHECK(echoed == NICTEST_FRAMES, "echoed %u of %u frames", echoed, NICTEST_FRAMES);
}

static struct vnet nic;

int main(void)
{
    struct self_info self;
    sys_self(&self);
    if (sys_dev_find(0x1af4, 0xdead, 0, NULL) == E_PERM) {
        unprivileged_checks();
        printf("nictest: unprivileged %s\n", failures ? "failed" : "ok");
        return failures != 0;
    }
    argument_checks();
    int err = vnet_open(&nic, 0, 0);
    CHECK(err == 0, "vnet_open: %d", err);
    if (!err) {
        const struct dev_info *d = &nic.dev.pci.info;
        printf("nictest: device %04x:%04x at %02x:%02x.%x irq %u msix %u mac "
               "%02x:%02x:%02x:%02x:%02x:%02x\n", d->vendor, d->device, d->bus, d->slot, d->func,
               d->irq, d->msix, nic.mac[0], nic.mac[1], nic.mac[2], nic.mac[3], nic.mac[4],
               nic.mac[5]);
        device_checks(&nic);
        echo(&nic);
        printf("nictest: rx %lu tx %lu irqs %lu bad %u\n", (unsigned long)nic.stats.rx_frames,
               (unsigned long)nic.stats.tx_frames, (unsigned long)nic.stats.irqs, bad);
    }
    printf("nictest %s\n", failures ? "failed" : "ok");
    sys_poweroff();
    return 0;
}
