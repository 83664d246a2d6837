/* Loading a static ELF64 executable from the boot archive into an address space. Every
 * header field is checked: a malformed image is refused, never trusted. ondol's programs
 * are static PIEs linked at 0: loaded at USER_IMAGE_BASE in a task's own address space
 * (where they ran when they were linked there), and with mmu=off, where every task shares one address
 * space, at a free range, relocated by the load delta (as uClinux relocates its flat
 * binaries). */
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

struct elf64_dyn {
    i64 tag;
    u64 val;
};

struct elf64_rela {
    u64 offset, info;
    i64 addend;
};

#define ET_EXEC 2
#define ET_DYN 3
#define PT_LOAD 1
#define PT_DYNAMIC 2
#define PF_X 1
#define PF_W 2
#define DT_NULL 0
#define DT_RELA 7
#define DT_RELASZ 8
#define DT_RELAENT 9
#define R_X86_64_NONE 0
#define R_X86_64_RELATIVE 8

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
           h->ident[5] == 1 && (h->type == ET_EXEC || h->type == ET_DYN) && h->machine == 62 &&
           h->phentsize == sizeof(struct elf64_phdr) && h->phnum > 0 && h->phnum <= 64 &&
           h->phoff < size && size - h->phoff >= (u64)h->phnum * sizeof(struct elf64_phdr) &&
           h->entry < USER_TOP;
}

/* A segment's file bytes and link addresses are checked before the image is placed. */
static bool segment_ok(u64 size, const struct elf64_phdr *ph)
{
    return ph->filesz <= ph->memsz && ph->offset <= size && size - ph->offset >= ph->filesz &&
           ph->vaddr < USER_MAP_END && USER_MAP_END - ph->vaddr >= ph->memsz;
}

/* The segment at its link address plus delta (the placed image is inside user space). */
static int load_segment(struct aspace *as, int owner, const u8 *image, const struct elf64_phdr *ph,
                        u64 delta)
{
    u64 va = ph->vaddr + delta;
    unsigned prot = PROT_READ | (ph->flags & PF_W ? PROT_WRITE : 0) | (ph->flags & PF_X ? PROT_EXEC : 0);
    u64 start = ALIGN_DOWN(va, PAGE_SIZE), end = ALIGN_UP(va + ph->memsz, PAGE_SIZE);
    struct region there;
    if (region_lookup(as, start, &there))
        start += PAGE_SIZE;     /* shared with the previous segment: the linker script keeps this rare */
    int err = start < end ? region_map_anon_fixed(as, owner, start, end - start, prot) : 0;
    if (err)
        return err;
    return copy_to_aspace(as, va, image + ph->offset, ph->filesz);
}

/* The page-aligned link-address span [*lo, *hi) of the loadable segments; false when a
 * segment is malformed or there is none. */
static bool image_span(const struct elf64_phdr *ph, int n, u64 size, u64 *lo, u64 *hi)
{
    *lo = USER_MAP_END;
    *hi = 0;
    for (int i = 0; i < n; i++) {
        if (ph[i].type != PT_LOAD || ph[i].memsz == 0)
            continue;
        if (!segment_ok(size, &ph[i]))
            return false;
        *lo = MIN(*lo, ALIGN_DOWN(ph[i].vaddr, PAGE_SIZE));
        *hi = MAX(*hi, ALIGN_UP(ph[i].vaddr + ph[i].memsz, PAGE_SIZE));
    }
    return *lo < *hi;
}

/* How far the image moves from its link addresses: an ET_EXEC not at all, a PIE to
 * USER_IMAGE_BASE in its own address space or to a free range of the shared one.
 * False when the placed image would not be at or above USER_IMAGE_BASE or no room is left. */
static bool place_image(struct aspace *as, u16 type, u64 lo, u64 hi, u64 *delta)
{
    u64 base = lo;
    if (type == ET_DYN)
        base = as->shared ? region_free_range(as, hi - lo) : USER_IMAGE_BASE;
    *delta = base - lo;
    return base >= USER_IMAGE_BASE && base < USER_MAP_END && USER_MAP_END - base >= hi - lo;
}

