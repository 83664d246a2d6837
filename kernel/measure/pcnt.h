/*
 * pcnt: P3's counter facility, generalised (docs/measuring.md). Per-CPU pools of slots;
 * pcnt_start/pcnt_stop are inline, lock-free and run with interrupts off (the kernel runs
 * with them off anyway), so they can sit on hot paths. Slot 0 measures the facility's own
 * start+stop overhead, which dumps subtract.
 */
#ifndef PCNT_H
#define PCNT_H
#include <ondol/abi.h>
#include "arch.h"
#include "marker.h"
#include "types.h"

#ifndef PCNT_SLOTS
#define PCNT_SLOTS 32            /* build option: make PCNT_SLOTS=64 */
#endif

struct pcnt_slot {
    u64 tsc0, ev0[2];            /* values at start */
    u64 tsc, ev[2];              /* deltas at the last stop */
    u64 para;
    u32 status;
    u32 repeat;
    u64 irqs_at_start;
    u64 count, dropped, min, max, sum;
    u64 ring[PCNT_RING];
    u32 ring_len, ring_pos;
};

/* Named kernel probe points, each with its own slot. */
enum pcnt_probe { PROBE_SYSCALL = 1, PROBE_CTXSW, PROBE_IPC_FAST, PROBE_IPC_SLOW,
                  PROBE_PAGEFAULT,
                  PROBE_VM_FAULT, PROBE_COW_FAULT, PROBE_VM_MAP, PROBE_VM_UNMAP,   /* kernel/mm */
                  PROBE_RMAP_INSERT, PROBE_RMAP_REMOVE, PROBE_RMAP_APPLY,
                  PROBE_FRAME,                                                    /* pmm.c */
                  PROBE_COUNT };

#define PCNT_FIRST_USER_SLOT PROBE_COUNT   /* below it: the overhead and the probes' slots */

_Static_assert(PCNT_SLOTS >= PROBE_COUNT + 1 && PCNT_SLOTS <= 64,
               "PCNT_SLOTS: room for slot 0, the probes and at least one user slot; at most 64");

extern struct pcnt_slot pcnt_pool[MAX_CPUS][PCNT_SLOTS];
extern bool pcnt_probes_on;
extern int pcnt_nevents;              /* programmable counters in use (0 without a PMU) */

static inline u64 pcnt_read_pmc(int i) { return rdmsr(0xc1 + (u32)i); }   /* IA32_PMCi */

static inline void pcnt_start(int id, u64 para)
{
    struct pcnt_slot *s = &pcnt_pool[this_cpu()->id][id];
    if (s->status != PCNT_INIT) {
        if (s->status != PCNT_SET)
            s->status = PCNT_FAIL;
        return;
    }
    s->para = para;
    s->status = PCNT_RUNNING;
    s->irqs_at_start = this_cpu()->irqs;
    for (int i = 0; i < pcnt_nevents; i++)
        s->ev0[i] = pcnt_read_pmc(i);
    s->tsc0 = rdtsc();
}

void pcnt_record_sample(struct pcnt_slot *s, int cpu);

static inline void pcnt_stop(int id)
{
    u64 now = rdtsc();
    int cpu = this_cpu()->id;
    struct pcnt_slot *s = &pcnt_pool[cpu][id];
    if (s->status != PCNT_RUNNING) {
        if (s->status != PCNT_SET)
            s->status = PCNT_FAIL;
        return;
    }
    s->tsc = now - s->tsc0;
    for (int i = 0; i < pcnt_nevents; i++)
        s->ev[i] = pcnt_read_pmc(i) - s->ev0[i];
    if (s->repeat)
        pcnt_record_sample(s, cpu);    /* back to INIT for the next sample */
    else
        s->status = PCNT_SET;
}

/* A slot a program starts and stops (SYS_PCNT; a driver in the kernel, drv_ik.c). With
 * markers on, the cache model sums each stretch in the bucket of the slot's number
 * (docs/measuring.md), which gives modelled cycles and memory references per slot beside
 * pcnt's instructions. The bucket opens before the start's TSC read and closes before the
 * stop's, so under icount it differs from the sample by a fixed instruction count. */
static inline void pcnt_user_start(int id, u64 para)
{
    marker_bucket((unsigned)id);
    pcnt_start(id, para);
}

static inline void pcnt_user_stop(int id)
{
    marker_bucket(0);
    pcnt_stop(id);
}

static inline void pcnt_probe_start(enum pcnt_probe p, u64 para)
{
    if (pcnt_probes_on)
        pcnt_start(p, para);
}
/* Probes stop only what they started: a probe region may begin before probes were
 * switched on, or in another thread (direct switches), and that is not a misuse. */
static inline void pcnt_probe_stop(enum pcnt_probe p)
{
    if (pcnt_probes_on && pcnt_pool[this_cpu()->id][p].status == PCNT_RUNNING)
        pcnt_stop(p);
}

/* Probes around a whole operation (kernel/mm): the operation tests pcnt_probed() once and
 * calls its probed variant, kept out of line with PCNT_COLD, only when the probes are on;
 * with them off the probe costs that one test and branch. */
#define PCNT_COLD __attribute__((noinline, cold))
static inline bool pcnt_probed(void) { return __builtin_expect(pcnt_probes_on, 0); }

/* A measured region that blocked across a thread switch is dropped, not failed. */
static inline void pcnt_abort(int id)
{
    int cpu = this_cpu()->id;
    struct pcnt_slot *s = &pcnt_pool[cpu][id];
    if (s->status == PCNT_RUNNING && s->repeat) {
        s->status = PCNT_INIT;
        s->dropped++;
    }
}

void pcnt_init(void);
long pcnt_syscall(u64 cmd, u64 a, u64 b, u64 c, bool privileged);
#endif
