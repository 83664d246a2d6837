/*
 * Program entry. The kernel starts a task at _start with
 *   rdi = argc, rsi = argv (NULL-terminated array of user pointers),
 *   rsp 16-byte aligned.
 * We call main(argc, argv) and pass its return value to exit(), which flushes
 * stdio and ends the task with SYS_EXIT.
 */
    .text
    .globl _start
    .type _start, @function
_start:
    xorl %ebp, %ebp            /* end of the frame-pointer chain */
    andq $-16, %rsp            /* be robust to a misaligned entry stack */
    call main                  /* rdi, rsi are already argc, argv */
    movl %eax, %edi
    call exit
    ud2
    .size _start, . - _start

    .section .note.GNU-stack, "", @progbits
