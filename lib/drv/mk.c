/* The MK driver platform (drivers/drvplat.h): a privileged user task reaches its device
 * through system calls (docs/drivers.md). */
#include <ondol/sys.h>
#include <ondol/thread.h>
#include <ondol/timing.h>
#include "drvplat.h"

int drv_find(uint16_t vendor, uint16_t device, unsigned index, struct drv_dev *d)
{
    long h = sys_dev_find(vendor, device, index, &d->info);
    if (h < 0)
        return (int)h;
    d->handle = (int)h;
    return 0;
}

uint32_t drv_cfg_read(const struct drv_dev *d, unsigned off, unsigned size)
{
    long v = sys_dev_cfg_read(d->handle, off, size);
    return v < 0 ? 0xffffffffu : (uint32_t)v;
}

volatile void *drv_map_bar(const struct drv_dev *d, int bar)
{
    if (bar < 0 || bar > 5)
        return NULL;
    const struct dev_bar *b = &d->info.bar[bar];
    if (b->size == 0 || (b->flags & DEV_BAR_IO))
        return NULL;
    long addr = sys_vm_mmap(0, b->size, PROT_READ | PROT_WRITE, VM_MMAP_PHYS, b->base);
    return addr < 0 ? NULL : (volatile void *)addr;
}

void *drv_dma_alloc(size_t len, uint64_t *phys)
{
    long addr = sys_dma_alloc(len, phys);
    return addr < 0 ? NULL : (void *)addr;
}

void *drv_mem_alloc(size_t len)
{
    long addr = sys_vm_map(len, PROT_READ | PROT_WRITE);
    return addr < 0 ? NULL : (void *)addr;
}

void *drv_map_caller(int client, uint64_t window, size_t len)
{
    long addr = sys_vm_ctl(client, VM_CTL_MAP_CALLER, (void *)window, len, PROT_READ | PROT_WRITE, 0);
    return addr < 0 ? NULL : (void *)addr;
}

void drv_unmap_caller(void *mem, size_t len) { sys_vm_unmap(mem, len); }

long drv_thread_task(int tid) { return thread_task_of(tid); }

static uint64_t timer_hz(void)
{
    static uint64_t hz;
    if (!hz) {
        struct time_info ti;
        sys_time(&ti);
        hz = ti.hz ? ti.hz : 100;
    }
    return hz;
}

/* The clock without a system call on the way of every op that sends (SYS_TIME fills a
 * whole struct time_info: about 300 instructions): the TSC since a pair of the kernel's
 * tick count and TSC read once, at the TSC's calibrated rate; SYS_TIME each time where
 * that rate is unknown. The TSC and the timer run on the same clock (under icount too),
 * and all of the server's times come from here, so they agree with each other. */
static uint64_t base_ms, base_tsc, tsc_khz;     /* tsc_khz written last: 0 until set */

uint64_t drv_now_ms(void)
{
    uint64_t khz = __atomic_load_n(&tsc_khz, __ATOMIC_ACQUIRE);
    uint64_t tsc = rdtsc();
    if (khz)                          /* a TSC behind the base (another CPU's): the base */
        return base_ms + (tsc > base_tsc ? tsc - base_tsc : 0) / khz;
    struct time_info ti;
    sys_time(&ti);
    uint64_t ms = ti.ticks * 1000 / timer_hz();
    if (ti.tsc_hz >= 1000) {
        base_ms = ms;
        base_tsc = ti.tsc;
        __atomic_store_n(&tsc_khz, ti.tsc_hz / 1000, __ATOMIC_RELEASE);
    }
    return ms;
}

/* Milliseconds as kernel ticks, rounded up; UINT64_MAX (and anything past a year) is
 * SLEEP_FOREVER. */
static uint64_t ticks_of(uint64_t timeout_ms)
{
    if (timeout_ms > 365ull * 24 * 3600 * 1000)
        return SLEEP_FOREVER;
    return (timeout_ms * timer_hz() + 999) / 1000;
}

long drv_irq_wait(const struct drv_dev *d, uint64_t timeout_ms)
{
    return sys_irq_wait(d->handle, ticks_of(timeout_ms));
}

static struct thread second_thread;
static void (*second_fn)(void);

static int second_main(void *arg)
{
    (void)arg;
    second_fn();
    return 0;
}

long drv_thread_start(void (*fn)(void))
{
    second_fn = fn;
    int tid = thread_start(&second_thread, second_main, NULL, PRIO_INHERIT, THREAD_STACK_DEFAULT);
    return tid < 0 ? tid : 0;
}

/* 0 free, 1 held, 2 held and a thread may be waiting (its unlock wakes one). */
static uint32_t lock_word;

void drv_lock(void)
{
    uint32_t seen = 0;
    if (__atomic_compare_exchange_n(&lock_word, &seen, 1, false, __ATOMIC_ACQUIRE,
                                    __ATOMIC_RELAXED))
        return;
    while (__atomic_exchange_n(&lock_word, 2, __ATOMIC_ACQUIRE) != 0)
        sys_futex_wait(&lock_word, 2, SLEEP_FOREVER);
}

void drv_unlock(void)
{
    if (__atomic_exchange_n(&lock_word, 0, __ATOMIC_RELEASE) == 2)
        sys_futex_wake(&lock_word, 1);
}

long drv_wait_change(const uint32_t *word, uint32_t seen, uint64_t timeout_ms)
{
    drv_unlock();
    long r = sys_futex_wait(word, seen, ticks_of(timeout_ms));
    drv_lock();
    return r == E_TIMEOUT ? E_TIMEOUT : 0;
}

void drv_wake_all(const uint32_t *word) { sys_futex_wake(word, 1 << 30); }

bool drv_option(const char *key, char *buf, size_t len)
{
    return sys_kopt(key, buf, len) >= 0;
}

/* The kernel lists its probes as "probe NAME SLOT" lines: the user slots follow the last. */
int drv_pcnt_first_slot(void)
{
    char text[512];
    long n = SC4(SYS_PCNT, PCNT_LIST, (long)text, sizeof text, 0);
    if (n < 0)
        return (int)n;
    text[n < (long)sizeof text ? n : (long)sizeof text - 1] = 0;
    int first = 1;
    for (const char *line = text; *line; ) {
        const char *end = line;
        while (*end && *end != '\n')
            end++;
        if (end - line > 6 && __builtin_memcmp(line, "probe ", 6) == 0) {
            const char *num = end;
            while (num > line && num[-1] >= '0' && num[-1] <= '9')
                num--;
            int slot = 0;
            for (; num < end; num++)
                slot = slot * 10 + (*num - '0');
            if (slot + 1 > first)
                first = slot + 1;
        }
        line = *end ? end + 1 : end;
    }
    return first;
}

long drv_pcnt(int cmd, int slot, uint64_t para)
{
    if (cmd != PCNT_START && cmd != PCNT_STOP && cmd != PCNT_REPEAT)
        return E_INVAL;
    return SC4(SYS_PCNT, cmd, slot, para, 0);
}
