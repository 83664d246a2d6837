/* pcnt: slot pools, the overhead slot, PMU event programming and the SYS_PCNT commands. */
#include "kernel.h"
#include "options.h"
#include "pcnt.h"
#include "usercopy.h"

struct pcnt_slot pcnt_pool[MAX_CPUS][PCNT_SLOTS];
/* pcnt_probes_on: defined in arch ipcfast.S, a byte of the IPC fast gate (docs/ipc.md). */
int pcnt_nevents;

static int events[2];
static u32 event_modes = PCNT_MODE_USER | PCNT_MODE_KERNEL;

static const char *const probe_names[PROBE_COUNT] = {
    [PROBE_SYSCALL] = "syscall", [PROBE_CTXSW] = "ctxsw", [PROBE_IPC_FAST] = "ipc_fastpath",
    [PROBE_IPC_SLOW] = "ipc_slowpath", [PROBE_PAGEFAULT] = "pagefault",
    [PROBE_VM_FAULT] = "vm_fault", [PROBE_COW_FAULT] = "cow_fault", [PROBE_VM_MAP] = "vm_map",
    [PROBE_VM_UNMAP] = "vm_unmap", [PROBE_RMAP_INSERT] = "rmap_insert",
    [PROBE_RMAP_REMOVE] = "rmap_remove", [PROBE_RMAP_APPLY] = "rmap_apply",
    [PROBE_FRAME] = "frame_alloc",
};

/* Architectural events (Intel SDM vol. 3, "Pre-defined architectural performance events"). */
static const struct {
    const char *name;
    u8 event, umask;
} event_table[PCNT_NEVENTS] = {
    [PCNT_EV_NONE] = {"none", 0, 0},
    [PCNT_EV_INSTRUCTIONS] = {"instructions", 0xc0, 0x00},
    [PCNT_EV_CYCLES] = {"cycles", 0x3c, 0x00},
    [PCNT_EV_LLC_REFS] = {"llc-references", 0x2e, 0x4f},
    [PCNT_EV_LLC_MISSES] = {"llc-misses", 0x2e, 0x41},
    [PCNT_EV_BRANCH_MISSES] = {"branch-misses", 0xc5, 0x00},
    [PCNT_EV_BRANCHES] = {"branches", 0xc4, 0x00},
};

void pcnt_record_sample(struct pcnt_slot *s, int cpu)
{
    s->status = PCNT_INIT;
    if (cpus[cpu].irqs != s->irqs_at_start) {     /* P3's filter: an interrupt intervened */
        s->dropped++;
        return;
    }
    u64 v = s->tsc;
    s->min = s->count == 0 ? v : MIN(s->min, v);
    s->max = MAX(s->max, v);
    s->sum += v;
    s->count++;
    s->ring[s->ring_pos] = v;
    s->ring_pos = (s->ring_pos + 1) % PCNT_RING;
    s->ring_len = MIN(s->ring_len + 1, (u32)PCNT_RING);
}

/* Slot 0: a start immediately followed by a stop, the cost subtracted from every slot. */
static void measure_overhead(int cpu)
{
    struct pcnt_slot *s = &pcnt_pool[cpu][0];
    u64 best = ~0ull, best_ev[2] = {~0ull, ~0ull};
    for (int i = 0; i < 8; i++) {        /* the minimum of a few runs: warm caches */
        s->status = PCNT_INIT;
        pcnt_start(0, 0);
        pcnt_stop(0);
        best = MIN(best, s->tsc);
        for (int e = 0; e < 2; e++)
            best_ev[e] = MIN(best_ev[e], s->ev[e]);
    }
    s->tsc = best;
    for (int e = 0; e < 2; e++)
        s->ev[e] = pcnt_nevents > e ? best_ev[e] : 0;
    s->status = PCNT_SET;
}

static void clear_all(void)
{
    int cpu = this_cpu()->id;
    memset(pcnt_pool[cpu], 0, sizeof(pcnt_pool[cpu]));
    measure_overhead(cpu);
}

