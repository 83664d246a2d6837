/* The boot archive (bootfs.c): a ustar file with one ELF program per entry, the multiboot
 * module. */
#ifndef BOOTFS_H
#define BOOTFS_H
#include "types.h"

void bootfs_init(const void *archive, u64 len);
const void *bootfs_find(const char *name, u64 *size);
int bootfs_count(void);
const char *bootfs_name(int i);
#endif
