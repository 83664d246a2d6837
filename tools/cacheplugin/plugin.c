/*
 * QEMU glue: turns TCG plugin callbacks into calls on the model. One source for API v1
 * (QEMU 7.2) and v3 (QEMU 9.0 and later); qemu_plugin_api.h says what differs, and the
 * places that differ here are marked "API version".
 *
 * At translation time each instruction gets an interned descriptor (virtual and
 * physical address, size, kernel half or not, and whether it writes CR3 or is INVLPG)
 * and a memory callback. Nothing here allocates per executed instruction or per access.
 *
 * Fetches: a translation block is cut into runs, consecutive instructions on one L1 I
 * line and one 4 KiB page (none crossing either, none a CR3 write or INVLPG). The first
 * instruction of a run gets an exec callback, which feeds the model its fetch. When
 * sim_repeats_exact() holds, every later instruction of the run only bumps `repeats`
 * inline, with no call: its fetch is almost always a repeat of the last fetch, a hit
 * that changes no state and only needs counting. Every callback first hands the
 * instructions counted since the last one to the model (settle(), sim_fetch_run), which
 * feeds them exactly as it would have one by one. Counted before each instruction, as a
 * callback would be, an instruction that faults mid-block is counted exactly as before.
 * Otherwise every instruction gets its exec callback.
 */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "config.h"
#include "insntab.h"
#include "qemu_plugin_api.h"
#include "sim.h"
#include "x86dec.h"

QEMU_PLUGIN_EXPORT int qemu_plugin_version = QEMU_PLUGIN_VERSION;

static struct sim *sim;
static FILE *out;
static struct insntab descs;
static unsigned n_vcpus;
/* Run repeats (see the top): counted inline by QEMU, settled at the next callback. */
static bool use_runs;
static uint64_t settled;
static const struct insn_desc *run_desc;   /* first instruction of the run they belong to */
/* Translation runs on several threads under MTTCG; descriptors and iphys are shared. */
static pthread_mutex_t xlate_lock = PTHREAD_MUTEX_INITIALIZER;

/* API version: where QEMU counts run repeats inline, and how many it has counted. v1 adds
 * to one word; from v2 the word is vCPU 0's entry of a scoreboard (runs are used with one
 * vCPU only), read through QEMU because the scoreboard may move when it grows. */
#if QEMU_PLUGIN_VERSION == 1
static uint64_t repeats;

static void repeats_init(void)
{
}

static void count_repeat_inline(struct qemu_plugin_insn *insn)
{
    qemu_plugin_register_vcpu_insn_exec_inline(insn, QEMU_PLUGIN_INLINE_ADD_U64, &repeats, 1);
}

static inline uint64_t repeats_counted(void)
{
    return repeats;
}
#else
static qemu_plugin_u64 repeats;

static void repeats_init(void)
{
    repeats = (qemu_plugin_u64){qemu_plugin_scoreboard_new(sizeof(uint64_t)), 0};
}

static void count_repeat_inline(struct qemu_plugin_insn *insn)
{
    qemu_plugin_register_vcpu_insn_exec_inline_per_vcpu(insn, QEMU_PLUGIN_INLINE_ADD_U64,
                                                        repeats, 1);
}

static inline uint64_t repeats_counted(void)
{
    return qemu_plugin_u64_get(repeats, 0);
}
#endif

/*
 * Which CPU runs a block. Every callback names a vCPU by QEMU's index. QEMU 7.2 (API v1)
 * passes the vCPU running the code. QEMU 10 (API v3 here) makes the index a constant of
 * the vCPU that TRANSLATED the block whenever TCG is not parallel, which includes -icount,
 * where every vCPU runs on one thread and they share translations (docs/smp.md, "Which
 * QEMU"). So from API v2, given percpu= and percpu_size= (the address of the kernel's
 * per-CPU array, ondol's cpus[], and the size of one entry), a callback at the start of
 * every block reads the running vCPU's GS base: ondol's kernel runs with GS base =
 * &cpus[id] and user code with kernel GS base = &cpus[id] (swapgs at every crossing), so
 * one of the two names the CPU. running[] maps the callbacks' index to it; the block's
 * later callbacks run on the same host thread with the same index and read it there.
 * Under MTTCG the index is already right and each thread writes only its own entry.
 * Before the kernel set its GS base (early boot, an AP's first steps) QEMU's index stays.
 * Cost: one register read per block, a second one in the few blocks that swapgs.
 */
