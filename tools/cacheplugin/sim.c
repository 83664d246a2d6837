/*
 * Attribution, markers and windows around the per-vCPU hierarchies.
 *
 * Every event is charged to the domain of the instruction that caused it: the kernel if
 * the instruction's virtual address is in the kernel half, otherwise the address space
 * the kernel last announced with a switch marker. Counters live in per-vCPU slots (one
 * per asid plus the kernel), so the hot path is two pointer loads and no locking. Slots
 * are folded into per-task totals when an asid is redefined and when a window ends.
 * The model itself runs all the time (caches stay warm between windows); only counting
 * is gated by windows.
 */
#include "sim.h"

#include <stdlib.h>
#include <string.h>

#include "report.h"
#include "x86dec.h"

static void window_begin(struct sim *s, unsigned id);

/* ---- setup ------------------------------------------------------------------------ */

static int vcpu_init(struct vcpu *v, const struct hier_config *hc, unsigned index)
{
    struct hier_config c = *hc;
    c.seed = hc->seed + 16ull * index;  /* distinct, reproducible random streams */
    if (hier_init(&v->h, &c) != 0)
        return -1;
    v->slots = calloc(NSLOT, sizeof(*v->slots));
    v->used = calloc(NSLOT, sizeof(*v->used));
    v->is_used = calloc(NSLOT, sizeof(*v->is_used));
    v->buckets = calloc(NBUCKET, sizeof(*v->buckets));
    v->stretches = calloc(NBUCKET, sizeof(*v->stretches));
    v->slot_insns = calloc(NSLOT, sizeof(*v->slot_insns));
    if (!v->slots || !v->used || !v->is_used || !v->buckets || !v->stretches || !v->slot_insns)
        return -1;
    v->kctr = v->uctr = &v->sink;
    return 0;
}

static void vcpu_free(struct vcpu *v)
{
    hier_free(&v->h);
    free(v->slots);
    free(v->used);
    free(v->is_used);
    free(v->buckets);
    free(v->stretches);
    free(v->slot_insns);
}

struct sim *sim_create(const struct config *cfg, unsigned nvcpus, FILE *out)
{
    struct sim *s = calloc(1, sizeof(*s));
    if (!s)
        return NULL;
    s->cfg = *cfg;
    s->lv = (struct levels){cfg->hier.l2_on, cfg->hier.l3_on, cfg->hier.stlb_on};
    s->nvcpus = nvcpus ? nvcpus : 1;
    s->out = out;
    domains_init(&s->dom);
    uint64_t kend = cfg->marker_base > cfg->ktext_base ? cfg->marker_base
                                                       : cfg->ktext_base + (1ull << 30);
    iphys_init(&s->ip, cfg->ktext_base, kend);
    pthread_mutex_init(&s->lock, NULL);
    s->v = calloc(s->nvcpus, sizeof(*s->v));
    if (!s->v)
        goto fail;
    for (unsigned i = 0; i < s->nvcpus; i++)
        if (vcpu_init(&s->v[i], &cfg->hier, i) != 0)
            goto fail;
    if (cfg->coherence[0]) {
        s->coh = malloc(sizeof(*s->coh));
        if (!s->coh || coher_init(s->coh, coher_preset_find(cfg->coherence), cfg->pen.cpi,
                                  s->nvcpus) != 0)
            goto fail;
        if (coher_set_order(s->coh, (enum coher_order)cfg->coherence_order) != 0 ||
            coher_set_socket_fetch(s->coh, (enum coher_socket_fetch)cfg->socket_fetch) != 0)
            goto fail;
    }
    if (cfg->always)
        window_begin(s, 0);
    return s;
fail:
    sim_destroy(s);
    return NULL;
}

void sim_destroy(struct sim *s)
{
    if (!s)
        return;
    for (unsigned i = 0; s->v && i < s->nvcpus; i++)
        vcpu_free(&s->v[i]);
    free(s->v);
    domains_free(&s->dom);
    if (s->coh)
        coher_free(s->coh);
    free(s->coh);
    pthread_mutex_destroy(&s->lock);
    free(s);
}

/* ---- hot path --------------------------------------------------------------------- */

static struct counters *charge(struct vcpu *v, const struct insn_desc *d)
{
    return d->kernel ? v->kctr : v->uctr;
}

void sim_insn(struct sim *s, unsigned vcpu, const struct insn_desc *d)
{
    struct vcpu *v = &s->v[vcpu];
    struct counters *c = charge(v, d);
    c->v[CTR_INSNS]++;
    hier_fetch(&v->h, c, v->asid, d->vaddr, d->paddr, d->size);
}

