/* ACPI discovery (acpi.c): CPUs and interrupt controllers from the firmware's MADT. */
#ifndef ACPI_H
#define ACPI_H
#include "types.h"

#define ACPI_MAX_CPUS 64
#define IOAPIC_DEFAULT_PA 0xfec00000ull

struct acpi_info {
    bool found;                  /* a valid RSDP and MADT */
    u8 revision;                 /* the RSDP's: 0 = ACPI 1.0 (RSDT), >= 2 (XSDT) */
    unsigned ncpus;              /* usable CPUs: min(madt_cpus, ACPI_MAX_CPUS), >= 1 */
    unsigned madt_cpus;          /* enabled or online-capable local APICs listed */
    u32 apic_ids[ACPI_MAX_CPUS];
    u64 lapic_pa;                /* 0 when not found */
    unsigned ioapics;            /* I/O APICs listed; the first is used */
    u64 ioapic_pa;
    u32 ioapic_gsi_base;
    u32 isa_gsi[16];             /* ISA IRQ -> global system interrupt */
    u16 isa_flags[16];           /* MPS INTI flags of an override, 0 = ISA's default */
};
extern struct acpi_info acpi;

/* Reads the tables; physical memory below max(max_phys, 4 GiB) is mapped (vm_init). */
void acpi_init(u64 max_phys);
/* The GSI of ISA IRQ irq (irq >= 16: a GSI already) and its trigger and polarity. */
u32 acpi_isa_gsi(u32 irq, bool *level, bool *active_low);
#endif
