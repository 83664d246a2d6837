#ifndef ELF_H
#define ELF_H
#include "vm.h"
int elf_load(struct aspace *as, const void *image, u64 size, u64 *entry);
int copy_to_aspace(struct aspace *as, u64 va, const void *src, u64 len);
#endif
