/* CPU identification and per-CPU setup: GDT, TSS, GS base, syscall MSRs, CR4 features. */
#include "cpu.h"
#include "cpu_offsets.h"
#include "kernel.h"
#include "options.h"
#include "smp.h"
#include "spinlock.h"
#include "x86.h"

struct cpu cpus[MAX_CPUS];
extern u64 kernel_pml4_pa;   /* vm.c */
struct cpu_features cpu_features;
bool smap_enabled;   /* read by usercopy.S */
bool pcid_on = true;  /* option pcid */
/* pcid_active: defined in ipcfast.S, a byte of the IPC fastpath's CR3 gate (docs/ipc.md). */

_Static_assert(offsetof(struct cpu, syscall_frame) == CPU_SYSCALL_FRAME, "entry.S offset");
_Static_assert(offsetof(struct cpu, user_rsp) == CPU_USER_RSP, "entry.S offset");

void cpu_switch_counts(u64 *thread_switches, u64 *as_switches)
{
    *thread_switches = 0;
    *as_switches = 0;
    for (unsigned i = 0; i < cpus_running && i < MAX_CPUS; i++) {   /* started: 0.. (smp.c) */
        *thread_switches += cpus[i].switches_same + cpus[i].switches_cross;
        *as_switches += cpus[i].switches_cross + cpus[i].cr3_loads;
    }
}

extern void syscall_entry(void);
extern void linux_syscall_entry(void);
extern void linux_ik_syscall_entry(void);

static void read_brand(char *out)
{
    u32 r[12];
    for (u32 i = 0; i < 3; i++)
        cpuid(0x80000002 + i, 0, &r[i * 4], &r[i * 4 + 1], &r[i * 4 + 2], &r[i * 4 + 3]);
    memcpy(out, r, 48);
    out[48] = 0;
    /* Trim leading blanks that some vendors pad with. */
    size_t lead = 0;
    while (out[lead] == ' ')
        lead++;
    memmove(out, out + lead, 49 - lead);
}

void cpu_detect_features(void)
{
    struct cpu_features *f = &cpu_features;
    u32 a, b, c, d, max, maxext;
    cpuid(0, 0, &max, &b, &c, &d);
    memcpy(f->vendor, &b, 4);
    memcpy(f->vendor + 4, &d, 4);
    memcpy(f->vendor + 8, &c, 4);
    f->vendor[12] = 0;
    cpuid(1, 0, &a, &b, &c, &d);
    f->apic = d & (1u << 9);
    f->pge = d & (1u << 13);
    f->x2apic = c & (1u << 21);
    f->pcid = c & (1u << 17);
    if (max >= 7) {
        cpuid(7, 0, &a, &b, &c, &d);
        f->smep = b & (1u << 7);
        f->smap = b & (1u << 20);
    }
    if (max >= 0xa) {
        /* Architectural performance monitoring: version in EAX[7:0], counters in EAX[15:8]. */
        cpuid(0xa, 0, &a, &b, &c, &d);
        f->pmu_version = a & 0xff;
        f->pmu_counters = (a >> 8) & 0xff;
        f->pmu = f->pmu_version > 0 && f->pmu_counters > 0;
    }
    cpuid(0x80000000, 0, &maxext, &b, &c, &d);
    if (maxext >= 0x80000001) {
        cpuid(0x80000001, 0, &a, &b, &c, &d);
        f->nx = d & (1u << 20);
        f->pdpe1gb = d & (1u << 26);
    }
    if (maxext >= 0x80000004)
        read_brand(f->brand);
    if (maxext >= 0x80000007) {
        cpuid(0x80000007, 0, &a, &b, &c, &d);
        f->invariant_tsc = d & (1u << 8);
    }
}

static u64 seg_desc(u64 flags) { return flags << 40 | 0xffffull | (0xfull << 48); }