static unsigned *running;       /* [QEMU's index] -> the CPU running its block; identity */
static uint64_t percpu, percpu_size;
#if QEMU_PLUGIN_VERSION > 1
static struct qemu_plugin_register *reg_gs, *reg_kgs;
static GByteArray **reg_buf;    /* one per QEMU index: the host thread using it */

/* At each vCPU's start (in its context, as qemu_plugin_get_registers needs): the GS base
 * registers' handles (the same for every vCPU) and this index's read buffer. */
static void on_vcpu_init(qemu_plugin_id_t id, unsigned int vcpu)
{
    (void)id;
    if (vcpu >= n_vcpus)
        return;
    pthread_mutex_lock(&xlate_lock);
    if (!reg_gs) {
        GArray *regs = qemu_plugin_get_registers();
        const qemu_plugin_reg_descriptor *r = (const void *)regs->data;
        for (unsigned i = 0; i < regs->len; i++) {
            if (!strcmp(r[i].name, "gs_base"))
                reg_gs = r[i].handle;
            else if (!strcmp(r[i].name, "k_gs_base"))
                reg_kgs = r[i].handle;
        }
        g_array_free(regs, 1);
        if (!reg_gs || !reg_kgs)
            fputs("cachesim: this QEMU shows no gs_base/k_gs_base register: callbacks keep "
                  "QEMU's vCPU index\n", stderr);
    }
    reg_buf[vcpu] = g_byte_array_new();
    pthread_mutex_unlock(&xlate_lock);
}

/* The CPU whose per-CPU entry the base register `reg` holds, or -1. */
static int cpu_by_base(unsigned vcpu, struct qemu_plugin_register *reg)
{
    GByteArray *buf = reg_buf[vcpu];
    uint64_t base;
    buf->len = 0;       /* the read appends */
    if (qemu_plugin_read_register(reg, buf) != (int)sizeof(base))
        return -1;
    memcpy(&base, buf->data, sizeof(base));
    uint64_t off = base - percpu;   /* below percpu: wraps to a huge offset */
    uint64_t cpu = off / percpu_size;
    return off % percpu_size == 0 && cpu < n_vcpus ? (int)cpu : -1;
}

/* A block starts: udata is non-NULL for user code, whose GS base is the program's. */
static void on_block(unsigned int vcpu, void *udata)
{
    if (vcpu >= n_vcpus || !reg_gs || !reg_kgs || !reg_buf[vcpu])
        return;
    struct qemu_plugin_register *first = udata ? reg_kgs : reg_gs;
    int cpu = cpu_by_base(vcpu, first);
    if (cpu < 0)
        cpu = cpu_by_base(vcpu, first == reg_gs ? reg_kgs : reg_gs);
    running[vcpu] = cpu < 0 ? vcpu : (unsigned)cpu;
}

static bool learn_running_init(qemu_plugin_id_t id)
{
    reg_buf = calloc(n_vcpus, sizeof(*reg_buf));
    if (!reg_buf)
        return false;
    qemu_plugin_register_vcpu_init_cb(id, on_vcpu_init);
    return true;
}

static void learn_running(struct qemu_plugin_tb *tb, bool user)
{
    qemu_plugin_register_vcpu_tb_exec_cb(tb, on_block, QEMU_PLUGIN_CB_R_REGS,
                                         user ? (void *)1 : NULL);
}
#else
static bool learn_running_init(qemu_plugin_id_t id)
{
    (void)id;
    return true;
}

static void learn_running(struct qemu_plugin_tb *tb, bool user)
{
    (void)tb;
    (void)user;
}
#endif

/* The CPU a callback's vCPU index stands for (itself unless learnt above). */
static inline unsigned cpu_of(unsigned int vcpu)
{
    return vcpu < n_vcpus ? running[vcpu] : vcpu;
}

/* API version: the instruction's first bytes into buf (x86: at most 15), how many. */
static size_t insn_bytes(const struct qemu_plugin_insn *insn, uint8_t buf[16])
{
#if QEMU_PLUGIN_VERSION == 1
    size_t n = qemu_plugin_insn_size(insn);
    n = n < 16 ? n : 16;
    memcpy(buf, qemu_plugin_insn_data(insn), n);
    return n;
#else
    return qemu_plugin_insn_data(insn, buf, 16);
#endif
}

/* ---- execution-time callbacks ---------------------------------------------------- */

/* Hands the inline-counted instructions to the model; first thing in every callback.
 * Those counted since the last callback ran one after the other with no data access,
 * marker or CR3 write in between (each of those is a callback), all in the last run
 * started, so the model sees exactly the fetches it would have seen one by one. There is
 * one vCPU whenever they are counted. */
