/* Loading a static ELF64 executable from the boot archive into an address space. Every
 * header field is checked: a malformed image is refused, never trusted. */
#include <ondol/abi.h>
#include "elf.h"
#include "kernel.h"
#include "memlayout.h"
#include "fault.h"
#include "region.h"

struct elf64_ehdr {
    u8 ident[16];
    u16 type, machine;
    u32 version;
    u64 entry, phoff, shoff;
    u32 flags;
    u16 ehsize, phentsize, phnum, shentsize, shnum, shstrndx;
};

struct elf64_phdr {
    u32 type, flags;
    u64 offset, vaddr, paddr, filesz, memsz, align;
};

#define PT_LOAD 1
#define PF_X 1
#define PF_W 2

int copy_to_aspace(struct aspace *as, u64 va, const void *src, u64 len)
{
    const u8 *s = src;
    while (len > 0) {
        u64 pa;
        int err = vm_resolve(as, va, VM_ACCESS_READ, &pa);   /* the kernel writes through PHYSMAP */
        if (err)
            return err;
        u64 off = va & (PAGE_SIZE - 1), n = MIN(len, PAGE_SIZE - off);
        memcpy((u8 *)phys_to_virt(pa) + off, s, n);
        s += n;
        va += n;
        len -= n;
    }
    return 0;
}

static bool header_ok(const struct elf64_ehdr *h, u64 size)
{
    return size >= sizeof(*h) && memcmp(h->ident, "\x7f" "ELF", 4) == 0 && h->ident[4] == 2 &&
           h->ident[5] == 1 && h->type == 2 && h->machine == 62 &&
           h->phentsize == sizeof(struct elf64_phdr) && h->phnum > 0 && h->phnum <= 64 &&
           h->phoff < size && size - h->phoff >= (u64)h->phnum * sizeof(struct elf64_phdr) &&
           h->entry < USER_TOP;
}

static int load_segment(struct aspace *as, const u8 *image, u64 size, const struct elf64_phdr *ph)
{
    if (ph->filesz > ph->memsz || ph->offset > size || size - ph->offset < ph->filesz ||
        ph->vaddr < USER_IMAGE_BASE || ph->vaddr >= USER_MAP_END || USER_MAP_END - ph->vaddr < ph->memsz)
        return E_INVAL;
    unsigned prot = PROT_READ | (ph->flags & PF_W ? PROT_WRITE : 0) | (ph->flags & PF_X ? PROT_EXEC : 0);
    u64 start = ALIGN_DOWN(ph->vaddr, PAGE_SIZE), end = ALIGN_UP(ph->vaddr + ph->memsz, PAGE_SIZE);
    if (region_find(as, start))
        start += PAGE_SIZE;     /* shared with the previous segment: the linker script keeps this rare */
    int err = start < end ? region_map_anon_fixed(as, start, end - start, prot) : 0;
    if (err)
        return err;
    return copy_to_aspace(as, ph->vaddr, image + ph->offset, ph->filesz);
}

int elf_load(struct aspace *as, const void *image, u64 size, u64 *entry)
{
    const struct elf64_ehdr *h = image;
    if (!header_ok(h, size))
        return E_INVAL;
    const struct elf64_phdr *ph = (const void *)((const u8 *)image + h->phoff);
    for (int i = 0; i < h->phnum; i++) {
        if (ph[i].type != PT_LOAD || ph[i].memsz == 0)
            continue;
        int err = load_segment(as, image, size, &ph[i]);
        if (err)
            return err;
    }
    *entry = h->entry;
    return 0;
}