void sim_data(struct sim *s, unsigned vcpu, const struct insn_desc *d, uint64_t vaddr,
              uint64_t paddr, unsigned size, bool store)
{
    struct vcpu *v = &s->v[vcpu];
    hier_data(&v->h, charge(v, d), v->asid, vaddr, paddr, size, store);
}

void sim_fetch_run(struct sim *s, unsigned vcpu, const struct insn_desc *d, uint64_t n)
{
    struct vcpu *v = &s->v[vcpu];
    if (n && !hier_fetch_repeats(&v->h, v->asid, d->vaddr, d->paddr, d->size)) {
        sim_insn(s, vcpu, d);
        n--;
    }
    struct counters *c = charge(v, d);
    c->v[CTR_INSNS] += n;
    c->v[CTR_ITLB_ACC] += n;
    c->v[CTR_L1I_ACC] += n;
}

bool sim_repeats_exact(const struct sim *s)
{
    return s->cfg.runs && s->nvcpus == 1 && !s->coh;
}

/* What an event cost in the private hierarchy: its misses and stall cycles. */
static uint64_t misses_of(const struct counters *c)
{
    return c->v[CTR_L1I_MISS] + c->v[CTR_L1D_MISS];
}

void sim_insn_coher(struct sim *s, unsigned vcpu, const struct insn_desc *d)
{
    struct vcpu *v = &s->v[vcpu];
    struct counters *c = charge(v, d);
    uint64_t misses = misses_of(c);
    double stall = counters_stall_cycles(c, &s->cfg.pen, &s->lv);
    sim_insn(s, vcpu, d);
    coher_account(s->coh, vcpu, 1, misses_of(c) - misses,
                  counters_stall_cycles(c, &s->cfg.pen, &s->lv) - stall);
}

/* Misses of the last private level, which go to memory. Each cost the access lat_mem in
 * all (counters_stall_cycles: the levels' latencies add up to it). */
static uint64_t memory_misses(const struct counters *c, const struct levels *lv)
{
    if (lv->l3)
        return c->v[CTR_L3_MISS];
    return lv->l2 ? c->v[CTR_L2_MISS] : misses_of(c);
}

/* The access's private misses are counted as the hierarchy saw them. A line that missed
 * to memory but came from another vCPU's cache (a transfer) is served by that transfer
 * alone: its modelled cost is the transfer's latency, cheaper or dearer than memory, and
 * the hierarchy's lat_mem for it is not charged (README "The coherence model"). So the
 * transfer starts at the clock before the access's stall. */
void sim_data_coher(struct sim *s, unsigned vcpu, const struct insn_desc *d, uint64_t vaddr,
                    uint64_t paddr, unsigned size, bool store)
{
    struct vcpu *v = &s->v[vcpu];
    struct counters *c = charge(v, d);
    uint64_t misses = misses_of(c), to_memory = memory_misses(c, &s->lv);
    double stall = counters_stall_cycles(c, &s->cfg.pen, &s->lv);
    sim_data(s, vcpu, d, vaddr, paddr, size, store);
    stall = counters_stall_cycles(c, &s->cfg.pen, &s->lv) - stall;
    to_memory = memory_misses(c, &s->lv) - to_memory;
    /* an atomic RMW's load takes the line for writing (one transfer, not two) */
    uint64_t moved = coher_access(s->coh, vcpu, paddr, size, store || d->kind == INSN_ATOMIC);
    uint64_t served = moved < to_memory ? moved : to_memory;
    double saved = (double)served * s->cfg.pen.lat_mem;
    coher_account(s->coh, vcpu, 0, misses_of(c) - misses, stall - saved);
    if (served)
        coher_transfer_served(s->coh, vcpu, served, saved);
}

void sim_cr3_write(struct sim *s, unsigned vcpu, const struct insn_desc *d)
{
    struct vcpu *v = &s->v[vcpu];
    if (v->cr3_mode == CR3_KEEP)
        hier_cr3_keep(&v->h, charge(v, d));
    else if (v->cr3_mode == CR3_FLUSH_ASID)
        hier_cr3_flush_asid(&v->h, charge(v, d), v->asid);
    else
        hier_cr3_write(&v->h, charge(v, d));
    v->cr3_mode = CR3_FLUSH_ALL;
}

void sim_invlpg(struct sim *s, unsigned vcpu, const struct insn_desc *d)
{
    struct vcpu *v = &s->v[vcpu];
    if (v->hint_parts == 7) {
        hier_invlpg(&v->h, charge(v, d), v->hint);
    } else {
        s->invlpg_nohint++;
        hier_invlpg_unknown(&v->h, charge(v, d));
    }
    v->hint_parts = 0;
}

/* ---- slots and folding -------------------------------------------------------------- */

