/* Boot: from the multiboot hand-off to the first user task. */
#include "arch.h"
#include "bootfs.h"
#include "multiboot.h"
#include "console.h"
#include "ipc.h"
#include "kernel.h"
#include "klock.h"
#include "lockcheck.h"
#include "marker.h"
#include "memlayout.h"
#include "options.h"
#include "pcnt.h"
#include "pmm.h"
#include "sched.h"
#include "smpbench.h"
#include "srv.h"
#include "task.h"
#include "unix_ik.h"
#include "vm.h"

#ifndef ONDOL_COMMIT
#define ONDOL_COMMIT "unknown"
#endif
const char ondol_version[] = "0.1";

/* Option variables (kernel/boot/options.def) used here. */
u64 timer_hz;
const char *init_program;
int selftest_mode;
enum { SELFTEST_NONE, SELFTEST_PANIC };   /* the order of selftest's values */

static struct boot_info bi;
u64 rootfs_pa, rootfs_len;
extern char __image_start[], __kernel_end[];

static void print_features(char *buf, size_t n)
{
    const struct cpu_features *f = &cpu_features;
    ksnprintf(buf, n, "%s%s%s%s%s%s%s%s", f->nx ? "nx " : "", f->smep ? "smep " : "",
              f->smap ? "smap " : "", f->pge ? "pge " : "", f->pcid ? "pcid " : "",
              f->x2apic ? "x2apic " : "", f->pdpe1gb ? "1gpages " : "",
              f->pmu ? "pmu " : "no-pmu ");
}

static void banner(void)
{
    char feats[128];
    print_features(feats, sizeof(feats));
    u64 mib = frames_total() * PAGE_SIZE >> 20;
    printk("\nondol %s (%s) x86_64, booted by %s\n", ondol_version, ONDOL_COMMIT,
           bi.loader[0] ? bi.loader : "multiboot");
    printk("cpu: %s \"%s\" features: %s\n", cpu_features.vendor, cpu_features.brand, feats);
    if (acpi.found)
        printk("acpi: revision %u, %u CPUs (%u listed), I/O APIC at %#lx (GSI %u..), %u started, %s\n",
               acpi.revision, acpi.ncpus, acpi.madt_cpus, (unsigned long)acpi.ioapic_pa,
               acpi.ioapic_gsi_base, cpus_running, cpus_scheduling() > 1 ? "all run threads" : "one runs");
    else
        printk("acpi: no MADT; one CPU, I/O APIC at %#lx\n", (unsigned long)acpi.ioapic_pa);
    printk("memory: %lu MiB usable, %lu KiB kernel+archive, TSC %lu kHz, timer %lu Hz, slice %lu ticks, dts %s\n",
           (unsigned long)mib, (unsigned long)(frames_kernel() * 4), (unsigned long)(tsc_hz() / 1000),
           (unsigned long)timer_hz, (unsigned long)slice_ticks, ipc_dts ? "on" : "off");
    char line[512];
    options_format(line, sizeof(line), OPT_SCOPES(BUILD), false);
    printk("build: %s\n", line);
    printk("options: %s\n", options_format_given(line, sizeof(line), false) ? line : "(none)");
    options_format(line, sizeof(line), OPT_SCOPES(BOOT) | OPT_SCOPES(RUN), false);
    printk("settings: %s\n", line);
}

/* The first line of the machine-readable stream on COM2 (see docs/measuring.md): "build"
 * and "settings" hold the values in force (options.def), "options" the words given. */
