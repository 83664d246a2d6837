/* Presets and key=value argument parsing. */
#include "config.h"

#include "coher.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define KB 1024u
#define MB (1024u * 1024u)

static const struct cache_geom L3_DEFAULT = {2 * MB, 64, 16, REPL_LRU, WRITE_BACK};

static void set_common(struct config *c)
{
    c->marker_base = MARKER_BASE_DEFAULT;
    c->ktext_base = KTEXT_BASE_DEFAULT;
    c->runs = true;
    c->hier.l3 = L3_DEFAULT;
    c->hier.l3_on = false;
    c->hier.l3_inclusive = false;
    c->hier.kpage_shift = 21;
    c->hier.walk_refs = 4;
    c->hier.seed = 1;
    c->pen.cpi = 1.0;
}

/* Pentium Pro as in P0: 8 KB I 2-way, 8 KB D 4-way, 32-byte lines, 256 KB unified L2
 * 4-way, ITLB 32 entries 4-way, DTLB 64 entries 4-way. */
static void preset_pentiumpro(struct config *c)
{
    struct hier_config *h = &c->hier;
    h->l1i = (struct cache_geom){8 * KB, 32, 2, REPL_LRU, WRITE_BACK};
    h->l1d = (struct cache_geom){8 * KB, 32, 4, REPL_LRU, WRITE_BACK};
    h->l2 = (struct cache_geom){256 * KB, 32, 4, REPL_LRU, WRITE_BACK};
    h->l2_on = true;
    h->l2_inclusive = false;
    h->itlb = (struct tlb_geom){32, 4, REPL_LRU};
    h->dtlb = (struct tlb_geom){64, 4, REPL_LRU};
    h->stlb = (struct tlb_geom){64, 4, REPL_LRU};
    h->stlb_on = false;
    /* Assumed latencies, ~150 MHz core: full-speed on-package L2, DRAM ~230 ns. */
    c->pen.lat_l2 = 6;
    c->pen.lat_l3 = 20;
    c->pen.lat_mem = 35;
    c->pen.lat_stlb = 0;
    c->pen.lat_walk = 15;
}

/* A Skylake-SP-like core: 32 KB 8-way L1s, 1 MB 16-way inclusive L2, 64-byte lines,
 * 64-entry L1 TLBs and a 1,536-entry 12-way second-level TLB. */
static void preset_modern(struct config *c)
{
    struct hier_config *h = &c->hier;
    h->l1i = (struct cache_geom){32 * KB, 64, 8, REPL_LRU, WRITE_BACK};
    h->l1d = (struct cache_geom){32 * KB, 64, 8, REPL_LRU, WRITE_BACK};
    h->l2 = (struct cache_geom){1 * MB, 64, 16, REPL_LRU, WRITE_BACK};
    h->l2_on = true;
    h->l2_inclusive = true;
    h->itlb = (struct tlb_geom){64, 8, REPL_LRU};
    h->dtlb = (struct tlb_geom){64, 4, REPL_LRU};
    h->stlb = (struct tlb_geom){1536, 12, REPL_LRU};
    h->stlb_on = true;
    c->pen.lat_l2 = 12;
    c->pen.lat_l3 = 44;
    c->pen.lat_mem = 200;
    c->pen.lat_stlb = 9;
    c->pen.lat_walk = 30;
}

int config_preset(struct config *cfg, const char *name)
{
    memset(cfg, 0, sizeof(*cfg));
    set_common(cfg);
    if (strcmp(name, "pentiumpro") == 0)
        preset_pentiumpro(cfg);
    else if (strcmp(name, "modern") == 0)
        preset_modern(cfg);
    else
        return -1;
    snprintf(cfg->preset, sizeof(cfg->preset), "%s", name);
    return 0;
}

int config_parse_size(const char *s, uint64_t *out)
{
    char *end;
    if (!*s)
        return -1;
    unsigned long long v = strtoull(s, &end, 0);
    if (*end == 'k' || *end == 'K')
        v *= KB, end++;
    else if (*end == 'm' || *end == 'M')
        v *= MB, end++;
    else if (*end == 'g' || *end == 'G')
        v *= 1024ull * MB, end++;
    if (*end)
        return -1;
    *out = v;
    return 0;
}

const char *config_repl_name(int repl)
{
    return repl == REPL_FIFO ? "fifo" : repl == REPL_RANDOM ? "random" : "lru";
}

/* ---- value parsers: 0 on success ---------------------------------------------------- */

static int parse_bool(const char *v, bool *out)
{
    if (!strcmp(v, "on") || !strcmp(v, "true") || !strcmp(v, "yes") || !strcmp(v, "1"))
        *out = true;
    else if (!strcmp(v, "off") || !strcmp(v, "false") || !strcmp(v, "no") || !strcmp(v, "0"))
        *out = false;
    else
        return -1;
    return 0;
}

static int parse_u32(const char *v, uint32_t *out)
{
    uint64_t x;
    if (config_parse_size(v, &x) || x > UINT32_MAX)
        return -1;
    *out = (uint32_t)x;
    return 0;
}