static inline void settle(void)
{
    if (!use_runs)
        return;
    uint64_t counted = repeats_counted();
    if (counted != settled) {
        sim_fetch_run(sim, 0, run_desc, counted - settled);
        settled = counted;
    }
}

/* The first instruction of a run (or any instruction, without runs). */
static void on_insn(unsigned int vcpu, void *udata)
{
    const struct insn_desc *d = udata;
    vcpu = cpu_of(vcpu);
    if (vcpu < n_vcpus) {
        settle();
        run_desc = d;
        sim_insn(sim, vcpu, d);
    }
}

/* With the coherence model on (coherence=PRESET), instructions and accesses go through
 * the _coher entry points; the callbacks without it stay exactly as they were. */
static bool coherence;

static void on_insn_coher(unsigned int vcpu, void *udata)
{
    vcpu = cpu_of(vcpu);
    if (vcpu < n_vcpus)
        sim_insn_coher(sim, vcpu, udata);
}

static void any_insn(unsigned int vcpu, void *udata)
{
    if (coherence)
        sim_insn_coher(sim, vcpu, udata);
    else
        sim_insn(sim, vcpu, udata);
}

static void on_mov_cr3(unsigned int vcpu, void *udata)
{
    vcpu = cpu_of(vcpu);
    if (vcpu < n_vcpus) {
        settle();
        any_insn(vcpu, udata);
        sim_cr3_write(sim, vcpu, udata);
    }
}

static void on_invlpg(unsigned int vcpu, void *udata)
{
    vcpu = cpu_of(vcpu);
    if (vcpu < n_vcpus) {
        settle();
        any_insn(vcpu, udata);
        sim_invlpg(sim, vcpu, udata);
    }
}

/*
 * Data physical addresses. qemu_plugin_hwaddr_phys_addr() searches the RAM blocks for
 * the access's host address on every call (a tenth of a run's time). Where RAM sits in
 * the host never changes while QEMU runs, so the plugin remembers host page -> guest-
 * physical page in a direct-mapped table. The 7.2 API does not hand out the host
 * address: it is the pointer after the two bools that start struct qemu_plugin_hwaddr
 * (QEMU 7.2, include/qemu/plugin-memory.h), a fact of that version, not an API promise.
 * So the first PHYS_CHECKS lookups also ask QEMU and compare, and any disagreement
 * (including in the offset within the page) switches the table off for good. One vCPU
 * only (under MTTCG several threads would write the table), and API v1 only: later QEMUs
 * keep the physical address itself in the handle, which the API call simply reads.
 */
#define PHYS_SLOTS 4096
#define PHYS_CHECKS 65536
static struct phys_slot {
    uint64_t hpage;     /* host page number + 1; 0: empty */
    uint64_t pbase;     /* guest-physical address of that page */
} phys_tab[PHYS_SLOTS];
static uint64_t phys_checks = PHYS_CHECKS;
static bool phys_tab_on;

static inline uint64_t data_phys(const struct qemu_plugin_hwaddr *hw)
{
    if (!phys_tab_on)
        return qemu_plugin_hwaddr_phys_addr(hw);
    uint64_t host = (uint64_t)(uintptr_t)*(void *const *)((const char *)hw + 8);
    struct phys_slot *e = &phys_tab[(host >> 12) & (PHYS_SLOTS - 1)];
    bool known = e->hpage == (host >> 12) + 1;
    if (known && !phys_checks)
        return e->pbase | (host & 0xFFF);
    uint64_t phys = qemu_plugin_hwaddr_phys_addr(hw);
    if (phys_checks) {
        phys_checks--;
        if ((phys & 0xFFF) != (host & 0xFFF) || (known && (e->pbase | (host & 0xFFF)) != phys))
            phys_tab_on = false;
    }
    e->hpage = (host >> 12) + 1;
    e->pbase = phys & ~0xFFFull;
    return phys;
}

/*
 * The cached (not device) data access behind a memory callback, or false when the access is
 * a marker, a device (MMIO/port-mapped: it bypasses the caches) or from an unknown vCPU.
 * Inlined into both callbacks, so the model-off path costs what it did.
 */
/* What QEMU's answers for one meminfo value say: whether it stores, and the size. The
 * values are few, so each is asked once (through the API) and remembered; a value
 * beyond the table is asked every time. 0: not asked yet. */