/* The file offset of link address va, inside one PT_LOAD's file bytes with len bytes
 * after it; false if none holds it. */
static bool file_offset(const struct elf64_phdr *ph, int n, u64 size, u64 va, u64 len, u64 *off)
{
    for (int i = 0; i < n; i++) {
        if (ph[i].type == PT_LOAD && segment_ok(size, &ph[i]) && va >= ph[i].vaddr &&
            va - ph[i].vaddr <= ph[i].filesz &&
            ph[i].filesz - (va - ph[i].vaddr) >= len) {
            *off = ph[i].offset + (va - ph[i].vaddr);
            return true;
        }
    }
    return false;
}

/* The RELA table the dynamic segment names (*n entries at file offset *off); *n = 0 when
 * there is none. False when the dynamic segment or the table is malformed. */
static bool rela_table(const u8 *image, u64 size, const struct elf64_phdr *ph, int n, u64 *off,
                       u64 *count)
{
    u64 rela = 0, relasz = 0, relaent = sizeof(struct elf64_rela);
    *count = 0;
    for (int i = 0; i < n; i++) {
        if (ph[i].type != PT_DYNAMIC)
            continue;
        if (ph[i].offset > size || size - ph[i].offset < ph[i].filesz)
            return false;
        const struct elf64_dyn *d = (const void *)(image + ph[i].offset);
        for (u64 k = 0; k < ph[i].filesz / sizeof(*d) && d[k].tag != DT_NULL; k++) {
            rela = d[k].tag == DT_RELA ? d[k].val : rela;
            relasz = d[k].tag == DT_RELASZ ? d[k].val : relasz;
            relaent = d[k].tag == DT_RELAENT ? d[k].val : relaent;
        }
    }
    if (!relasz)
        return true;
    *count = relasz / sizeof(struct elf64_rela);
    return relaent == sizeof(struct elf64_rela) && relasz % relaent == 0 &&
           file_offset(ph, n, size, rela, relasz, off);
}

/* Apply the image's relocations for a load delta: only R_X86_64_RELATIVE (all a static
 * PIE has), each inside the image span [lo, hi). */
static int relocate(struct aspace *as, const u8 *image, u64 size, const struct elf64_phdr *ph,
                    int n, u64 lo, u64 hi, u64 delta)
{
    u64 off, count;
    if (!rela_table(image, size, ph, n, &off, &count))
        return E_INVAL;
    const struct elf64_rela *r = (const void *)(image + off);
    for (u64 i = 0; i < count; i++) {
        u32 type = (u32)r[i].info;
        if (type == R_X86_64_NONE)
            continue;
        if (type != R_X86_64_RELATIVE || r[i].offset < lo || r[i].offset > hi - sizeof(u64))
            return E_INVAL;
        u64 val = (u64)r[i].addend + delta;
        int err = copy_to_aspace(as, r[i].offset + delta, &val, sizeof(val));
        if (err)
            return err;
    }
    return 0;
}

int elf_load(struct aspace *as, int owner, const void *image, u64 size, u64 *entry)
{
    const struct elf64_ehdr *h = image;
    u64 lo, hi, delta;
    if (!header_ok(h, size))
        return E_INVAL;
    const struct elf64_phdr *ph = (const void *)((const u8 *)image + h->phoff);
    if (!image_span(ph, h->phnum, size, &lo, &hi) || !place_image(as, h->type, lo, hi, &delta))
        return E_INVAL;
    for (int i = 0; i < h->phnum; i++) {
        if (ph[i].type != PT_LOAD || ph[i].memsz == 0)
            continue;
        int err = load_segment(as, owner, image, &ph[i], delta);
        if (err)
            return err;
    }
    *entry = h->entry + delta;
    return h->type == ET_DYN ? relocate(as, image, size, ph, h->phnum, lo, hi, delta) : 0;
}
