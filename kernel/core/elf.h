#ifndef ELF_H
#define ELF_H
#include "vm.h"
/* Load the program into as for task `owner`: an ET_EXEC at its link address; a static
 * PIE (ET_DYN, ondol's own programs: user/user.mk) at USER_IMAGE_BASE in a task's own
 * address space, and in the shared one (mmu=off) wherever the map area has room, its
 * R_X86_64_RELATIVE relocations applied. 0, or E_INVAL (malformed image), E_NOMEM,
 * E_PERM (an ET_EXEC over another task's memory). */
int elf_load(struct aspace *as, int owner, const void *image, u64 size, u64 *entry);
int copy_to_aspace(struct aspace *as, u64 va, const void *src, u64 len);
#endif
