/*
 * JSON output of a window. Hand-written printing: names are restricted to printable
 * ASCII by the marker decoder, and only '"' and '\\' need escaping.
 */
#include "report.h"

#include <inttypes.h>
#include <string.h>

#include "sim.h"

static void put_string(FILE *f, const char *str)
{
    fputc('"', f);
    for (; *str; str++) {
        if (*str == '"' || *str == '\\')
            fputc('\\', f);
        fputc(*str, f);
    }
    fputc('"', f);
}

static double ratio(uint64_t num, uint64_t den)
{
    return den ? (double)num / (double)den : 0.0;
}

static void put_derived(FILE *f, const struct counters *c, const struct sim *s)
{
    static const struct { const char *name; int ctr; } mpi[] = {
        {"l1i_mpi", CTR_L1I_MISS}, {"l1d_mpi", CTR_L1D_MISS}, {"l2_mpi", CTR_L2_MISS},
        {"l3_mpi", CTR_L3_MISS},   {"itlb_mpi", CTR_ITLB_MISS}, {"dtlb_mpi", CTR_DTLB_MISS},
        {"stlb_mpi", CTR_STLB_MISS},
    };
    uint64_t insns = c->v[CTR_INSNS];
    for (unsigned i = 0; i < sizeof(mpi) / sizeof(mpi[0]); i++)
        fprintf(f, ",\"%s\":%.9g", mpi[i].name, ratio(c->v[mpi[i].ctr], insns));
    double stall = counters_stall_cycles(c, &s->cfg.pen, &s->lv);
    double cycles = counters_cycles(c, &s->cfg.pen, &s->lv);
    fprintf(f, ",\"modelled_stall_cycles\":%.0f,\"modelled_cycles\":%.0f", stall, cycles);
    fprintf(f, ",\"modelled_mcpi\":%.9g,\"modelled_cpi\":%.9g",
            insns ? stall / (double)insns : 0.0, insns ? cycles / (double)insns : 0.0);
}

static void put_counters(FILE *f, const struct counters *c, const struct sim *s)
{
    for (int i = 0; i < NCTR; i++)
        fprintf(f, "%s\"%s\":%" PRIu64, i ? "," : "", ctr_names[i], c->v[i]);
    put_derived(f, c, s);
}

static void put_object(FILE *f, const struct counters *c, const struct sim *s)
{
    fputc('{', f);
    put_counters(f, c, s);
    fputc('}', f);
}

static void put_kinds(FILE *f, const struct counters kinds[NDKIND], const struct sim *s)
{
    fputc('{', f);
    for (int k = 0; k < NDKIND; k++) {
        fprintf(f, "%s\"%s\":", k ? "," : "", dkind_names[k]);
        put_object(f, &kinds[k], s);
    }
    fputc('}', f);
}

static void put_cache(FILE *f, const char *name, const struct cache_geom *g, bool on)
{
    fprintf(f, ",\"%s\":", name);
    if (!on) {
        fputs("null", f);
        return;
    }
    fprintf(f, "{\"size\":%u,\"line\":%u,\"assoc\":%u,\"repl\":\"%s\",\"write\":\"%s\"}",
            g->size, g->line, g->assoc, config_repl_name(g->repl),
            g->write == WRITE_BACK ? "back" : "through");
}

static void put_tlb(FILE *f, const char *name, const struct tlb_geom *g, bool on)
{
    fprintf(f, ",\"%s\":", name);
    if (!on) {
        fputs("null", f);
        return;
    }
    fprintf(f, "{\"entries\":%u,\"assoc\":%u,\"repl\":\"%s\"}", g->entries, g->assoc,
            config_repl_name(g->repl));
}

static void put_geometry(FILE *f, const struct config *cfg)
{
    const struct hier_config *h = &cfg->hier;
    fprintf(f, ",\"geometry\":{\"preset\":");
    put_string(f, cfg->preset);
    put_cache(f, "l1i", &h->l1i, true);
    put_cache(f, "l1d", &h->l1d, true);
    put_cache(f, "l2", &h->l2, h->l2_on);
    put_cache(f, "l3", &h->l3, h->l3_on);
    fprintf(f, ",\"l2_inclusive\":%s,\"l3_inclusive\":%s", h->l2_inclusive ? "true" : "false",
            h->l3_inclusive ? "true" : "false");
    put_tlb(f, "itlb", &h->itlb, true);
    put_tlb(f, "dtlb", &h->dtlb, true);
    put_tlb(f, "stlb", &h->stlb, h->stlb_on);
    fprintf(f, ",\"kernel_page\":\"%s\",\"walk_refs\":%u}", h->kpage_shift == 21 ? "2m" : "4k",
            h->walk_refs);
}

static void put_penalties(FILE *f, const struct penalties *p)
{
    fprintf(f, ",\"penalties\":{\"cpi\":%.9g,\"lat_l2\":%.9g,\"lat_l3\":%.9g,"
               "\"lat_mem\":%.9g,\"lat_stlb\":%.9g,\"lat_walk\":%.9g}",
            p->cpi, p->lat_l2, p->lat_l3, p->lat_mem, p->lat_stlb, p->lat_walk);
}

static void put_tasks(FILE *f, const struct sim *s)
{
    fputs(",\"tasks\":[", f);
    for (unsigned i = 0; i < s->dom.ntasks; i++) {
        const struct task_total *t = &s->dom.tasks[i];
        fputs(i ? ",{\"name\":" : "{\"name\":", f);
        put_string(f, t->name);
        fprintf(f, ",\"kind\":\"%s\",", dkind_names[t->kind]);
        put_counters(f, &t->c, s);
        fputc('}', f);
    }
    fputc(']', f);
}

