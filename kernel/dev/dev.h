/* Device access for drivers (dev.c): the kernel mechanisms behind SYS_DEV_FIND,
 * SYS_DEV_CFG_READ, SYS_DMA_ALLOC and SYS_IRQ_WAIT (docs/drivers.md). A driver task claims
 * a PCI function, reads its configuration space, maps its BARs with SYS_VM_MMAP
 * (VM_MMAP_PHYS), gets DMA memory with known physical addresses, and waits for the
 * function's interrupt. Every call is for privileged tasks only. */
#ifndef DEV_H
#define DEV_H
#include "types.h"

struct task;

long dev_find(struct task *self, u64 vendor, u64 device, u64 index, u64 uout);
long dev_cfg_read(struct task *self, u64 dev, u64 offset, u64 size);
long dev_dma_alloc(struct task *self, u64 len, u64 uphys);
long dev_irq_wait(struct task *self, u64 dev, u64 timeout);
/* The same for in-kernel (IK) drivers (drv_ik.c): claims the kernel holds never lapse;
 * the claim's interrupt wait blocks the calling thread (an IK server's client). */
struct dev_info;
long dev_claim_kernel(u16 vendor, u16 device, unsigned index, struct dev_info *out);
long dev_cfg_read_kernel(int dev, unsigned offset, unsigned size);
long dev_irq_wait_kernel(int dev, u64 timeout_ticks);
/* From the trap handler: the interrupt of I/O APIC pin `pin` (below DEV_IRQ_PINS) fired. */
void dev_irq(unsigned pin);
/* The MSI-X vector of claim `handle` fired (trap.c): count it and wake the waiter. */
void dev_msi(unsigned handle);
#endif
