/*
 * PCI enumeration. Every bus number is probed (no bridge walking: a brute-force scan is
 * short and finds functions behind any bridge firmware configured), each present function
 * recorded once. Configuration accesses go through arch.h (pcicfg.h).
 */
#include "arch.h"
#include "kernel.h"
#include "memlayout.h"
#include "pci.h"

enum {
    CFG_ID = 0x00, CFG_COMMAND = 0x04, CFG_CLASS = 0x08, CFG_HEADER = 0x0c, CFG_BAR0 = 0x10,
    CFG_INTERRUPT = 0x3c, CFG_CAP_PTR = 0x34,
};
#define STATUS_CAPS    (1u << 20)     /* status bit 4, in the dword of the command register */
#define CAP_MSIX       0x11
#define MSIX_ENABLE    (1u << 31)     /* message control bits 15 and 14, in the cap's dword */
#define MSIX_FUNC_MASK (1u << 30)
#define MSI_ADDRESS    0xfee00000u    /* the local APIC's message address; apic id at bit 12 */
#define CMD_IO         (1u << 0)
#define CMD_MEMORY     (1u << 1)
#define CMD_BUS_MASTER (1u << 2)
#define CMD_INTX_OFF   (1u << 10)

static struct pci_func funcs[PCI_MAX_FUNCS];
static int nfuncs;
static bool scanned;

static void record(u32 bdf, u32 id)
{
    if (nfuncs == PCI_MAX_FUNCS)
        return;
    u32 irq = pci_cfg_read32(bdf, CFG_INTERRUPT) & 0xff;
    funcs[nfuncs++] = (struct pci_func){
        .bdf = bdf, .vendor = id & 0xffff, .device = id >> 16,
        .class_code = pci_cfg_read32(bdf, CFG_CLASS) >> 8,
        .irq_line = irq < DEV_IRQ_PINS ? (u8)irq : 0xff,
    };
}

static void scan_slot(u32 bus, u32 slot)
{
    u32 bdf = bus << 8 | slot << 3;
    u32 id = pci_cfg_read32(bdf, CFG_ID);
    if ((id & 0xffff) == 0xffff)
        return;
    record(bdf, id);
    if (!(pci_cfg_read32(bdf, CFG_HEADER) & (0x80u << 16)))
        return;                                  /* not multi-function */
    for (u32 fn = 1; fn < 8; fn++) {
        id = pci_cfg_read32(bdf | fn, CFG_ID);
        if ((id & 0xffff) != 0xffff)
            record(bdf | fn, id);
    }
}

static void scan(void)
{
    for (u32 bus = 0; bus < 256; bus++)
        for (u32 slot = 0; slot < 32; slot++)
            scan_slot(bus, slot);
    scanned = true;
}

struct pci_func *pci_find(u16 vendor, u16 device, unsigned index)
{
    if (!scanned)
        scan();
    for (int i = 0; i < nfuncs; i++)
        if (funcs[i].vendor == vendor && funcs[i].device == device && index-- == 0)
            return &funcs[i];
    return NULL;
}

/* The size a BAR decodes: write all ones, read back the writable bits, restore. */
static u32 probe_bar(u32 bdf, u32 off, u32 *orig)
{
    *orig = pci_cfg_read32(bdf, off);
    pci_cfg_write32(bdf, off, 0xffffffffu);
    u32 mask = pci_cfg_read32(bdf, off);
    pci_cfg_write32(bdf, off, *orig);
    return mask;
}

/* BAR i (a 64-bit BAR uses i and i + 1): 1 more slot consumed when it is 64-bit. */
static int describe_bar(u32 bdf, int i, struct dev_bar *bar)
{
    u32 lo, mask = probe_bar(bdf, CFG_BAR0 + 4 * (u32)i, &lo);
    if (mask == 0)
        return 0;
    if (lo & 1) {
        bar->flags = DEV_BAR_IO;
        bar->base = lo & ~3u;
        bar->size = (u16)(~(mask & ~3u) + 1);
        return 0;
    }
    u64 base = lo & ~0xfu, size_mask = 0xffffffff00000000ull | (mask & ~0xfu);
    int extra = 0;
    bar->flags = (lo & 8) ? DEV_BAR_PREFETCH : 0;
    if (((lo >> 1) & 3) == 2 && i < 5) {
        u32 hi, hmask = probe_bar(bdf, CFG_BAR0 + 4 * (u32)(i + 1), &hi);
        base |= (u64)hi << 32;
        size_mask = (u64)hmask << 32 | (mask & ~0xfu);
        bar->flags |= DEV_BAR_MEM64;
        extra = 1;
    }
    bar->base = base;
    bar->size = ~size_mask + 1;
    return extra;
}

