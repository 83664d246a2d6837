/*
 * Markers for the cache/TLB model plugin (tools/cacheplugin). QEMU 7.2 plugins cannot read
 * registers, so the kernel tells the plugin things by a one-byte load from
 * MARKER_BASE + (cmd << 12) + payload; the plugin decodes the address. See docs/measuring.md.
 */
#ifndef MARKER_H
#define MARKER_H
#include "memlayout.h"
#include "types.h"

enum marker_cmd {
    MARK_ASID = 0,          /* address-space switch; payload = asid (0 = kernel only) */
    MARK_DEFINE = 1,        /* begin definition of asid = payload */
    MARK_DOMAIN = 2,        /* its domain: 1 = server, 2 = user task */
    MARK_NAME_CHAR = 3,     /* one character of its name */
    MARK_DEFINE_END = 4,
    MARK_WINDOW_BEGIN = 5,  /* payload = window id */
    MARK_WINDOW_END = 6,
    MARK_INVLPG_LO = 7,     /* the next invlpg's page number, bits 12-23 of the address */
    MARK_INVLPG_MID = 8,    /* bits 24-35 */
    MARK_INVLPG_HI = 9,     /* bits 36-47 */
    MARK_CR3_PCID = 10,     /* the next CR3 write: 0 = keeps every TLB entry (PCID, no-flush
                               bit), 1 = drops only the new asid's */
    MARK_LOCK = 11,         /* coherence model: a lock event, payload = kind << 10 | lock id */
    MARK_MODEL = 12,        /* coherence model: 0 = this CPU's work pauses (not modelled:
                               a barrier, the end), 1 = it resumes */
    MARK_BUCKET = 13,       /* what this CPU runs from here is summed in bucket payload of
                               the open window: a pcnt slot a program runs (0 = none) */
};

enum { LOCK_EV_WAIT = 0, LOCK_EV_ACQUIRE = 1, LOCK_EV_RELEASE = 2 };
/* MARK_LOCK ids (10 bits): smpbench's ping-pong uses 1; the big kernel lock (klock.h); the
 * reverse map's global lock, then its frame locks, then its family locks (rmap.c). */
enum { LOCK_ID_BKL = 3, LOCK_ID_RMAP_GLOBAL = 4 };

enum { DOMAIN_SERVER = 1, DOMAIN_USER = 2 };

extern bool markers_on;

static inline void marker(unsigned cmd, unsigned payload)
{
    if (markers_on)
        (void)*(volatile u8 *)(MARKER_BASE + ((u64)cmd << 12) + (payload & 0xfff));
}

static inline void marker_asid_switch(int asid) { marker(MARK_ASID, (unsigned)asid); }
static inline void marker_cr3_pcid(bool flush) { marker(MARK_CR3_PCID, flush); }
static inline void marker_invlpg(u64 va)
{
    marker(MARK_INVLPG_LO, (unsigned)(va >> 12));
    marker(MARK_INVLPG_MID, (unsigned)(va >> 24));
    marker(MARK_INVLPG_HI, (unsigned)(va >> 36));
}
static inline void marker_lock(unsigned kind, unsigned lock) { marker(MARK_LOCK, kind << 10 | (lock & 0x3ff)); }
static inline void marker_model(bool running) { marker(MARK_MODEL, running); }
static inline void marker_bucket(unsigned bucket) { marker(MARK_BUCKET, bucket); }
void marker_define(int asid, int domain, const char *name);
#endif
