/* Offsets into struct cpu used by assembly; checked by static asserts in cpu.c. */
#define CPU_KERNEL_RSP 8
#define CPU_USER_RSP   16
