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
#include "task.h"
#include "thread.h"
#include "waitq.h"

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

void *drv_map_caller(int client, uint64_t window, size_t len)
{
    (void)client, (void)window, (void)len;
    return NULL;
}

void drv_unmap_caller(void *mem, size_t len) { (void)mem, (void)len; }

long drv_thread_task(int tid)
{
    struct thread *t = tid > 0 ? thread_lookup(tid) : NULL;
    if (!t || t->state == T_ZOMBIE)
        return E_SRCH;
    return t->task ? t->task->id : 0;
}

uint64_t drv_now_ms(void) { return ticks_now() * 1000 / timer_hz; }

/* Milliseconds as kernel ticks, rounded up; UINT64_MAX (and anything past a year) is
 * SLEEP_FOREVER. */
static u64 ticks_of(uint64_t timeout_ms)
{
    if (timeout_ms > 365ull * 24 * 3600 * 1000)
        return SLEEP_FOREVER;
    return (timeout_ms * timer_hz + 999) / 1000;
}

long drv_irq_wait(const struct drv_dev *d, uint64_t timeout_ms)
{
    return dev_irq_wait_kernel(d->handle, ticks_of(timeout_ms));
}

/* The server's thread: a kernel thread at the priority of Linux threads and native
 * programs, so that its wake-up (an interrupt, a call's kick) does not preempt the
 * running thread's call: the stack's work follows when that thread blocks or its slice
 * ends, not inside the call. */
#define SERVER_THREAD_PRIO PRIO_DEFAULT
static void (*second_fn)(void);

static void second_main(void)
{
    thread_first_run();
    second_fn();
    thread_exit(0);
}

long drv_thread_start(void (*fn)(void))
{
    second_fn = fn;
    struct thread *t = thread_create_kernel(second_main, SERVER_THREAD_PRIO);
    if (!t)
        return E_NOMEM;
    make_ready(t);
    return 0;
}

void drv_lock(void) {}
void drv_unlock(void) {}

/* Every drv_wait_change sleeps here and rechecks its word at each wake: the waiters are
 * few (the UNIX server's event thread, a native client's waiting call). */
static struct waitq change_waiters;

long drv_wait_change(const uint32_t *word, uint32_t seen, uint64_t timeout_ms)
{
    u64 ticks = ticks_of(timeout_ms), deadline = ticks == SLEEP_FOREVER ? UINT64_MAX
                                                                         : ticks_now() + ticks;
    while (__atomic_load_n(word, __ATOMIC_ACQUIRE) == seen) {
        u64 now = ticks_now();
        if (now >= deadline)
            return E_TIMEOUT;
        int r = waitq_sleep(&change_waiters, deadline == UINT64_MAX ? WAIT_FOREVER : deadline - now);
        if (r == WAIT_KILLED)
            return E_TIMEOUT;
    }
    return 0;
}

void drv_wake_all(const uint32_t *word)
{
    (void)word;
    waitq_wake_all(&change_waiters, 0);
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