static int parse_repl(const char *v, enum repl *out)
{
    if (!strcmp(v, "lru"))
        *out = REPL_LRU;
    else if (!strcmp(v, "fifo"))
        *out = REPL_FIFO;
    else if (!strcmp(v, "random") || !strcmp(v, "rand"))
        *out = REPL_RANDOM;
    else
        return -1;
    return 0;
}

static int parse_write(const char *v, enum wpolicy *out)
{
    if (!strcmp(v, "back") || !strcmp(v, "wb"))
        *out = WRITE_BACK;
    else if (!strcmp(v, "through") || !strcmp(v, "wt"))
        *out = WRITE_THROUGH;
    else
        return -1;
    return 0;
}

static int parse_double(const char *v, double *out)
{
    char *end;
    double d = strtod(v, &end);
    if (!*v || *end || d < 0)
        return -1;
    *out = d;
    return 0;
}

/* ---- keys ------------------------------------------------------------------------- */

/* "l1d_size" -> cache l1d, field "size". Returns -1 if the key is not a cache key,
 * 0 if applied, 1 if the value was bad. */
static int cache_key(struct config *c, const char *key, const char *v, bool *l3_touched)
{
    static const char *const names[] = {"l1i_", "l1d_", "l2_", "l3_"};
    struct cache_geom *geoms[] = {&c->hier.l1i, &c->hier.l1d, &c->hier.l2, &c->hier.l3};
    for (int i = 0; i < 4; i++) {
        size_t n = strlen(names[i]);
        if (strncmp(key, names[i], n) != 0)
            continue;
        const char *f = key + n;
        struct cache_geom *g = geoms[i];
        if (i == 3)
            *l3_touched = true;
        if (!strcmp(f, "size"))
            return parse_u32(v, &g->size) ? 1 : 0;
        if (!strcmp(f, "line"))
            return parse_u32(v, &g->line) ? 1 : 0;
        if (!strcmp(f, "assoc"))
            return parse_u32(v, &g->assoc) ? 1 : 0;
        if (!strcmp(f, "repl"))
            return parse_repl(v, &g->repl) ? 1 : 0;
        if (!strcmp(f, "write"))
            return parse_write(v, &g->write) ? 1 : 0;
        if (i == 2 && !strcmp(f, "inclusive"))
            return parse_bool(v, &c->hier.l2_inclusive) ? 1 : 0;
        if (i == 3 && !strcmp(f, "inclusive"))
            return parse_bool(v, &c->hier.l3_inclusive) ? 1 : 0;
        return -1;
    }
    return -1;
}

static int tlb_key(struct config *c, const char *key, const char *v, bool *stlb_touched)
{
    static const char *const names[] = {"itlb_", "dtlb_", "stlb_"};
    struct tlb_geom *geoms[] = {&c->hier.itlb, &c->hier.dtlb, &c->hier.stlb};
    for (int i = 0; i < 3; i++) {
        size_t n = strlen(names[i]);
        if (strncmp(key, names[i], n) != 0)
            continue;
        const char *f = key + n;
        if (i == 2)
            *stlb_touched = true;
        if (!strcmp(f, "entries"))
            return parse_u32(v, &geoms[i]->entries) ? 1 : 0;
        if (!strcmp(f, "assoc"))
            return parse_u32(v, &geoms[i]->assoc) ? 1 : 0;
        if (!strcmp(f, "repl"))
            return parse_repl(v, &geoms[i]->repl) ? 1 : 0;
        return -1;
    }
    return -1;
}

static int set_all_repl(struct config *c, const char *v)
{
    enum repl r;
    if (parse_repl(v, &r))
        return 1;
    c->hier.l1i.repl = c->hier.l1d.repl = c->hier.l2.repl = c->hier.l3.repl = r;
    c->hier.itlb.repl = c->hier.dtlb.repl = c->hier.stlb.repl = r;
    return 0;
}

static int penalty_key(struct config *c, const char *key, const char *v)
{
    static const char *const names[] = {"cpi", "lat_l2", "lat_l3", "lat_mem", "lat_stlb",
                                        "lat_walk"};
    double *fields[] = {&c->pen.cpi, &c->pen.lat_l2, &c->pen.lat_l3, &c->pen.lat_mem,
                        &c->pen.lat_stlb, &c->pen.lat_walk};
    for (int i = 0; i < 6; i++)
        if (!strcmp(key, names[i]))
            return parse_double(v, fields[i]) ? 1 : 0;
    return -1;
}

static int kpage_value(struct config *c, const char *v)
{
    if (!strcmp(v, "2m") || !strcmp(v, "2M"))
        c->hier.kpage_shift = 21;
    else if (!strcmp(v, "4k") || !strcmp(v, "4K"))
        c->hier.kpage_shift = 12;
    else
        return 1;
    return 0;
}

static int u64_value(const char *v, uint64_t *out)
{
    return config_parse_size(v, out) ? 1 : 0;
}

/* A value named from a fixed list: found, its index (a *_find's answer), or -1. 0 when
 * stored, 1 for an unknown name. */
