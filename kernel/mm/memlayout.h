/*
 * The kernel's virtual memory layout (see docs/architecture.md).
 *
 *   0x0000000000400000  user program image (ELF, linked there)
 *   0x0000100000000000  user vm_map area (grows up)
 *   0x00007ffffffc0000  main thread stack (256 KiB), guard page below it
 *   0xffff800000000000  PHYSMAP: all physical memory, 2 MiB global pages, NX
 *   0xffffffff80000000  KERNEL_VMA: the kernel image (phys 1 MiB -> KERNEL_VMA + 1 MiB)
 *   0xffffffffc0000000  MARKER_BASE: 64 KiB read-only window for cache-model markers
 */
#ifndef MEMLAYOUT_H
#define MEMLAYOUT_H

#define KERNEL_VMA      0xffffffff80000000ull
#define PHYSMAP_BASE    0xffff800000000000ull
#define MARKER_BASE     0xffffffffc0000000ull
#define MARKER_SIZE     0x10000ull

#define USER_IMAGE_BASE 0x0000000000400000ull
#define USER_MAP_BASE   0x0000100000000000ull
#define USER_STACK_TOP  0x00007ffffffff000ull
#define USER_STACK_SIZE (256ull * 1024)
#define USER_TOP        0x0000800000000000ull
/* The top user page is never mapped: a `syscall` in its last two bytes would return with
 * sysret to 2^47, a non-canonical address, which raises #GP in ring 0 on Intel CPUs (the
 * fastpaths sysret without checking rip, as the general exit does). Linux keeps the same
 * page free for the same reason. */
#define USER_MAP_END    (USER_TOP - 0x1000ull)

#ifndef __ASSEMBLER__
#include "types.h"
static inline void *phys_to_virt(u64 pa) { return (void *)(pa + PHYSMAP_BASE); }
static inline u64 virt_to_phys(const void *va)
{
    u64 v = (u64)va;
    return v >= KERNEL_VMA ? v - KERNEL_VMA : v - PHYSMAP_BASE;
}
#endif
#endif