void pci_describe(const struct pci_func *f, struct dev_info *out)
{
    memset(out, 0, sizeof(*out));
    out->vendor = f->vendor;
    out->device = f->device;
    out->bus = (u8)(f->bdf >> 8);
    out->slot = (u8)((f->bdf >> 3) & 31);
    out->func = (u8)(f->bdf & 7);
    out->irq = f->irq_line;
    out->class_code = f->class_code;
    u32 cmd = pci_cfg_read32(f->bdf, CFG_COMMAND) & 0xffff;   /* status bits are write-1-to-clear */
    pci_cfg_write32(f->bdf, CFG_COMMAND, cmd & ~(CMD_IO | CMD_MEMORY));
    for (int i = 0; i < 6; i++)
        i += describe_bar(f->bdf, i, &out->bar[i]);
    pci_cfg_write32(f->bdf, CFG_COMMAND, cmd);
}

void pci_enable(const struct pci_func *f)
{
    u32 cmd = pci_cfg_read32(f->bdf, CFG_COMMAND) & 0xffff;
    cmd = (cmd | CMD_IO | CMD_MEMORY | CMD_BUS_MASTER) & ~CMD_INTX_OFF;
    pci_cfg_write32(f->bdf, CFG_COMMAND, cmd);
}

u32 pci_read(const struct pci_func *f, unsigned off, unsigned size)
{
    u32 v = pci_cfg_read32(f->bdf, off & ~3u) >> (8 * (off & 3));
    return size == 4 ? v : v & ((1u << (8 * size)) - 1);
}

/* The offset of capability `id` in f's list, or 0 (at most 48 steps: a looped list ends). */
static u32 find_cap(u32 bdf, u8 id)
{
    if (!(pci_cfg_read32(bdf, CFG_COMMAND) & STATUS_CAPS))
        return 0;
    u32 off = pci_cfg_read32(bdf, CFG_CAP_PTR) & 0xfc;
    for (int n = 0; off >= 0x40 && n < 48; n++) {
        u32 hdr = pci_cfg_read32(bdf, off);
        if ((hdr & 0xff) == id)
            return off;
        off = (hdr >> 8) & 0xfc;
    }
    return 0;
}

bool pci_msix_enable(const struct pci_func *f, const struct dev_info *info, u8 vector,
                     u32 apic_id)
{
    u32 cap = find_cap(f->bdf, CAP_MSIX);
    if (!cap)
        return false;
    u32 ctl = pci_cfg_read32(f->bdf, cap), where = pci_cfg_read32(f->bdf, cap + 4);
    u32 entries = ((ctl >> 16) & 0x7ff) + 1, bir = where & 7, off = where & ~7u;
    if (bir > 5)
        return false;
    const struct dev_bar *bar = &info->bar[bir];
    u64 pa = bar->base + off, len = 16ull * entries;
    if ((bar->flags & DEV_BAR_IO) || !bar->base || off + len > bar->size ||
        pa + len > (4ull << 30))
        return false;
    volatile u32 *table = phys_to_virt(pa);
    for (u32 i = 0; i < entries; i++) {
        table[4 * i] = MSI_ADDRESS | apic_id << 12;
        table[4 * i + 1] = 0;
        table[4 * i + 2] = vector;                   /* fixed delivery, edge */
        table[4 * i + 3] = 0;                        /* unmasked */
    }
    pci_cfg_write32(f->bdf, cap, (ctl & ~MSIX_FUNC_MASK) | MSIX_ENABLE);
    u32 cmd = pci_cfg_read32(f->bdf, CFG_COMMAND) & 0xffff;
    pci_cfg_write32(f->bdf, CFG_COMMAND, cmd | CMD_INTX_OFF);
    return true;
}
