/*
 * Plugin configuration: a preset, then key=value arguments applied left to right.
 * See README.md for the argument list and where the preset numbers come from.
 */
#ifndef CACHESIM_CONFIG_H
#define CACHESIM_CONFIG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "counters.h"
#include "hier.h"

#define MARKER_BASE_DEFAULT 0xFFFFFFFFC0000000ull
#define KTEXT_BASE_DEFAULT 0xFFFFFFFF80000000ull

struct config {
    char preset[24];
    struct hier_config hier;
    struct penalties pen;
    uint64_t marker_base;   /* 16 pages of markers start here */
    uint64_t ktext_base;    /* kernel text: virtual = ktext_base + physical */
    char out[512];          /* JSON lines file; empty: standard error */
    bool always;            /* count from the start (window 0) without a begin marker */
    bool runs;              /* count repeated fetches inline where exact (plugin.c) */
    char coherence[16];     /* coherence-model latency preset (coher.c); empty: off */
    int coherence_order;    /* coherence_order=: enum coher_order (coher.h) */
    int socket_fetch;       /* socket_fetch=: enum coher_socket_fetch (coher.h), 0: clock */
    uint64_t percpu;        /* the kernel's per-CPU array (ondol: cpus[]); 0: not given */
    uint64_t percpu_size;   /* bytes of one entry (sizeof(struct cpu)) */
};

/* Fills cfg from a named preset ("pentiumpro", "modern"); -1 if unknown. */
int config_preset(struct config *cfg, const char *name);
/* Preset (default pentiumpro), then the other arguments; errors are written to err.
 * Returns 0, or -1 on any unknown key or bad value (the plugin then refuses to load). */
int config_parse(struct config *cfg, int argc, char **argv, char *err, size_t errlen);
/* Parses "32768", "32k", "1M", "0x1000"; -1 on junk. */
int config_parse_size(const char *s, uint64_t *out);
const char *config_repl_name(int repl);

#endif
