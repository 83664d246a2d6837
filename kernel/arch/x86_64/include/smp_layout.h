/* Where the AP trampoline (apboot.S) runs, and its boot page tables (smp.c): four pages
 * below 1 MiB that the frame allocator never hands out. Plain #defines: included from
 * assembly. */
#ifndef SMP_LAYOUT_H
#define SMP_LAYOUT_H
#define AP_TRAMPOLINE_PA 0x8000      /* the code and its data; SIPI vector 0x08 */
#define AP_PML4_PA       0x9000
#define AP_PDPT_PA       0xa000
#define AP_PD_PA         0xb000
#define AP_LOW_END       0xc000
#endif
