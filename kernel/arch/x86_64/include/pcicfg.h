/* PCI configuration space through the legacy mechanism #1 (ports 0xcf8/0xcfc), which
 * QEMU's pc and q35 machines and PCs with a PCI host bridge provide. `bdf` is
 * bus << 8 | device << 3 | function; `off` a dword-aligned offset below 256. */
#ifndef PCICFG_H
#define PCICFG_H
#include "types.h"

u32 pci_cfg_read32(u32 bdf, u32 off);
void pci_cfg_write32(u32 bdf, u32 off, u32 value);
#endif
