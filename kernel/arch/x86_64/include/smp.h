/* Starting the other CPUs (smp.c, docs/smp.md). */
#ifndef SMP_H
#define SMP_H
#include "smp_layout.h"
#include "types.h"

extern unsigned cpus_running;   /* CPUs started, the bootstrap one included */
extern bool smp_on;             /* option smp: start the CPUs the MADT lists */
/* Physical memory the start needs (the trampoline and its page tables): kept out of the
 * frame allocator from the beginning. */
#define SMP_RESERVED_PA AP_TRAMPOLINE_PA
#define SMP_RESERVED_LEN (AP_LOW_END - AP_TRAMPOLINE_PA)
/* Starts every CPU the MADT lists (acpi.c); they halt until there is work for them. */
void smp_start_aps(void);
#endif
