/*
 * Fault-safe copies between kernel and user memory. The caller has already checked that
 * the user range lies below USER_TOP; a page fault inside [usercopy_begin, usercopy_end)
 * is turned by the page-fault handler into a jump to usercopy_fault, which returns -1.
 * With SMAP on, user pages are reachable only between stac and clac. The copy moves
 * n / 8 quadwords, then the 0-7 bytes left (a page is 512 iterations, not 4096: icount
 * counts each); a fault in either half lands in usercopy_fault.
 *
 * long copy_user_raw(void *dst, const void *src, size_t n)  -> 0 or -1
 */
    .text
    .globl copy_user_raw, usercopy_begin, usercopy_end, usercopy_fault
copy_user_raw:
    movq %rdx, %rcx
    shrq $3, %rcx
    andl $7, %edx
    testb $1, smap_enabled(%rip)
    jz usercopy_begin
    stac
usercopy_begin:
    rep movsq
    movq %rdx, %rcx
    rep movsb
usercopy_end:
    testb $1, smap_enabled(%rip)
    jz 1f
    clac
1:  xorl %eax, %eax
    ret
usercopy_fault:
    testb $1, smap_enabled(%rip)
    jz 2f
    clac
2:  movq $-1, %rax
    ret

    .section .note.GNU-stack, "", @progbits
