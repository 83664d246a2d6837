/*
 * The IK driver platform (drivers/drvplat.h): drivers and the servers using them, linked
 * into the kernel, reach their device with direct calls. Device memory and DMA buffers
 * are reached through PHYSMAP (its [3, 4) GiB window is uncached, where PCI memory BARs
 * live); interrupt waits block the calling thread, which for an IK server is its client.
 */
#include <ondol/abi.h>
#include "drvplat.h"
#include "dev.h"
#include "kernel.h"
#include "memlayout.h"
#include "options.h"
#include "pcnt.h"
#include "pmm.h"
#include "sched.h"

#define PHYSMAP_LIMIT (4ull << 30)   /* PHYSMAP covers device memory below 4 GiB only */

int drv_find(uint16_t vendor, uint16_t device, unsigned index, struct drv_dev *d)
{
    long h = dev_claim_kernel(vendor, device, index, &d->info);
    if (h < 0)
        return (int)h;
    d->handle = (int)h;
    return 0;
}

uint32_t drv_cfg_read(const struct drv_dev *d, unsigned off, unsigned size)
{
    long v = dev_cfg_read_kernel(d->handle, off, size);
    return v < 0 ? 0xffffffffu : (uint32_t)v;
}

volatile void *drv_map_bar(const struct drv_dev *d, int bar)
{
    if (bar < 0 || bar > 5)
        return NULL;
    const struct dev_bar *b = &d->info.bar[bar];
    if (b->size == 0 || (b->flags & DEV_BAR_IO) || b->base + b->size > PHYSMAP_LIMIT)
        return NULL;
    return phys_to_virt(b->base);
}

void *drv_dma_alloc(size_t len, uint64_t *phys)
{
    if (len == 0 || len > DMA_ALLOC_MAX)
        return NULL;
    u64 pa = frame_alloc_contig(ALIGN_UP(len, PAGE_SIZE) / PAGE_SIZE);
    *phys = pa;
    return pa ? phys_to_virt(pa) : NULL;
}

/* Contiguous frames too: the kernel has no other allocator of this size (zeroed). */
void *drv_mem_alloc(size_t len)
{
    u64 pa = frame_alloc_contig(ALIGN_UP(len, PAGE_SIZE) / PAGE_SIZE);
    return pa ? phys_to_virt(pa) : NULL;
}

uint64_t drv_now_ms(void) { return ticks_now() * 1000 / timer_hz; }

long drv_irq_wait(const struct drv_dev *d, uint64_t timeout_ms)
{
    u64 ticks = timeout_ms == UINT64_MAX ? SLEEP_FOREVER : (timeout_ms * timer_hz + 999) / 1000;
    return dev_irq_wait_kernel(d->handle, ticks);
}

bool drv_option(const char *key, char *buf, size_t len)
{
    const char *v = opt_get(key);
    if (!v || len == 0)
        return false;
    size_t n = MIN(strlen(v), len - 1);
    memcpy(buf, v, n);
    buf[n] = 0;
    return true;
}

int drv_pcnt_first_slot(void) { return PCNT_FIRST_USER_SLOT; }

long drv_pcnt(int cmd, int slot, uint64_t para)
{
    if (slot < PCNT_FIRST_USER_SLOT || slot >= PCNT_SLOTS)
        return E_INVAL;
    if (cmd == PCNT_START)
        pcnt_user_start(slot, para);
    else if (cmd == PCNT_STOP)
        pcnt_user_stop(slot);
    else if (cmd == PCNT_REPEAT)
        pcnt_pool[this_cpu()->id][slot].repeat = para != 0;
    else
        return E_INVAL;
    return pcnt_pool[this_cpu()->id][slot].status;
}
