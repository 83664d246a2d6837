/* Local APIC (timer, EOI), I/O APIC (device interrupts), legacy PIC and PIT. */
#ifndef APIC_H
#define APIC_H
#include "types.h"

void pic_disable(void);
void lapic_init(void);
void lapic_eoi(void);
u32 lapic_id(void);
/* AP start (smp.c): an INIT IPI, and a startup IPI that runs the CPU at physical page
 * `page` (below 1 MiB) in real mode. */
void lapic_send_init(u32 apic_id);
void lapic_send_startup(u32 apic_id, u32 page);
void lapic_timer_start(u32 hz);       /* calibrates against the PIT first */
u64 tsc_hz(void);                      /* calibrated TSC frequency */
void ioapic_route(u32 irq, u8 vector, u32 apic_id);
/* PCI INTx: level-triggered, active high (as QEMU's and most firmware's ACPI tables say),
 * routed masked; ioapic_mask masks or unmasks the pin. */
void ioapic_route_level(u32 irq, u8 vector, u32 apic_id);
void ioapic_mask(u32 irq, bool masked);
#endif
