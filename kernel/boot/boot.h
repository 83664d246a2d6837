/* What the boot loader handed us, and the boot archive of user programs. */
#ifndef BOOT_H
#define BOOT_H
#include "pmm.h"

#define MAX_MEM_REGIONS 32

struct boot_info {
    char cmdline[1024];
    struct mem_region usable[MAX_MEM_REGIONS];
    int nusable;
    u64 max_phys;              /* end of the highest usable region */
    u64 archive_pa, archive_len;
    char loader[48];
};

void multiboot_parse(u32 magic, u64 info_pa, struct boot_info *bi);

/* Boot archive: a ustar file with one ELF program per entry (bootfs.c). */
void bootfs_init(const void *archive, u64 len);
const void *bootfs_find(const char *name, u64 *size);
int bootfs_count(void);
const char *bootfs_name(int i);
#endif
