/*
 * The whole modelled machine: one hierarchy per vCPU, domain attribution, the marker
 * protocol and measurement windows. QEMU-free, so the host tests drive it directly with
 * synthetic streams; plugin.c only translates QEMU callbacks into these calls.
 */
#ifndef CACHESIM_SIM_H
#define CACHESIM_SIM_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "coher.h"
#include "config.h"
#include "counters.h"
#include "domains.h"
#include "hier.h"
#include "iphys.h"

#define MARKER_SPAN 0x10000ull  /* 16 commands x 4 KiB */

/* Marker commands: one-byte load from marker_base + (cmd << 12) + payload. */
enum marker_cmd {
    MK_SWITCH = 0,      /* address-space switch; payload = asid (0 = none) */
    MK_DEF_BEGIN = 1,   /* begin defining asid = payload */
    MK_DEF_KIND = 2,    /* 1 = server, 2 = user task */
    MK_DEF_CHAR = 3,    /* one byte of the name */
    MK_DEF_END = 4,
    MK_WIN_BEGIN = 5,   /* payload = window id */
    MK_WIN_END = 6,
    /* Optional extension (see README): the address of the next INVLPG, 12 bits each. */
    MK_INVLPG_LO = 7,   /* vaddr bits 12..23 (starts a new hint) */
    MK_INVLPG_MID = 8,  /* bits 24..35 */
    MK_INVLPG_HI = 9,   /* bits 36..47; the hint is complete */
    /* PCID: how the next CR3 write on this vCPU treats the TLBs (default: full flush). */
    MK_CR3_PCID = 10,   /* 0 = keeps every entry (no-flush bit), 1 = drops the new asid's */
    /* The coherence model (coher.h); ignored when it is off. */
    MK_LOCK = 11,       /* kind << 10 | lock id; kind 0 wait, 1 acquire, 2 release */
    MK_MODEL = 12,      /* 0 = this vCPU's work is not modelled from here, 1 = it is again */
    /* Buckets: what this vCPU does from here on is also summed in bucket `payload` of the
     * open window (0 = no bucket). ondol announces its pcnt user slots this way, so a
     * probe's stretches get modelled cycles and references as pcnt gives instructions. */
    MK_BUCKET = 13,
};

#define NBUCKET 64          /* bucket ids 0..63 (pcnt has at most 64 slots) */

enum cr3_mode { CR3_FLUSH_ALL, CR3_KEEP, CR3_FLUSH_ASID };

/* What the translator learnt about one guest instruction. */
struct insn_desc {
    uint64_t vaddr;
    uint64_t paddr;
    uint8_t size;
    uint8_t kernel;     /* vaddr in the kernel half */
    uint8_t kind;       /* enum insn_kind */
};

#define NSLOT (1 + NASID)  /* slot 0: kernel; slot 1 + a: user half under asid a */

struct pending_def {
    bool active;
    unsigned asid;
    uint8_t kind;
    unsigned len;
    char name[TASK_NAME_MAX + 1];
};

struct vcpu {
    struct hier h;
    uint16_t asid;
    struct counters *kctr, *uctr;   /* where events go now: slots, or sink when closed */
    struct counters sink;
    struct counters *slots;         /* [NSLOT] */
    uint16_t *used;                 /* slots touched in this window */
    uint8_t *is_used;
    unsigned nused;
    struct counters kind_tot[NDKIND];  /* window totals by kind, filled by folding */
    uint64_t *slot_insns;           /* [NSLOT] this window's instructions of each slot,
                                       kept through folding: which address spaces this
                                       vCPU ran (the report's per-vCPU `asids`) */
    struct pending_def def;
    uint64_t hint;
    unsigned hint_parts;            /* bit i: part MK_INVLPG_LO + i seen */
    uint8_t cr3_mode;               /* enum cr3_mode for the next CR3 write (MK_CR3_PCID) */
    uint16_t bucket;                /* MK_BUCKET: where this vCPU's events are summed now */
    struct counters *buckets;       /* [NBUCKET], this window's sums per bucket */
    uint64_t *stretches;            /* [NBUCKET], switches into each bucket in this window */
    struct counters bucket_mark;    /* the vCPU's window total at the last bucket switch */
};

struct sim {
    struct config cfg;
    struct levels lv;
    unsigned nvcpus;
    struct vcpu *v;
    struct domains dom;
    struct iphys ip;                /* used by the translator; reported per window */
    pthread_mutex_t lock;           /* windows and definitions (rare, cross-vCPU) */
    bool open;
    unsigned window;
    uint64_t windows_done;
    uint64_t markers, bad_markers, invlpg_nohint;
    FILE *out;                      /* JSON lines; not owned */
    struct coher *coh;              /* the coherence model, or NULL (coherence=off) */
};

struct sim *sim_create(const struct config *cfg, unsigned nvcpus, FILE *out);
void sim_destroy(struct sim *s);

void sim_insn(struct sim *s, unsigned vcpu, const struct insn_desc *d);
void sim_data(struct sim *s, unsigned vcpu, const struct insn_desc *d, uint64_t vaddr,
              uint64_t paddr, unsigned size, bool store);
/* n executions of instructions of d's run (plugin.c: consecutive instructions on d's L1 I
 * line and 4 KiB page, none crossing either, none writing CR3 or INVLPG) with nothing
 * else in between: exactly what n sim_insn calls would do. The first fetch is a repeat
 * of the last one unless something dropped its line or page (then it is a real fetch);
 * the others then are repeats, which only count. Used while sim_repeats_exact(). */
void sim_fetch_run(struct sim *s, unsigned vcpu, const struct insn_desc *d, uint64_t n);
/* True when runs=on (the default), the coherence model is off (it accounts every
 * instruction) and there is one vCPU (QEMU's inline count is shared by all vCPUs). */
bool sim_repeats_exact(const struct sim *s);
/* Returns true (and acts on it) if vaddr is a marker access; markers are never counted. */
bool sim_marker_access(struct sim *s, unsigned vcpu, uint64_t vaddr, bool store);
void sim_marker(struct sim *s, unsigned vcpu, unsigned cmd, unsigned payload);
/* The same with the coherence model on: also feed it instructions, misses and accesses. */
void sim_insn_coher(struct sim *s, unsigned vcpu, const struct insn_desc *d);
void sim_data_coher(struct sim *s, unsigned vcpu, const struct insn_desc *d, uint64_t vaddr,
                    uint64_t paddr, unsigned size, bool store);
void sim_cr3_write(struct sim *s, unsigned vcpu, const struct insn_desc *d);
void sim_invlpg(struct sim *s, unsigned vcpu, const struct insn_desc *d);
/* At exit: writes a still-open window, marked incomplete. */
void sim_finish(struct sim *s);

#endif
