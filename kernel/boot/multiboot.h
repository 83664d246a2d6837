/* What the boot loader handed us (multiboot.c). */
#ifndef MULTIBOOT_H
#define MULTIBOOT_H
#include "pmm.h"

#define MAX_MEM_REGIONS 32

struct boot_info {
    char cmdline[4096];
    size_t cmdline_len;                /* as given; longer than cmdline holds: cut, reported */
    struct mem_region usable[MAX_MEM_REGIONS];
    int nusable;
    u64 max_phys;              /* end of the highest usable region */
    u64 archive_pa, archive_len;
    u64 rootfs_pa, rootfs_len;    /* the second module: the UNIX server's root archive */
    char loader[48];
};

/* The root archive module (physical, page-aligned by the loader; 0/0 when absent), kept
 * for SYS_ROOTFS_MAP (kernel/core/syscall.c). */
extern u64 rootfs_pa, rootfs_len;

void multiboot_parse(u32 magic, u64 info_pa, struct boot_info *bi);
#endif
