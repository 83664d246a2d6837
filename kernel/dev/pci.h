/* PCI devices (pci.c): the functions found by a scan of configuration space, their BARs,
 * and the command bits a driver needs. The scan runs at the first lookup, not at boot, so
 * boots that use no device (every benchmark) do not pay for it. */
#ifndef PCI_H
#define PCI_H
#include <ondol/abi.h>
#include "types.h"

#define PCI_MAX_FUNCS 64

struct pci_func {
    u32 bdf;                  /* bus << 8 | device << 3 | function */
    u16 vendor, device;
    u32 class_code;           /* class << 16 | subclass << 8 | programming interface */
    u8 irq_line;              /* the interrupt line firmware assigned (I/O APIC pin), 0xff none */
};

/* The index-th function (0 = first) with this vendor and device id, or NULL. */
struct pci_func *pci_find(u16 vendor, u16 device, unsigned index);
/* Fill the public description: ids, location, interrupt line, each BAR's base and size
 * (found by the standard all-ones probe with decoding off for the moment it takes). */
void pci_describe(const struct pci_func *f, struct dev_info *out);
/* Turn on memory decoding and bus mastering (DMA), and leave INTx enabled. */
void pci_enable(const struct pci_func *f);
/* MSI-X (PCI 3.0, 6.8.2): aim every entry of f's table at `vector` on the CPU with
 * `apic_id`, unmask them, enable MSI-X and turn INTx off; `info` is f's description (the
 * table lies in one of its memory BARs, after pci_enable). False, changing nothing, when f
 * has no MSI-X capability or its table is not in the kernel's physical map (below 4 GiB). */
bool pci_msix_enable(const struct pci_func *f, const struct dev_info *info, u8 vector,
                     u32 apic_id);
/* A configuration-space value of 1, 2 or 4 bytes at off (aligned, below 256). */
u32 pci_read(const struct pci_func *f, unsigned off, unsigned size);
#endif
