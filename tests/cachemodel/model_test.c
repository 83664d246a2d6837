/*
 * Host tests of the cachesim model (tools/cacheplugin minus the QEMU glue), fed with
 * synthetic access streams whose exact outcome follows from the geometry.
 *
 *   model_test --list        names of all cases
 *   model_test NAME...       run those cases (all if none); exit 1 if any fails
 *   model_test --json        print the JSON line of a small fixed window (for pytest)
 */
#define _POSIX_C_SOURCE 200809L /* open_memstream */

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cache.h"
#include "coher.h"
#include "config.h"
#include "counters.h"
#include "hier.h"
#include "insntab.h"
#include "iphys.h"
#include "sim.h"
#include "tlb.h"
#include "x86dec.h"

static int failures;

#define CHECK(cond)                                                                  \
    do {                                                                             \
        if (!(cond)) {                                                               \
            printf("  %s:%d: check failed: %s\n", __FILE__, __LINE__, #cond);        \
            failures++;                                                              \
        }                                                                            \
    } while (0)

#define CHECK_EQ(a, b)                                                               \
    do {                                                                             \
        unsigned long long a_ = (unsigned long long)(a);                             \
        unsigned long long b_ = (unsigned long long)(b);                             \
        if (a_ != b_) {                                                              \
            printf("  %s:%d: %s == %llu, expected %s == %llu\n", __FILE__, __LINE__,  \
                   #a, a_, #b, b_);                                                  \
            failures++;                                                              \
        }                                                                            \
    } while (0)

#define USER_BASE 0x400000ull
#define KTEXT 0xFFFFFFFF80000000ull

/* ---- helpers --------------------------------------------------------------------- */

static struct config preset(const char *name)
{
    struct config c;
    if (config_preset(&c, name) != 0) {
        printf("no preset %s\n", name);
        exit(2);
    }
    return c;
}

struct rig {
    struct hier h;
    struct counters c;
};

static void rig_init(struct rig *r, const struct hier_config *hc)
{
    memset(&r->c, 0, sizeof(r->c));
    if (hier_init(&r->h, hc) != 0) {
        printf("hier_init failed\n");
        exit(2);
    }
}

/* A loop of `passes` over [base, base + bytes) with loads (or stores) every `stride`;
 * virtual = physical + USER_BASE for user arrays. */
static void sweep(struct rig *r, uint64_t paddr, uint64_t bytes, unsigned stride,
                  unsigned passes, bool store)
{
    for (unsigned p = 0; p < passes; p++)
        for (uint64_t off = 0; off < bytes; off += stride)
            hier_data(&r->h, &r->c, 1, USER_BASE + paddr + off, paddr + off, 4, store);
}

static void touch_pages(struct rig *r, uint64_t vbase, unsigned n, uint64_t vstride)
{
    for (unsigned i = 0; i < n; i++) {
        uint64_t va = vbase + i * vstride;
        hier_data(&r->h, &r->c, 1, va, 0x1000000 + (va & 0xFFFFFFF), 4, false);
    }
}

/* ---- caches ------------------------------------------------------------------------ */

static void t_small_array(void)
{
    struct config cfg = preset("pentiumpro");
    struct rig r;
    rig_init(&r, &cfg.hier);
    sweep(&r, 0x100000, 4096, 4, 10, false);
    CHECK_EQ(r.c.v[CTR_L1D_ACC], 10 * 1024);
    CHECK_EQ(r.c.v[CTR_L1D_MISS], 4096 / 32);   /* compulsory misses only */
    CHECK_EQ(r.c.v[CTR_L2_ACC], 4096 / 32);
    CHECK_EQ(r.c.v[CTR_L2_MISS], 4096 / 32);
    CHECK_EQ(r.c.v[CTR_DTLB_MISS], 1);
    CHECK_EQ(r.c.v[CTR_LOADS], 10 * 1024);
    hier_free(&r.h);

    cfg = preset("modern");
    rig_init(&r, &cfg.hier);
    sweep(&r, 0x100000, 16384, 8, 5, false);
    CHECK_EQ(r.c.v[CTR_L1D_MISS], 16384 / 64);
    CHECK_EQ(r.c.v[CTR_DTLB_MISS], 4);
    hier_free(&r.h);
}

static void t_large_array(void)
{
    struct config cfg = preset("pentiumpro");
    struct rig r;
    rig_init(&r, &cfg.hier);
    /* 512 KiB > 256 KiB L2: with LRU a cyclic sweep misses on every line, every pass. */
    sweep(&r, 0x200000, 512 * 1024, 8, 3, false);
    uint64_t lines = 512 * 1024 / 32;
    CHECK_EQ(r.c.v[CTR_L1D_ACC], 3 * 512 * 1024 / 8);
    CHECK_EQ(r.c.v[CTR_L1D_MISS], 3 * lines);
    CHECK_EQ(r.c.v[CTR_L2_ACC], 3 * lines);
    CHECK_EQ(r.c.v[CTR_L2_MISS], 3 * lines);
    CHECK_EQ(r.c.v[CTR_L1D_WB], 0);
    /* 128 pages cycling through 16 sets of 4 ways: every page misses every pass. */
    CHECK_EQ(r.c.v[CTR_DTLB_MISS], 3 * 128);
    hier_free(&r.h);

    /* Between L1 and L2: 64 KiB misses L1 every pass but stays in L2. */
    rig_init(&r, &cfg.hier);
    sweep(&r, 0x200000, 64 * 1024, 32, 4, false);
    CHECK_EQ(r.c.v[CTR_L1D_MISS], 4 * 2048);
    CHECK_EQ(r.c.v[CTR_L2_MISS], 2048);
    hier_free(&r.h);
}

static void t_lru_order(void)
{
    struct cache k;
    struct victim v;
    struct cache_geom g = {64, 32, 2, REPL_LRU, WRITE_BACK}; /* one set, two ways */
    const uint64_t A = 10, B = 20, C = 30;

    CHECK(cache_init(&k, &g, 1) == 0);
    CHECK(!cache_lookup(&k, A, false));
    cache_fill(&k, A, false, &v);
    CHECK(!cache_lookup(&k, B, false));
    cache_fill(&k, B, false, &v);
    CHECK(cache_lookup(&k, A, false)); /* A is now most recent */
    CHECK(!cache_lookup(&k, C, false));
    cache_fill(&k, C, false, &v);
    CHECK(v.valid && v.line == B);     /* LRU evicts B */
    CHECK(cache_contains(&k, A) && !cache_contains(&k, B));
    cache_free(&k);

    g.repl = REPL_FIFO;
    CHECK(cache_init(&k, &g, 1) == 0);
    cache_fill(&k, A, false, &v);
    cache_fill(&k, B, false, &v);
    CHECK(cache_lookup(&k, A, false)); /* a hit does not reorder FIFO */
    cache_fill(&k, C, false, &v);
    CHECK(v.valid && v.line == A);
    CHECK(!cache_contains(&k, A) && cache_contains(&k, B));
    cache_free(&k);

    /* 4-way LRU: touch 0..3, re-touch 0, then 4 must evict 1, 5 must evict 2. */
    struct cache_geom g4 = {128, 32, 4, REPL_LRU, WRITE_BACK};
    CHECK(cache_init(&k, &g4, 1) == 0);
    for (uint64_t l = 0; l < 4; l++)
        cache_fill(&k, l, false, &v);
    CHECK(cache_lookup(&k, 0, false));
    cache_fill(&k, 4, false, &v);
    CHECK_EQ(v.line, 1);
    cache_fill(&k, 5, false, &v);
    CHECK_EQ(v.line, 2);
    cache_free(&k);
}

static unsigned random_misses(uint64_t seed)
{
    struct cache k;
    struct victim v;
    struct cache_geom g = {256, 32, 8, REPL_RANDOM, WRITE_BACK}; /* one set, 8 ways */
    unsigned misses = 0;
    cache_init(&k, &g, seed);
    for (unsigned i = 0; i < 2000; i++) {
        uint64_t line = (i * 7u) % 11u; /* 11 lines cycling through 8 ways */
        if (!cache_lookup(&k, line, false)) {
            misses++;
            cache_fill(&k, line, false, &v);
        }
    }
    cache_free(&k);
    return misses;
}

static void t_random_repl(void)
{
    unsigned a = random_misses(5), b = random_misses(5);
    CHECK_EQ(a, b);                 /* reproducible for a seed */
    CHECK(a > 11 && a < 2000);      /* some hits, some capacity misses */
    /* LRU on the same cyclic stream misses every time: random must do better. */
    CHECK(a < 1900);
}

static void t_write_back_vs_through(void)
{
    struct config cfg = preset("pentiumpro");
    struct rig r;

    /* Two stores per line over 8 KiB (the whole L1D), then loads of another 8 KiB that
     * map to the same sets. */
    rig_init(&r, &cfg.hier);
    sweep(&r, 0x100000, 8192, 16, 1, true);
    sweep(&r, 0x300000, 8192, 32, 1, false);
    CHECK_EQ(r.c.v[CTR_STORES], 512);
    CHECK_EQ(r.c.v[CTR_L1D_MISS], 512);
    CHECK_EQ(r.c.v[CTR_L1D_WB], 256);                /* every dirty line written back */
    CHECK_EQ(r.c.v[CTR_L2_ACC], 256 + 256 + 256);    /* fills A, fills B, write-backs */
    hier_free(&r.h);

    cfg.hier.l1d.write = WRITE_THROUGH;
    rig_init(&r, &cfg.hier);
    sweep(&r, 0x100000, 8192, 16, 1, true);
    sweep(&r, 0x300000, 8192, 32, 1, false);
    CHECK_EQ(r.c.v[CTR_L1D_MISS], 512);
    CHECK_EQ(r.c.v[CTR_L1D_WB], 0);                  /* nothing dirty to write back */
    /* every store goes to L2 (512) + fills of A (256) + fills of B (256) */
    CHECK_EQ(r.c.v[CTR_L2_ACC], 512 + 256 + 256);
    hier_free(&r.h);
}

static struct hier_config tiny_hier(bool inclusive)
{
    struct config cfg = preset("pentiumpro");
    cfg.hier.l1i = (struct cache_geom){256, 32, 2, REPL_LRU, WRITE_BACK}; /* 4 sets */
    cfg.hier.l1d = (struct cache_geom){256, 32, 2, REPL_LRU, WRITE_BACK};
    cfg.hier.l2 = (struct cache_geom){512, 32, 1, REPL_LRU, WRITE_BACK};  /* 16 sets, DM */
    cfg.hier.l2_inclusive = inclusive;
    return cfg.hier;
}

static void load_at(struct rig *r, uint64_t paddr)
{
    hier_data(&r->h, &r->c, 1, USER_BASE + paddr, paddr, 4, false);
}

static void t_inclusive(void)
{
    const uint64_t X = 0, Y = 512; /* same L1 set (0) and same L2 set (0) */
    for (int incl = 0; incl <= 1; incl++) {
        struct hier_config hc = tiny_hier(incl);
        struct rig r;
        rig_init(&r, &hc);
        load_at(&r, X);
        load_at(&r, Y);   /* L2 evicts X; L1 (2-way) keeps both unless inclusive */
        load_at(&r, X);
        CHECK_EQ(r.c.v[CTR_L1D_MISS], incl ? 3 : 2);
        CHECK_EQ(r.c.v[CTR_BACKINV], incl ? 2 : 0); /* X, then Y when X returns */
        CHECK(cache_contains(&r.h.outer[0], X >> 5) == (incl == 1));
        hier_free(&r.h);
    }
    /* Inclusion also reaches the instruction cache. */
    struct hier_config hc = tiny_hier(true);
    struct rig r;
    rig_init(&r, &hc);
    hier_fetch(&r.h, &r.c, 1, USER_BASE + X, X, 4);
    CHECK(cache_contains(&r.h.l1i, X >> 5));
    load_at(&r, Y);
    CHECK(!cache_contains(&r.h.l1i, X >> 5));
    hier_fetch(&r.h, &r.c, 1, USER_BASE + X, X, 4);
    CHECK_EQ(r.c.v[CTR_L1I_MISS], 2);
    hier_free(&r.h);
}

static void t_inclusive_dirty(void)
{
    /* A dirty L1 line dropped by inclusion leaves with the L2 victim as a write-back. */
    struct hier_config hc = tiny_hier(true);
    struct rig r;
    rig_init(&r, &hc);
    hier_data(&r.h, &r.c, 1, USER_BASE, 0, 4, true); /* X dirty in L1D */
    load_at(&r, 512);
    CHECK_EQ(r.c.v[CTR_L2_WB], 1);
    CHECK_EQ(r.c.v[CTR_L1D_WB], 0);
    hier_free(&r.h);
}

static void t_straddle(void)
{
    struct config cfg = preset("pentiumpro");
    struct rig r;
    rig_init(&r, &cfg.hier);
    hier_data(&r.h, &r.c, 1, USER_BASE + 30, 30, 4, false);  /* bytes 30..33: two lines */
    CHECK_EQ(r.c.v[CTR_L1D_ACC], 2);
    CHECK_EQ(r.c.v[CTR_DTLB_ACC], 1);
    hier_data(&r.h, &r.c, 1, USER_BASE + 4094, 4094, 4, false); /* crosses a page */
    CHECK_EQ(r.c.v[CTR_DTLB_ACC], 3);
    CHECK_EQ(r.c.v[CTR_DTLB_MISS], 2);
    hier_fetch(&r.h, &r.c, 1, USER_BASE + 62, 62, 5);         /* instruction over a line */
    CHECK_EQ(r.c.v[CTR_L1I_ACC], 2);
    CHECK_EQ(r.c.v[CTR_ITLB_ACC], 1);
    hier_free(&r.h);
}

static void t_l2_off(void)
{
    struct config cfg = preset("pentiumpro");
    char a0[] = "l2=off";
    char *argv[] = {a0};
    char err[128];
    CHECK(config_parse(&cfg, 1, argv, err, sizeof(err)) == 0);
    CHECK(!cfg.hier.l2_on);
    struct rig r;
    rig_init(&r, &cfg.hier);
    CHECK_EQ(r.h.n_outer, 0);
    sweep(&r, 0x100000, 64 * 1024, 32, 2, false);
    CHECK_EQ(r.c.v[CTR_L1D_MISS], 2 * 2048);
    CHECK_EQ(r.c.v[CTR_L2_ACC], 0);
    struct levels lv = {0, 0, 0};
    /* every L1 miss pays the memory latency; walks pay lat_walk */
    CHECK_EQ((uint64_t)counters_stall_cycles(&r.c, &cfg.pen, &lv),
             (uint64_t)(4096 * cfg.pen.lat_mem + r.c.v[CTR_WALKS] * cfg.pen.lat_walk));
    hier_free(&r.h);
}

static void t_l3(void)
{
    struct config cfg = preset("pentiumpro");
    char a0[] = "l3_size=1M", a1[] = "l3_line=32", a2[] = "l3_assoc=8";
    char *argv[] = {a0, a1, a2};
    char err[128];
    CHECK(config_parse(&cfg, 3, argv, err, sizeof(err)) == 0);
    CHECK(cfg.hier.l3_on);
    struct rig r;
    rig_init(&r, &cfg.hier);
    CHECK_EQ(r.h.n_outer, 2);
    /* 512 KiB: too big for L2, fits L3: misses L2 every pass, L3 only the first. */
    sweep(&r, 0x200000, 512 * 1024, 32, 3, false);
    CHECK_EQ(r.c.v[CTR_L2_MISS], 3 * 16384);
    CHECK_EQ(r.c.v[CTR_L3_ACC], 3 * 16384);
    CHECK_EQ(r.c.v[CTR_L3_MISS], 16384);
    hier_free(&r.h);
}

/* ---- TLBs -------------------------------------------------------------------------- */

static void t_tlb_fit(void)
{
    struct config cfg = preset("pentiumpro");
    struct rig r;
    rig_init(&r, &cfg.hier);
    for (int pass = 0; pass < 5; pass++)
        touch_pages(&r, USER_BASE, 64, 4096); /* 64 pages = DTLB entries */
    CHECK_EQ(r.c.v[CTR_DTLB_ACC], 5 * 64);
    CHECK_EQ(r.c.v[CTR_DTLB_MISS], 64);
    CHECK_EQ(r.c.v[CTR_WALKS], 64);
    CHECK_EQ(r.c.v[CTR_WALK_REFS], 64 * 4);
    hier_free(&r.h);
}

static void t_tlb_set_conflict(void)
{
    struct config cfg = preset("pentiumpro");
    struct rig r;
    /* 16 sets: pages 16 apart share a set. 4 fit the 4 ways; 5 thrash under LRU. */
    rig_init(&r, &cfg.hier);
    for (int pass = 0; pass < 3; pass++)
        touch_pages(&r, USER_BASE, 4, 16 * 4096);
    CHECK_EQ(r.c.v[CTR_DTLB_MISS], 4);
    hier_free(&r.h);
    rig_init(&r, &cfg.hier);
    for (int pass = 0; pass < 3; pass++)
        touch_pages(&r, USER_BASE, 5, 16 * 4096);
    CHECK_EQ(r.c.v[CTR_DTLB_MISS], 15);
    hier_free(&r.h);
}

static void t_stlb(void)
{
    struct config cfg = preset("modern");
    struct rig r;
    rig_init(&r, &cfg.hier);
    /* 256 pages: thrash the 64-entry DTLB, fit the 1536-entry STLB. */
    for (int pass = 0; pass < 3; pass++)
        touch_pages(&r, USER_BASE, 256, 4096);
    CHECK_EQ(r.c.v[CTR_DTLB_MISS], 3 * 256);
    CHECK_EQ(r.c.v[CTR_STLB_ACC], 3 * 256);
    CHECK_EQ(r.c.v[CTR_STLB_MISS], 256);
    CHECK_EQ(r.c.v[CTR_WALKS], 256);
    hier_free(&r.h);
}

static void t_kernel_large_pages(void)
{
    struct config cfg = preset("pentiumpro");
    struct rig r;
    rig_init(&r, &cfg.hier);
    /* 1 MiB of kernel data in one 2 MiB page: one miss; walk one level shorter. */
    for (uint64_t off = 0; off < (1 << 20); off += 4096)
        hier_data(&r.h, &r.c, 0, KTEXT + 0x200000 + off, 0x200000 + off, 8, false);
    CHECK_EQ(r.c.v[CTR_DTLB_MISS], 1);
    CHECK_EQ(r.c.v[CTR_WALK_REFS], 3);
    hier_free(&r.h);

    cfg.hier.kpage_shift = 12;
    rig_init(&r, &cfg.hier);
    for (uint64_t off = 0; off < (1 << 20); off += 4096)
        hier_data(&r.h, &r.c, 0, KTEXT + 0x200000 + off, 0x200000 + off, 8, false);
    CHECK_EQ(r.c.v[CTR_DTLB_MISS], 256);
    hier_free(&r.h);
}

static void touch_mixed(struct rig *r)
{
    touch_pages(r, USER_BASE, 10, 4096);
    for (int i = 0; i < 3; i++)
        hier_data(&r->h, &r->c, 1, KTEXT + (uint64_t)i * 0x200000, (uint64_t)i * 0x200000,
                  8, false);
}

static void t_cr3_flush(void)
{
    struct config cfg = preset("pentiumpro");
    struct rig r;
    rig_init(&r, &cfg.hier);
    touch_mixed(&r);
    CHECK_EQ(r.c.v[CTR_DTLB_MISS], 13);
    hier_cr3_write(&r.h, &r.c);
    CHECK_EQ(tlb_count_valid(&r.h.dtlb), 3);   /* only the global kernel entries stay */
    touch_mixed(&r);
    CHECK_EQ(r.c.v[CTR_DTLB_MISS], 23);        /* user pages again, kernel pages hit */
    CHECK_EQ(r.c.v[CTR_TLB_FLUSHES], 1);
    hier_free(&r.h);
}

static void t_invlpg(void)
{
    struct config cfg = preset("pentiumpro");
    struct rig r;
    rig_init(&r, &cfg.hier);
    touch_mixed(&r);
    hier_invlpg(&r.h, &r.c, USER_BASE + 3 * 4096 + 123);
    CHECK_EQ(tlb_count_valid(&r.h.dtlb), 12);
    touch_mixed(&r);
    CHECK_EQ(r.c.v[CTR_DTLB_MISS], 14);        /* exactly one page was dropped */
    hier_invlpg(&r.h, &r.c, KTEXT + 0x200000 + 5); /* global 2 MiB entry goes too */
    CHECK_EQ(tlb_count_valid(&r.h.dtlb), 12);
    hier_invlpg_unknown(&r.h, &r.c);           /* no address: all non-global go */
    CHECK_EQ(tlb_count_valid(&r.h.dtlb), 2);
    CHECK_EQ(r.c.v[CTR_INVLPG], 3);
    hier_free(&r.h);
}

static void t_tlb_asid(void)
{
    struct tlb t;
    struct tlb_geom g = {16, 4, REPL_LRU};
    CHECK(tlb_init(&t, &g, 1) == 0);
    struct tlb_page p1 = {.vpn = 0x400, .shift = 12, .asid = 1, .global = false};
    struct tlb_page p2 = p1;
    p2.asid = 2;
    tlb_fill(&t, &p1);
    CHECK(tlb_lookup(&t, &p1));
    CHECK(!tlb_lookup(&t, &p2));               /* same page, other address space */
    struct tlb_page k = {.vpn = 0x7FFFFFFFF, .shift = 21, .asid = 1, .global = true};
    tlb_fill(&t, &k);
    k.asid = 2;
    CHECK(tlb_lookup(&t, &k));                 /* global: any address space */
    struct tlb_page small = {.vpn = 0x7FFFFFFFF, .shift = 12, .asid = 1, .global = true};
    CHECK(!tlb_lookup(&t, &small));            /* page size is part of the key */
    tlb_free(&t);
}

static void t_fetch_memo(void)
{
    /* Repeat fetches take a shortcut; everything that can change the answer must
     * still be seen: CR3 writes, INVLPG, another address space, another page. */
    struct config cfg = preset("pentiumpro");
    struct rig r;
    rig_init(&r, &cfg.hier);
    for (int i = 0; i < 3; i++)
        hier_fetch(&r.h, &r.c, 1, USER_BASE + 4 * i, 0x800000 + 4 * i, 4);
    CHECK_EQ(r.c.v[CTR_ITLB_ACC], 3);
    CHECK_EQ(r.c.v[CTR_L1I_ACC], 3);
    CHECK_EQ(r.c.v[CTR_ITLB_MISS], 1);
    CHECK_EQ(r.c.v[CTR_L1I_MISS], 1);
    hier_cr3_write(&r.h, &r.c);
    hier_fetch(&r.h, &r.c, 1, USER_BASE, 0x800000, 4);
    CHECK_EQ(r.c.v[CTR_ITLB_MISS], 2);
    hier_invlpg(&r.h, &r.c, USER_BASE);
    hier_fetch(&r.h, &r.c, 1, USER_BASE, 0x800000, 4);
    CHECK_EQ(r.c.v[CTR_ITLB_MISS], 3);
    hier_fetch(&r.h, &r.c, 2, USER_BASE, 0x800000, 4);   /* other asid, same page */
    CHECK_EQ(r.c.v[CTR_ITLB_MISS], 4);
    hier_fetch(&r.h, &r.c, 2, USER_BASE + 4096, 0x801000, 4);
    CHECK_EQ(r.c.v[CTR_ITLB_MISS], 5);
    CHECK_EQ(r.c.v[CTR_L1I_MISS], 2);
    CHECK_EQ(r.c.v[CTR_L1I_ACC], 7);
    hier_free(&r.h);
}

/* ---- attribution and windows ----------------------------------------------------------- */

static struct insn_desc kinsn = {.vaddr = KTEXT + 0x1000, .paddr = 0x1000, .size = 3,
                                 .kernel = 1};
static struct insn_desc uinsn = {.vaddr = USER_BASE, .paddr = 0x900000, .size = 2};

static void run(struct sim *s, unsigned vcpu, struct insn_desc *d, unsigned n)
{
    for (unsigned i = 0; i < n; i++)
        sim_insn(s, vcpu, d);
}

static void define(struct sim *s, unsigned vcpu, unsigned asid, unsigned kind,
                   const char *name)
{
    sim_marker(s, vcpu, MK_DEF_BEGIN, asid);
    sim_marker(s, vcpu, MK_DEF_KIND, kind);
    for (const char *p = name; *p; p++)
        sim_marker(s, vcpu, MK_DEF_CHAR, (unsigned char)*p);
    sim_marker(s, vcpu, MK_DEF_END, 0);
}

static struct sim *new_sim(const char *p, unsigned nvcpus, FILE *out)
{
    struct config cfg = preset(p);
    struct sim *s = sim_create(&cfg, nvcpus, out);
    if (!s) {
        printf("sim_create failed\n");
        exit(2);
    }
    return s;
}

/* plugin.c's runs: a run start's sim_insn, then sim_fetch_run for the instructions QEMU
 * counted inline, must leave every counter as one sim_insn per instruction does, also
 * when a data access between them made an inclusive L2 drop the code's line from L1 I
 * (the fetch after it must be a miss again, not a counted repeat). */
static void t_fetch_run(void)
{
    struct sim *one = new_sim("modern", 1, NULL), *runs = new_sim("modern", 1, NULL);
    struct insn_desc code = {.vaddr = KTEXT + 0x40000, .paddr = 0x40000, .size = 4,
                             .kernel = 1};
    unsigned same = 0;
    sim_marker(one, 0, MK_WIN_BEGIN, 1);
    sim_marker(runs, 0, MK_WIN_BEGIN, 1);
    for (uint64_t k = 1; k <= 200; k++) {
        /* 64 KiB apart: the code line's L2 set (1,024 sets of 64 B), 16 ways */
        uint64_t pa = 0x40000 + k * 0x10000;
        sim_insn(one, 0, &code);
        sim_insn(runs, 0, &code);
        sim_data(one, 0, &code, KTEXT + pa, pa, 8, false);
        sim_data(runs, 0, &code, KTEXT + pa, pa, 8, false);
        run(one, 0, &code, 3);
        sim_fetch_run(runs, 0, &code, 3);
        same += !memcmp(one->v[0].kctr, runs->v[0].kctr, sizeof(struct counters));
    }
    const struct counters *a = one->v[0].kctr;
    CHECK(a->v[CTR_BACKINV] > 0 && a->v[CTR_L1I_MISS] > 1);  /* the case is exercised */
    CHECK_EQ(a->v[CTR_INSNS], 800);
    CHECK_EQ(same, 200);                     /* equal after every step, not only at the end */
    sim_destroy(one);
    sim_destroy(runs);
}

static uint64_t task_ctr(struct sim *s, unsigned kind, const char *name, int ctr)
{
    struct task_total *t = domains_find(&s->dom, (uint8_t)kind, name);
    return t ? t->c.v[ctr] : UINT64_MAX;
}

static void t_attribution(void)
{
    struct sim *s = new_sim("pentiumpro", 1, NULL);
    define(s, 0, 1, 1, "fs");
    define(s, 0, 2, 2, "sh");
    sim_marker(s, 0, MK_WIN_BEGIN, 7);
    run(s, 0, &kinsn, 100);
    sim_marker(s, 0, MK_SWITCH, 1);
    run(s, 0, &uinsn, 50);
    for (int i = 0; i < 20; i++)
        sim_data(s, 0, &uinsn, USER_BASE + 0x10000 + i * 64, 0xA00000 + i * 64, 8, false);
    sim_marker(s, 0, MK_SWITCH, 2);
    run(s, 0, &uinsn, 30);
    /* the kernel copying from user memory: a kernel event, whatever the address */
    sim_data(s, 0, &kinsn, USER_BASE + 0x20000, 0xB00000, 8, false);
    sim_marker(s, 0, MK_SWITCH, 0);
    run(s, 0, &kinsn, 10);
    sim_marker(s, 0, MK_WIN_END, 7);

    struct counters *k = s->v[0].kind_tot;
    CHECK_EQ(k[DK_KERNEL].v[CTR_INSNS], 110);
    CHECK_EQ(k[DK_SERVER].v[CTR_INSNS], 50);
    CHECK_EQ(k[DK_USER].v[CTR_INSNS], 30);
    CHECK_EQ(k[DK_UNKNOWN].v[CTR_INSNS], 0);
    CHECK_EQ(k[DK_SERVER].v[CTR_LOADS], 20);
    CHECK_EQ(k[DK_KERNEL].v[CTR_LOADS], 1);
    CHECK_EQ(k[DK_KERNEL].v[CTR_AS_SWITCHES], 3);
    CHECK_EQ(task_ctr(s, DK_SERVER, "fs", CTR_INSNS), 50);
    CHECK_EQ(task_ctr(s, DK_USER, "sh", CTR_INSNS), 30);
    CHECK_EQ(task_ctr(s, DK_SERVER, "fs", CTR_L1D_MISS), 20);
    /* every instruction fetch and its misses land in the same domain */
    CHECK_EQ(k[DK_SERVER].v[CTR_L1I_ACC], 50);
    CHECK_EQ(k[DK_USER].v[CTR_L1I_MISS], 0);   /* same line the server already fetched */
    CHECK_EQ(k[DK_SERVER].v[CTR_L1I_MISS], 1);
    sim_destroy(s);
}

static void t_undefined_asid(void)
{
    struct sim *s = new_sim("pentiumpro", 1, NULL);
    sim_marker(s, 0, MK_WIN_BEGIN, 1);
    sim_marker(s, 0, MK_SWITCH, 9);
    run(s, 0, &uinsn, 5);
    sim_marker(s, 0, MK_WIN_END, 1);
    CHECK_EQ(s->v[0].kind_tot[DK_UNKNOWN].v[CTR_INSNS], 5);
    CHECK_EQ(task_ctr(s, DK_UNKNOWN, "asid:9", CTR_INSNS), 5);
    sim_destroy(s);
}

static void t_redefine(void)
{
    struct sim *s = new_sim("pentiumpro", 1, NULL);
    define(s, 0, 1, 2, "a");
    sim_marker(s, 0, MK_WIN_BEGIN, 1);
    sim_marker(s, 0, MK_SWITCH, 1);
    run(s, 0, &uinsn, 10);
    define(s, 0, 1, 1, "b");     /* task a died, asid 1 recycled for server b */
    run(s, 0, &uinsn, 20);
    define(s, 0, 1, 1, "b");     /* an identical definition changes nothing */
    run(s, 0, &uinsn, 1);
    sim_marker(s, 0, MK_WIN_END, 1);
    CHECK_EQ(task_ctr(s, DK_USER, "a", CTR_INSNS), 10);
    CHECK_EQ(task_ctr(s, DK_SERVER, "b", CTR_INSNS), 21);
    CHECK_EQ(s->v[0].kind_tot[DK_USER].v[CTR_INSNS], 10);
    CHECK_EQ(s->v[0].kind_tot[DK_SERVER].v[CTR_INSNS], 21);
    sim_destroy(s);
}

static void t_windows(void)
{
    struct sim *s = new_sim("pentiumpro", 1, NULL);
    run(s, 0, &kinsn, 100);                   /* before any window: not counted */
    sim_marker(s, 0, MK_WIN_BEGIN, 1);
    run(s, 0, &kinsn, 5);
    sim_marker(s, 0, MK_WIN_BEGIN, 2);        /* restart */
    run(s, 0, &kinsn, 7);
    sim_marker(s, 0, MK_WIN_END, 2);
    CHECK_EQ(s->v[0].kind_tot[DK_KERNEL].v[CTR_INSNS], 7);
    CHECK_EQ(s->window, 2);
    CHECK(!s->open);
    run(s, 0, &kinsn, 9);                     /* after the end: not counted */
    CHECK_EQ(s->v[0].kind_tot[DK_KERNEL].v[CTR_INSNS], 7);
    sim_marker(s, 0, MK_WIN_END, 3);          /* end without begin */
    CHECK_EQ(s->bad_markers, 1);
    CHECK_EQ(s->windows_done, 1);
    /* The model kept running between windows: the line is warm. */
    sim_marker(s, 0, MK_WIN_BEGIN, 4);
    run(s, 0, &kinsn, 1);
    sim_marker(s, 0, MK_WIN_END, 4);
    CHECK_EQ(s->v[0].kind_tot[DK_KERNEL].v[CTR_L1I_MISS], 0);
    sim_destroy(s);
}

/* Buckets (marker 13): each event is summed in the bucket current on its vCPU; the
 * buckets of a window add up to its total exactly, also across a redefinition (which
 * folds slots) and for a bucket already current when the window begins; a bucket past
 * NBUCKET is a bad marker. */
static void t_buckets(void)
{
    struct sim *s = new_sim("pentiumpro", 1, NULL);
    define(s, 0, 1, 2, "a");
    sim_marker(s, 0, MK_SWITCH, 1);
    sim_marker(s, 0, MK_BUCKET, 20);
    run(s, 0, &kinsn, 50);                    /* before the window: not counted */
    sim_marker(s, 0, MK_WIN_BEGIN, 1);
    run(s, 0, &kinsn, 3);                     /* bucket 20, from the window's begin */
    sim_marker(s, 0, MK_BUCKET, 0);
    run(s, 0, &uinsn, 5);
    sim_marker(s, 0, MK_BUCKET, 14);
    run(s, 0, &uinsn, 10);
    sim_data(s, 0, &uinsn, USER_BASE + 0x2000, 0x902000, 8, true);
    define(s, 0, 1, 1, "b");                  /* folds asid 1's slot mid-bucket */
    run(s, 0, &uinsn, 4);
    sim_marker(s, 0, MK_BUCKET, 15);
    run(s, 0, &kinsn, 7);
    sim_marker(s, 0, MK_BUCKET, NBUCKET);     /* refused: bucket 15 stays */
    run(s, 0, &kinsn, 1);
    sim_marker(s, 0, MK_WIN_END, 1);
    const struct counters *b = s->v[0].buckets;
    CHECK_EQ(b[20].v[CTR_INSNS], 3);
    CHECK_EQ(b[0].v[CTR_INSNS], 5);
    CHECK_EQ(b[14].v[CTR_INSNS], 14);
    CHECK_EQ(b[14].v[CTR_STORES], 1);
    CHECK_EQ(b[15].v[CTR_INSNS], 8);
    CHECK_EQ(s->v[0].stretches[20], 0);       /* current before the window began */
    CHECK_EQ(s->v[0].stretches[14], 1);
    CHECK_EQ(s->v[0].stretches[0], 1);
    CHECK_EQ(s->bad_markers, 1);
    struct counters sum = {0}, total = {0};
    for (unsigned i = 0; i < NBUCKET; i++)
        counters_add(&sum, &b[i]);
    for (int k = 0; k < NDKIND; k++)
        counters_add(&total, &s->v[0].kind_tot[k]);
    for (int c = 0; c < NCTR; c++)
        CHECK_EQ(sum.v[c], total.v[c]);
    sim_marker(s, 0, MK_WIN_BEGIN, 2);        /* a new window starts its buckets at 0 */
    CHECK(counters_is_zero(&b[14]) && counters_is_zero(&b[15]));
    sim_destroy(s);
}

static void t_markers_not_counted(void)
{
    struct sim *s = new_sim("pentiumpro", 1, NULL);
    uint64_t mb = s->cfg.marker_base;
    CHECK(sim_marker_access(s, 0, mb + (5ull << 12) + 3, false)); /* window 3 begins */
    CHECK(s->open && s->window == 3);
    CHECK(sim_marker_access(s, 0, mb + 0xFFFF, false));           /* cmd 15: unknown */
    CHECK(!sim_marker_access(s, 0, mb + 0x10000, false));         /* past the region */
    CHECK(!sim_marker_access(s, 0, mb - 1, false));
    CHECK(sim_marker_access(s, 0, mb + (6ull << 12) + 3, false));
    CHECK(!s->open);
    CHECK_EQ(s->v[0].kind_tot[DK_KERNEL].v[CTR_L1D_ACC], 0);
    CHECK_EQ(s->v[0].kind_tot[DK_KERNEL].v[CTR_LOADS], 0);
    CHECK_EQ(s->markers, 3);
    CHECK_EQ(s->bad_markers, 1);
    sim_destroy(s);
}

/* PCID (marker 10): a CR3 write announced as "keep" leaves every asid's entries, one
 * announced as "flush" drops only the new asid's, and the next one without a marker
 * flushes all non-global entries again. */
static void t_cr3_pcid(void)
{
    struct sim *s = new_sim("pentiumpro", 1, NULL);
    struct insn_desc cr3 = kinsn;
    cr3.kind = INSN_MOV_CR3;
    struct tlb *dtlb = &s->v[0].h.dtlb;
    for (unsigned asid = 1; asid <= 2; asid++) {
        sim_marker(s, 0, MK_SWITCH, asid);
        for (int i = 0; i < 4; i++)
            sim_data(s, 0, &uinsn, USER_BASE + i * 4096ull, 0x800000 + i * 4096ull, 4, false);
    }
    CHECK_EQ(tlb_count_valid(dtlb), 8);             /* the same pages under two asids */
    sim_marker(s, 0, MK_SWITCH, 1);
    sim_marker(s, 0, MK_CR3_PCID, 0);
    sim_cr3_write(s, 0, &cr3);
    CHECK_EQ(tlb_count_valid(dtlb), 8);
    uint64_t misses = s->v[0].kctr->v[CTR_DTLB_MISS] + s->v[0].uctr->v[CTR_DTLB_MISS];
    sim_data(s, 0, &uinsn, USER_BASE, 0x800000, 4, false);
    CHECK_EQ(s->v[0].kctr->v[CTR_DTLB_MISS] + s->v[0].uctr->v[CTR_DTLB_MISS], misses);
    sim_marker(s, 0, MK_SWITCH, 2);
    sim_marker(s, 0, MK_CR3_PCID, 1);
    sim_cr3_write(s, 0, &cr3);
    CHECK_EQ(tlb_count_valid(dtlb), 4);             /* asid 2's entries went */
    sim_marker(s, 0, MK_SWITCH, 1);
    sim_cr3_write(s, 0, &cr3);
    CHECK_EQ(tlb_count_valid(dtlb), 0);             /* no marker: full flush */
    sim_destroy(s);
}

static void t_invlpg_hint(void)
{
    struct sim *s = new_sim("pentiumpro", 1, NULL);
    struct insn_desc inv = kinsn;
    inv.kind = INSN_INVLPG;
    for (int i = 0; i < 10; i++)
        sim_data(s, 0, &uinsn, USER_BASE + i * 4096ull, 0x800000 + i * 4096ull, 4, false);
    uint64_t va = 0x00007F1234567000ull;
    sim_data(s, 0, &uinsn, va, 0x700000, 4, false);
    CHECK_EQ(tlb_count_valid(&s->v[0].h.dtlb), 11);
    sim_marker(s, 0, MK_INVLPG_LO, (va >> 12) & 0xFFF);
    sim_marker(s, 0, MK_INVLPG_MID, (va >> 24) & 0xFFF);
    sim_marker(s, 0, MK_INVLPG_HI, (va >> 36) & 0xFFF);
    sim_invlpg(s, 0, &inv);
    CHECK_EQ(tlb_count_valid(&s->v[0].h.dtlb), 10);
    CHECK_EQ(s->invlpg_nohint, 0);
    sim_invlpg(s, 0, &inv);                   /* the hint is used up: flush */
    CHECK_EQ(tlb_count_valid(&s->v[0].h.dtlb), 0);
    CHECK_EQ(s->invlpg_nohint, 1);
    /* a kernel-half hint is sign-extended */
    sim_data(s, 0, &kinsn, KTEXT + 0x400000, 0x400000, 4, false);
    uint64_t kva = KTEXT + 0x400000;
    sim_marker(s, 0, MK_INVLPG_LO, (kva >> 12) & 0xFFF);
    sim_marker(s, 0, MK_INVLPG_MID, (kva >> 24) & 0xFFF);
    sim_marker(s, 0, MK_INVLPG_HI, (kva >> 36) & 0xFFF);
    sim_invlpg(s, 0, &inv);
    CHECK_EQ(tlb_count_valid(&s->v[0].h.dtlb), 0);
    sim_destroy(s);
}

static void t_vcpus(void)
{
    struct sim *s = new_sim("pentiumpro", 2, NULL);
    sim_marker(s, 0, MK_WIN_BEGIN, 1);
    run(s, 0, &kinsn, 10);
    run(s, 1, &kinsn, 4);                     /* private caches: vCPU 1 misses too */
    sim_marker(s, 1, MK_WIN_END, 1);
    CHECK_EQ(s->v[0].kind_tot[DK_KERNEL].v[CTR_INSNS], 10);
    CHECK_EQ(s->v[1].kind_tot[DK_KERNEL].v[CTR_INSNS], 4);
    CHECK_EQ(s->v[0].kind_tot[DK_KERNEL].v[CTR_L1I_MISS], 1);
    CHECK_EQ(s->v[1].kind_tot[DK_KERNEL].v[CTR_L1I_MISS], 1);
    sim_destroy(s);
}

/* ---- decoding, addresses, configuration, arithmetic ------------------------------------ */

static enum insn_kind classify(const char *hex)
{
    uint8_t b[16];
    size_t n = 0;
    for (const char *p = hex; p[0] && p[1] && n < sizeof(b); p += 2) {
        unsigned v;
        sscanf(p, "%2x", &v);
        b[n++] = (uint8_t)v;
    }
    return x86_classify(b, n);
}

static void t_x86dec(void)
{
    CHECK_EQ(classify("0f22d8"), INSN_MOV_CR3);     /* mov %rax,%cr3 */
    CHECK_EQ(classify("410f22d8"), INSN_MOV_CR3);   /* mov %r8,%cr3 (REX.B) */
    CHECK_EQ(classify("0f22df"), INSN_MOV_CR3);     /* mov %rdi,%cr3 */
    CHECK_EQ(classify("440f22d8"), INSN_PLAIN);     /* REX.R: cr11 */
    CHECK_EQ(classify("0f22c0"), INSN_PLAIN);       /* mov %rax,%cr0 */
    CHECK_EQ(classify("0f22e0"), INSN_PLAIN);       /* mov %rax,%cr4 */
    CHECK_EQ(classify("0f20d8"), INSN_PLAIN);       /* mov %cr3,%rax (a read) */
    CHECK_EQ(classify("0f0138"), INSN_INVLPG);      /* invlpg (%rax) */
    CHECK_EQ(classify("0f017f10"), INSN_INVLPG);    /* invlpg 0x10(%rdi) */
    CHECK_EQ(classify("410f013c24"), INSN_INVLPG);  /* invlpg (%r12) */
    CHECK_EQ(classify("0f01f8"), INSN_PLAIN);       /* swapgs */
    CHECK_EQ(classify("f0480fc107"), INSN_ATOMIC);  /* lock xadd %rax,(%rdi) */
    CHECK_EQ(classify("f0830701"), INSN_ATOMIC);    /* lock addl $1,(%rdi) */
    CHECK_EQ(classify("488707"), INSN_ATOMIC);      /* xchg %rax,(%rdi): locked implicitly */
    CHECK_EQ(classify("4887c0"), INSN_PLAIN);       /* xchg %rax,%rax: no memory */
    CHECK_EQ(classify("48ff07"), INSN_PLAIN);       /* incq (%rdi): not atomic */
    CHECK_EQ(classify("0f01f9"), INSN_PLAIN);       /* rdtscp */
    CHECK_EQ(classify("0f0110"), INSN_PLAIN);       /* lgdt (%rax): /2 */
    CHECK_EQ(classify("0f22"), INSN_PLAIN);         /* truncated */
    CHECK_EQ(classify("90"), INSN_PLAIN);
    CHECK_EQ(classify("660f22d8"), INSN_MOV_CR3);   /* with a legacy prefix */
}

static void t_iphys(void)
{
    struct iphys ip;
    const uint64_t host = 0x7f0000000000ull; /* host address of guest physical 0 */
    iphys_init(&ip, KTEXT, 0xFFFFFFFFC0000000ull);
    CHECK_EQ(iphys_resolve(&ip, 0x100000, host + 0x100000), 0x100000); /* not calibrated */
    CHECK(!ip.calibrated);
    CHECK_EQ(ip.fallbacks, 1);
    CHECK_EQ(iphys_resolve(&ip, KTEXT + 0x105000, host + 0x105000), 0x105000);
    CHECK(ip.calibrated);
    /* user code at an unrelated virtual address, in frame 0x3456000 */
    CHECK_EQ(iphys_resolve(&ip, 0x400123, host + 0x3456123), 0x3456123);
    CHECK_EQ(ip.conflicts, 0);
    /* kernel text that disagrees with the calibration is counted */
    iphys_resolve(&ip, KTEXT + 0x2000, host + 0x9000);
    CHECK_EQ(ip.conflicts, 1);
    /* no host pointer: identity fallback */
    CHECK_EQ(iphys_resolve(&ip, 0x5000, 0), 0x5000);
    /* a host pointer far from guest RAM (another block): fallback */
    CHECK_EQ(iphys_resolve(&ip, 0x6000, 0x10), 0x6000);
}

static void t_config(void)
{
    struct config c = preset("pentiumpro");
    CHECK_EQ(c.hier.l1i.size, 8192);
    CHECK_EQ(c.hier.l1i.assoc, 2);
    CHECK_EQ(c.hier.l1d.assoc, 4);
    CHECK_EQ(c.hier.l1d.line, 32);
    CHECK_EQ(c.hier.l2.size, 256 * 1024);
    CHECK_EQ(c.hier.l2.assoc, 4);
    CHECK_EQ(c.hier.itlb.entries, 32);
    CHECK_EQ(c.hier.itlb.assoc, 4);
    CHECK_EQ(c.hier.dtlb.entries, 64);
    CHECK_EQ(c.hier.dtlb.assoc, 4);
    CHECK(!c.hier.stlb_on && !c.hier.l3_on && c.hier.l2_on);
    c = preset("modern");
    CHECK_EQ(c.hier.l1i.size, 32768);
    CHECK_EQ(c.hier.l1d.assoc, 8);
    CHECK_EQ(c.hier.l2.size, 1024 * 1024);
    CHECK_EQ(c.hier.l2.assoc, 16);
    CHECK_EQ(c.hier.l2.line, 64);
    CHECK_EQ(c.hier.itlb.entries, 64);
    CHECK_EQ(c.hier.dtlb.entries, 64);
    CHECK_EQ(c.hier.stlb.entries, 1536);
    CHECK(c.hier.stlb_on);

    char err[128];
    char a0[] = "preset=modern", a1[] = "l1d_size=16k", a2[] = "repl=fifo",
         a3[] = "l2_write=through", a4[] = "lat_mem=99.5", a5[] = "out=/tmp/x",
         a6[] = "kpage=4k", a7[] = "stlb=off", a8[] = "stlb_entries=512";
    char *ok[] = {a1, a2, a0, a3, a4, a5, a6, a7, a8};
    CHECK(config_parse(&c, 9, ok, err, sizeof(err)) == 0);
    CHECK_EQ(c.hier.l1d.size, 16384);
    CHECK_EQ(c.hier.l1d.assoc, 8);             /* from the preset, wherever it appears */
    CHECK_EQ(c.hier.l2.repl, REPL_FIFO);
    CHECK_EQ(c.hier.l2.write, WRITE_THROUGH);
    CHECK(c.pen.lat_mem == 99.5);
    CHECK(strcmp(c.out, "/tmp/x") == 0);
    CHECK_EQ(c.hier.kpage_shift, 12);
    CHECK(!c.hier.stlb_on);                    /* explicit off beats implied on */

    char b0[] = "bogus=1";
    char *bad1[] = {b0};
    CHECK(config_parse(&c, 1, bad1, err, sizeof(err)) != 0);
    CHECK(strstr(err, "bogus") != NULL);
    char b1[] = "l1d_size=3000";
    char *bad2[] = {b1};
    CHECK(config_parse(&c, 1, bad2, err, sizeof(err)) != 0);
    char b2[] = "preset=vax";
    char *bad3[] = {b2};
    CHECK(config_parse(&c, 1, bad3, err, sizeof(err)) != 0);
    char b3[] = "l2_assoc=x";
    char *bad4[] = {b3};
    CHECK(config_parse(&c, 1, bad4, err, sizeof(err)) != 0);
    char b4[] = "novalue";
    char *bad5[] = {b4};
    CHECK(config_parse(&c, 1, bad5, err, sizeof(err)) != 0);
    char c0[] = "coherence=p4", c1[] = "coherence=off", c2[] = "coherence=vax";
    char *coh[] = {c0}, *coh_off[] = {c0, c1}, *coh_bad[] = {c2};
    CHECK(config_parse(&c, 1, coh, err, sizeof(err)) == 0 && !strcmp(c.coherence, "p4"));
    CHECK(config_parse(&c, 2, coh_off, err, sizeof(err)) == 0 && !c.coherence[0]);
    CHECK(config_parse(&c, 1, coh_bad, err, sizeof(err)) != 0);
    char o0[] = "coherence_order=time", o1[] = "coherence_order=recorded",
         o2[] = "coherence_order=sometimes", o3[] = "coherence_order=exclusive";
    char *ord[] = {c0, o0}, *ord_back[] = {c0, o0, o1}, *ord_bad[] = {o2}, *ord_ex[] = {o3};
    CHECK(config_parse(&c, 1, coh, err, sizeof(err)) == 0 &&
          c.coherence_order == COHER_ORDER_RECORDED);                 /* the default */
    CHECK(config_parse(&c, 2, ord, err, sizeof(err)) == 0 &&
          c.coherence_order == COHER_ORDER_TIME);
    CHECK(config_parse(&c, 3, ord_back, err, sizeof(err)) == 0 &&
          c.coherence_order == COHER_ORDER_RECORDED);
    CHECK(config_parse(&c, 1, ord_ex, err, sizeof(err)) == 0 &&
          c.coherence_order == COHER_ORDER_EXCLUSIVE);
    CHECK(config_parse(&c, 1, ord_bad, err, sizeof(err)) != 0);
    char f0[] = "socket_fetch=recorded", f1[] = "socket_fetch=clock", f2[] = "socket_fetch=on";
    char *fetch[] = {c0, o3, f0}, *fetch_back[] = {f0, f1}, *fetch_bad[] = {f2};
    CHECK(config_parse(&c, 1, coh, err, sizeof(err)) == 0 &&
          c.socket_fetch == COHER_FETCH_CLOCK);                       /* the default */
    CHECK(config_parse(&c, 3, fetch, err, sizeof(err)) == 0 &&
          c.socket_fetch == COHER_FETCH_RECORDED);
    CHECK(config_parse(&c, 2, fetch_back, err, sizeof(err)) == 0 &&
          c.socket_fetch == COHER_FETCH_CLOCK);
    CHECK(config_parse(&c, 1, fetch_bad, err, sizeof(err)) != 0);

    uint64_t v;
    CHECK(config_parse_size("32k", &v) == 0 && v == 32768);
    CHECK(config_parse_size("1M", &v) == 0 && v == 1048576);
    CHECK(config_parse_size("0x1000", &v) == 0 && v == 4096);
    CHECK(config_parse_size("12q", &v) != 0);
}

static void t_cycles(void)
{
    struct counters c = {0};
    struct penalties p = {.cpi = 1.0, .lat_l2 = 6, .lat_l3 = 20, .lat_mem = 35,
                          .lat_stlb = 9, .lat_walk = 15};
    c.v[CTR_INSNS] = 1000;
    c.v[CTR_L1I_MISS] = 10;
    c.v[CTR_L1D_MISS] = 20;
    c.v[CTR_L2_MISS] = 5;
    c.v[CTR_L3_MISS] = 2;
    c.v[CTR_ITLB_MISS] = 3;
    c.v[CTR_DTLB_MISS] = 4;
    c.v[CTR_WALKS] = 2;
    struct levels l2only = {1, 0, 0}, none = {0, 0, 0}, all = {1, 1, 1};
    /* 1000 + 30*6 + 5*(35-6) + 2*15 */
    CHECK_EQ((uint64_t)counters_cycles(&c, &p, &l2only), 1000 + 180 + 145 + 30);
    /* 1000 + 30*35 + 2*15 */
    CHECK_EQ((uint64_t)counters_cycles(&c, &p, &none), 1000 + 1050 + 30);
    /* 1000 + 30*6 + 5*(20-6) + 2*(35-20) + 7*9 + 2*15 */
    CHECK_EQ((uint64_t)counters_cycles(&c, &p, &all), 1000 + 180 + 70 + 30 + 63 + 30);
    p.cpi = 0.5;
    CHECK_EQ((uint64_t)counters_cycles(&c, &p, &none), 500 + 1050 + 30);
}

static void t_insntab(void)
{
    struct insntab t;
    insntab_init(&t);
    struct insn_desc a = {.vaddr = 1, .paddr = 2, .size = 3}, b = a;
    b.kind = INSN_MOV_CR3;
    const struct insn_desc *pa = insntab_intern(&t, &a);
    const struct insn_desc *pb = insntab_intern(&t, &b);
    CHECK(pa && pb && pa != pb);
    for (uint64_t i = 0; i < 100000; i++) {   /* force several resizes */
        struct insn_desc d = {.vaddr = i * 3, .paddr = i, .size = 4};
        insntab_intern(&t, &d);
    }
    CHECK(insntab_intern(&t, &a) == pa);      /* stable addresses, deduplicated */
    CHECK(insntab_intern(&t, &b) == pb);
    CHECK_EQ(t.count, 100002);
}

/* ---- output -------------------------------------------------------------------------------- */

static void json_scenario(FILE *out)
{
    struct sim *s = new_sim("pentiumpro", 2, out);
    define(s, 0, 3, 1, "fs\"q");               /* a name that needs escaping */
    define(s, 0, 4, 2, "init");
    sim_marker(s, 0, MK_WIN_BEGIN, 42);
    run(s, 0, &kinsn, 20);
    sim_marker(s, 0, MK_SWITCH, 3);
    run(s, 0, &uinsn, 7);
    sim_data(s, 0, &uinsn, USER_BASE + 64, 0x900040, 4, true);
    sim_marker(s, 1, MK_SWITCH, 4);
    run(s, 1, &uinsn, 3);
    sim_marker(s, 0, MK_WIN_END, 42);
    sim_marker(s, 0, MK_WIN_BEGIN, 43);        /* left open: written at finish */
    run(s, 0, &kinsn, 1);
    sim_finish(s);
    sim_destroy(s);
}

static void t_deterministic_output(void)
{
    char *buf[2];
    size_t len[2];
    for (int i = 0; i < 2; i++) {
        FILE *f = open_memstream(&buf[i], &len[i]);
        json_scenario(f);
        fclose(f);
    }
    CHECK(len[0] > 100 && len[0] == len[1] && memcmp(buf[0], buf[1], len[0]) == 0);
    free(buf[0]);
    free(buf[1]);
}

/* ---- the coherence model (coher.c) ------------------------------------------------------- */

static struct coher *coher_rig(const char *preset, unsigned ncpus)
{
    static struct coher co;
    coher_free(&co);
    if (coher_init(&co, coher_preset_find(preset), 1.0, ncpus) != 0) {
        printf("coher_init failed\n");
        exit(2);
    }
    for (unsigned i = 0; i < ncpus; i++)
        coher_model_marker(&co, i, 1);
    return &co;
}

static void t_coher_latency(void)
{
    struct coher *co = coher_rig("die", 16);
    CHECK_EQ(coher_latency(co, 0, 15), 144);
    co = coher_rig("chiplet", 16);
    CHECK_EQ(coher_latency(co, 0, 7), 60);            /* one CCX */
    CHECK_EQ(coher_latency(co, 0, 8), 285);           /* across CCXs */
    co = coher_rig("2socket", 16);
    CHECK_EQ(coher_latency(co, 1, 7), 144);
    CHECK_EQ(coher_latency(co, 7, 8), 366);
    co = coher_rig("p4", 32);
    CHECK_EQ(coher_latency(co, 0, 14), 110);          /* 15 cores a socket */
    CHECK_EQ(coher_latency(co, 0, 15), 280);          /* sockets 0 and 1: one hop */
    CHECK_EQ(coher_latency(co, 0, 31), 280);          /* 32 vCPUs: 30, 31 on socket 2 */
    CHECK_EQ(coher_latency(co, 29, 30), 460);         /* sockets 1 and 2: two hops */
    CHECK_EQ(coher_latency(co, 30, 31), 110);
    coher_access(co, 31, 0x2000, 8, true);            /* the 32nd vCPU is modelled */
    coher_access(co, 0, 0x2000, 8, false);
    CHECK_EQ(co->cpu[0].st.transfers, 1);
    co = coher_rig("p4", 64);                         /* 64: 60-63 on socket 4 (0b100) */
    CHECK_EQ(coher_latency(co, 0, 63), 280);          /* sockets 0 and 4: one hop */
    CHECK_EQ(coher_latency(co, 15, 60), 460);         /* 1 and 4: two */
    CHECK_EQ(coher_latency(co, 45, 63), 460);         /* 3 and 4: three bits, two hops at most */
    CHECK_EQ(coher_latency(co, 60, 63), 110);
    coher_access(co, 63, 0x3000, 8, false);           /* vCPUs 40 and 63 share, 0 writes: */
    coher_access(co, 40, 0x3000, 8, false);           /* both copies (bits above 31) go */
    coher_access(co, 0, 0x3000, 8, true);
    CHECK_EQ(co->cpu[0].st.invalidations, 2);
    CHECK(coher_preset_find("none") == NULL);
}

/* MESI-like states: a read of another's copy transfers it, a write invalidates the rest. */
/* A transfer from another socket counts as remote for its receiver: on 2socket (0-7,
 * 8-15) vCPU 8 takes vCPU 0's line across the socket and vCPU 9 then takes it from vCPU
 * 8 on its own socket; vCPU 9 writes it (an upgrade, no transfer) and vCPU 1's read
 * takes it back across (README, "Which vCPU pays a socket's fetches"). */
static void t_coher_remote_transfers(void)
{
    struct coher *co = coher_rig("2socket", 16);
    coher_access(co, 0, 0x4000, 8, true);
    coher_access(co, 8, 0x4000, 8, false);
    coher_access(co, 9, 0x4000, 8, false);
    coher_access(co, 9, 0x4000, 8, true);
    coher_access(co, 1, 0x4000, 8, false);
    CHECK_EQ(co->cpu[8].st.remote_transfers, 1);
    CHECK_EQ(co->cpu[9].st.transfers, 1);
    CHECK_EQ(co->cpu[9].st.remote_transfers, 0);
    CHECK_EQ(co->cpu[1].st.transfers, 1);
    CHECK_EQ(co->cpu[1].st.remote_transfers, 1);
    CHECK_EQ(co->cpu[0].st.transfers + co->cpu[0].st.remote_transfers, 0);
}

static void t_coher_directory(void)
{
    struct coher *co = coher_rig("die", 2);
    coher_access(co, 0, 0x1000, 8, false);            /* first touch: from memory */
    CHECK_EQ(co->cpu[0].st.transfers, 0);
    coher_access(co, 1, 0x1008, 8, false);            /* same line, shared copy */
    CHECK_EQ(co->cpu[1].st.transfers, 1);
    coher_access(co, 1, 0x1010, 8, true);             /* upgrade: invalidates cpu 0 */
    CHECK_EQ(co->cpu[1].st.transfers, 1);
    CHECK_EQ(co->cpu[1].st.invalidations, 1);
    coher_access(co, 1, 0x1010, 8, true);             /* modified here: a hit */
    CHECK_EQ(co->cpu[1].st.invalidations, 1);
    coher_access(co, 0, 0x1000, 8, false);            /* from the modified copy */
    CHECK_EQ(co->cpu[0].st.transfers, 1);
    coher_access(co, 0, 0x1000, 8, true);             /* and cpu 1's copy goes */
    CHECK_EQ(co->cpu[0].st.invalidations, 1);
    coher_access(co, 0, 0x103c, 8, false);            /* straddles into a new line */
    CHECK_EQ(co->cpu[0].st.transfers, 1);
    CHECK_EQ(co->used_lines, 2);
    CHECK_EQ(co->cpu[1].st.clock, 288);               /* a transfer and an invalidation */
    CHECK_EQ(co->cpu[0].st.clock, 576);               /* behind cpu 1's on the line, then two */
}

/* Private lines cost nothing; one line written by everyone serialises its transfers. */
static void t_coher_scaling(void)
{
    struct coher *co = coher_rig("die", 4);
    for (unsigned round = 0; round < 10; round++)
        for (unsigned c = 0; c < 4; c++) {
            coher_account(co, c, 10, 0, 0);
            coher_access(co, c, 0x10000 + 64 * c, 8, true);
        }
    for (unsigned c = 0; c < 4; c++)
        CHECK_EQ(co->cpu[c].st.clock, 100);
    co = coher_rig("die", 4);
    for (unsigned round = 0; round < 10; round++)
        for (unsigned c = 0; c < 4; c++)
            coher_access(co, c, 0x20000, 8, true);
    uint64_t transfers = 0;
    for (unsigned c = 0; c < 4; c++)
        transfers += co->cpu[c].st.transfers;
    CHECK_EQ(transfers, 39);                           /* all but the first write */
    CHECK_EQ(co->cpu[3].st.clock, 39 * 144);           /* one after the other */
    coher_access(co, 0, 0x30000, 8, false);            /* a second line, one transfer */
    coher_access(co, 1, 0x30000, 8, false);
    char text[4096];
    FILE *f = fmemopen(text, sizeof(text), "w");
    coher_report(f, co);
    fclose(f);
    CHECK(strstr(text, "\"hot_lines\":[{\"pa\":131072,\"transfers\":39,\"cycles\":") != NULL);
    CHECK(strstr(text, "},{\"pa\":196608,\"transfers\":1,\"cycles\":") != NULL);
    coher_window_begin(co);
    CHECK_EQ(co->used_lines, 0);
    CHECK(!co->cpu[0].active);
}

/* The report's hot pages sum their lines' transfers: three lines of one page each moved
 * once (432 cycles) are one page dearer than none of them alone, below a line moved and
 * upgraded behind it (864); the line spread counts lines by their transfers. */
static void t_coher_hot_pages(void)
{
    struct coher *co = coher_rig("die", 2);
    for (uint64_t pa = 0x40000; pa < 0x400c0; pa += 64) {
        coher_access(co, 0, pa, 8, true);
        coher_access(co, 1, pa, 8, false);            /* 144 each, one after the other */
    }
    coher_access(co, 0, 0x50000, 8, true);
    coher_access(co, 1, 0x50000, 8, false);           /* at 432: 144 */
    coher_access(co, 0, 0x50000, 8, true);            /* at 0, behind it: 576 + 144 */
    char text[4096];
    FILE *f = fmemopen(text, sizeof(text), "w");
    coher_report(f, co);
    fclose(f);
    CHECK(strstr(text, "\"hot_lines\":[{\"pa\":327680,\"transfers\":2,\"cycles\":864},"
                       "{\"pa\":262") != NULL);
    CHECK(strstr(text, "\"hot_pages\":[{\"pa\":327680,\"lines\":1,\"transfers\":2,"
                       "\"cycles\":864},{\"pa\":262144,\"lines\":3,\"transfers\":3,"
                       "\"cycles\":432}]") != NULL);
    CHECK(strstr(text, "\"line_spread\":[{\"transfers_from\":1,\"lines\":3,\"transfers\":3,"
                       "\"cycles\":432},{\"transfers_from\":2,\"lines\":1,\"transfers\":2,"
                       "\"cycles\":864},{\"transfers_from\":4,\"lines\":0,") != NULL);
}

/* The hierarchy's own stall cycles of a vCPU's kernel accesses so far (slot 0). */
static double hier_stall(const struct sim *s, unsigned vcpu)
{
    return counters_stall_cycles(&s->v[vcpu].slots[0], &s->cfg.pen, &s->lv);
}

/* A window on `n` vCPUs of the modern hierarchy (L1, L2, lat_mem 200) under `preset`. */
static struct sim *served_rig(const char *preset_name, unsigned n)
{
    struct config cfg = preset("modern");
    strcpy(cfg.coherence, preset_name);
    struct sim *s = sim_create(&cfg, n, NULL);
    CHECK(s != NULL);
    if (!s)
        return NULL;
    sim_marker(s, 0, MK_WIN_BEGIN, 3);
    for (unsigned v = 0; v < n; v++)
        sim_marker(s, v, MK_MODEL, 1);
    return s;
}

/* The plugin's path (sim_data_coher): a line that missed the private hierarchy to memory
 * but came from another vCPU's cache costs the transfer's latency (die: 144) in place of
 * memory's (200), not both; its misses are still counted. A miss with no other holder
 * costs memory, and a transfer that hits the private caches (they keep a copy the
 * directory invalidated) is not served in place of memory. */
static void t_coher_transfer_served(void)
{
    struct sim *s = served_rig("die", 2);
    if (!s)
        return;
    struct insn_desc ld = {.vaddr = KTEXT + 0x1000, .paddr = 0x1000, .size = 4, .kernel = 1};
    const struct coher_cpu_stats *a = &s->coh->cpu[0].st, *b = &s->coh->cpu[1].st;
    const uint64_t x = 0x70000;
    sim_data_coher(s, 0, &ld, KTEXT + x, x, 8, true);   /* from memory: no transfer */
    CHECK_EQ(a->miss_cycles, hier_stall(s, 0));        /* lat_mem 200 and the walk */
    CHECK_EQ(s->v[0].slots[0].v[CTR_L2_MISS], 1);
    double first = a->clock;
    sim_data_coher(s, 1, &ld, KTEXT + x, x, 8, false);  /* missed to memory, and moved */
    CHECK_EQ(b->transfers, 1);
    CHECK_EQ(b->transfer_served, 1);
    CHECK_EQ(b->memory_cycles_saved, 200);
    CHECK_EQ(b->misses, a->misses);                     /* what the hierarchy saw */
    CHECK_EQ(s->v[1].slots[0].v[CTR_L2_MISS], 1);
    CHECK_EQ(b->miss_cycles, hier_stall(s, 1) - 200);
    CHECK_EQ(b->transfer_cycles, 144);
    CHECK_EQ(b->clock, first - 200 + 144);              /* the old model: first + 144 */
    sim_data_coher(s, 0, &ld, KTEXT + x, x, 8, true);   /* an upgrade, a private hit */
    sim_data_coher(s, 1, &ld, KTEXT + x, x, 8, false);  /* moved, a private hit */
    CHECK_EQ(b->transfers, 2);
    CHECK_EQ(b->transfer_served, 1);
    CHECK_EQ(a->transfer_served + a->transfers, 0);
    sim_destroy(s);
}

/* A transfer dearer than memory (chiplet: vCPUs 0 and 8 on two dies, 285 cycles) serves
 * the access all the same: it costs the transfer, not memory. */
static void t_coher_transfer_served_dearer(void)
{
    struct sim *s = served_rig("chiplet", 9);
    if (!s)
        return;
    struct insn_desc ld = {.vaddr = KTEXT + 0x1000, .paddr = 0x1000, .size = 4, .kernel = 1};
    const uint64_t x = 0x70000;
    sim_data_coher(s, 0, &ld, KTEXT + x, x, 8, true);
    double first = s->coh->cpu[0].st.clock;
    sim_data_coher(s, 8, &ld, KTEXT + x, x, 8, false);
    const struct coher_cpu_stats *b = &s->coh->cpu[8].st;
    CHECK_EQ(b->transfer_served, 1);
    CHECK_EQ(b->transfer_cycles, 285);
    CHECK_EQ(b->clock, first - 200 + 285);
    sim_destroy(s);
}

/* One vCPU has no transfers: its modelled clock is its instructions and the hierarchy's
 * stall cycles, as without the coherence model. */
static void t_coher_one_cpu_unchanged(void)
{
    struct sim *s = served_rig("die", 1);
    if (!s)
        return;
    struct insn_desc ld = {.vaddr = KTEXT + 0x1000, .paddr = 0x1000, .size = 4, .kernel = 1};
    for (uint64_t x = 0x70000; x < 0x90000; x += 40) {
        sim_insn_coher(s, 0, &ld);
        sim_data_coher(s, 0, &ld, KTEXT + x, x, 8, (x & 64) != 0);
    }
    const struct coher_cpu_stats *a = &s->coh->cpu[0].st;
    CHECK_EQ(a->transfers + a->transfer_served, 0);
    CHECK_EQ(a->miss_cycles, hier_stall(s, 0));
    CHECK_EQ(a->clock, counters_cycles(&s->v[0].slots[0], &s->cfg.pen, &s->lv));
    sim_destroy(s);
}

/* A hand-off completes no earlier than the recorded release; the wait is not counted. */
static void t_coher_locks(void)
{
    struct coher *co = coher_rig("die", 2);
    coher_lock_marker(co, 0, 1 << 10 | 5);            /* cpu 0 acquires lock 5 */
    coher_account(co, 0, 100, 0, 0);
    coher_lock_marker(co, 1, 0 << 10 | 5);            /* cpu 1 waits: not modelled */
    coher_account(co, 1, 1000, 0, 0);
    CHECK_EQ(co->cpu[1].st.instructions, 0);
    coher_lock_marker(co, 0, 2 << 10 | 5);            /* released at 100 */
    coher_lock_marker(co, 1, 1 << 10 | 5);
    CHECK_EQ(co->cpu[1].st.clock, 100);
    CHECK_EQ(co->cpu[1].st.lock_wait_cycles, 100);
    CHECK_EQ(co->cpu[1].st.lock_waits, 1);
    CHECK_EQ(co->cpu[1].st.handoffs, 1);
    CHECK_EQ(co->cpu[0].st.lock_releases, 1);
    coher_lock_marker(co, 0, 1 << 10 | 3);            /* another lock, no wait: its own */
    CHECK_EQ(co->locks[5].acquires, 2);               /* the same figures, by lock id */
    CHECK_EQ(co->locks[5].waits, 1);
    CHECK_EQ(co->locks[5].handoffs, 1);
    CHECK_EQ(co->locks[5].wait_cycles, 100);
    CHECK_EQ(co->locks[3].acquires, 1);
    CHECK_EQ(co->locks[3].waits + co->locks[3].handoffs, 0);
    char text[4096];
    FILE *f = fmemopen(text, sizeof(text), "w");
    coher_report(f, co);
    fclose(f);
    CHECK(strstr(text, "\"locks\":[{\"id\":3,\"acquires\":1,\"waits\":0,\"handoffs\":0,"
                       "\"wait_cycles\":0},{\"id\":5,\"acquires\":2,\"waits\":1,"
                       "\"handoffs\":1,\"wait_cycles\":100}]") != NULL);
    coher_window_begin(co);                           /* a new window forgets them */
    CHECK_EQ(co->locks[5].acquires + co->locks[3].acquires, 0);
    coher_model_marker(co, 1, 0);                     /* paused: nothing counts */
    coher_access(co, 1, 0x3000, 8, true);
    CHECK_EQ(co->used_lines, 0);
}

/* Recorded order: a vCPU behind in modelled time waits for a line and a lock used later
 * in modelled time by another; time order lets it go first. */
static void t_coher_time_order(void)
{
    for (int order = COHER_ORDER_RECORDED; order <= COHER_ORDER_TIME; order++) {
        struct coher *co = coher_rig("die", 2);
        co->order = (enum coher_order)order;
        coher_access(co, 1, 0x5000, 8, false);        /* cpu 1 holds the line, clock 0 */
        coher_account(co, 0, 1000, 0, 0);
        coher_access(co, 0, 0x5000, 8, true);         /* cpu 0 takes it at 1000: 1144 */
        CHECK_EQ(co->cpu[0].st.clock, 1144);
        coher_access(co, 1, 0x5000, 8, true);         /* cpu 1, at 0, wants it back */
        CHECK_EQ(co->cpu[1].st.clock, order == COHER_ORDER_TIME ? 144 : 1144 + 144);
        struct coher *lk = coher_rig("die", 2);
        lk->order = (enum coher_order)order;
        coher_account(lk, 0, 1000, 0, 0);
        coher_lock_marker(lk, 0, 1 << 10 | 7);        /* cpu 0 holds lock 7 at 1000.. */
        coher_account(lk, 0, 500, 0, 0);
        coher_lock_marker(lk, 0, 2 << 10 | 7);        /* ..1500 */
        coher_lock_marker(lk, 1, 1 << 10 | 7);        /* cpu 1 at 0 */
        CHECK_EQ(lk->cpu[1].st.clock, order == COHER_ORDER_TIME ? 0 : 1500);
        CHECK_EQ(lk->cpu[1].st.handoffs, 1);
    }
}

/* The directory entry of the line holding pa. */
static const struct coher_line *coher_line_of(const struct coher *co, uint64_t pa)
{
    for (uint64_t i = 0; i < co->cap; i++)
        if (co->lines[i].line == (pa >> COHER_LINE_SHIFT) + 1)
            return &co->lines[i];
    printf("no line for %#llx\n", (unsigned long long)pa);
    exit(2);
}

/* Reads of a shared copy are answered in parallel, in every order: 16 vCPUs reading at
 * clock 0 a line another wrote each wait one latency (serialised, the k-th waited k); a
 * write after them waits for them and invalidates them all; a read waits for a transfer
 * for writing in flight at its clock, and so does a second read, no longer. */
static void t_coher_parallel_reads(void)
{
    for (int order = COHER_ORDER_RECORDED; order <= COHER_ORDER_EXCLUSIVE; order++) {
        struct coher *co = coher_rig("die", 17);
        CHECK(coher_set_order(co, (enum coher_order)order) == 0);
        coher_access(co, 0, 0x8000, 8, true);         /* cpu 0 owns it, from memory */
        for (unsigned c = 1; c <= 16; c++) {
            coher_access(co, c, 0x8000, 8, false);
            CHECK_EQ(co->cpu[c].st.clock, 144);
            CHECK_EQ(co->cpu[c].st.transfers, 1);
        }
        coher_access(co, 0, 0x8000, 8, true);         /* an upgrade after [0, 144] */
        CHECK_EQ(co->cpu[0].st.invalidations, 16);
        CHECK_EQ(co->cpu[0].st.clock, 288);
        coher_access(co, 1, 0x8000, 8, false);        /* at 144: behind the upgrade */
        CHECK_EQ(co->cpu[1].st.clock, 288 + 144);
        coher_account(co, 2, 856, 0, 0);
        coher_access(co, 2, 0x8000, 8, true);         /* [1000, 1144] from a sharer */
        CHECK_EQ(co->cpu[2].st.clock, 1144);
        for (unsigned c = 3; c <= 4; c++) {           /* at 1050: after it, side by side */
            coher_account(co, c, 1050 - co->cpu[c].st.clock, 0, 0);
            coher_access(co, c, 0x8000, 8, false);
            CHECK_EQ(co->cpu[c].st.clock, 1144 + 144);
        }
        if (order == COHER_ORDER_EXCLUSIVE) {         /* side-by-side reads: one span */
            CHECK_EQ(co->transfer_merges + co->transfers_forgotten, 0);
            CHECK_EQ(coher_line_of(co, 0x8000)->nspans, 5);
        }
    }
}

static struct coher *coher_exclusive_rig(unsigned ncpus)
{
    struct coher *co = coher_rig("die", ncpus);
    if (coher_set_order(co, COHER_ORDER_EXCLUSIVE) != 0) {
        printf("coher_set_order failed\n");
        exit(2);
    }
    return co;
}

/* Exclusive order, lines: a transfer takes the line's earliest gap of its latency at or
 * after the vCPU's clock: before a transfer later in modelled time if it fits there,
 * after every one it would overlap otherwise (time order would overlap them). */
static void t_coher_exclusive_lines(void)
{
    struct coher *co = coher_exclusive_rig(4);
    coher_access(co, 3, 0x5000, 8, false);            /* cpu 3 holds the line, clock 0 */
    coher_account(co, 0, 1000, 0, 0);
    coher_access(co, 0, 0x5000, 8, true);             /* [1000, 1144] */
    CHECK_EQ(co->cpu[0].st.clock, 1144);
    coher_account(co, 1, 1050, 0, 0);
    coher_access(co, 1, 0x5000, 8, true);             /* in flight at 1050: [1144, 1288] */
    CHECK_EQ(co->cpu[1].st.clock, 1288);
    coher_access(co, 3, 0x5000, 8, true);             /* at 0: the gap before, [0, 144] */
    CHECK_EQ(co->cpu[3].st.clock, 144);
    coher_account(co, 2, 900, 0, 0);
    coher_access(co, 2, 0x5000, 8, true);             /* [900, 1044] would overlap: 1288 */
    CHECK_EQ(co->cpu[2].st.clock, 1288 + 144);
    CHECK_EQ(co->cpu[2].st.transfer_cycles, 1432 - 900);
    coher_account(co, 3, 0, 0, 0);
    coher_access(co, 3, 0x5000, 8, true);             /* at 144: [144, 288] fits */
    CHECK_EQ(co->cpu[3].st.clock, 288);
    /* everyone writing one line: the transfers still queue one after the other */
    co = coher_exclusive_rig(4);
    for (unsigned round = 0; round < 10; round++)
        for (unsigned c = 0; c < 4; c++)
            coher_access(co, c, 0x20000, 8, true);
    CHECK_EQ(co->cpu[3].st.clock, 39 * 144);
    CHECK_EQ(co->transfer_merges, 0);                 /* spans behind every clock dropped */
    CHECK_EQ(co->horizon, 32 * 144);                  /* where the last room was made */
    char text[4096];
    FILE *f = fmemopen(text, sizeof(text), "w");
    coher_report(f, co);
    fclose(f);
    CHECK(strstr(text, "\"order\":\"exclusive\"") != NULL);
    CHECK(strstr(text, "\"hold_merges\":0,\"transfer_merges\":0,\"transfers_forgotten\":0,"
                       "\"horizon\":4608,"
                       "\"active_cpus\":4") != NULL);
}

/* Exclusive order, more vCPUs on one line than its span set holds (8): every vCPU writes
 * the line once at clock 0, so none of its transfers can be forgotten (all clocks stand
 * at 0), and they must still queue: the k-th done at (k + 1) latencies, the last at 16.
 * Forgetting the earliest span instead let the ninth and later fit at 0. */
static void t_coher_exclusive_crowded_line(void)
{
    struct coher *co = coher_exclusive_rig(16);
    coher_access(co, 0, 0x7000, 8, true);             /* cpu 0 owns it: no transfer */
    for (unsigned c = 1; c < 16; c++) {
        coher_access(co, c, 0x7000, 8, true);
        CHECK_EQ(co->cpu[c].st.clock, c * 144);
    }
    CHECK_EQ(co->transfer_merges, 15 - 8);            /* the ninth to the fifteenth */
    CHECK_EQ(co->transfers_forgotten, 0);
}

/* Exclusive order, a line's transfers far apart while a running vCPU lags (cpu 0 at
 * clock 0: nothing can be forgotten as harmless): a full set forgets its earliest
 * transfer rather than making the long gaps busy, and a write at clock 0 still waits
 * for nothing but its own latency. */
static void t_coher_exclusive_sparse_line(void)
{
    struct coher *co = coher_exclusive_rig(3);
    coher_access(co, 1, 0x9000, 8, true);             /* cpu 1 owns it */
    for (unsigned k = 1; k <= 9; k++) {               /* cpus 2 and 1 take turns */
        unsigned c = k % 2 ? 2 : 1;
        coher_account(co, c, k * 10000 - co->cpu[c].st.clock, 0, 0);
        coher_access(co, c, 0x9000, 8, true);
        CHECK_EQ(co->cpu[c].st.clock, k * 10000 + 144);
    }
    CHECK_EQ(co->transfer_merges, 0);
    CHECK_EQ(co->transfers_forgotten, 1);             /* the ninth */
    coher_access(co, 0, 0x9000, 8, true);             /* [0, 144]: the forgotten one's place */
    CHECK_EQ(co->cpu[0].st.clock, 144);
}

/* Exclusive order, a full line set joining a read's span and a write's: the joined span
 * is exclusive, so a later read cannot go into it (cpu 0 runs at clock 0: nothing can be
 * forgotten). Rounds k = 1..4: cpu 2 reads at 1000 k, [1000 k, +144], cpu 1 writes it
 * back at 1000 k + 200 (an upgrade); the fifth read finds eight spans and joins the
 * closest two, [1000, 1344], and the fifth write [2000, 2344]. */
static void t_coher_exclusive_read_join(void)
{
    struct coher *co = coher_exclusive_rig(3);
    coher_access(co, 1, 0x9000, 8, true);
    for (unsigned k = 1; k <= 5; k++) {
        coher_account(co, 2, k * 1000 - co->cpu[2].st.clock, 0, 0);
        coher_access(co, 2, 0x9000, 8, false);
        CHECK_EQ(co->cpu[2].st.clock, k * 1000 + 144);
        coher_account(co, 1, k * 1000 + 200 - co->cpu[1].st.clock, 0, 0);
        coher_access(co, 1, 0x9000, 8, true);
        CHECK_EQ(co->cpu[1].st.clock, k * 1000 + 344);
    }
    CHECK_EQ(co->transfer_merges, 2);
    coher_account(co, 0, 1100, 0, 0);
    coher_access(co, 0, 0x9000, 8, false);            /* at 1100: after 1344 */
    CHECK_EQ(co->cpu[0].st.clock, 1344 + 144);
}

/* Exclusive order, locks: a hold starts after any hold of another vCPU its clock falls in
 * and the hand-off (a transfer of the lock's line, 144 here); at its release it moves on
 * to the earliest gap that fits it; both moves are lock wait; holds never overlap. */
static void t_coher_exclusive_locks(void)
{
    struct coher *co = coher_exclusive_rig(3);
    coher_account(co, 0, 1000, 0, 0);
    coher_lock_marker(co, 0, 1 << 10 | 7);            /* cpu 0 holds lock 7 [1000, 1500] */
    coher_account(co, 0, 500, 0, 0);
    coher_lock_marker(co, 0, 2 << 10 | 7);
    coher_account(co, 0, 1500, 0, 0);
    coher_lock_marker(co, 0, 1 << 10 | 7);            /* and [3000, 3500]: its own, no gap */
    coher_account(co, 0, 500, 0, 0);
    coher_lock_marker(co, 0, 2 << 10 | 7);
    CHECK_EQ(co->cpu[0].st.lock_wait_cycles, 0);
    coher_lock_marker(co, 1, 1 << 10 | 7);            /* cpu 1 at 0 holds 300: before */
    CHECK_EQ(co->cpu[1].st.handoffs, 1);
    coher_account(co, 1, 300, 0, 0);
    coher_lock_marker(co, 1, 2 << 10 | 7);
    CHECK_EQ(co->cpu[1].st.clock, 300);
    CHECK_EQ(co->cpu[1].st.lock_wait_cycles, 0);
    coher_account(co, 1, 900, 0, 0);                  /* at 1200, inside cpu 0's hold: */
    coher_lock_marker(co, 1, 1 << 10 | 7);            /* from 1500 + 144 */
    CHECK_EQ(co->cpu[1].st.clock, 1644);
    coher_account(co, 1, 1000, 0, 0);
    coher_lock_marker(co, 1, 2 << 10 | 7);            /* [1644, 2644] fits before 3000 */
    CHECK_EQ(co->cpu[1].st.clock, 2644);
    CHECK_EQ(co->cpu[1].st.lock_wait_cycles, 444);
    coher_account(co, 2, 1200, 0, 0);                 /* at 1200 too: after cpu 1's hold */
    coher_lock_marker(co, 2, 0 << 10 | 7);            /* a wait: not modelled */
    coher_account(co, 2, 5000, 0, 0);
    coher_lock_marker(co, 2, 1 << 10 | 7);
    CHECK_EQ(co->cpu[2].st.clock, 2644 + 144);
    coher_account(co, 2, 2000, 0, 0);                 /* 2000 long: overlaps [3000, 3500] */
    coher_lock_marker(co, 2, 2 << 10 | 7);            /* so [3644, 5644] */
    CHECK_EQ(co->cpu[2].st.clock, 5644);
    CHECK_EQ(co->cpu[2].st.lock_wait_cycles, 1588 + 856);
    CHECK_EQ(co->cpu[2].st.lock_waits, 1);
    CHECK_EQ(co->locks[7].wait_cycles, 444 + 2444);
    CHECK_EQ(co->locks[7].handoffs, 2);
    CHECK_EQ(co->locks[7].nspans, 5);
}

/* Exclusive order on 2socket (vCPUs 0-7 and 8-15; 366 across, 144 within), vCPU 0 having
 * written line 0xa000: vCPUs `readers` (of socket 1, -1 ends the list) read it one after
 * the other in this recorded order, each at the clock given. */
static struct coher *socket_fetch_rig(enum coher_socket_fetch rule, const int *readers,
                                      const double *clocks)
{
    struct coher *co = coher_rig("2socket", 11);
    if (coher_set_order(co, COHER_ORDER_EXCLUSIVE) != 0 ||
        coher_set_socket_fetch(co, rule) != 0) {
        printf("coher_set_order failed\n");
        exit(2);
    }
    coher_access(co, 0, 0xa000, 8, true);
    for (unsigned i = 0; readers[i] >= 0; i++) {
        coher_account(co, (unsigned)readers[i], (uint64_t)clocks[i], 0, 0);
        coher_access(co, (unsigned)readers[i], 0xa000, 8, false);
    }
    return co;
}

/* socket_fetch=clock (README "Which vCPU pays a socket's fetches"): the vCPU of a socket
 * whose clock reaches a line first takes it across the socket, whatever the recorded
 * order. vCPU 8 reads at 2000 ([2000, 2366] from vCPU 0), then vCPU 9 at 1000: it would
 * have had the line from vCPU 0 by 1366 and vCPU 8 from it by 2144, before 2366, so it
 * makes the fetch, and vCPU 8 takes the line from it at 2000 (credited 222); then vCPU 10
 * at 0 does the same to vCPU 9 (done 366; vCPU 9 has it from 10 at 1000 + 144). vCPU 8 at
 * 500 after that would have it from vCPU 10 at the socket's latency: an ordinary read.
 * Recorded, the first to read pays the socket's fetch: vCPU 8 366, the others 144. */
static void t_coher_socket_fetch(void)
{
    const int readers[] = {8, 9, 10, -1};
    const double clocks[] = {2000, 1000, 0};
    struct coher *co = socket_fetch_rig(COHER_FETCH_CLOCK, readers, clocks);
    const struct coher_cpu_stats *s8 = &co->cpu[8].st, *s9 = &co->cpu[9].st,
                                 *s10 = &co->cpu[10].st;
    CHECK_EQ(s10->remote_transfers, 1);
    CHECK_EQ(s10->clock, 366);
    CHECK_EQ(s10->transfer_cycles, 366);
    CHECK_EQ(s9->remote_transfers + s8->remote_transfers, 0);
    CHECK_EQ(s9->clock, 1144);
    CHECK_EQ(s9->transfer_cycles, 144);
    CHECK_EQ(s8->clock, 2144);
    CHECK_EQ(s8->transfer_cycles, 144);
    CHECK_EQ(s8->transfers + s9->transfers + s10->transfers, 3);
    CHECK_EQ(co->fetch_swaps, 2);
    CHECK_EQ(coher_line_of(co, 0xa000)->cycles, 366 + 144 + 144);
    char text[8192];
    FILE *f = fmemopen(text, sizeof(text), "w");
    coher_report(f, co);
    fclose(f);
    CHECK(strstr(text, "\"order\":\"exclusive\",\"socket_fetch\":\"clock\"") != NULL);
    CHECK(strstr(text, "\"fetch_swaps\":2,") != NULL);

    co = socket_fetch_rig(COHER_FETCH_RECORDED, readers, clocks);
    CHECK_EQ(co->cpu[8].st.remote_transfers, 1);
    CHECK_EQ(co->cpu[8].st.clock, 2366);
    CHECK_EQ(co->cpu[9].st.clock, 1144);
    CHECK_EQ(co->cpu[10].st.clock, 144);
    CHECK_EQ(co->cpu[9].st.remote_transfers + co->cpu[10].st.remote_transfers, 0);
    CHECK_EQ(co->fetch_swaps, 0);
    f = fmemopen(text, sizeof(text), "w");
    coher_report(f, co);
    fclose(f);
    CHECK(strstr(text, "\"socket_fetch\":\"recorded\"") != NULL);
}

/* socket_fetch=clock keeps a fetch where the swap would be wrong: a mate whose own fetch
 * would end too late (vCPU 9 at 1900: the line by 2266, vCPU 8 from it by 2410, after
 * 2366); a fetcher that wrote the line since (its copy is its own: vCPU 9 at 0 takes it
 * at the socket's latency); a fetcher holding a lock (its hold began at its clock); and
 * the recorded order, where it is not applied. */
static void t_coher_socket_fetch_kept(void)
{
    const int late[] = {8, 9, -1}, one[] = {8, -1};
    const double late_clocks[] = {2000, 1900}, one_clock[] = {2000};
    struct coher *co = socket_fetch_rig(COHER_FETCH_CLOCK, late, late_clocks);
    CHECK_EQ(co->cpu[8].st.remote_transfers, 1);
    CHECK_EQ(co->cpu[9].st.clock, 1900 + 144);
    co = socket_fetch_rig(COHER_FETCH_CLOCK, one, one_clock);
    coher_access(co, 8, 0xa000, 8, true);             /* an upgrade: the line is 8's own */
    coher_access(co, 9, 0xa000, 8, false);
    CHECK_EQ(co->cpu[9].st.remote_transfers, 0);
    CHECK_EQ(co->cpu[9].st.clock, 144);
    co = socket_fetch_rig(COHER_FETCH_CLOCK, one, one_clock);
    coher_lock_marker(co, 8, 1 << 10 | 3);
    coher_access(co, 9, 0xa000, 8, false);
    CHECK_EQ(co->cpu[9].st.remote_transfers, 0);
    CHECK_EQ(co->cpu[8].st.clock, 2366);
    coher_lock_marker(co, 8, 2 << 10 | 3);
    co = coher_rig("2socket", 11);                    /* recorded order */
    coher_access(co, 0, 0xa000, 8, true);
    coher_account(co, 8, 2000, 0, 0);
    coher_access(co, 8, 0xa000, 8, false);
    coher_access(co, 9, 0xa000, 8, false);
    CHECK_EQ(co->cpu[8].st.remote_transfers, 1);
    CHECK_EQ(co->cpu[9].st.clock, 144);
}

/* cpu 0 takes lock 9 n times, [1000 i, 1000 i + 10]. */
static void hold_often(struct coher *co, unsigned n)
{
    for (unsigned i = 0; i < n; i++) {
        coher_lock_marker(co, 0, 1 << 10 | 9);
        coher_account(co, 0, 10, 0, 0);
        coher_lock_marker(co, 0, 2 << 10 | 9);
        coher_account(co, 0, 990, 0, 0);
    }
}

/* cpu 1 holds lock 9 for 5 cycles; its lock wait. */
static double hold_once(struct coher *co)
{
    coher_lock_marker(co, 1, 1 << 10 | 9);
    coher_account(co, 1, 5, 0, 0);
    coher_lock_marker(co, 1, 2 << 10 | 9);
    return co->cpu[1].st.lock_wait_cycles;
}

/* Exclusive order, bounded memory: a full set of holds first forgets those that ended
 * (by more than a hand-off) before every running vCPU's clock, and a paused vCPU resumes
 * no earlier than that horizon; then it grows, to COHER_LOCK_SPANS_MAX; then it joins the
 * two holds with the smallest gap (pessimistic). */
static void t_coher_exclusive_bounded(void)
{
    struct coher *co = coher_exclusive_rig(2);
    coher_account(co, 1, 20000, 0, 0);                /* cpu 1 runs, at 20000 */
    hold_often(co, 40);
    CHECK_EQ(co->cpu[0].st.lock_wait_cycles, 0);
    /* at the 33rd release cpu 0 was at 32010: the 20 holds that ended by 20000 - 144 went */
    CHECK_EQ(co->locks[9].nspans, 20);
    CHECK_EQ(co->horizon, 20000 - 144);
    CHECK_EQ(hold_once(co), 154);                     /* inside [20000, 20010]: + 144 */
    CHECK_EQ(co->hold_merges, 0);

    co = coher_exclusive_rig(2);                      /* cpu 1 holds lock 8 from 0 on: */
    coher_lock_marker(co, 1, 1 << 10 | 8);            /* its hold may meet any of them */
    coher_account(co, 1, 20000, 0, 0);
    hold_often(co, 40);
    CHECK_EQ(co->locks[9].nspans, 40);
    CHECK_EQ(co->horizon, 0);
    coher_lock_marker(co, 1, 2 << 10 | 8);
    CHECK_EQ(co->cpu[1].open_holds, 0);

    co = coher_exclusive_rig(2);
    coher_model_marker(co, 1, 0);                     /* cpu 1 paused at 0 */
    hold_often(co, 40);
    CHECK_EQ(co->locks[9].nspans, 8);                 /* the 33rd forgot 32 */
    CHECK_EQ(co->horizon, 32010 - 144);
    coher_model_marker(co, 1, 1);                     /* resumes at the horizon */
    CHECK_EQ(co->cpu[1].st.clock, 31866);
    CHECK_EQ(hold_once(co), 288);                     /* [32000, 32010] needs 144 before */

    co = coher_exclusive_rig(2);                      /* cpu 1 runs at 0: nothing forgotten */
    hold_often(co, COHER_LOCK_SPANS_MAX + 10);
    CHECK_EQ(co->locks[9].capspans, COHER_LOCK_SPANS_MAX);
    CHECK_EQ(co->locks[9].nspans, COHER_LOCK_SPANS_MAX);
    CHECK_EQ(co->hold_merges, 10);                    /* the first ten joined: [0, 10010] */
    CHECK_EQ(co->cpu[0].st.lock_wait_cycles, 0);
    CHECK_EQ(hold_once(co), 10154);
    CHECK_EQ(co->hold_merges, 10);                    /* then cpu 1's clock let it go */
}

/* ---- driver -------------------------------------------------------------------------------- */

struct tcase {
    const char *name;
    void (*fn)(void);
};

static const struct tcase cases[] = {
    {"small_array", t_small_array},
    {"large_array", t_large_array},
    {"lru_order", t_lru_order},
    {"random_repl", t_random_repl},
    {"write_back_vs_through", t_write_back_vs_through},
    {"inclusive", t_inclusive},
    {"inclusive_dirty", t_inclusive_dirty},
    {"straddle", t_straddle},
    {"l2_off", t_l2_off},
    {"l3", t_l3},
    {"tlb_fit", t_tlb_fit},
    {"tlb_set_conflict", t_tlb_set_conflict},
    {"stlb", t_stlb},
    {"kernel_large_pages", t_kernel_large_pages},
    {"cr3_flush", t_cr3_flush},
    {"invlpg", t_invlpg},
    {"tlb_asid", t_tlb_asid},
    {"cr3_pcid", t_cr3_pcid},
    {"fetch_memo", t_fetch_memo},
    {"fetch_run", t_fetch_run},
    {"attribution", t_attribution},
    {"undefined_asid", t_undefined_asid},
    {"redefine", t_redefine},
    {"windows", t_windows},
    {"buckets", t_buckets},
    {"markers_not_counted", t_markers_not_counted},
    {"invlpg_hint", t_invlpg_hint},
    {"vcpus", t_vcpus},
    {"x86dec", t_x86dec},
    {"iphys", t_iphys},
    {"config", t_config},
    {"cycles", t_cycles},
    {"insntab", t_insntab},
    {"deterministic_output", t_deterministic_output},
    {"coher_latency", t_coher_latency},
    {"coher_remote_transfers", t_coher_remote_transfers},
    {"coher_directory", t_coher_directory},
    {"coher_scaling", t_coher_scaling},
    {"coher_hot_pages", t_coher_hot_pages},
    {"coher_transfer_served", t_coher_transfer_served},
    {"coher_transfer_served_dearer", t_coher_transfer_served_dearer},
    {"coher_one_cpu_unchanged", t_coher_one_cpu_unchanged},
    {"coher_locks", t_coher_locks},
    {"coher_time_order", t_coher_time_order},
    {"coher_parallel_reads", t_coher_parallel_reads},
    {"coher_exclusive_lines", t_coher_exclusive_lines},
    {"coher_exclusive_crowded_line", t_coher_exclusive_crowded_line},
    {"coher_exclusive_sparse_line", t_coher_exclusive_sparse_line},
    {"coher_exclusive_read_join", t_coher_exclusive_read_join},
    {"coher_exclusive_locks", t_coher_exclusive_locks},
    {"coher_exclusive_bounded", t_coher_exclusive_bounded},
    {"coher_socket_fetch", t_coher_socket_fetch},
    {"coher_socket_fetch_kept", t_coher_socket_fetch_kept},
};

#define NCASES (sizeof(cases) / sizeof(cases[0]))

static int run_case(const struct tcase *t)
{
    int before = failures;
    t->fn();
    printf("%s %s\n", failures == before ? "ok" : "FAIL", t->name);
    return failures == before;
}

int main(int argc, char **argv)
{
    if (argc == 2 && !strcmp(argv[1], "--list")) {
        for (size_t i = 0; i < NCASES; i++)
            printf("%s\n", cases[i].name);
        return 0;
    }
    if (argc == 2 && !strcmp(argv[1], "--json")) {
        json_scenario(stdout);
        return 0;
    }
    int bad = 0;
    for (size_t i = 0; i < NCASES; i++) {
        bool wanted = argc == 1;
        for (int a = 1; a < argc; a++)
            wanted |= !strcmp(argv[a], cases[i].name);
        if (wanted && !run_case(&cases[i]))
            bad = 1;
    }
    for (int a = 1; a < argc; a++) {
        bool known = false;
        for (size_t i = 0; i < NCASES; i++)
            known |= !strcmp(argv[a], cases[i].name);
        if (!known) {
            printf("unknown case %s\n", argv[a]);
            bad = 1;
        }
    }
    return bad;
}