/* Unprivileged CLEAR: only the user slots; slot 0 and the probes' slots stay as they are. */
static void clear_user_slots(void)
{
    int cpu = this_cpu()->id;
    memset(&pcnt_pool[cpu][PCNT_FIRST_USER_SLOT], 0,
           sizeof(pcnt_pool[cpu][0]) * (PCNT_SLOTS - PCNT_FIRST_USER_SLOT));
}

static void program_events(void)
{
    for (int i = 0; i < 2; i++) {
        u64 sel = 0;
        if (events[i] != PCNT_EV_NONE) {
            sel = event_table[events[i]].event | ((u64)event_table[events[i]].umask << 8) |
                  (1ull << 22);                              /* EN */
            if (event_modes & PCNT_MODE_USER)
                sel |= 1ull << 16;
            if (event_modes & PCNT_MODE_KERNEL)
                sel |= 1ull << 17;
        }
        wrmsr(0x186 + (u32)i, 0);                            /* IA32_PERFEVTSELi */
        wrmsr(0xc1 + (u32)i, 0);
        wrmsr(0x186 + (u32)i, sel);
    }
    pcnt_nevents = (events[0] || events[1]) ? 2 : 0;
}

bool pcnt_probes_boot;     /* option probes */

static void set_probes(bool on);

/* Boot: every slot clear; with the option probes=on the probe points count from here on
 * (for programs that cannot ask, such as `./ondol bench aim`'s Linux program). */
void pcnt_init(void)
{
    clear_all();
    if (pcnt_probes_boot)
        set_probes(true);
}

static long dump(u64 uout, u64 max, u64 cpu)
{
    if (cpu >= MAX_CPUS || max > PCNT_SLOTS)
        return E_INVAL;
    if (!user_range_ok(uout, max * sizeof(struct pcnt_slot_info)))
        return E_FAULT;
    const struct pcnt_slot *ovh = &pcnt_pool[cpu][0];
    for (u64 i = 0; i < max; i++) {
        const struct pcnt_slot *s = &pcnt_pool[cpu][i];
        struct pcnt_slot_info info = {
            .slot = (u32)i, .status = s->status, .para = s->para, .tsc = s->tsc,
            .repeat = s->repeat, .ring_len = s->ring_len, .count = s->count,
            .dropped = s->dropped, .min = s->min, .max = s->max, .sum = s->sum,
        };
        info.ev[0] = s->ev[0];
        info.ev[1] = s->ev[1];
        bool net = i > 0 && (s->status == PCNT_SET);
        info.tsc_net = net && s->tsc > ovh->tsc ? s->tsc - ovh->tsc : (net ? 0 : s->tsc);
        for (int e = 0; e < 2; e++)
            info.ev_net[e] = net && s->ev[e] > ovh->ev[e] ? s->ev[e] - ovh->ev[e] : (net ? 0 : s->ev[e]);
        memcpy(info.ring, s->ring, sizeof(info.ring));
        if (i < PROBE_COUNT && probe_names[i])
            memcpy(info.name, probe_names[i], strlen(probe_names[i]) + 1);
        if (copyout(uout + i * sizeof(info), &info, sizeof(info)))
            return E_FAULT;
    }
    return (long)max;
}

/* The probes and events as text, one "probe NAME SLOT" / "event NAME ID" line each; the
 * buffer holds every line (a build with more probes than fit stops with a short list,
 * never past the buffer). */
static long list(u64 ubuf, u64 len)
{
    static char text[1024];
    size_t n = 0;
    for (int p = 1; p < PROBE_COUNT && n < sizeof(text); p++)
        n += (size_t)ksnprintf(text + n, sizeof(text) - n, "probe %s %d\n", probe_names[p], p);
    for (int e = 1; e < PCNT_NEVENTS && n < sizeof(text); e++)
        n += (size_t)ksnprintf(text + n, sizeof(text) - n, "event %s %d%s\n", event_table[e].name,
                               e, cpu_features.pmu ? "" : " unsupported");
    n = MIN(n, sizeof(text) - 1);
    if (len > 0 && copyout(ubuf, text, MIN((u64)n + 1, len)))
        return E_FAULT;
    return (long)n;
}

