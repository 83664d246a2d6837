/* Boot: from the multiboot hand-off to the first user task. */
#include "apic.h"
#include "boot.h"
#include "console.h"
#include "cpu.h"
#include "kernel.h"
#include "ipc.h"
#include "marker.h"
#include "memlayout.h"
#include "options.h"
#include "pcnt.h"
#include "sched.h"
#include "srv.h"
#include "trap.h"
#include "x86.h"

#ifndef ONDOL_COMMIT
#define ONDOL_COMMIT "unknown"
#endif
const char ondol_version[] = "0.1";
u64 timer_hz;

static struct boot_info bi;
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
    printk("memory: %lu MiB usable, %lu KiB kernel+archive, TSC %lu kHz, timer %lu Hz, slice %lu ticks, dts %s\n",
           (unsigned long)mib, (unsigned long)(frames_kernel() * 4), (unsigned long)(tsc_hz() / 1000),
           (unsigned long)timer_hz, (unsigned long)slice_ticks, ipc_dts ? "on" : "off");
    printk("build: pcnt slots %d\n", PCNT_SLOTS);
    printk("options:");
    for (int i = 0; i < options_count(); i++) {
        const char *k, *v;
        options_at(i, &k, &v);
        printk(" %s=%s", k, v);
    }
    printk("%s\n", options_count() ? "" : " (none)");
}

/* The first line of the machine-readable stream on COM2 (see docs/measuring.md). */
static void result_stream_hello(void)
{
    char buf[1024];
    int n = ksnprintf(buf, sizeof(buf),
                      "{\"type\":\"hello\",\"kernel\":\"ondol\",\"version\":\"%s\",\"commit\":\"%s\","
                      "\"mem_mib\":%lu,\"tsc_hz\":%lu,\"timer_hz\":%lu,\"cpu\":{\"vendor\":\"%s\","
                      "\"pmu\":%s,\"smep\":%s,\"smap\":%s},\"build\":{\"pcnt_slots\":%d},\"options\":{",
                      ondol_version, ONDOL_COMMIT, (unsigned long)(frames_total() * PAGE_SIZE >> 20),
                      (unsigned long)tsc_hz(), (unsigned long)timer_hz, cpu_features.vendor,
                      cpu_features.pmu ? "true" : "false", cpu_features.smep ? "true" : "false",
                      cpu_features.smap ? "true" : "false", PCNT_SLOTS);
    for (int i = 0; i < options_count() && n < (int)sizeof(buf) - 80; i++) {
        const char *k, *v;
        options_at(i, &k, &v);
        /* option text never contains quotes or backslashes worth escaping: drop them */
        n += ksnprintf(buf + n, sizeof(buf) - n, "%s\"%s\":\"", i ? "," : "", k);
        for (const char *p = v; *p && n < (int)sizeof(buf) - 8; p++)
            if (*p != '"' && *p != '\\')
                buf[n++] = *p;
        buf[n++] = '"';
    }
    n += ksnprintf(buf + n, sizeof(buf) - n, "}}\n");
    serial_write(COM2, buf, (size_t)n);
}

static void start_init(void)
{
    const char *prog = opt_get("init");
    if (!prog)
        prog = "init";
    char *argv[] = {(char *)prog};
    long r = task_spawn(NULL, prog, argv, 1, true);
    if (r < 0)
        panic("cannot start %s: error %ld (boot archive has %d programs)", prog, r, bootfs_count());
}

__attribute__((noinline)) static void selftest(const char *what)
{
    if (!strcmp(what, "panic")) {
        printk("selftest: dereferencing a bad kernel pointer on purpose\n");
        *(volatile u64 *)0xffff900000000000ull = 1;
    }
}

void kmain(u32 magic, u64 info_pa)
{
    serial_init(COM1, false);
    serial_init(COM2, false);
    multiboot_parse(magic, info_pa, &bi);
    options_parse(bi.cmdline);
    cpu_detect_features();

    struct mem_region reserved[] = {
        {(u64)__image_start, (u64)__kernel_end - KERNEL_VMA - (u64)__image_start},
        {bi.archive_pa, bi.archive_len},
    };
    pmm_init(bi.usable, bi.nusable, reserved, bi.archive_len ? 2 : 1);
    vm_init(bi.max_phys);
    cpu_init(&cpus[0], 0);
    kernel_lock();
    fpu_init_template();
    idt_init();
    pic_disable();
    lapic_init();
    cpus[0].apic_id = lapic_id();

    markers_on = opt_get_bool("markers", true);
    ipc_dts = opt_get_bool("dts", true);
    timer_hz = (u64)opt_get_int("hz", 100, 10, 10000);
    slice_ticks = (u64)opt_get_int("slice", 1, 1, 1000);
    lapic_timer_start((u32)timer_hz);
    pcnt_init();
    banner();
    result_stream_hello();
    if (bi.max_phys > (16ull << 30))
        printk("ondol: memory above 16 GiB is not used\n");

    if (!bi.archive_len)
        panic("no boot archive: pass build/bootfs.tar as a multiboot module (-initrd)");
    bootfs_init(phys_to_virt(bi.archive_pa), bi.archive_len);
    serial_init(COM1, true);
    ioapic_route(4, VEC_COM1, cpus[0].apic_id);

    if (opt_get("selftest"))
        selftest(opt_get("selftest"));
    sched_init();
    srv_start();
    start_init();
    sched_start();
}
