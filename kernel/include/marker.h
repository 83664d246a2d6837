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
};

enum { DOMAIN_SERVER = 1, DOMAIN_USER = 2 };

extern bool markers_on;

static inline void marker(unsigned cmd, unsigned payload)
{
    if (markers_on)
        (void)*(volatile u8 *)(MARKER_BASE + ((u64)cmd << 12) + (payload & 0xfff));
}

static inline void marker_asid_switch(int asid) { marker(MARK_ASID, (unsigned)asid); }
void marker_define(int asid, int domain, const char *name);
#endif