#define INFO_SLOTS (1u << 18)
static uint8_t info_tab[INFO_SLOTS];    /* 1 | store << 1 | size shift << 2 */

static inline unsigned decode_info(qemu_plugin_meminfo_t info)
{
    if (info < INFO_SLOTS && info_tab[info])
        return info_tab[info];
    unsigned d = 1u | (unsigned)qemu_plugin_mem_is_store(info) << 1 |
                 qemu_plugin_mem_size_shift(info) << 2;
    if (info < INFO_SLOTS)
        info_tab[info] = (uint8_t)d;
    return d;
}

static inline bool cached_access(unsigned int vcpu, qemu_plugin_meminfo_t info,
                                 uint64_t vaddr, uint64_t *phys, unsigned *size,
                                 bool *store)
{
    if (vcpu >= n_vcpus)
        return false;
    settle();
    unsigned d = decode_info(info);
    *store = d & 2;
    if (sim_marker_access(sim, vcpu, vaddr, *store))
        return false;
    struct qemu_plugin_hwaddr *hw = qemu_plugin_get_hwaddr(info, vaddr);
    if (!hw || qemu_plugin_hwaddr_is_io(hw))
        return false;
    *phys = data_phys(hw);
    *size = 1u << (d >> 2);
    return true;
}

static void on_mem(unsigned int vcpu, qemu_plugin_meminfo_t info, uint64_t vaddr,
                   void *udata)
{
    vcpu = cpu_of(vcpu);
    uint64_t phys;
    unsigned size;
    bool store;
    if (cached_access(vcpu, info, vaddr, &phys, &size, &store))
        sim_data(sim, vcpu, udata, vaddr, phys, size, store);
}

static void on_mem_coher(unsigned int vcpu, qemu_plugin_meminfo_t info, uint64_t vaddr,
                         void *udata)
{
    vcpu = cpu_of(vcpu);
    uint64_t phys;
    unsigned size;
    bool store;
    if (cached_access(vcpu, info, vaddr, &phys, &size, &store))
        sim_data_coher(sim, vcpu, udata, vaddr, phys, size, store);
}

/* ---- translation ------------------------------------------------------------------- */

static const struct insn_desc *describe(const struct qemu_plugin_insn *insn)
{
    struct insn_desc d = {0};
    size_t size = qemu_plugin_insn_size(insn);

    d.vaddr = qemu_plugin_insn_vaddr(insn);
    d.size = (uint8_t)(size ? size : 1);
    d.kernel = d.vaddr >= KERNEL_HALF_START;
    uint8_t bytes[16];
    d.kind = (uint8_t)x86_classify(bytes, insn_bytes(insn, bytes));
    uint64_t haddr = (uint64_t)(uintptr_t)qemu_plugin_insn_haddr(insn);
    d.paddr = iphys_resolve(&sim->ip, d.vaddr, haddr);
    return insntab_intern(&descs, &d);
}

static void instrument(struct qemu_plugin_insn *insn, const struct insn_desc *d)
{
    qemu_plugin_vcpu_udata_cb_t cb = coherence ? on_insn_coher : on_insn;
    if (d->kind == INSN_MOV_CR3)
        cb = on_mov_cr3;
    else if (d->kind == INSN_INVLPG)
        cb = on_invlpg;
    void *ud = (void *)d;
    qemu_plugin_register_vcpu_insn_exec_cb(insn, cb, QEMU_PLUGIN_CB_NO_REGS, ud);
}

static void instrument_mem(struct qemu_plugin_insn *insn, const struct insn_desc *d)
{
    qemu_plugin_register_vcpu_mem_cb(insn, coherence ? on_mem_coher : on_mem,
                                     QEMU_PLUGIN_CB_NO_REGS, QEMU_PLUGIN_MEM_RW, (void *)d);
}

/* Where a run may continue: the L1 I line and 4 KiB page of an instruction that lies in
 * one of each and changes no TLB; line = UINT64_MAX when it must stand alone. */
struct run_key {
    uint64_t line, page;
};

static struct run_key run_key_of(const struct insn_desc *d)
{
    unsigned shift = sim->v[0].h.l1i.line_shift;
    uint64_t line = d->paddr >> shift, page = d->vaddr >> 12;
    bool simple = ((d->paddr + d->size - 1) >> shift) == line &&
                  ((d->vaddr + d->size - 1) >> 12) == page &&
                  d->kind != INSN_MOV_CR3 && d->kind != INSN_INVLPG;
    return (struct run_key){simple ? line : UINT64_MAX, page};
}

