/*
 * ACPI discovery (ACPI 6.x, chapter 5.2): the CPUs and interrupt controllers the firmware
 * lists in its MADT, for SMP bring-up and the I/O APIC (apic.c).
 *
 * The RSDP is searched where a BIOS leaves it (the first KiB of the EBDA, then
 * 0xe0000-0xfffff on 16-byte boundaries); the XSDT (revision >= 2) or the RSDT lists the
 * tables; the MADT ("APIC") gives the local APICs (type 0; type 9 for x2APIC ids), the I/O
 * APIC (type 1: the first one is used) and the ISA interrupt overrides (type 2: IRQ 0 is
 * GSI 2 on most machines, PCI IRQs are level). Firmware is trusted to mean well but not to
 * be exact: every structure's checksum and length is checked, and everything must lie in
 * the physical map; anything that fails is ignored and the defaults stay (one CPU, the
 * I/O APIC at 0xfec00000, ISA IRQs identity-mapped, edge, active high), as before ACPI.
 */
#include "acpi.h"
#include "kernel.h"
#include "memlayout.h"

struct acpi_info acpi = {
    .ncpus = 1,
    .ioapic_pa = IOAPIC_DEFAULT_PA,
};

static u64 map_end;                        /* physical memory below this is mapped */

struct sdt_header {
    char signature[4];
    u32 length;
    u8 revision, checksum;
    char oem[6], oem_table[8];
    u32 oem_revision, creator, creator_revision;
} __attribute__((packed));

struct rsdp {
    char signature[8];
    u8 checksum;
    char oem[6];
    u8 revision;
    u32 rsdt;
    u32 length;                            /* revision >= 2 from here */
    u64 xsdt;
    u8 ext_checksum, reserved[3];
} __attribute__((packed));

static bool mapped(u64 pa, u64 len) { return pa < map_end && len <= map_end - pa; }

static u8 sum(const void *p, u64 len)
{
    u8 s = 0;
    for (u64 i = 0; i < len; i++)
        s = (u8)(s + ((const u8 *)p)[i]);
    return s;
}

static const struct rsdp *rsdp_at(u64 pa)
{
    const struct rsdp *r = phys_to_virt(pa);
    if (memcmp(r->signature, "RSD PTR ", 8) || sum(r, 20))
        return NULL;
    if (r->revision >= 2 && (r->length < sizeof(*r) || !mapped(pa, r->length) || sum(r, r->length)))
        return NULL;
    return r;
}

static const struct rsdp *rsdp_find(void)
{
    u64 ebda = (u64)*(const u16 *)phys_to_virt(0x40e) << 4;
    if (ebda >= 0x80000 && ebda < 0xa0000)
        for (u64 pa = ebda; pa < ebda + 1024; pa += 16)
            if (rsdp_at(pa))
                return rsdp_at(pa);
    for (u64 pa = 0xe0000; pa < 0x100000; pa += 16)
        if (rsdp_at(pa))
            return rsdp_at(pa);
    return NULL;
}

/* The table at pa when it is whole, mapped and sums to zero. */
static const struct sdt_header *table_at(u64 pa)
{
    if (!mapped(pa, sizeof(struct sdt_header)))
        return NULL;
    const struct sdt_header *h = phys_to_virt(pa);
    if (h->length < sizeof(*h) || !mapped(pa, h->length) || sum(h, h->length))
        return NULL;
    return h;
}

/* The first table with this signature listed by the XSDT or RSDT. */
static const struct sdt_header *table_find(const struct rsdp *r, const char sig[4])
{
    bool x = r->revision >= 2 && r->xsdt;
    const struct sdt_header *root = table_at(x ? r->xsdt : r->rsdt);
    if (!root)
        return NULL;
    unsigned width = x ? 8 : 4;
    u64 n = (root->length - sizeof(*root)) / width;
    const u8 *entries = (const u8 *)(root + 1);
    for (u64 i = 0; i < n; i++) {
        u64 pa = 0;
        memcpy(&pa, entries + i * width, width);
        const struct sdt_header *t = table_at(pa);
        if (t && !memcmp(t->signature, sig, 4))
            return t;
    }
    return NULL;
}

