/* PCI configuration mechanism #1: write the address to 0xcf8, move the dword at 0xcfc.
 * The kernel runs with interrupts off under its lock, so the two steps are never split. */
#include "pcicfg.h"
#include "x86.h"

#define PCI_ADDR_PORT 0xcf8
#define PCI_DATA_PORT 0xcfc

static void select_dword(u32 bdf, u32 off)
{
    outl(PCI_ADDR_PORT, 0x80000000u | (bdf & 0xffff) << 8 | (off & 0xfc));
}

u32 pci_cfg_read32(u32 bdf, u32 off)
{
    select_dword(bdf, off);
    return inl(PCI_DATA_PORT);
}

void pci_cfg_write32(u32 bdf, u32 off, u32 value)
{
    select_dword(bdf, off);
    outl(PCI_DATA_PORT, value);
}