static long set_event(u64 a, u64 b, u64 c)
{
    if (a >= PCNT_NEVENTS || b >= PCNT_NEVENTS || c == 0 ||
        (c & ~(u64)(PCNT_MODE_USER | PCNT_MODE_KERNEL)))
        return E_INVAL;
    if (!cpu_features.pmu || cpu_features.pmu_counters < 2)
        return E_NOTSUP;                /* e.g. QEMU TCG: no PMU; never pretend with zeros */
    events[0] = (int)a;
    events[1] = (int)b;
    event_modes = (u32)c;
    program_events();
    clear_all();
    return 0;
}

static void set_probes(bool on)
{
    pcnt_probes_on = on;
    for (int c = 0; c < MAX_CPUS; c++)      /* every CPU's: a probe counts where it runs */
        for (int p = 1; p < PROBE_COUNT; p++)
            pcnt_pool[c][p].repeat = 1;
}

/* PCNT_RESET: the baseline every benchmark starts from (docs/measuring.md): probes off,
 * no PMU events programmed, every slot INIT and zeroed, the overhead slot re-measured. */
static void reset(void)
{
    pcnt_probes_on = false;
    if (events[0] || events[1]) {
        events[0] = events[1] = PCNT_EV_NONE;
        event_modes = PCNT_MODE_USER | PCNT_MODE_KERNEL;
        program_events();
    }
    clear_all();
}

static long get_event(u64 uout)
{
    struct pcnt_events e = {{events[0], events[1]}, event_modes, cpu_features.pmu,
                            cpu_features.pmu_version, cpu_features.pmu_counters,
                            pcnt_probes_on};
    return copyout(uout, &e, sizeof(e));
}

/* START, STOP, REPEAT on slot a: slot 0 is the overhead measurement's (E_INVAL); the
 * probes' slots belong to the kernel (privileged); the rest are the user slots. */
static long slot_command(u64 cmd, u64 a, u64 b, bool privileged)
{
    if (a == 0 || a >= PCNT_SLOTS)
        return E_INVAL;
    if (a < PCNT_FIRST_USER_SLOT && !privileged)
        return E_PERM;
    struct pcnt_slot *s = &pcnt_pool[this_cpu()->id][a];
    if (cmd == PCNT_REPEAT) {
        s->repeat = b != 0;
        return 0;
    }
    if (cmd == PCNT_START)
        pcnt_user_start((int)a, b);
    else
        pcnt_user_stop((int)a);
    return s->status;
}

/* SYS_PCNT. The switches that change what the kernel measures for everyone (probes, PMU
 * events, the kernel's slots, a full clear or reset) need a privileged caller; reading
 * and the user slots do not. An unprivileged CLEAR clears the user slots only. */
long pcnt_syscall(u64 cmd, u64 a, u64 b, u64 c, bool privileged)
{
    switch (cmd) {
    case PCNT_DUMP:
        return dump(a, b, c);
    case PCNT_CLEAR:
        if (privileged)
            clear_all();
        else
            clear_user_slots();
        return 0;
    case PCNT_SET_EVENT:
        return privileged ? set_event(a, b, c) : E_PERM;
    case PCNT_GET_EVENT:
        return get_event(a);
    case PCNT_LIST:
        return list(a, b);
    case PCNT_START:
    case PCNT_STOP:
    case PCNT_REPEAT:
        return slot_command(cmd, a, b, privileged);
    case PCNT_PROBES:
        if (!privileged)
            return E_PERM;
        set_probes(a != 0);
        return 0;
    case PCNT_RESET:
        if (!privileged)
            return E_PERM;
        reset();
        return 0;
    }
    return E_INVAL;
}
