/*
 * Multiboot (v1) entry and the 32 -> 64-bit trampoline.
 *
 * QEMU's -kernel and GRUB both load the flat image (ondol.bin) at physical 1 MiB using the
 * "address fields" of the header below, so no ELF parsing is needed and a 64-bit ELF is fine.
 * We enter in 32-bit protected mode with paging off, build temporary page tables that map the
 * first 1 GiB three times (identity, PHYSMAP, KERNEL_VMA), enable long mode, and jump to the
 * higher half. vm_init() replaces these tables later.
 */
#include "memlayout.h"

#define MB_MAGIC      0x1badb002
#define MB_FLAGS      ((1 << 0) | (1 << 1) | (1 << 16))  /* page-align modules, mem map, addresses */
#define PHYS(x)       ((x) - KERNEL_VMA)

    .section .multiboot, "a"
    .align 4
mb_header:
    .long MB_MAGIC
    .long MB_FLAGS
    .long -(MB_MAGIC + MB_FLAGS)
    .long mb_header             /* header_addr: .multiboot is linked at its physical address */
    .long __image_start         /* load_addr */
    .long PHYS(__load_end)      /* load_end_addr */
    .long PHYS(__bss_end)       /* bss_end_addr */
    .long _start32              /* entry_addr */

    .section .boot.text, "ax"
    .code32
    .globl _start32
_start32:
    cli
    movl %eax, %edi                     /* multiboot magic -> first argument of kmain */
    movl %ebx, %esi                     /* multiboot info (physical) -> second argument */
    movl $PHYS(boot_stack_top), %esp

    /* Long mode available? */
    movl $0x80000000, %eax
    cpuid
    cmpl $0x80000001, %eax
    jb no_long_mode
    movl $0x80000001, %eax
    cpuid
    testl $(1 << 29), %edx
    jz no_long_mode

    /* PD: 512 x 2 MiB pages covering the first 1 GiB. */
    movl $PHYS(boot_pd), %ebx
    xorl %ecx, %ecx
1:  movl %ecx, %eax
    shll $21, %eax
    orl $0x83, %eax                     /* present | writable | 2 MiB */
    movl %eax, (%ebx, %ecx, 8)
    movl $0, 4(%ebx, %ecx, 8)
    incl %ecx
    cmpl $512, %ecx
    jne 1b

    movl $PHYS(boot_pd), %eax
    orl $0x3, %eax
    movl %eax, PHYS(boot_pdpt_low)              /* pdpt_low[0] -> pd */
    movl %eax, PHYS(boot_pdpt_high) + 510 * 8   /* pdpt_high[510]: 0xffffffff80000000 */
    movl $PHYS(boot_pdpt_low), %eax
    orl $0x3, %eax
    movl %eax, PHYS(boot_pml4)                  /* identity */
    movl %eax, PHYS(boot_pml4) + 256 * 8        /* PHYSMAP_BASE */
    movl $PHYS(boot_pdpt_high), %eax
    orl $0x3, %eax
    movl %eax, PHYS(boot_pml4) + 511 * 8

    movl %cr4, %eax
    orl $(1 << 5), %eax                 /* PAE */
    movl %eax, %cr4
    movl $PHYS(boot_pml4), %eax
    movl %eax, %cr3
    movl $0xc0000080, %ecx              /* EFER.LME */
    rdmsr
    orl $(1 << 8), %eax
    wrmsr
    movl %cr0, %eax
    orl $0x80010001, %eax               /* PG | WP | PE */
    movl %eax, %cr0

    lgdt boot_gdt_ptr
    ljmp $0x08, $_start64_low

no_long_mode:
    movw $0x3f8, %dx
    movl $msg_no_lm, %esi
2:  lodsb
    testb %al, %al
    jz 3f
    outb %al, %dx
    jmp 2b
3:  hlt
    jmp 3b

    .code64
_start64_low:
    movabsq $_start64_high, %rax
    jmp *%rax

    .section .boot.rodata, "a"
msg_no_lm:
    .asciz "ondol: this CPU has no long mode (x86-64); cannot boot.\r\n"
    .align 16
boot_gdt:
    .quad 0
    .quad 0x00af9a000000ffff            /* 0x08: 64-bit kernel code */
    .quad 0x00cf92000000ffff            /* 0x10: kernel data */
boot_gdt_end:
boot_gdt_ptr:
    .word boot_gdt_end - boot_gdt - 1
    .long boot_gdt

    .text
_start64_high:
    movw $0x10, %ax
    movw %ax, %ds
    movw %ax, %es
    movw %ax, %ss
    xorw %ax, %ax
    movw %ax, %fs
    movw %ax, %gs
    movabsq $boot_stack_top, %rsp
    xorl %ebp, %ebp
    call kmain                          /* kmain(magic, mbinfo_phys): never returns */
4:  hlt
    jmp 4b

    .bss
    .align 4096
    .globl boot_pml4
boot_pml4:      .skip 4096
boot_pdpt_low:  .skip 4096
boot_pdpt_high: .skip 4096
boot_pd:        .skip 4096
    .globl boot_stack_top
boot_stack:     .skip 16384
boot_stack_top:

    .section .note.GNU-stack, "", @progbits