static struct counters *use_slot(struct vcpu *v, unsigned idx)
{
    if (!v->is_used[idx]) {
        v->is_used[idx] = 1;
        v->used[v->nused++] = (uint16_t)idx;
    }
    return &v->slots[idx];
}

static void point_counters(struct sim *s, struct vcpu *v)
{
    if (s->open) {
        v->kctr = use_slot(v, 0);
        v->uctr = use_slot(v, 1u + v->asid);
    } else {
        v->kctr = v->uctr = &v->sink;
    }
}

/* Moves one slot's counts into the per-kind and per-task totals of the window. */
static void fold_slot(struct sim *s, struct vcpu *v, unsigned idx)
{
    struct counters *c = &v->slots[idx];
    if (counters_is_zero(c))
        return;
    v->slot_insns[idx] += c->v[CTR_INSNS];
    if (idx == 0) {
        counters_add(&v->kind_tot[DK_KERNEL], c);
    } else {
        struct task_total *t = domains_task(&s->dom, idx - 1);
        if (t)
            counters_add(&t->c, c);
        counters_add(&v->kind_tot[t ? t->kind : DK_UNKNOWN], c);
    }
    memset(c, 0, sizeof(*c));
}

static void fold_all(struct sim *s)
{
    for (unsigned i = 0; i < s->nvcpus; i++) {
        struct vcpu *v = &s->v[i];
        for (unsigned k = 0; k < v->nused; k++)
            fold_slot(s, v, v->used[k]);
    }
}

/* ---- buckets ------------------------------------------------------------------------ */
/* A bucket is summed by difference: at every switch the vCPU's window total so far (its
 * slots plus what was folded out of them; folding moves counts, it does not change this
 * sum) less the total at the previous switch goes to the bucket that was current. So the
 * hot path is untouched, and the buckets of a window add up to its total exactly. */

static void vcpu_total(const struct vcpu *v, struct counters *out)
{
    memset(out, 0, sizeof(*out));
    for (unsigned k = 0; k < v->nused; k++)
        counters_add(out, &v->slots[v->used[k]]);
    for (int k = 0; k < NDKIND; k++)
        counters_add(out, &v->kind_tot[k]);
}

/* What ran since the last switch into the current bucket (only while a window is open). */
static void bucket_settle(struct sim *s, struct vcpu *v)
{
    if (!s->open)
        return;
    struct counters now, *b = &v->buckets[v->bucket];
    vcpu_total(v, &now);
    for (int i = 0; i < NCTR; i++)
        b->v[i] += now.v[i] - v->bucket_mark.v[i];
    v->bucket_mark = now;
}

static void bucket_marker(struct sim *s, struct vcpu *v, unsigned payload)
{
    if (payload >= NBUCKET) {
        s->bad_markers++;
        return;
    }
    bucket_settle(s, v);
    if (s->open && payload != v->bucket)
        v->stretches[payload]++;
    v->bucket = (uint16_t)payload;
}

/* ---- windows ------------------------------------------------------------------------ */

static void reset_vcpu_window(struct vcpu *v)
{
    for (unsigned k = 0; k < v->nused; k++) {
        memset(&v->slots[v->used[k]], 0, sizeof(struct counters));
        v->slot_insns[v->used[k]] = 0;
        v->is_used[v->used[k]] = 0;
    }
    v->nused = 0;
    memset(v->kind_tot, 0, sizeof(v->kind_tot));
    memset(v->buckets, 0, NBUCKET * sizeof(*v->buckets));
    memset(v->stretches, 0, NBUCKET * sizeof(*v->stretches));
    memset(&v->bucket_mark, 0, sizeof(v->bucket_mark));
}

static void window_begin(struct sim *s, unsigned id)
{
    /* A begin while a window is open restarts it (windows do not nest). */
    for (unsigned i = 0; i < s->nvcpus; i++)
        reset_vcpu_window(&s->v[i]);
    domains_clear_totals(&s->dom);
    s->open = true;
    s->window = id;
    if (s->coh)
        coher_window_begin(s->coh);
    for (unsigned i = 0; i < s->nvcpus; i++)
        point_counters(s, &s->v[i]);
}

static void window_close(struct sim *s, unsigned end_id, bool complete)
{
    for (unsigned i = 0; i < s->nvcpus; i++)
        bucket_settle(s, &s->v[i]);
    fold_all(s);
    if (s->out)
        report_window(s->out, s, end_id, complete);
    s->open = false;
    s->windows_done++;
    for (unsigned i = 0; i < s->nvcpus; i++)
        point_counters(s, &s->v[i]);
}