enum { MADT_LAPIC = 0, MADT_IOAPIC = 1, MADT_OVERRIDE = 2, MADT_LAPIC_ADDR = 5, MADT_X2APIC = 9 };
#define MADT_CPU_ENABLED 1u
#define MADT_CPU_ONLINE_CAPABLE 2u

static void add_cpu(u32 apic_id, u32 flags)
{
    if (!(flags & (MADT_CPU_ENABLED | MADT_CPU_ONLINE_CAPABLE)))
        return;
    if (acpi.madt_cpus < ACPI_MAX_CPUS)
        acpi.apic_ids[acpi.madt_cpus] = apic_id;
    acpi.madt_cpus++;
}

/* One MADT entry (type, length and body already within the table). */
static void madt_entry(const u8 *e)
{
    switch (e[0]) {
    case MADT_LAPIC:
        if (e[1] >= 8)
            add_cpu(e[3], *(const u32 *)(e + 4));
        break;
    case MADT_X2APIC:
        if (e[1] >= 16)
            add_cpu(*(const u32 *)(e + 4), *(const u32 *)(e + 8));
        break;
    case MADT_IOAPIC:
        if (e[1] >= 12 && !acpi.ioapics++) {
            acpi.ioapic_pa = *(const u32 *)(e + 4);
            acpi.ioapic_gsi_base = *(const u32 *)(e + 8);
        }
        break;
    case MADT_OVERRIDE:
        if (e[1] >= 10 && e[2] == 0 && e[3] < 16) {      /* bus 0: ISA */
            acpi.isa_gsi[e[3]] = *(const u32 *)(e + 4);
            acpi.isa_flags[e[3]] = *(const u16 *)(e + 8);
        }
        break;
    case MADT_LAPIC_ADDR:
        if (e[1] >= 12)
            acpi.lapic_pa = *(const u64 *)(e + 4);
        break;
    }
}

static void madt_parse(const struct sdt_header *madt)
{
    const u8 *p = (const u8 *)(madt + 1) + 8;           /* local APIC address, flags */
    const u8 *end = (const u8 *)madt + madt->length;
    if (p > end)
        return;
    acpi.lapic_pa = *(const u32 *)(madt + 1);
    while (end - p >= 2 && p[1] >= 2 && p[1] <= end - p) {
        madt_entry(p);
        p += p[1];
    }
}

void acpi_init(u64 max_phys)
{
    map_end = MAX(max_phys, 4ull << 30);
    for (unsigned i = 0; i < 16; i++)
        acpi.isa_gsi[i] = i;
    const struct rsdp *r = rsdp_find();
    if (!r)
        return;
    acpi.revision = r->revision;
    const struct sdt_header *madt = table_find(r, "APIC");
    if (!madt)
        return;
    madt_parse(madt);
    acpi.found = true;
    if (acpi.madt_cpus > 0)
        acpi.ncpus = MIN(acpi.madt_cpus, ACPI_MAX_CPUS);
    if (!mapped(acpi.ioapic_pa, 0x20))
        acpi.ioapic_pa = IOAPIC_DEFAULT_PA;
}

u32 acpi_isa_gsi(u32 irq, bool *level, bool *active_low)
{
    if (irq >= 16) {
        *level = true;                                   /* PCI: level, active high here */
        *active_low = false;
        return irq;
    }
    u16 f = acpi.isa_flags[irq];
    /* MPS INTI flags: polarity bits 0-1 (3 = active low), trigger bits 2-3 (3 = level);
     * 0 is the bus default, ISA's edge and active high. */
    *active_low = (f & 3) == 3;
    *level = ((f >> 2) & 3) == 3;
    return acpi.isa_gsi[irq];
}
