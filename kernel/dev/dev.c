/*
 * Device access for user-level (and in-kernel) drivers. A claim ties a PCI function to
 * one task; it lapses when that task is gone, so a restarted driver can claim again.
 *
 * Interrupts: a claimed function's INTx line is routed level-triggered and stays masked
 * except while its driver waits in SYS_IRQ_WAIT. When it fires, the kernel masks the pin
 * (the device keeps the line asserted until the driver clears the cause, e.g. by reading
 * virtio's ISR register), counts the interrupt and wakes the waiter. The driver's next
 * SYS_IRQ_WAIT is the acknowledgement: it unmasks the pin, so an interrupt still pending
 * fires again at once. Lines may be shared: every claim on the pin is told.
 * With the option msix, a function that has MSI-X gets it instead (INTx off): every entry
 * of its table sends the claim's own vector (VEC_MSI_BASE + handle), an edge that needs no
 * masking, so SYS_IRQ_WAIT only counts and waits; INTx stays the fallback.
 */
#include <ondol/abi.h>
#include "arch.h"
#include "dev.h"
#include "kernel.h"
#include "memlayout.h"
#include "memobj.h"
#include "options.h"
#include "pci.h"
#include "region.h"
#include "task.h"
#include "usercopy.h"
#include "waitq.h"

#define MAX_CLAIMS 8

struct claim {
    struct pci_func *func;    /* NULL: free slot */
    int owner;                /* task id (with generation: a dead owner no longer resolves) */
    u64 pending;              /* interrupts not yet returned by SYS_IRQ_WAIT */
    bool msix;                /* interrupts come by MSI-X, not the INTx pin */
    struct waitq waiters;
};

static struct claim claims[MAX_CLAIMS];
bool msix_on;                 /* option msix */
_Static_assert(MAX_CLAIMS <= DEV_MSI_VECTORS, "an MSI-X vector per claim");

#define KERNEL_OWNER 0        /* claims of in-kernel (IK) drivers; no task has id 0 */

static bool owner_alive(const struct claim *c)
{
    if (c->owner == KERNEL_OWNER)
        return true;
    struct task *t = task_lookup(c->owner);
    return t && !t->zombie && !t->exiting;
}

/* The claim slot for f: its current one, or a free or lapsed one; NULL when all are held. */
static struct claim *slot_for(struct pci_func *f)
{
    struct claim *spare = NULL;
    for (int i = 0; i < MAX_CLAIMS; i++) {
        struct claim *c = &claims[i];
        if (c->func == f)
            return c;
        if (!spare && (!c->func || !owner_alive(c)))
            spare = c;
    }
    return spare;
}

static void route_irq(const struct pci_func *f)
{
    if (f->irq_line != DEV_IRQ_NONE)
        ioapic_route_level(f->irq_line, (u8)(VEC_DEV_BASE + f->irq_line), this_cpu()->apic_id);
}

/* Claim f for `owner` (a task id, or KERNEL_OWNER) and describe it: the handle, or E_PERM
 * when another live owner holds it or every slot is taken. */
static long claim(struct pci_func *f, int owner, struct dev_info *info)
{
    struct claim *c = slot_for(f);
    if (!c || (c->func == f && c->owner != owner && owner_alive(c)))
        return E_PERM;
    pci_describe(f, info);
    if (c->func != f || c->owner != owner)
        *c = (struct claim){.func = f, .owner = owner, .waiters = c->waiters};
    pci_enable(f);
    long h = c - claims;
    c->msix = msix_on && pci_msix_enable(f, info, (u8)(VEC_MSI_BASE + h), this_cpu()->apic_id);
    if (!c->msix)
        route_irq(f);
    info->msix = c->msix;
    return h;
}

long dev_find(struct task *self, u64 vendor, u64 device, u64 index, u64 uout)
{
    if (!self->privileged)
        return E_PERM;
    if (vendor > 0xffff || device > 0xffff || index > PCI_MAX_FUNCS)
        return E_INVAL;
    if (!user_range_ok(uout, sizeof(struct dev_info)))
        return E_FAULT;
    struct pci_func *f = pci_find((u16)vendor, (u16)device, (unsigned)index);
    if (!f)
        return E_NOENT;
    struct dev_info info;
    long h = claim(f, self->id, &info);
    if (h >= 0 && copyout(uout, &info, sizeof(info))) {
        claims[h].func = NULL;          /* as if never claimed */
        return E_FAULT;
    }
    return h;
}