static void on_tb_translate(qemu_plugin_id_t id, struct qemu_plugin_tb *tb)
{
    (void)id;
    size_t n = qemu_plugin_tb_n_insns(tb);
    struct run_key run = {UINT64_MAX, 0};
    pthread_mutex_lock(&xlate_lock);
    if (percpu && n)
        learn_running(tb, qemu_plugin_insn_vaddr(qemu_plugin_tb_get_insn(tb, 0)) <
                              KERNEL_HALF_START);
    for (size_t i = 0; i < n; i++) {
        struct qemu_plugin_insn *insn = qemu_plugin_tb_get_insn(tb, i);
        const struct insn_desc *d = describe(insn);
        if (!d) {
            run.line = UINT64_MAX;
            continue;
        }
        struct run_key k = run_key_of(d);
        if (use_runs && k.line != UINT64_MAX && k.line == run.line && k.page == run.page) {
            count_repeat_inline(insn);
        } else {
            instrument(insn, d);
            run = k;
        }
        instrument_mem(insn, d);
    }
    pthread_mutex_unlock(&xlate_lock);
}

/* ---- install / exit ----------------------------------------------------------------- */

static void at_exit(qemu_plugin_id_t id, void *udata)
{
    (void)id;
    (void)udata;
    settle();
    sim_finish(sim);
    if (out && out != stderr)
        fclose(out);
    out = NULL;
}

static void complain(const char *msg)
{
    char line[640];
    snprintf(line, sizeof(line), "cachesim: %s\n", msg);
    qemu_plugin_outs(line);
    fputs(line, stderr); /* qemu_plugin_outs needs -d plugin to be visible */
}

static int open_output(const struct config *cfg)
{
    if (!cfg->out[0]) {
        out = stderr;
        return 0;
    }
    out = fopen(cfg->out, "a");
    if (!out) {
        char msg[600];
        snprintf(msg, sizeof(msg), "cannot open out=%s: %s", cfg->out, strerror(errno));
        complain(msg);
        return -1;
    }
    return 0;
}

QEMU_PLUGIN_EXPORT int qemu_plugin_install(qemu_plugin_id_t id, const qemu_info_t *info,
                                           int argc, char **argv)
{
    struct config cfg;
    char err[256];

    if (!info->system_emulation || strcmp(info->target_name, "x86_64") != 0) {
        complain("needs qemu-system-x86_64 (system emulation)");
        return -1;
    }
    if (config_parse(&cfg, argc, argv, err, sizeof(err)) != 0) {
        complain(err);
        return -1;
    }
    /* API version: from API 2, under -icount, callbacks name the vCPU that translated a
     * block; the coherence model's per-vCPU replay needs the running one, learnt from the
     * GS base ("Which CPU runs a block", above). */
    if (QEMU_PLUGIN_VERSION > 1 && cfg.coherence[0] && info->system.max_vcpus > 1 &&
        !cfg.percpu) {
        complain("coherence= on several vCPUs needs percpu= and percpu_size= with this QEMU "
                 "(plugin API >= 2): it reports the vCPU that translated a block, not the "
                 "one running it");
        return -1;
    }
    if (open_output(&cfg) != 0)
        return -1;
    n_vcpus = info->system.max_vcpus > 0 ? (unsigned)info->system.max_vcpus : 1;
    coherence = cfg.coherence[0] != 0;
    sim = sim_create(&cfg, n_vcpus, out);
    running = calloc(n_vcpus, sizeof(*running));
    if (!sim || !running) {
        complain("out of memory");
        return -1;
    }
    for (unsigned i = 0; i < n_vcpus; i++)
        running[i] = i;
    /* API 1 passes the running vCPU already, and one vCPU needs no learning: percpu= is
     * accepted and unused there. */
    percpu = QEMU_PLUGIN_VERSION > 1 && n_vcpus > 1 ? cfg.percpu : 0;
    percpu_size = cfg.percpu_size;
    if (percpu && !learn_running_init(id)) {
        complain("out of memory");
        return -1;
    }
    use_runs = sim_repeats_exact(sim);
    if (use_runs)
        repeats_init();
    phys_tab_on = n_vcpus == 1 && QEMU_PLUGIN_VERSION == 1;
    insntab_init(&descs);
    qemu_plugin_register_vcpu_tb_trans_cb(id, on_tb_translate);
    qemu_plugin_register_atexit_cb(id, at_exit, NULL);
    return 0;
}