/* The address spaces vCPU v ran in the window (user half: the slots past the kernel's),
 * each with its instructions there, in the order it first ran them; an asid defined
 * again in the window is reported under its last definition. */
static void put_asids(FILE *f, const struct sim *s, const struct vcpu *v)
{
    fputs(",\"asids\":[", f);
    bool first = true;
    for (unsigned k = 0; k < v->nused; k++) {
        unsigned idx = v->used[k];
        if (!idx || !v->slot_insns[idx])
            continue;
        unsigned asid = idx - 1;
        const struct asid_def *d = &s->dom.def[asid];
        fprintf(f, "%s{\"asid\":%u,\"name\":", first ? "" : ",", asid);
        if (d->defined) {
            put_string(f, d->name);
        } else {
            char name[16];
            snprintf(name, sizeof(name), "asid:%u", asid);
            put_string(f, name);
        }
        fprintf(f, ",\"kind\":\"%s\",\"instructions\":%llu}",
                dkind_names[d->defined ? d->kind : DK_UNKNOWN],
                (unsigned long long)v->slot_insns[idx]);
        first = false;
    }
    fputc(']', f);
}

static void put_vcpus(FILE *f, const struct sim *s)
{
    fputs(",\"vcpus\":[", f);
    for (unsigned i = 0; i < s->nvcpus; i++) {
        const struct vcpu *v = &s->v[i];
        struct counters total = {0};
        for (int k = 0; k < NDKIND; k++)
            counters_add(&total, &v->kind_tot[k]);
        fprintf(f, "%s{\"vcpu\":%u,\"total\":", i ? "," : "", i);
        put_object(f, &total, s);
        fputs(",\"domains\":", f);
        put_kinds(f, v->kind_tot, s);
        put_asids(f, s, v);
        fputc('}', f);
    }
    fputc(']', f);
}

/* The window's buckets (MK_BUCKET) summed over the vCPUs, each with its counters; only
 * when some bucket other than 0 counted anything, so windows of programs that announce
 * none read as before. Bucket 0 holds what ran outside every bucket; `stretches` is how
 * often the bucket became current in the window. */
static void put_buckets(FILE *f, const struct sim *s)
{
    static struct counters sum[NBUCKET];
    uint64_t stretches[NBUCKET] = {0};
    bool any = false;
    memset(sum, 0, sizeof(sum));
    for (unsigned i = 0; i < s->nvcpus; i++)
        for (unsigned b = 0; b < NBUCKET; b++) {
            counters_add(&sum[b], &s->v[i].buckets[b]);
            stretches[b] += s->v[i].stretches[b];
        }
    for (unsigned b = 1; b < NBUCKET; b++)
        any |= !counters_is_zero(&sum[b]);
    if (!any)
        return;
    const char *sep = "";
    fputs(",\"buckets\":[", f);
    for (unsigned b = 0; b < NBUCKET; b++) {
        if (counters_is_zero(&sum[b]))
            continue;
        fprintf(f, "%s{\"bucket\":%u,\"stretches\":%" PRIu64 ",", sep, b, stretches[b]);
        put_counters(f, &sum[b], s);
        fputc('}', f);
        sep = ",";
    }
    fputc(']', f);
}

static void sum_kinds(const struct sim *s, struct counters kinds[NDKIND], struct counters *all)
{
    for (unsigned i = 0; i < s->nvcpus; i++) {
        for (int k = 0; k < NDKIND; k++) {
            counters_add(&kinds[k], &s->v[i].kind_tot[k]);
            counters_add(all, &s->v[i].kind_tot[k]);
        }
    }
}

void report_window(FILE *f, const struct sim *s, unsigned end_id, bool complete)
{
    struct counters kinds[NDKIND] = {0}, all = {0};
    sum_kinds(s, kinds, &all);

    fprintf(f, "{\"type\":\"cachesim\",\"window\":%u,\"end_window\":%u,\"complete\":%s,"
               "\"seq\":%" PRIu64,
            s->window, end_id, complete ? "true" : "false", s->windows_done);
    fputs(",\"cycles_are\":\"modelled: instructions*cpi + misses*latency (not measured)\"", f);
    fputs(",\"page_walk_refs_are\":\"estimated: walk_refs per 4 KiB walk, one fewer per 2 MiB\"",
          f);
    put_geometry(f, &s->cfg);
    put_penalties(f, &s->cfg.pen);
    fputs(",\"total\":", f);
    put_object(f, &all, s);
    fputs(",\"domains\":", f);
    put_kinds(f, kinds, s);
    put_tasks(f, s);
    put_vcpus(f, s);
    put_buckets(f, s);
    fprintf(f, ",\"iphys\":{\"calibrated\":%s,\"conflicts\":%" PRIu64 ",\"fallbacks\":%" PRIu64
               "},\"markers\":%" PRIu64 ",\"bad_markers\":%" PRIu64
               ",\"invlpg_without_hint\":%" PRIu64,
            s->ip.calibrated ? "true" : "false", s->ip.conflicts, s->ip.fallbacks, s->markers,
            s->bad_markers, s->invlpg_nohint);
    if (s->coh) {
        fputs(",\"coherence\":", f);
        coher_report(f, s->coh);
    }
    fputs("}\n", f);
    fflush(f);
}