static int named_value(int found, int *out)
{
    if (found < 0)
        return 1;
    *out = found;
    return 0;
}

static int coherence_value(struct config *c, const char *v)
{
    if (!strcmp(v, "off")) {
        c->coherence[0] = 0;
        return 0;
    }
    if (!coher_preset_find(v))
        return 1;
    snprintf(c->coherence, sizeof(c->coherence), "%s", v);
    return 0;
}

/* Tracks whether l3=/stlb= were given explicitly, so geometry keys can imply "on". */
struct explicit_flags {
    bool l3_set, stlb_set, l3_touched, stlb_touched;
};

static int misc_key(struct config *c, const char *key, const char *v, struct explicit_flags *x)
{
    uint32_t u;
    if (!strcmp(key, "out")) {
        snprintf(c->out, sizeof(c->out), "%s", v);
        return 0;
    }
    if (!strcmp(key, "l2"))
        return parse_bool(v, &c->hier.l2_on) ? 1 : 0;
    if (!strcmp(key, "l3")) {
        x->l3_set = true;
        return parse_bool(v, &c->hier.l3_on) ? 1 : 0;
    }
    if (!strcmp(key, "stlb")) {
        x->stlb_set = true;
        return parse_bool(v, &c->hier.stlb_on) ? 1 : 0;
    }
    if (!strcmp(key, "coherence"))
        return coherence_value(c, v);
    if (!strcmp(key, "coherence_order"))
        return named_value(coher_order_find(v), &c->coherence_order);
    if (!strcmp(key, "socket_fetch"))
        return named_value(coher_socket_fetch_find(v), &c->socket_fetch);
    if (!strcmp(key, "always"))
        return parse_bool(v, &c->always) ? 1 : 0;
    if (!strcmp(key, "runs"))
        return parse_bool(v, &c->runs) ? 1 : 0;
    if (!strcmp(key, "inclusive"))
        return parse_bool(v, &c->hier.l2_inclusive) ? 1 : 0;
    if (!strcmp(key, "repl"))
        return set_all_repl(c, v);
    if (!strcmp(key, "kpage"))
        return kpage_value(c, v);
    if (!strcmp(key, "walk_refs")) {
        if (parse_u32(v, &u))
            return 1;
        c->hier.walk_refs = u;
        return 0;
    }
    if (!strcmp(key, "seed"))
        return u64_value(v, &c->hier.seed);
    if (!strcmp(key, "marker_base"))
        return u64_value(v, &c->marker_base);
    if (!strcmp(key, "ktext_base"))
        return u64_value(v, &c->ktext_base);
    if (!strcmp(key, "percpu"))
        return u64_value(v, &c->percpu);
    if (!strcmp(key, "percpu_size"))
        return u64_value(v, &c->percpu_size);
    return -1;
}

static int apply(struct config *c, const char *key, const char *v, struct explicit_flags *x)
{
    int r = cache_key(c, key, v, &x->l3_touched);
    if (r < 0)
        r = tlb_key(c, key, v, &x->stlb_touched);
    if (r < 0)
        r = penalty_key(c, key, v);
    if (r < 0)
        r = misc_key(c, key, v, x);
    return r;
}

static const char *find_preset(int argc, char **argv)
{
    const char *name = "pentiumpro";
    for (int i = 0; i < argc; i++)
        if (!strncmp(argv[i], "preset=", 7))
            name = argv[i] + 7;
    return name;
}

int config_parse(struct config *cfg, int argc, char **argv, char *err, size_t errlen)
{
    struct explicit_flags x = {0};
    const char *preset = find_preset(argc, argv);

    if (config_preset(cfg, preset) != 0) {
        snprintf(err, errlen, "unknown preset '%s' (pentiumpro, modern)", preset);
        return -1;
    }
    for (int i = 0; i < argc; i++) {
        char key[64];
        const char *eq = strchr(argv[i], '=');
        size_t klen = eq ? (size_t)(eq - argv[i]) : 0;
        if (!eq || klen == 0 || klen >= sizeof(key)) {
            snprintf(err, errlen, "argument '%s' is not key=value", argv[i]);
            return -1;
        }
        memcpy(key, argv[i], klen);
        key[klen] = 0;
        if (!strcmp(key, "preset"))
            continue;
        int r = apply(cfg, key, eq + 1, &x);
        if (r != 0) {
            snprintf(err, errlen, r < 0 ? "unknown argument '%s'" : "bad value in '%s'",
                     argv[i]);
            return -1;
        }
    }
    if (x.l3_touched && !x.l3_set)
        cfg->hier.l3_on = true;
    if (x.stlb_touched && !x.stlb_set)
        cfg->hier.stlb_on = true;
    if (!cfg->percpu != !cfg->percpu_size) {
        snprintf(err, errlen, "percpu= and percpu_size= go together");
        return -1;
    }
    const char *bad = hier_config_check(&cfg->hier);
    if (bad) {
        snprintf(err, errlen, "bad geometry: %s", bad);
        return -1;
    }
    return 0;
}