static void result_stream_hello(void)
{
    char buf[1536], build[128], settings[256], given[512];   /* 16 KiB boot stack */
    options_format(build, sizeof(build), OPT_SCOPES(BUILD), true);
    options_format(settings, sizeof(settings), OPT_SCOPES(BOOT) | OPT_SCOPES(RUN), true);
    options_format_given(given, sizeof(given), true);
    int n = ksnprintf(buf, sizeof(buf),
                      "{\"type\":\"hello\",\"kernel\":\"ondol\",\"version\":\"%s\",\"commit\":\"%s\","
                      "\"mem_mib\":%lu,\"tsc_hz\":%lu,\"timer_hz\":%lu,\"cpu\":{\"vendor\":\"%s\","
                      "\"pmu\":%s,\"smep\":%s,\"smap\":%s,\"count\":%u,\"started\":%u,\"running\":%u},"
                      "\"build\":{%s},\"settings\":{%s},"
                      "\"options\":{%s}}\n",
                      ondol_version, ONDOL_COMMIT, (unsigned long)(frames_total() * PAGE_SIZE >> 20),
                      (unsigned long)tsc_hz(), (unsigned long)timer_hz, cpu_features.vendor,
                      cpu_features.pmu ? "true" : "false", cpu_features.smep ? "true" : "false",
                      cpu_features.smap ? "true" : "false", acpi.ncpus, cpus_running, cpus_scheduling(), build,
                      settings, given);
    serial_write(COM2, buf, MIN((size_t)n, sizeof(buf) - 1));
}

static void start_init(void)
{
    const char *prog = init_program;
    char *argv[] = {(char *)prog};
    long r = task_spawn(NULL, prog, argv, 1, true, PRIO_MAX);
    if (r < 0)
        panic("cannot start %s: error %ld (boot archive has %d programs)", prog, r, bootfs_count());
}

__attribute__((noinline)) static void selftest(int what)
{
    if (what == SELFTEST_PANIC) {
        printk("selftest: dereferencing a bad kernel pointer on purpose\n");
        *(volatile u64 *)0xffff900000000000ull = 1;
    }
}

void kmain(u32 magic, u64 info_pa)
{
    serial_init(COM1, false);
    serial_init(COM2, false);
    multiboot_parse(magic, info_pa, &bi);
    if (bi.cmdline_len >= sizeof(bi.cmdline))
        printk("ondol: the command line has %zu bytes; only the first %zu are read\n",
               bi.cmdline_len, sizeof(bi.cmdline) - 1);
    options_parse(bi.cmdline);
    cpu_detect_features();

    struct mem_region reserved[] = {
        {SMP_RESERVED_PA, SMP_RESERVED_LEN},
        {(u64)__image_start, (u64)__kernel_end - KERNEL_VMA - (u64)__image_start},
        {bi.archive_pa, bi.archive_len},
        {bi.rootfs_pa, bi.rootfs_len},
    };
    pmm_init(bi.usable, bi.nusable, reserved, 4);
    rootfs_pa = bi.rootfs_pa;
    rootfs_len = bi.rootfs_len;
    vm_init(bi.max_phys);
    cpu_init(&cpus[0], 0);
    acpi_init(bi.max_phys);
    pmm_caches_start();
    lockcheck_start();
    kernel_lock();
    fpu_init_template();
    idt_init();
    pic_disable();
    lapic_init();
    cpus[0].apic_id = lapic_id();

    lapic_timer_start((u32)timer_hz);
    smp_start_aps();
    pcnt_init();
    banner();
    result_stream_hello();
    if (smpbench_mode != SMPBENCH_NONE)
        smpbench_run(smpbench_mode);
    if (bi.max_phys > (16ull << 30))
        printk("ondol: memory above 16 GiB is not used\n");

    if (!bi.archive_len)
        panic("no boot archive: pass build/bootfs.tar as a multiboot module (-initrd)");
    bootfs_init(phys_to_virt(bi.archive_pa), bi.archive_len);
    serial_init(COM1, true);
    ioapic_route(4, VEC_COM1, cpus[0].apic_id);

    if (selftest_mode != SELFTEST_NONE)
        selftest(selftest_mode);
    sched_init();
    sched_release_aps();            /* every started CPU schedules before the first thread */
    srv_start();
    unix_ik_boot();
    start_init();
    sched_start();
}
