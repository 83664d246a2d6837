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
/* A fixed-vector interprocessor interrupt (ipi.c). */
void lapic_send_ipi(u32 apic_id, u8 vector);
/* The vector's bit in the in-service register: set when it was delivered as an interrupt
 * (needs an EOI), clear for a true spurious interrupt. */
bool lapic_in_service(u8 vector);
void lapic_timer_mask(void);          /* an AP's timer: masked, stopped */
void lapic_timer_start(u32 hz);       /* calibrates against the PIT first */
/* Another CPU's timer: the same rate, from the bootstrap CPU's calibration (same bus
 * clock), so only one CPU uses the PIT. */
void lapic_timer_start_ap(void);
u64 tsc_hz(void);                      /* calibrated TSC frequency */
void ioapic_route(u32 irq, u8 vector, u32 apic_id);
/* PCI INTx: level-triggered, active high (as QEMU's and most firmware's ACPI tables say),
 * routed masked; ioapic_mask masks or unmasks the pin. */
void ioapic_route_level(u32 irq, u8 vector, u32 apic_id);
void ioapic_mask(u32 irq, bool masked);
#endif