void sim_finish(struct sim *s)
{
    pthread_mutex_lock(&s->lock);
    if (s->open)
        window_close(s, s->window, false);
    pthread_mutex_unlock(&s->lock);
}

/* ---- markers ------------------------------------------------------------------------ */

static void switch_asid(struct sim *s, struct vcpu *v, unsigned asid)
{
    v->kctr->v[CTR_AS_SWITCHES]++;
    v->asid = (uint16_t)asid;
    if (s->open)
        v->uctr = use_slot(v, 1u + asid);
}

/* A (re)definition: whatever ran under the asid so far stays with its old identity. */
static void commit_definition(struct sim *s, struct pending_def *d)
{
    d->name[d->len] = 0;
    if (domains_same(&s->dom, d->asid, d->kind, d->name))
        return;
    for (unsigned i = 0; i < s->nvcpus; i++)
        fold_slot(s, &s->v[i], 1u + d->asid);
    domains_define(&s->dom, d->asid, d->kind, d->name);
}

static void definition_marker(struct sim *s, struct vcpu *v, unsigned cmd, unsigned payload)
{
    struct pending_def *d = &v->def;
    switch (cmd) {
    case MK_DEF_BEGIN:
        *d = (struct pending_def){.active = true, .asid = payload, .kind = DK_UNKNOWN};
        break;
    case MK_DEF_KIND:
        d->kind = domains_kind_from_payload(payload);
        break;
    case MK_DEF_CHAR:
        if (d->len < TASK_NAME_MAX && payload >= 0x20 && payload < 0x7F)
            d->name[d->len++] = (char)payload;
        break;
    default: /* MK_DEF_END */
        if (d->active) {
            pthread_mutex_lock(&s->lock);
            commit_definition(s, d);
            pthread_mutex_unlock(&s->lock);
        }
        d->active = false;
        break;
    }
}

static void window_marker(struct sim *s, unsigned cmd, unsigned payload)
{
    pthread_mutex_lock(&s->lock);
    if (cmd == MK_WIN_BEGIN)
        window_begin(s, payload);
    else if (s->open)
        window_close(s, payload, true);
    else
        s->bad_markers++; /* an end without a begin */
    pthread_mutex_unlock(&s->lock);
}

static void hint_marker(struct vcpu *v, unsigned cmd, unsigned payload)
{
    uint64_t part = (uint64_t)payload;
    if (cmd == MK_INVLPG_LO) {
        v->hint = part << 12;
        v->hint_parts = 1;
    } else if (cmd == MK_INVLPG_MID) {
        v->hint |= part << 24;
        v->hint_parts |= 2;
    } else {
        v->hint |= part << 36;
        v->hint_parts |= 4;
        if (v->hint & (1ull << 47))
            v->hint |= 0xFFFF000000000000ull; /* canonical kernel-half address */
    }
}

/* Lock and model markers feed the coherence model when it is on, and are ignored
 * otherwise (the kernel does not know whether the plugin models coherence). */
static void coherence_marker(struct sim *s, unsigned vcpu, unsigned cmd, unsigned payload)
{
    if (!s->coh || !s->open)
        return;
    if (cmd == MK_LOCK)
        coher_lock_marker(s->coh, vcpu, payload);
    else
        coher_model_marker(s->coh, vcpu, payload);
}

void sim_marker(struct sim *s, unsigned vcpu, unsigned cmd, unsigned payload)
{
    struct vcpu *v = &s->v[vcpu];
    s->markers++;
    if (cmd == MK_SWITCH)
        switch_asid(s, v, payload % NASID);
    else if (cmd >= MK_DEF_BEGIN && cmd <= MK_DEF_END)
        definition_marker(s, v, cmd, payload);
    else if (cmd == MK_WIN_BEGIN || cmd == MK_WIN_END)
        window_marker(s, cmd, payload);
    else if (cmd >= MK_INVLPG_LO && cmd <= MK_INVLPG_HI)
        hint_marker(v, cmd, payload);
    else if (cmd == MK_CR3_PCID && payload <= 1)
        v->cr3_mode = payload ? CR3_FLUSH_ASID : CR3_KEEP;
    else if (cmd == MK_LOCK || cmd == MK_MODEL)
        coherence_marker(s, vcpu, cmd, payload);
    else if (cmd == MK_BUCKET)
        bucket_marker(s, v, payload);
    else
        s->bad_markers++;
}

bool sim_marker_access(struct sim *s, unsigned vcpu, uint64_t vaddr, bool store)
{
    uint64_t off = vaddr - s->cfg.marker_base;
    if (off >= MARKER_SPAN)
        return false;
    if (!store)
        sim_marker(s, vcpu, (unsigned)(off >> 12), (unsigned)(off & 0xFFF));
    return true;
}
