/*
 * faulttest MODE: makes the CPU fault in user mode in a chosen way; the kernel must
 * kill the program (and print a report line), never crash or let it go on.
 *
 *   null    write to address 0                    -> page fault
 *   div0    integer division by zero              -> divide error
 *   cli     privileged instruction cli            -> general protection fault
 *   hlt     privileged instruction hlt            -> general protection fault
 *   cr3     mov to cr3                            -> general protection fault
 *   stack   unbounded recursion into the guard page below the stack -> page fault
 *   ud      ud2                                   -> invalid opcode
 *   badptr  not a fault: passes a kernel, an unmapped and a non-canonical address to
 *           SYS_CONSOLE_WRITE; prints the three results, exit 0 iff all are E_FAULT.
 *
 * A fault mode that returns prints "faulttest: MODE survived" and exits 1.
 */
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <ondol/sys.h>

static volatile unsigned long sink;

/* Each frame keeps 512 bytes live, so this soon runs off the 256 KiB stack. The
 * bound is unreachable in practice and keeps the compiler from seeing an
 * infinite recursion. */
static __attribute__((noinline)) unsigned long recurse(unsigned long depth)
{
    volatile char frame[512];
    frame[0] = (char)depth;
    frame[511] = (char)(depth >> 8);
    if (depth == UINT64_MAX)
        return frame[0];
    unsigned long r = recurse(depth + 1);
    return r + frame[0] + frame[511];   /* use after the call: no tail call */
}

static int badptr(void)
{
    static const uintptr_t kernel = 0xffffffff80100000ull;
    static const uintptr_t unmapped = 0x10000000ull;
    static const uintptr_t noncanon = 0x8000000000000000ull;
    long k = sys_console_write((const char *)kernel, 16);
    long u = sys_console_write((const char *)unmapped, 16);
    long c = sys_console_write((const char *)noncanon, 16);
    printf("badptr kernel=%ld unmapped=%ld noncanon=%ld\n", k, u, c);
    return (k == E_FAULT && u == E_FAULT && c == E_FAULT) ? 0 : 1;
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        printf("usage: faulttest null|div0|cli|hlt|cr3|stack|badptr|ud\n");
        return 2;
    }
    const char *mode = argv[1];
    fflush(stdout);
    if (strcmp(mode, "badptr") == 0) {
        return badptr();
    } else if (strcmp(mode, "null") == 0) {
        __asm__ volatile("movq $0x1234, (%0)" : : "r"(0ul) : "memory");
    } else if (strcmp(mode, "div0") == 0) {
        unsigned long q, r;
        __asm__ volatile("xorl %%ecx, %%ecx\n\tdivq %%rcx"
                         : "=a"(q), "=d"(r) : "a"(1ul), "d"(0ul) : "rcx");
        sink = q + r;
    } else if (strcmp(mode, "cli") == 0) {
        __asm__ volatile("cli");
    } else if (strcmp(mode, "hlt") == 0) {
        __asm__ volatile("hlt");
    } else if (strcmp(mode, "cr3") == 0) {
        __asm__ volatile("movq %0, %%cr3" : : "r"(0ul) : "memory");
    } else if (strcmp(mode, "stack") == 0) {
        sink = recurse(0);
    } else if (strcmp(mode, "ud") == 0) {
        __asm__ volatile("ud2");
    } else {
        printf("faulttest: unknown mode %s\n", mode);
        return 2;
    }
    printf("faulttest: %s survived\n", mode);
    return 1;
}