static void gdt_load(struct cpu *c)
{
    /* 0 null | 0x08 kernel code | 0x10 kernel data | 0x18 (unused 32-bit user code slot,
     * required by the sysret selector arithmetic) | 0x20 user data | 0x28 user code | 0x30 TSS */
    c->gdt[0] = 0;
    c->gdt[1] = seg_desc(0x209a);   /* L=1, P, DPL0, code */
    c->gdt[2] = seg_desc(0x0092);   /* P, DPL0, data */
    c->gdt[3] = 0;
    c->gdt[4] = seg_desc(0x00f2);   /* P, DPL3, data */
    c->gdt[5] = seg_desc(0x20fa);   /* L=1, P, DPL3, code */
    u64 base = (u64)&c->tss, limit = sizeof(c->tss) - 1;
    c->gdt[6] = (limit & 0xffff) | ((base & 0xffffff) << 16) | (0x89ull << 40) |
                (((limit >> 16) & 0xf) << 48) | (((base >> 24) & 0xff) << 56);
    c->gdt[7] = base >> 32;
    struct {
        u16 limit;
        u64 base;
    } __attribute__((packed)) ptr = {sizeof(u64) * 8 - 1, (u64)c->gdt};
    __asm__ volatile("lgdt %0" ::"m"(ptr));
    /* Reload cs through a far return, then the data segments and the task register. */
    __asm__ volatile("pushq %0; leaq 1f(%%rip), %%rax; pushq %%rax; lretq; 1:"
                     ::"i"(SEL_KCODE) : "rax", "memory");
    __asm__ volatile("movw %w0, %%ds; movw %w0, %%es; movw %w0, %%ss" ::"r"(SEL_KDATA));
    __asm__ volatile("ltr %w0" ::"r"(SEL_TSS));
}

/* The user GS base is MSR_KERNEL_GS_BASE while in the kernel: the exit's swapgs makes it
 * GS_BASE. */
void cpu_load_user_context(struct cpu *c, u8 entry, u64 fs_base, u64 gs_base, u8 user_ctx)
{
    static void (*const entries[])(void) = {
        [ENTRY_ONDOL] = syscall_entry,
        [ENTRY_LINUX_FWD] = linux_syscall_entry,
        [ENTRY_LINUX_IK] = linux_ik_syscall_entry,
    };
    if (c->linux_entry != entry)
        wrmsr(MSR_LSTAR, (u64)entries[entry]);
    if (c->fs_base != fs_base)
        wrmsr(MSR_FS_BASE, fs_base);
    if (c->gs_base != gs_base)
        wrmsr(MSR_KERNEL_GS_BASE, gs_base);
    c->linux_entry = entry;
    c->fs_base = fs_base;
    c->gs_base = gs_base;
    c->user_ctx = user_ctx;
}

void cpu_init(struct cpu *c, int id)
{
    c->bkl = BKL_NOT_HELD;                  /* before self: klock.c kernel_lock_holder */
    c->self = c;
    c->id = id;
    spin_lock_init(&c->fpu_lock, LOCK_FPU);
    c->loaded_cr3 = kernel_pml4_pa;         /* vm_init and ap_entry load it first */
    c->tss.iomap_base = sizeof(c->tss);        /* no I/O bitmap: user port I/O faults */
    c->tss.ist[0] = (u64)c->df_stack + sizeof(c->df_stack);
    gdt_load(c);
    wrmsr(MSR_GS_BASE, (u64)c);
    wrmsr(MSR_KERNEL_GS_BASE, 0);

    u64 efer = rdmsr(MSR_EFER) | EFER_SCE;
    if (cpu_features.nx)
        efer |= EFER_NXE;
    wrmsr(MSR_EFER, efer);
    /* sysret loads cs = STAR[63:48] + 16, ss = STAR[63:48] + 8 (both | 3). */
    wrmsr(MSR_STAR, ((u64)(SEL_UDATA - 8 - 3) << 48) | ((u64)SEL_KCODE << 32));
    wrmsr(MSR_LSTAR, (u64)syscall_entry);
    wrmsr(MSR_FS_BASE, 0);
    /* Clear IF, TF, DF, AC and NT on entry. */
    wrmsr(MSR_SFMASK, (1u << 9) | (1u << 8) | (1u << 10) | (1u << 18) | (1u << 14));

    u64 cr4 = read_cr4() | CR4_OSFXSR | CR4_OSXMMEXCPT;
    if (cpu_features.pge)
        cr4 |= CR4_PGE;
    if (cpu_features.smep)
        cr4 |= CR4_SMEP;
    if (cpu_features.smap)
        cr4 |= CR4_SMAP;
    /* PCIDE needs CR3's low 12 bits clear: the kernel tables are loaded with PCID 0 */
    if (cpu_features.pcid && pcid_on)
        cr4 |= CR4_PCIDE;
    write_cr4(cr4);
    pcid_active = cr4 & CR4_PCIDE;
    smap_enabled = cpu_features.smap;
    write_cr0(read_cr0() | CR0_WP);
}
