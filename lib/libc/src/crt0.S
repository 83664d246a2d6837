/*
 * Program entry. The kernel starts a task at _start with
 *   rdi = argc, rsi = argv (NULL-terminated array of user pointers),
 *   rsp 16-byte aligned.
 * We set up the main thread's TLS (tls.c; nothing without `__thread` variables), call
 * main(argc, argv) and pass its return value to exit(), which flushes stdio and ends
 * the task with SYS_EXIT.
 */
    .text
    .globl _start
    .type _start, @function
_start:
    xorl %ebp, %ebp            /* end of the frame-pointer chain */
    andq $-16, %rsp            /* be robust to a misaligned entry stack */
    pushq %rdi                 /* argc, argv across the TLS set-up (two pushes keep */
    pushq %rsi                 /* the 16-byte alignment) */
    call __libc_tls_init
    popq %rsi
    popq %rdi
    call main
    movl %eax, %edi
    call exit
    ud2
    .size _start, . - _start

    .section .note.GNU-stack, "", @progbits