long dev_claim_kernel(u16 vendor, u16 device, unsigned index, struct dev_info *out)
{
    struct pci_func *f = pci_find(vendor, device, index);
    return f ? claim(f, KERNEL_OWNER, out) : E_NOENT;
}

/* The caller's claim with handle dev, or NULL (*err says why). */
static struct claim *own_claim(struct task *self, u64 dev, long *err)
{
    *err = !self->privileged ? E_PERM : E_INVAL;
    if (!self->privileged || dev >= MAX_CLAIMS || !claims[dev].func)
        return NULL;
    if (claims[dev].owner != self->id) {
        *err = E_PERM;
        return NULL;
    }
    return &claims[dev];
}

static long cfg_read(struct claim *c, u64 offset, u64 size)
{
    if ((size != 1 && size != 2 && size != 4) || offset >= 256 || (offset & (size - 1)))
        return E_INVAL;
    return pci_read(c->func, (unsigned)offset, (unsigned)size);
}

long dev_cfg_read(struct task *self, u64 dev, u64 offset, u64 size)
{
    long err;
    struct claim *c = own_claim(self, dev, &err);
    return c ? cfg_read(c, offset, size) : err;
}

long dev_cfg_read_kernel(int dev, unsigned offset, unsigned size)
{
    return dev >= 0 && dev < MAX_CLAIMS && claims[dev].func ? cfg_read(&claims[dev], offset, size) : E_INVAL;
}

long dev_dma_alloc(struct task *self, u64 len, u64 uphys)
{
    if (!self->privileged)
        return E_PERM;
    if (len == 0 || len > DMA_ALLOC_MAX)
        return E_INVAL;
    if (!user_range_ok(uphys, sizeof(u64)))
        return E_FAULT;
    len = ALIGN_UP(len, PAGE_SIZE);
    struct memobj *obj = memobj_contig(len);
    if (!obj)
        return E_NOMEM;
    u64 pa = obj->phys_base;
    long addr = region_map(self->as, self->id, 0, len, PROT_READ | PROT_WRITE, 0, obj);
    if (addr >= 0 && copyout(uphys, &pa, sizeof(pa))) {
        region_unmap(self->as, self->id, (u64)addr, (u64)addr + len);
        return E_FAULT;
    }
    return addr;
}

static long irq_wait(struct claim *c, u64 timeout)
{
    if (!c->msix && c->func->irq_line == DEV_IRQ_NONE)
        return E_INVAL;
    if (!c->msix)
        ioapic_mask(c->func->irq_line, false);       /* acknowledge the previous interrupt */
    if (!c->pending) {
        int r = waitq_sleep(&c->waiters, timeout == SLEEP_FOREVER ? WAIT_FOREVER : timeout);
        if (r == WAIT_KILLED)
            return E_DEAD;
        if (r == E_TIMEOUT && !c->pending)
            return E_TIMEOUT;
    }
    u64 n = c->pending;
    c->pending = 0;
    return (long)n;
}

long dev_irq_wait(struct task *self, u64 dev, u64 timeout)
{
    long err;
    struct claim *c = own_claim(self, dev, &err);
    return c ? irq_wait(c, timeout) : err;
}

long dev_irq_wait_kernel(int dev, u64 timeout)
{
    return dev >= 0 && dev < MAX_CLAIMS && claims[dev].func ? irq_wait(&claims[dev], timeout) : E_INVAL;
}

void dev_irq(unsigned pin)
{
    ioapic_mask(pin, true);
    for (int i = 0; i < MAX_CLAIMS; i++) {
        struct claim *c = &claims[i];
        if (c->func && c->func->irq_line == pin) {
            c->pending++;
            waitq_wake_all(&c->waiters, 0);
        }
    }
}

void dev_msi(unsigned handle)
{
    if (handle >= MAX_CLAIMS || !claims[handle].func || !claims[handle].msix)
        return;
    claims[handle].pending++;
    waitq_wake_all(&claims[handle].waiters, 0);
}
