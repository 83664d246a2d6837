/*
 * A tiny 64-bit multiboot guest that exercises cachesim's QEMU glue with the ondol
 * conventions, so the plugin can be checked before ondol itself boots:
 *   - "kernel" code runs at KBASE + physical (the calibration convention);
 *   - low-half code is "user" code (attribution is by virtual address, not by CPL,
 *     so ring 0 is enough here); it is reached through two mappings: identity, and
 *     ALIAS + physical (a virtual address unequal to the physical one);
 *   - markers are one-byte loads from MARKER + (cmd << 12) + payload, a read-only
 *     16-page region mapped to one zero frame.
 * Each window has a known instruction and access pattern; test_guest_glue.py checks the
 * JSON the plugin writes. The guest leaves through isa-debug-exit (QEMU status 1).
 */
#define KBASE   0xFFFFFFFF80000000
#define ALIAS   0x0000008000000000      /* PML4 slot 1: ALIAS + phys, 4 KiB-page "user" */
#define MARKER_DISP32 (-0x40000000)     /* 0xFFFFFFFFC0000000 as a sign-extended disp32 */

#define KARR    0x400000                /* 4 KiB array (physical) */
#define KBIG    0x500000                /* 512 KiB array (physical) */
#define UARR    0x300000                /* 20 pages, one byte touched in each */
#define NPAGES  20
#define EFLAGS_AC 0x40000

.macro MARK cmd, payload
    movb MARKER_DISP32 + ((\cmd) << 12) + (\payload), %al
.endm

/* Define asid \asid as kind \kind (1 server, 2 user) named by the character codes. */
.macro DEFINE asid, kind, chars:vararg
    MARK 1, \asid
    MARK 2, \kind
    .irp ch, \chars
    MARK 3, \ch
    .endr
    MARK 4, 0
.endm

.macro RELOAD_CR3
    mov %cr3, %rax
    mov %rax, %cr3
.endm

    .section .mbheader, "a"
    .align 4
mb_header:
    .long 0x1BADB002
    .long 0x00010000                    /* addresses below are valid */
    .long -(0x1BADB002 + 0x00010000)
    .long mb_header
    .long 0x100000                      /* load_addr */
    .long _load_end
    .long _bss_end
    .long entry32

    .text
    .code32
    .globl entry32
entry32:
    cli
    /* PML4[0] = PML4[1] = pdpt_lo (identity and ALIAS), PML4[511] = pdpt_hi */
    movl $pdpt_lo + 3, pml4
    movl $pdpt_lo + 3, pml4 + 8
    movl $pdpt_hi + 3, pml4 + 511 * 8
    movl $pd_id + 3, pdpt_lo
    movl $pd_id + 3, pdpt_hi + 510 * 8  /* KBASE + phys */
    movl $pd_mk + 3, pdpt_hi + 511 * 8  /* 0xFFFFFFFFC0000000: markers */
    movl $pt_mk + 3, pd_mk
    xor %ecx, %ecx
1:  mov %ecx, %eax                      /* pd_id: 512 x 2 MiB = first GiB */
    shl $21, %eax
    or $0x83, %eax
    mov %eax, pd_id(, %ecx, 8)
    inc %ecx
    cmp $512, %ecx
    jne 1b
    xor %ecx, %ecx
2:  movl $zero_frame + 1, pt_mk(, %ecx, 8)   /* present, read-only */
    inc %ecx
    cmp $16, %ecx
    jne 2b
    mov %cr4, %eax
    or $0x20, %eax                      /* PAE */
    mov %eax, %cr4
    mov $pml4, %eax
    mov %eax, %cr3
    mov $0xC0000080, %ecx               /* EFER.LME */
    rdmsr
    or $0x100, %eax
    wrmsr
    mov %cr0, %eax
    or $0x80000001, %eax
    mov %eax, %cr0
    lgdt gdt_ptr
    ljmp $0x08, $entry64

    .code64
entry64:
    mov $0x10, %ax
    mov %ax, %ds
    mov %ax, %es
    mov %ax, %ss
    movabs $high_entry + KBASE, %rax
    jmp *%rax

/* ---- kernel half ------------------------------------------------------------------- */
high_entry:
    lea stack_top(%rip), %rsp
    DEFINE 1, 2, 'u', 't'
    DEFINE 2, 1, 's', 'r', 'v'

    /* W1: 4 KiB kernel array, 8 passes, one load per 32-byte line. */
    MARK 5, 1
    movabs $KBASE + KARR, %rsi
    mov $8, %ecx
