/*
 * pcnt — control the kernel's counter facility (P3's cnt_ctrl, docs/measuring.md).
 *   pcnt list                     probe points and events
 *   pcnt set EV0 EV1 [user|kernel|all]   choose the two programmable events
 *   pcnt get                      the events in use and whether the CPU supports them
 *   pcnt clear                    every slot INIT and zeroed
 *   pcnt reset                    the baseline: probes off, no events, every slot cleared
 *   pcnt dump                     [slot:status:para]{:tsc:ev0:ev1:} per slot, raw and net
 *   pcnt stat PROGRAM [ARGS]      run a program and print a perf-stat-like summary
 * Switching probes and events, clearing the kernel's slots and reset are privileged: the
 * shell starts pcnt privileged (user/sh.c); PROGRAM runs unprivileged.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <ondol/sys.h>
#include <ondol/timing.h>

#define NSLOTS 16

static const char *const status_names[] = {"INIT", "RUNNING", "SET", "FAIL"};
static const char *const event_names[PCNT_NEVENTS] = {
    "none", "instructions", "cycles", "llc-references", "llc-misses", "branch-misses", "branches",
};

static long pcnt(unsigned cmd, long a, long b, long c) { return SC4(SYS_PCNT, cmd, a, b, c); }

static int event_id(const char *name)
{
    for (int i = 0; i < PCNT_NEVENTS; i++)
        if (!strcmp(name, event_names[i]))
            return i;
    return -1;
}

static struct pcnt_slot_info slots[NSLOTS];

static int read_slots(void)
{
    long n = pcnt(PCNT_DUMP, (long)slots, NSLOTS, 0);
    if (n < 0)
        printf("pcnt: dump failed: %ld\n", n);
    return (int)n;
}

static uint64_t ring_median(const struct pcnt_slot_info *s)
{
    uint64_t tmp[PCNT_RING];
    if (s->ring_len == 0)
        return 0;
    memcpy(tmp, s->ring, sizeof(tmp));
    sort_u64(tmp, s->ring_len);
    return tmp[s->ring_len / 2];
}

static int dump(void)
{
    struct pcnt_events ev;
    pcnt(PCNT_GET_EVENT, (long)&ev, 0, 0);
    int n = read_slots();
    for (int i = 0; i < n; i++) {
        const struct pcnt_slot_info *s = &slots[i];
        if (s->status == PCNT_INIT && s->count == 0 && s->dropped == 0 && i > 0)
            continue;
        if (ev.supported && (ev.ev[0] || ev.ev[1]))
            printf("[%d:%s:%llu]{:%llu:%llu:%llu:} net{:%llu:%llu:%llu:}", i, status_names[s->status & 3],
                   (unsigned long long)s->para, (unsigned long long)s->tsc, (unsigned long long)s->ev[0],
                   (unsigned long long)s->ev[1], (unsigned long long)s->tsc_net,
                   (unsigned long long)s->ev_net[0], (unsigned long long)s->ev_net[1]);
        else
            printf("[%d:%s:%llu]{:%llu:-:-:} net{:%llu:-:-:}", i, status_names[s->status & 3],
                   (unsigned long long)s->para, (unsigned long long)s->tsc, (unsigned long long)s->tsc_net);
        if (s->repeat)
            printf(" samples=%llu dropped=%llu min=%llu median=%llu max=%llu", (unsigned long long)s->count,
                   (unsigned long long)s->dropped, (unsigned long long)s->min,
                   (unsigned long long)ring_median(s), (unsigned long long)s->max);
        printf("%s%s\n", s->name[0] ? " " : "", s->name);
    }
    if (!ev.supported || !(ev.ev[0] || ev.ev[1]))
        printf("(events: %s)\n", ev.supported ? "none selected" : "not supported on this CPU: no architectural PMU");
    return 0;
}

static int stat(int argc, char **argv)
{
    pcnt(PCNT_CLEAR, 0, 0, 0);
    long on = pcnt(PCNT_PROBES, 1, 0, 0);
    if (on < 0) {
        printf("pcnt: cannot switch the probes on: %ld (pcnt must run privileged)\n", on);
        return 1;
    }
    uint64_t t0 = rdtsc();
    long task = sys_spawn(argv[0], (const char *const *)argv, argc, 0);
    int status = 0;
    if (task >= 0)
        sys_task_wait((int)task, &status);
    uint64_t t1 = rdtsc();
    pcnt(PCNT_PROBES, 0, 0, 0);
    if (task < 0) {
        printf("pcnt: cannot run %s: %ld\n", argv[0], task);
        return 1;
    }
    read_slots();
    struct pcnt_events ev;
    pcnt(PCNT_GET_EVENT, (long)&ev, 0, 0);
    struct time_info ti;
    sys_time(&ti);
    printf("\n Performance counter stats for '%s' (exit status %d):\n\n", argv[0], status);
    printf("%18llu      TSC ticks (under QEMU icount: guest instructions)\n", (unsigned long long)(t1 - t0));
    for (int p = 1; p < NSLOTS && slots[p].name[0]; p++)
        printf("%18llu      %-14s # median %llu ticks, %llu dropped\n",
               (unsigned long long)slots[p].count, slots[p].name,
               (unsigned long long)ring_median(&slots[p]), (unsigned long long)slots[p].dropped);
    for (int e = 0; e < 2; e++)
        if (!ev.supported)
            printf("%18s      %s\n", "<not supported>", e == 0 ? "instructions" : "cycles");
    if (ti.tsc_hz)
        printf("\n%18llu.%06llu seconds time elapsed (TSC at %llu kHz)\n\n",
               (unsigned long long)((t1 - t0) / ti.tsc_hz),
               (unsigned long long)((t1 - t0) % ti.tsc_hz * 1000000 / ti.tsc_hz),
               (unsigned long long)(ti.tsc_hz / 1000));
    return 0;
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        printf("usage: pcnt list | set EV0 EV1 [user|kernel|all] | get | clear | reset | dump | stat PROGRAM [ARGS]\n");
        return 2;
    }
    const char *cmd = argv[1];
    if (!strcmp(cmd, "list")) {
        char buf[512];
        long n = pcnt(PCNT_LIST, (long)buf, sizeof(buf), 0);
        if (n < 0)
            return 1;
        printf("%s", buf);
        return 0;
    }
    if (!strcmp(cmd, "set") && argc >= 4) {
        int e0 = event_id(argv[2]), e1 = event_id(argv[3]);
        unsigned modes = PCNT_MODE_USER | PCNT_MODE_KERNEL;
        if (argc >= 5)
            modes = !strcmp(argv[4], "user") ? PCNT_MODE_USER : !strcmp(argv[4], "kernel") ? PCNT_MODE_KERNEL : modes;
        if (e0 < 0 || e1 < 0) {
            printf("pcnt: unknown event (see `pcnt list`)\n");
            return 2;
        }
        long r = pcnt(PCNT_SET_EVENT, e0, e1, modes);
        if (r == E_PERM) {
            printf("pcnt: choosing events is privileged\n");
            return 1;
        }
        if (r == E_NOTSUP) {
            printf("pcnt: events not supported on this CPU (no architectural PMU; QEMU TCG has none)\n");
            return 1;
        }
        return r < 0;
    }
    if (!strcmp(cmd, "get")) {
        struct pcnt_events ev;
        if (pcnt(PCNT_GET_EVENT, (long)&ev, 0, 0) < 0)
            return 1;
        printf("ev0=%s ev1=%s modes=%s%s supported=%s (pmu version %u, %u counters) probes=%s\n",
               event_names[ev.ev[0]], event_names[ev.ev[1]], ev.modes & PCNT_MODE_USER ? "u" : "",
               ev.modes & PCNT_MODE_KERNEL ? "k" : "", ev.supported ? "yes" : "no", ev.pmu_version,
               ev.pmu_counters, ev.probes ? "on" : "off");
        return 0;
    }
    if (!strcmp(cmd, "clear"))
        return pcnt(PCNT_CLEAR, 0, 0, 0) < 0;
    if (!strcmp(cmd, "reset"))
        return pcnt(PCNT_RESET, 0, 0, 0) < 0;
    if (!strcmp(cmd, "dump"))
        return dump();
    if (!strcmp(cmd, "stat") && argc >= 3)
        return stat(argc - 2, argv + 2);
    printf("pcnt: unknown command %s\n", cmd);
    return 2;
}
