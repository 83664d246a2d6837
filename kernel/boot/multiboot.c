/* Multiboot v1 information: command line, memory map, the boot archive module and the
 * optional second module (the UNIX server's root archive, docs/unix.md "Boot"). */
#include "multiboot.h"
#include "kernel.h"
#include "memlayout.h"

#define MB_BOOTLOADER_MAGIC 0x2badb002

struct mb_info {
    u32 flags, mem_lower, mem_upper, boot_device, cmdline, mods_count, mods_addr;
    u32 syms[4];
    u32 mmap_length, mmap_addr;
    u32 drives_length, drives_addr, config_table, boot_loader_name;
} __attribute__((packed));

struct mb_mmap {
    u32 size;
    u64 base, len;
    u32 type;
} __attribute__((packed));

struct mb_module {
    u32 start, end, string, reserved;
};

static void add_usable(struct boot_info *bi, u64 base, u64 len)
{
    if (bi->nusable == MAX_MEM_REGIONS || len == 0)
        return;
    bi->usable[bi->nusable].base = base;
    bi->usable[bi->nusable].len = len;
    bi->nusable++;
    bi->max_phys = MAX(bi->max_phys, base + len);
}

void multiboot_parse(u32 magic, u64 info_pa, struct boot_info *bi)
{
    if (magic != MB_BOOTLOADER_MAGIC)
        panic("not booted by a multiboot loader (magic %#x)", magic);
    const struct mb_info *mb = phys_to_virt(info_pa);
    if ((mb->flags & (1u << 2)) && mb->cmdline) {
        const char *c = phys_to_virt(mb->cmdline);
        size_t n = strnlen(c, sizeof(bi->cmdline) - 1);
        memcpy(bi->cmdline, c, n);
        bi->cmdline[n] = 0;
        bi->cmdline_len = n + strnlen(c + n, 1u << 20);
    }
    if ((mb->flags & (1u << 9)) && mb->boot_loader_name) {
        const char *name = phys_to_virt(mb->boot_loader_name);
        size_t n = strnlen(name, sizeof(bi->loader) - 1);
        memcpy(bi->loader, name, n);
        bi->loader[n] = 0;
    }
    if (mb->flags & (1u << 6)) {
        u64 p = mb->mmap_addr, end = p + mb->mmap_length;
        while (p < end) {
            const struct mb_mmap *e = phys_to_virt(p);
            if (e->type == 1)
                add_usable(bi, e->base, e->len);
            p += e->size + 4;
        }
    } else if (mb->flags & (1u << 0)) {
        add_usable(bi, 0x100000, (u64)mb->mem_upper * 1024);
    }
    if ((mb->flags & (1u << 3)) && mb->mods_count > 0) {
        const struct mb_module *m = phys_to_virt(mb->mods_addr);
        bi->archive_pa = m->start;
        bi->archive_len = m->end - m->start;
    }
    if ((mb->flags & (1u << 3)) && mb->mods_count > 1) {
        const struct mb_module *m = (const struct mb_module *)phys_to_virt(mb->mods_addr) + 1;
        bi->rootfs_pa = m->start;
        bi->rootfs_len = m->end - m->start;
    }
}
