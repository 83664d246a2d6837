/*
 * What a driver needs from the place it runs, and nothing else: the driver's source does
 * not know whether it is a user task (MK: lib/drv/mk.c, system calls) or part of the
 * kernel (IK: kernel/dev/drv_ik.c, direct calls). Waiting for interrupts is the
 * platform's business too: it calls the driver's interrupt function when one came.
 * All functions return 0 or a pointer on success and an E_* code (<ondol/abi.h>) or NULL
 * otherwise.
 */
#ifndef DRVPLAT_H
#define DRVPLAT_H
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <ondol/abi.h>

struct drv_dev {
    int handle;                  /* the platform's name for the claimed function */
    struct dev_info info;        /* ids, BARs, interrupt line */
};

/* Claim the index-th PCI function with these ids and describe it in *d. */
int drv_find(uint16_t vendor, uint16_t device, unsigned index, struct drv_dev *d);
/* 1, 2 or 4 bytes of the function's configuration space at off (aligned, below 256);
 * all ones when the read is refused. */
uint32_t drv_cfg_read(const struct drv_dev *d, unsigned off, unsigned size);
/* The memory BAR `bar` mapped for the driver (uncached device memory), or NULL. */
volatile void *drv_map_bar(const struct drv_dev *d, int bar);
/* len bytes of zeroed, physically contiguous memory; its physical address in *phys. */
void *drv_dma_alloc(size_t len, uint64_t *phys);

/* Zeroed memory for the driver's (or its server's) own state, len bytes; NULL when out. */
void *drv_mem_alloc(size_t len);
/* A client's memory shared with its server (docs/net.md, "The data channel"): len bytes of
 * the window at `window` in the task of thread `client`, which must be waiting for our
 * reply, mapped into the server. NULL when that fails, or where servers need no shared
 * memory (IK: a client's call is a function call in the kernel). */
void *drv_map_caller(int client, uint64_t window, size_t len);
/* Undo drv_map_caller (mem and len as it gave and took them). */
void drv_unmap_caller(void *mem, size_t len);
/* The task of thread tid while it lives (0: a kernel thread), or E_SRCH once it has
 * exited (or never was): how a server finds what an ended client held. MK: a scan of the
 * kernel's thread list (SYS_PS, up to PS_MAX entries), for rare use. */
long drv_thread_task(int tid);
/* Milliseconds since boot (at least the resolution of the timer tick; MK: from the TSC,
 * without a system call). */
uint64_t drv_now_ms(void);
/* Acknowledge the device's previous interrupt and wait at most timeout_ms for the next:
 * the number of interrupts (>= 1), E_TIMEOUT, or E_DEAD when the waiter is being killed. */
long drv_irq_wait(const struct drv_dev *d, uint64_t timeout_ms);
/* ---- a server's own thread next to its calls (docs/net.md, "The server") ----
 * Start fn on another thread of the server (MK: a thread of its task; IK: a kernel
 * thread); fn never returns. 0 or E_*. */
long drv_thread_start(void (*fn)(void));
/* The one lock between that thread and the server's calls. MK: a futex mutex. IK: nothing
 * to do: every IK server's code runs under the big kernel lock, and the kernel's sleeps
 * (drv_irq_wait, drv_wait_change) release it. Not recursive; never held across a wait. */
void drv_lock(void);
void drv_unlock(void);
/* With the lock held: release it, wait until *word != seen or timeout_ms have passed
 * (UINT64_MAX: no limit), take it again. 0, or E_TIMEOUT. */
long drv_wait_change(const uint32_t *word, uint32_t seen, uint64_t timeout_ms);
/* Wake every drv_wait_change on word (after changing it). */
void drv_wake_all(const uint32_t *word);

/* The value of kernel option `key` copied into buf (NUL-terminated); false if not given. */
bool drv_option(const char *key, char *buf, size_t len);

/* pcnt slots for a driver's or server's own probes (docs/measuring.md): the first slot
 * after the kernel's probes, which every task may use. */
int drv_pcnt_first_slot(void);
/* PCNT_START (para), PCNT_STOP or PCNT_REPEAT (para = on) on a slot from the first one
 * up: the slot's status, or E_INVAL for another slot or command. MK: SYS_PCNT; IK: the
 * kernel's inline pcnt_start/pcnt_stop, a few instructions. */
long drv_pcnt(int cmd, int slot, uint64_t para);

/* Ordering between the driver's writes to shared memory and to device registers. */
static inline void drv_barrier(void) { __atomic_thread_fence(__ATOMIC_SEQ_CST); }
#endif
