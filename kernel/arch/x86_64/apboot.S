/*
 * The application processors' first instructions (smp.c, docs/smp.md). smp.c copies the
 * bytes from ap_trampoline to ap_trampoline_end to AP_TRAMPOLINE_PA (a page below 1 MiB
 * kept out of the frame allocator), fills the data words at the end, and starts each AP
 * with a SIPI whose vector is that page's number: the AP begins at its first byte in real
 * mode. The code is assembled for that address (AP_PA), so it needs no relocation.
 *
 * Real mode -> 32-bit protected mode (a flat GDT of its own) -> long mode: PAE, the boot
 * page tables smp.c built (the kernel half of the kernel's PML4 plus an identity map of
 * the low 2 MiB, all below 4 GiB since CR3 is loaded in 32-bit mode), EFER.LME and NXE as
 * the BSP runs them, paging on; a far jump to 64-bit code, then to ap_entry in the
 * kernel's high half on the stack smp.c gave. ap_entry loads the kernel's own tables.
 */
#include "smp_layout.h"

#define REL(x) (AP_TRAMPOLINE_PA + (x) - ap_trampoline)

    .section .rodata
    .balign 16
    .globl ap_trampoline, ap_trampoline_end, ap_boot_cr3, ap_boot_efer, ap_boot_stack, ap_boot_entry
    .code16
ap_trampoline:
    cli
    cld
    xorw %ax, %ax
    movw %ax, %ds                       /* absolute addresses below 64 KiB from here */
    lgdtl REL(ap_gdtr)
    movl %cr0, %eax
    orl $1, %eax                        /* PE */
    movl %eax, %cr0
    ljmpl $0x08, $REL(ap_protected)

    .code32
ap_protected:
    movw $0x10, %ax
    movw %ax, %ds
    movw %ax, %es
    movw %ax, %ss
    movl %cr4, %eax
    orl $0x20, %eax                     /* PAE */
    movl %eax, %cr4
    movl REL(ap_boot_cr3), %eax
    movl %eax, %cr3
    movl $0xc0000080, %ecx              /* EFER */
    rdmsr
    orl REL(ap_boot_efer), %eax         /* LME, and NXE when the BSP uses it */
    wrmsr
    movl %cr0, %eax
    orl $0x80000000, %eax               /* PG */
    movl %eax, %cr0
    ljmpl $0x18, $REL(ap_long)

    .code64
ap_long:
    movq REL(ap_boot_stack), %rsp
    movq REL(ap_boot_entry), %rax
    xorl %ebp, %ebp
    jmpq *%rax

    .balign 8
ap_gdt:
    .quad 0
    .quad 0x00cf9a000000ffff            /* 0x08: 32-bit code, flat */
    .quad 0x00cf92000000ffff            /* 0x10: data, flat */
    .quad 0x00af9a000000ffff            /* 0x18: 64-bit code */
ap_gdtr:
    .word ap_gdtr - ap_gdt - 1
    .long REL(ap_gdt)

    .balign 8                           /* the data smp.c fills in */
ap_boot_cr3:    .quad 0
ap_boot_efer:   .quad 0
ap_boot_stack:  .quad 0
ap_boot_entry:  .quad 0
ap_trampoline_end:

    .section .note.GNU-stack, "", @progbits