1:  mov %rsi, %rdi
    mov $128, %edx
2:  movb (%rdi), %al
    add $32, %rdi
    dec %edx
    jnz 2b
    dec %ecx
    jnz 1b
    MARK 6, 1

    /* W2: 512 KiB kernel array (twice the L2), 2 passes. */
    MARK 5, 2
    movabs $KBASE + KBIG, %rsi
    mov $2, %ecx
1:  mov %rsi, %rdi
    mov $16384, %edx
2:  movb (%rdi), %al
    add $32, %rdi
    dec %edx
    jnz 2b
    dec %ecx
    jnz 1b
    MARK 6, 2

    /* W3: user task "ut" touches 20 pages, 3 passes, no TLB flush in between. */
    MARK 0, 1
    RELOAD_CR3
    MARK 5, 3
    mov $user_pass, %ebx                /* identity-mapped low-half copy */
    mov $3, %r12d
1:  call *%rbx
    dec %r12d
    jnz 1b
    MARK 6, 3

    /* W4: server "srv" does the same with a CR3 reload before each pass. */
    MARK 0, 2
    MARK 5, 4
    mov $3, %r12d
1:  RELOAD_CR3
    call *%rbx
    dec %r12d
    jnz 1b
    MARK 6, 4

    /* W5: physical indexing. Warm the caches through the kernel alias, then run the
     * same code on the same data through ALIAS (virtual != physical) as "ut". The alias
     * runs with EFLAGS.AC set (no effect here: no SMAP, CPL 0): AC is part of QEMU's
     * translation key, so the alias gets a translation of its own. QEMU 8 and later
     * otherwise reuse the kernel alias's translation (x86-64 code is translated
     * position-independently), and a plugin sees that translation's addresses. */
    MARK 0, 0
    movabs $KBASE + KARR, %rdi
    lea probe(%rip), %rax
    call *%rax
    MARK 0, 1
    pushfq
    orl $EFLAGS_AC, (%rsp)
    popfq
    MARK 5, 5
    movabs $ALIAS + KARR, %rdi
    movabs $ALIAS + probe, %rax
    call *%rax
    MARK 6, 5
    pushfq
    andl $~EFLAGS_AC, (%rsp)
    popfq

    /* W6: invlpg with an address hint (drops one page), then without (drops all). */
    MARK 0, 1
    RELOAD_CR3
    call *%rbx                          /* the 20 pages are in the DTLB */
    MARK 5, 6
    MARK 7, ((UARR + 5 * 4096) >> 12) & 0xFFF
    MARK 8, ((UARR + 5 * 4096) >> 24) & 0xFFF
    MARK 9, ((UARR + 5 * 4096) >> 36) & 0xFFF
    mov $UARR + 5 * 4096, %eax
    invlpg (%rax)
    call *%rbx                          /* one miss */
    invlpg (%rax)
    call *%rbx                          /* twenty misses */
    MARK 6, 6

    mov $0, %al
    out %al, $0xF4                      /* isa-debug-exit */
    hlt

/* ---- low half ("user" code) ------------------------------------------------------------ */

/* One byte from each of NPAGES pages: 2 + NPAGES * 4 + 1 instructions. */
user_pass:
    mov $UARR, %edi
    mov $NPAGES, %edx
1:  movb (%rdi), %al
    add $4096, %rdi
    dec %edx
    jnz 1b
    ret

/* 256 one-byte nops (8 lines of 32 bytes), 4 loads from (%rdi), ret: 261 instructions. */
    .balign 64
probe:
    .rept 256
    nop
    .endr
    movb (%rdi), %al
    movb 32(%rdi), %al
    movb 64(%rdi), %al
    movb 96(%rdi), %al
    ret

    .section .rodata
    .balign 8
gdt:
    .quad 0
    .quad 0x00AF9A000000FFFF            /* 0x08: 64-bit code */
    .quad 0x00CF92000000FFFF            /* 0x10: data */
gdt_ptr:
    .word gdt_ptr - gdt - 1
    .long gdt

    .bss
    .balign 4096
pml4:       .skip 4096
pdpt_lo:    .skip 4096
pdpt_hi:    .skip 4096
pd_id:      .skip 4096
pd_mk:      .skip 4096
pt_mk:      .skip 4096
zero_frame: .skip 4096
stack:      .skip 16384
stack_top:
