/* The coherence model: directory, modelled clocks, lock hand-offs (coher.h). */
#include "coher.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#define DIR_CAP (1u << 20)          /* lines; cleared (and counted) when 3/4 full */

/* Latencies in cycles; the README gives each source and the clock assumed. */
static const struct coher_preset presets[] = {
    {"die", 64, 1, 144, 144, 144, 144,
     "one monolithic Xeon die: core-to-core 44-51 ns (nviennot/core-to-core-latency), 48 ns at 3 GHz"},
    {"chiplet", 8, 8, 60, 285, 590, 590,
     "AMD Zen 3: inside a CCX 16-23 ns, across CCXs 84-107 ns, across two sockets 197 ns "
     "(nviennot/core-to-core-latency), at 3 GHz"},
    {"2socket", 8, 1, 144, 144, 366, 366,
     "two-socket Xeon, 8 cores a socket: same die 44-51 ns, across sockets 108-136 ns "
     "(nviennot/core-to-core-latency), at 3 GHz"},
    {"p4", 15, 1, 110, 110, 280, 460,
     "P4's 8-socket, 120-core Xeon, 15 cores a socket: same socket 48 ns, one hop 122 ns "
     "(two-socket Xeon figures), two hops 200 ns (UNVERIFIED estimate), at 2.3 GHz (assumed)"},
};

const struct coher_preset *coher_preset_find(const char *name)
{
    for (size_t i = 0; i < sizeof(presets) / sizeof(presets[0]); i++)
        if (!strcmp(presets[i].name, name))
            return &presets[i];
    return NULL;
}

int coher_init(struct coher *co, const struct coher_preset *p, double cpi, unsigned ncpus)
{
    memset(co, 0, sizeof(*co));
    co->preset = *p;
    co->cpi = cpi;
    co->ncpus = ncpus < COHER_MAX_CPUS ? ncpus : COHER_MAX_CPUS;
    co->cap = DIR_CAP;
    co->lines = calloc(co->cap, sizeof(*co->lines));
    if (!co->lines)
        return -1;
    coher_window_begin(co);
    return 0;
}

void coher_free(struct coher *co)
{
    free(co->lines);
    co->lines = NULL;
}

double coher_latency(const struct coher *co, unsigned from, unsigned to)
{
    const struct coher_preset *p = &co->preset;
    unsigned die_a = from / p->cores_per_die, die_b = to / p->cores_per_die;
    if (die_a == die_b)
        return p->lat_die;
    unsigned sock_a = die_a / p->dies_per_socket, sock_b = die_b / p->dies_per_socket;
    if (sock_a == sock_b)
        return p->lat_chiplet;
    return __builtin_popcount(sock_a ^ sock_b) == 1 ? p->lat_socket : p->lat_socket2;
}

static void clear_directory(struct coher *co)
{
    memset(co->lines, 0, co->cap * sizeof(*co->lines));
    co->used_lines = 0;
}

void coher_window_begin(struct coher *co)
{
    memset(co->cpu, 0, sizeof(co->cpu));
    for (unsigned i = 0; i < COHER_LOCKS; i++)
        co->locks[i] = (struct coher_lock){.last_holder = -1};
    clear_directory(co);
}

void coher_account(struct coher *co, unsigned cpu, uint64_t insns, uint64_t misses, double stall)
{
    struct coher_cpu *c = &co->cpu[cpu];
    if (cpu >= co->ncpus || !c->active)
        return;
    c->st.instructions += insns;
    c->st.misses += misses;
    c->st.miss_cycles += stall;
    c->st.clock += (double)insns * co->cpi + stall;
}

/* ---- the directory ------------------------------------------------------------------ */

static struct coher_line *find_line(struct coher *co, uint64_t line)
{
    if (co->used_lines * 4 >= co->cap * 3) {
        clear_directory(co);    /* a bounded table; every state is forgotten at once */
        co->resets++;
    }
    uint64_t key = line + 1, mask = co->cap - 1;
    for (uint64_t i = (key * 0x9E3779B97F4A7C15ull) >> 44;; i = (i + 1) & mask) {
        struct coher_line *e = &co->lines[i & mask];
        if (e->line == key)
            return e;
        if (!e->line) {
            *e = (struct coher_line){.line = key, .owner = -1};
            co->used_lines++;
            return e;
        }
    }
}

/* The holder a copy comes from: the owner, else the sharer nearest to `to`. */
static int nearest_holder(const struct coher *co, const struct coher_line *e, unsigned to)
{
    if (e->owner >= 0)
        return e->owner;
    int best = -1;
    for (unsigned i = 0; i < co->ncpus; i++)
        if (((e->sharers >> i) & 1) && i != to &&
            (best < 0 || coher_latency(co, i, to) < coher_latency(co, (unsigned)best, to)))
            best = (int)i;
    return best;
}

/* The farthest other holder: an invalidation completes when the last one has answered. */
static double invalidation_latency(const struct coher *co, uint32_t others, unsigned to)
{
    double worst = 0;
    for (unsigned i = 0; i < co->ncpus; i++)
        if (((others >> i) & 1) && coher_latency(co, i, to) > worst)
            worst = coher_latency(co, i, to);
    return worst;
}

/* The line is busy until its previous transfer finished; this one then takes `lat`. In
 * time order a transfer that started after this vCPU's clock does not hold it up. */
static void pay(const struct coher *co, struct coher_cpu *c, struct coher_line *e, double lat)
{
    bool later = co->order == COHER_ORDER_TIME && e->start > c->st.clock;
    double start = later || c->st.clock > e->ready ? c->st.clock : e->ready;
    double done = start + lat;
    if (start > e->start)
        e->start = start;
    c->st.transfer_cycles += done - c->st.clock;
    e->cycles += done - c->st.clock;
    e->transfers++;
    c->st.clock = done;
    if (done > e->ready)
        e->ready = done;
}

static void load_line(struct coher *co, unsigned cpu, struct coher_line *e)
{
    uint32_t bit = 1u << cpu;
    if (e->sharers & bit)
        return;
    int from = nearest_holder(co, e, cpu);
    if (from >= 0) {
        co->cpu[cpu].st.transfers++;
        pay(co, &co->cpu[cpu], e, coher_latency(co, (unsigned)from, cpu));
    }
    e->owner = -1;              /* a modified copy is now shared */
    e->sharers |= bit;
}

static void store_line(struct coher *co, unsigned cpu, struct coher_line *e)
{
    uint32_t bit = 1u << cpu, others = e->sharers & ~bit;
    if (e->owner == (int)cpu)
        return;
    struct coher_cpu *c = &co->cpu[cpu];
    if (!(e->sharers & bit) && others) {          /* the data comes from another cache */
        int from = nearest_holder(co, e, cpu);
        c->st.transfers++;
        pay(co, c, e, coher_latency(co, (unsigned)from, cpu));
    } else if (others) {                          /* an upgrade: invalidate the copies */
        pay(co, c, e, invalidation_latency(co, others, cpu));
    }
    c->st.invalidations += (uint64_t)__builtin_popcount(others);
    e->sharers = bit;
    e->owner = (int8_t)cpu;
}

void coher_access(struct coher *co, unsigned cpu, uint64_t pa, unsigned size, bool store)
{
    if (cpu >= co->ncpus || !co->cpu[cpu].active || !size)
        return;
    uint64_t first = pa >> COHER_LINE_SHIFT, last = (pa + size - 1) >> COHER_LINE_SHIFT;
    for (uint64_t line = first; line <= last; line++) {
        struct coher_line *e = find_line(co, line);
        if (store)
            store_line(co, cpu, e);
        else
            load_line(co, cpu, e);
    }
}

/* ---- markers ------------------------------------------------------------------------ */

enum { LOCK_WAIT = 0, LOCK_ACQUIRE = 1, LOCK_RELEASE = 2 };

static void lock_acquired(struct coher *co, unsigned cpu, struct coher_lock *l)
{
    struct coher_cpu *c = &co->cpu[cpu];
    c->active = c->used = true;
    bool later = co->order == COHER_ORDER_TIME && l->acquired > c->st.clock;
    if (!later && l->released > c->st.clock) {   /* held until its recorded release */
        c->st.lock_wait_cycles += l->released - c->st.clock;
        l->wait_cycles += l->released - c->st.clock;
        c->st.clock = l->released;
    }
    if (c->waiting) {
        c->st.lock_waits++;
        l->waits++;
    }
    c->waiting = false;
    c->st.lock_acquires++;
    l->acquires++;
    if (c->st.clock > l->acquired)
        l->acquired = c->st.clock;
    if (l->last_holder >= 0 && l->last_holder != (int)cpu) {
        c->st.handoffs++;
        l->handoffs++;
    }
    l->last_holder = (int)cpu;
}

void coher_lock_marker(struct coher *co, unsigned cpu, unsigned payload)
{
    if (cpu >= co->ncpus)
        return;
    struct coher_cpu *c = &co->cpu[cpu];
    struct coher_lock *l = &co->locks[payload & (COHER_LOCKS - 1)];
    switch (payload >> 10) {
    case LOCK_WAIT:             /* the wait itself is not modelled: the acquire settles it */
        c->waiting = true;
        c->active = false;
        break;
    case LOCK_ACQUIRE:
        lock_acquired(co, cpu, l);
        break;
    case LOCK_RELEASE:
        c->st.lock_releases++;
        if (c->st.clock > l->released)
            l->released = c->st.clock;
        break;
    default:
        break;
    }
}

void coher_model_marker(struct coher *co, unsigned cpu, unsigned payload)
{
    if (cpu >= co->ncpus)
        return;
    co->cpu[cpu].active = payload == 1;
    if (payload == 1)
        co->cpu[cpu].used = true;
}

/* ---- report ------------------------------------------------------------------------- */

static void put_cpu(FILE *f, unsigned i, const struct coher_cpu_stats *s)
{
    fprintf(f, "{\"vcpu\":%u,\"instructions\":%" PRIu64 ",\"misses\":%" PRIu64
               ",\"transfers\":%" PRIu64 ",\"invalidations\":%" PRIu64
               ",\"lock_acquires\":%" PRIu64 ",\"lock_releases\":%" PRIu64
               ",\"lock_waits\":%" PRIu64 ",\"handoffs\":%" PRIu64
               ",\"miss_cycles\":%.0f,\"transfer_cycles\":%.0f,\"lock_wait_cycles\":%.0f"
               ",\"clock\":%.0f}",
            i, s->instructions, s->misses, s->transfers, s->invalidations, s->lock_acquires,
            s->lock_releases, s->lock_waits, s->handoffs, s->miss_cycles, s->transfer_cycles,
            s->lock_wait_cycles, s->clock);
}

/* Every lock acquired in the window, by id: the vCPUs' lock figures split by lock, so a
 * reader can tell which lock bounds the makespan (sums over ids = sums over vCPUs). */
static void put_locks(FILE *f, const struct coher *co)
{
    unsigned n = 0;
    fputs(",\"locks\":[", f);
    for (unsigned i = 0; i < COHER_LOCKS; i++) {
        const struct coher_lock *l = &co->locks[i];
        if (!l->acquires)
            continue;
        fprintf(f, "%s{\"id\":%u,\"acquires\":%" PRIu64 ",\"waits\":%" PRIu64
                   ",\"handoffs\":%" PRIu64 ",\"wait_cycles\":%.0f}",
                n++ ? "," : "", i, l->acquires, l->waits, l->handoffs, l->wait_cycles);
    }
    fputc(']', f);
}

/* The COHER_HOT_LINES lines whose transfers cost the vCPUs most (physical address,
 * transfers, cycles: queueing behind the line's previous transfer and latency), dearest
 * first: which data bounds a curve of transfer cycles. Since the last directory reset. */
static void put_hot_lines(FILE *f, const struct coher *co)
{
    const struct coher_line *hot[COHER_HOT_LINES] = {0};
    for (uint64_t i = 0; i < co->cap; i++) {
        const struct coher_line *e = &co->lines[i];
        if (!e->line || e->cycles <= 0)
            continue;
        unsigned k = COHER_HOT_LINES;
        while (k > 0 && (!hot[k - 1] || hot[k - 1]->cycles < e->cycles)) {
            if (k < COHER_HOT_LINES)
                hot[k] = hot[k - 1];
            k--;
        }
        if (k < COHER_HOT_LINES)
            hot[k] = e;
    }
    fputs(",\"hot_lines\":[", f);
    for (unsigned k = 0; k < COHER_HOT_LINES && hot[k]; k++)
        fprintf(f, "%s{\"pa\":%" PRIu64 ",\"transfers\":%" PRIu32 ",\"cycles\":%.0f}",
                k ? "," : "", (hot[k]->line - 1) << COHER_LINE_SHIFT, hot[k]->transfers,
                hot[k]->cycles);
    fputc(']', f);
}

void coher_report(FILE *f, const struct coher *co)
{
    const struct coher_preset *p = &co->preset;
    double makespan = 0;
    fprintf(f, "{\"clock_is\":\"modelled: instructions*cpi + private misses*penalties + "
               "transfers*latency + lock waits\",\"preset\":\"%s\",\"order\":\"%s\","
               "\"source\":\"%s\","
               "\"cores_per_die\":%u,\"dies_per_socket\":%u,\"lat_die\":%.0f,"
               "\"lat_chiplet\":%.0f,\"lat_socket\":%.0f,\"lat_socket2\":%.0f,"
               "\"directory_resets\":%" PRIu64 ",\"cpus\":[",
            p->name, co->order == COHER_ORDER_TIME ? "time" : "recorded", p->source,
            p->cores_per_die, p->dies_per_socket, p->lat_die,
            p->lat_chiplet, p->lat_socket, p->lat_socket2, co->resets);
    unsigned n = 0;
    for (unsigned i = 0; i < co->ncpus; i++) {
        if (!co->cpu[i].used)
            continue;
        fputs(n++ ? "," : "", f);
        put_cpu(f, i, &co->cpu[i].st);
        if (co->cpu[i].st.clock > makespan)
            makespan = co->cpu[i].st.clock;
    }
    fputc(']', f);
    put_locks(f, co);
    put_hot_lines(f, co);
    fprintf(f, ",\"active_cpus\":%u,\"makespan\":%.0f}", n, makespan);
}
