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
    free(co->spans);
    free(co->fetches);
    for (unsigned i = 0; i < COHER_LOCKS; i++)
        free(co->locks[i].spans);
    co->lines = NULL;
    co->spans = NULL;
    co->fetches = NULL;
    memset(co->locks, 0, sizeof(co->locks));
}

/* The index of name among n names, or -1. */
static int name_index(const char *const *names, size_t n, const char *name)
{
    for (size_t i = 0; i < n; i++)
        if (!strcmp(names[i], name))
            return (int)i;
    return -1;
}

static const char *const order_names[] = {"recorded", "time", "exclusive"};

const char *coher_order_name(enum coher_order order)
{
    return order_names[order];
}

int coher_order_find(const char *name)
{
    return name_index(order_names, sizeof(order_names) / sizeof(order_names[0]), name);
}

/* The vCPUs of one socket. */
static unsigned socket_size(const struct coher *co)
{
    return co->preset.cores_per_die * co->preset.dies_per_socket;
}

/* The tables the exclusive order needs: the lines' spans, and with socket_fetch=clock on
 * more than one socket the sockets' fetches. No clearing needed: a slot's spans count only
 * up to its line's nspans, its fetches only for the sockets in its line's `fetched`. */
static int alloc_tables(struct coher *co)
{
    if (co->order != COHER_ORDER_EXCLUSIVE)
        return 0;
    if (!co->spans)
        co->spans = malloc(co->cap * COHER_LINE_SPANS * sizeof(*co->spans));
    unsigned sockets = (co->ncpus + socket_size(co) - 1) / socket_size(co);
    if (sockets > COHER_FETCH_SOCKETS)
        sockets = COHER_FETCH_SOCKETS;
    if (co->socket_fetch == COHER_FETCH_CLOCK && sockets > 1 && !co->fetches) {
        co->fetches = malloc(co->cap * sockets * sizeof(*co->fetches));
        co->fetch_sockets = sockets;
    }
    bool fetches_ok = co->fetches || co->socket_fetch != COHER_FETCH_CLOCK || sockets < 2;
    return co->spans && fetches_ok ? 0 : -1;
}

int coher_set_order(struct coher *co, enum coher_order order)
{
    co->order = order;
    return alloc_tables(co);
}

static const char *const socket_fetch_names[] = {"clock", "recorded"};

const char *coher_socket_fetch_name(enum coher_socket_fetch rule)
{
    return socket_fetch_names[rule];
}

int coher_socket_fetch_find(const char *name)
{
    return name_index(socket_fetch_names,
                      sizeof(socket_fetch_names) / sizeof(socket_fetch_names[0]), name);
}

int coher_set_socket_fetch(struct coher *co, enum coher_socket_fetch rule)
{
    co->socket_fetch = rule;
    if (rule != COHER_FETCH_CLOCK) {
        free(co->fetches);
        co->fetches = NULL;
        co->fetch_sockets = 0;
    }
    return alloc_tables(co);
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

/* Whether vCPUs a and b are on different sockets of the preset. */
static bool other_socket(const struct coher *co, unsigned a, unsigned b)
{
    return a / socket_size(co) != b / socket_size(co);
}

/* A transfer from vCPU `from` to `to` starts: counted, and as remote when it crosses. */
static void count_transfer(struct coher *co, int from, unsigned to)
{
    co->cpu[to].st.transfers++;
    co->cpu[to].st.remote_transfers += other_socket(co, (unsigned)from, to);
}

static void clear_directory(struct coher *co)
{
    memset(co->lines, 0, co->cap * sizeof(*co->lines));
    co->used_lines = 0;
}

void coher_window_begin(struct coher *co)
{
    memset(co->cpu, 0, sizeof(co->cpu));
    for (unsigned i = 0; i < COHER_LOCKS; i++) {      /* the holds' arrays stay allocated */
        struct coher_lock *l = &co->locks[i];
        *l = (struct coher_lock){.last_holder = -1, .holder = -1, .spans = l->spans,
                                 .capspans = l->capspans};
    }
    co->horizon = 0;
    co->hold_merges = co->transfer_merges = co->transfers_forgotten = co->fetch_swaps = 0;
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

/* ---- spans of modelled time (exclusive order) ---------------------------------------- */

/* The gap a hand-off between two holders needs in modelled time: the lock's line moving
 * from one to the other; none between spans of one vCPU, or of a line (holder -1). */
static double handoff_gap(const struct coher *co, int from, int to)
{
    return from < 0 || to < 0 || from == to ? 0 : coher_latency(co, (unsigned)from, (unsigned)to);
}

/* The largest latency of the preset: no hand-off gap is longer. */
static double max_latency(const struct coher *co)
{
    const struct coher_preset *p = &co->preset;
    double lats[] = {p->lat_die, p->lat_chiplet, p->lat_socket, p->lat_socket2}, most = 0;
    for (unsigned i = 0; i < 4; i++)
        if (lats[i] > most)
            most = lats[i];
    return most;
}

/* A span that ends this long before the clock of every running vCPU (active, or waiting
 * for a lock) and the start of every open hold can delay none of them any more; a paused
 * vCPU is brought up to the horizon when it resumes (resume_clock). */
static double forget_before(const struct coher *co)
{
    double floor = -1;
    for (unsigned i = 0; i < co->ncpus; i++) {
        const struct coher_cpu *c = &co->cpu[i];
        double t = c->open_holds ? c->open_from : c->st.clock;
        if ((c->active || c->waiting || c->open_holds) && (floor < 0 || t < floor))
            floor = t;
    }
    return floor < 0 ? co->horizon : floor - max_latency(co);
}

/* Drops the spans that can delay no running vCPU (forget_before) and moves the horizon up
 * to where they were forgotten. */
static void span_forget(struct coher *co, struct coher_span *v, unsigned *n)
{
    double before = forget_before(co);
    unsigned k = 0;
    for (unsigned i = 0; i < *n; i++)
        if (v[i].end > before)
            v[k++] = v[i];
    if (k < *n && before > co->horizon)
        co->horizon = before;
    *n = k;
}

/* The index of the first of the two neighbouring spans with the smallest gap between
 * them (*n >= 2). */
static unsigned spans_closest(const struct coher_span *v, unsigned n)
{
    unsigned best = 0;
    for (unsigned i = 1; i + 1 < n; i++)
        if (v[i + 1].start - v[i].end < v[best + 1].start - v[best].end)
            best = i;
    return best;
}

/* Joins spans i and i + 1 into one: the gap between them counts as busy, for reads too
 * unless both were reads' (pessimistic either way). */
static void spans_join(struct coher_span *v, unsigned *n, unsigned i)
{
    v[i].end = v[i + 1].end;
    v[i].last = v[i + 1].last;
    v[i].read = v[i].read && v[i + 1].read;
    memmove(&v[i + 1], &v[i + 2], (*n - i - 2) * sizeof(*v));
    --*n;
}

/* A full line's span set: forget what can delay no one; else join the two closest
 * transfers when they are at most the preset's largest latency apart (pessimistic by
 * that gap), else forget the earliest (optimistic: a later transfer may overlap it).
 * Each error is at most about one latency. Forgetting alone was optimistic without
 * bound on a crowded line: with more than 8 vCPUs queued on it each freed slot took the
 * next transfer, and bench coherence's shared counter at 16 and 32 vCPUs got cheaper per
 * increment; joining alone was pessimistic without bound where transfers are sparse and
 * one running vCPU's clock lags (nothing can be forgotten), turning long quiet stretches
 * of a line busy (aim-rmap at 32 CPUs: 60 times slower). */
static void line_room(struct coher *co, struct coher_span *v, unsigned *n)
{
    if (*n < COHER_LINE_SPANS)
        return;
    span_forget(co, v, n);
    if (*n < COHER_LINE_SPANS)
        return;
    unsigned i = spans_closest(v, *n);
    if (v[i + 1].start - v[i].end <= max_latency(co)) {
        spans_join(v, n, i);
        co->transfer_merges++;
        return;
    }
    memmove(&v[0], &v[1], (*n - 1) * sizeof(*v));
    --*n;
    co->transfers_forgotten++;
}

/* A full lock's holds: forget what can delay no one, else grow the array (to
 * COHER_LOCK_SPANS_MAX), else join the two neighbours with the smallest gap between them
 * (the gap is then busy: pessimistic, holds still never overlap). Called before
 * span_fit, so that the gap found stays free. */
static void hold_room(struct coher *co, struct coher_lock *l)
{
    if (l->nspans < l->capspans)
        return;
    span_forget(co, l->spans, &l->nspans);
    if (l->nspans < l->capspans)
        return;
    unsigned cap = l->capspans ? 2 * l->capspans : 32;
    struct coher_span *grown = cap <= COHER_LOCK_SPANS_MAX
                                   ? realloc(l->spans, cap * sizeof(*grown)) : NULL;
    if (grown) {
        l->spans = grown;
        l->capspans = cap;
        return;
    }
    if (l->nspans < 2)
        return;
    spans_join(l->spans, &l->nspans, spans_closest(l->spans, l->nspans));
    co->hold_merges++;
}

/* The earliest start at or after t of a span of length len for `who` (a vCPU, or -1)
 * overlapping no span (a read's: no exclusive span, reads' spans being no obstacle), with
 * a hand-off's gap (handoff_gap) to a span of another vCPU on either side. The spans' ends
 * are sorted too (they never overlap): a binary search skips those that end, gap included,
 * before t. */
static double span_fit(const struct coher *co, const struct coher_span *v, unsigned n,
                       double t, double len, int who, bool read)
{
    double most = max_latency(co);
    unsigned lo = 0, hi = n;
    while (lo < hi) {
        unsigned mid = lo + (hi - lo) / 2;
        if (v[mid].end + most <= t)
            lo = mid + 1;
        else
            hi = mid;
    }
    for (unsigned i = lo; i < n; i++) {
        double after = v[i].end + handoff_gap(co, v[i].last, who);
        if (after <= t || (read && v[i].read))
            continue;
        if (v[i].start >= t + len + handoff_gap(co, who, v[i].first))
            break;
        t = after;
    }
    return t;
}

/* Adds [start, start + len) for `who` (span_fit found it, after the room was made),
 * keeping the set sorted by start. */
static void span_insert(struct coher_span *v, unsigned *n, double start, double len, int who)
{
    unsigned i = *n;
    for (; i > 0 && v[i - 1].start > start; i--)
        v[i] = v[i - 1];
    v[i] = (struct coher_span){start, start + len, (int8_t)who, (int8_t)who, false};
    ++*n;
}

/* Adds a line's read [start, start + len) (span_fit found it, after the room was made): it
 * overlaps no exclusive span, so it and the reads' spans it overlaps become one span, and
 * the set still never overlaps. */
static void span_insert_read(struct coher_span *v, unsigned *n, double start, double len)
{
    double end = start + len;
    unsigned i = 0, j;
    while (i < *n && v[i].end <= start)
        i++;
    for (j = i; j < *n && v[j].start < end; j++) {
        start = v[j].start < start ? v[j].start : start;
        end = v[j].end > end ? v[j].end : end;
    }
    memmove(&v[i + 1], &v[j], (*n - j) * sizeof(*v));
    v[i] = (struct coher_span){start, end, -1, -1, true};
    *n = *n - (j - i) + 1;
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
static double invalidation_latency(const struct coher *co, uint64_t others, unsigned to)
{
    double worst = 0;
    for (unsigned i = 0; i < co->ncpus; i++)
        if (((others >> i) & 1) && coher_latency(co, i, to) > worst)
            worst = coher_latency(co, i, to);
    return worst;
}

/* The transfer ends at `done`: the vCPU waited for it from its clock on. */
static void charge_transfer(struct coher_cpu *c, struct coher_line *e, double done)
{
    c->st.transfer_cycles += done - c->st.clock;
    e->cycles += done - c->st.clock;
    e->transfers++;
    c->st.clock = done;
}

/* Exclusive order: the transfer takes the line's earliest free span of `lat` at or after
 * the vCPU's clock, wherever the line's other transfers fell in modelled time; a read's
 * may overlap other reads'. */
static void pay_in_gap(struct coher *co, struct coher_cpu *c, struct coher_line *e,
                       double lat, bool read)
{
    struct coher_span *v = &co->spans[(uint64_t)(e - co->lines) * COHER_LINE_SPANS];
    unsigned n = e->nspans;
    line_room(co, v, &n);
    double start = span_fit(co, v, n, c->st.clock, lat, -1, read);
    if (read)
        span_insert_read(v, &n, start, lat);
    else
        span_insert(v, &n, start, lat, -1);
    e->nspans = (uint8_t)n;
    charge_transfer(c, e, start + lat);
}

/* A transfer for writing (or an upgrade) waits until the line's previous transfer
 * finished, a read only until its previous one for writing did (a directory answers read
 * misses on a shared copy in parallel); this one then takes `lat`. In time order a
 * transfer that started after this vCPU's clock does not hold it up; in exclusive order
 * it takes the earliest gap (pay_in_gap). */
static void pay(struct coher *co, struct coher_cpu *c, struct coher_line *e, double lat,
                bool read)
{
    if (co->order == COHER_ORDER_EXCLUSIVE) {
        pay_in_gap(co, c, e, lat, read);
        return;
    }
    double busy_from = read ? e->own_start : e->start, busy_to = read ? e->own_ready : e->ready;
    bool later = co->order == COHER_ORDER_TIME && busy_from > c->st.clock;
    double start = later || c->st.clock > busy_to ? c->st.clock : busy_to;
    double done = start + lat;
    if (start > e->start)
        e->start = start;
    if (!read && start > e->own_start)
        e->own_start = start;
    charge_transfer(c, e, done);
    if (done > e->ready)
        e->ready = done;
    if (!read && done > e->own_ready)
        e->own_ready = done;
}

/* ---- who takes a line into a socket (socket_fetch=clock, exclusive order) ---------- */

/* The socket's latest fetch of line e, or NULL if none is kept (another rule or order, a
 * socket past COHER_FETCH_SOCKETS, none since the line's last store). */
static struct coher_fetch *socket_fetch_of(struct coher *co, const struct coher_line *e,
                                           unsigned cpu)
{
    unsigned sock = cpu / socket_size(co);
    if (!co->fetches || co->order != COHER_ORDER_EXCLUSIVE || sock >= co->fetch_sockets ||
        !((e->fetched >> sock) & 1))
        return NULL;
    return &co->fetches[(uint64_t)(e - co->lines) * co->fetch_sockets + sock];
}

/* vCPU `cpu`, asking for line e at clock `asked`, took it from `from` on another socket
 * and the line arrived at its clock now: the socket's latest fetch of it. */
static void note_fetch(struct coher *co, struct coher_line *e, int from, unsigned cpu,
                       double asked)
{
    unsigned sock = cpu / socket_size(co);
    if (!co->fetches || co->order != COHER_ORDER_EXCLUSIVE || sock >= co->fetch_sockets ||
        !other_socket(co, (unsigned)from, cpu))
        return;
    co->fetches[(uint64_t)(e - co->lines) * co->fetch_sockets + sock] =
        (struct coher_fetch){asked, co->cpu[cpu].st.clock, (int8_t)cpu, (int8_t)from};
    e->fetched |= (uint8_t)(1u << sock);
}

/* The fetcher x gives its fetch to a socket-mate: it would have taken the line from the
 * mate at the socket's latency, `credit` cycles sooner than its own fetch ended. Its clock
 * and transfer cycles come down by that (not below the horizon, where spans may have been
 * forgotten), and the fetch no longer counts as its remote transfer. */
static void give_fetch(struct coher *co, unsigned x, struct coher_line *e, double credit)
{
    struct coher_cpu_stats *s = &co->cpu[x].st;
    if (s->clock - credit < co->horizon)
        credit = s->clock > co->horizon ? s->clock - co->horizon : 0;
    s->clock -= credit;
    s->transfer_cycles -= credit;
    e->cycles -= credit;
    s->remote_transfers--;
}

/* vCPU `cpu` reads line e from `from`, a vCPU of its own socket; the socket's copy came
 * in with fetch f, made by vCPU x (the first of the socket to ask in the recorded order).
 * Would `cpu`, fetching from f's source itself at its own clock (in the line's earliest
 * gap for a read), have had the line, and x then the line from `cpu`, before x's fetch
 * ended? Then `cpu` reached the line first in modelled time, and the roles swap: `cpu`
 * makes the fetch (a remote transfer at its clock, now the socket's fetch f, which a mate
 * earlier still may take over in turn), and x is credited (give_fetch) as if it had taken
 * the line from `cpu` when it arrived or when x asked, whichever is later. Returns whether
 * it did; else the read is an ordinary one from `from`. A fetcher holding a lock keeps its
 * fetch (its hold began at its unlowered clock). *Approximations* (README "Which vCPU pays
 * a socket's fetches"): x's accesses after its fetch keep their places in modelled time,
 * its fetch keeps its span on the line (a read's: it delays only writes), and the mates
 * that took the line from x in between keep theirs. */
static bool fetch_first(struct coher *co, unsigned cpu, struct coher_line *e, int from)
{
    struct coher_fetch *f = other_socket(co, (unsigned)from, cpu) ? NULL
                                                                    : socket_fetch_of(co, e, cpu);
    if (!f || co->cpu[f->cpu].open_holds)
        return false;
    struct coher_cpu *c = &co->cpu[cpu];
    double lat = coher_latency(co, (unsigned)f->from, cpu);
    double hop = coher_latency(co, cpu, (unsigned)f->cpu);
    struct coher_span *v = &co->spans[(uint64_t)(e - co->lines) * COHER_LINE_SPANS];
    unsigned n = e->nspans;
    line_room(co, v, &n);
    e->nspans = (uint8_t)n;
    double arrives = span_fit(co, v, n, c->st.clock, lat, -1, true) + lat;
    double x_has = (arrives > f->asked ? arrives : f->asked) + hop;
    if (x_has >= f->done)
        return false;
    double asked = c->st.clock;
    count_transfer(co, f->from, cpu);
    pay_in_gap(co, c, e, lat, true);                  /* the gap span_fit found */
    give_fetch(co, (unsigned)f->cpu, e, f->done - x_has);
    *f = (struct coher_fetch){asked, c->st.clock, (int8_t)cpu, f->from};
    co->fetch_swaps++;
    return true;
}

static void load_line(struct coher *co, unsigned cpu, struct coher_line *e)
{
    uint64_t bit = 1ull << cpu;
    if (e->sharers & bit)
        return;
    int from = nearest_holder(co, e, cpu);
    if (from >= 0 && !fetch_first(co, cpu, e, from)) {
        double asked = co->cpu[cpu].st.clock;
        count_transfer(co, from, cpu);
        pay(co, &co->cpu[cpu], e, coher_latency(co, (unsigned)from, cpu), true);
        note_fetch(co, e, from, cpu, asked);
    }
    e->owner = -1;              /* a modified copy is now shared */
    e->sharers |= bit;
}

static void store_line(struct coher *co, unsigned cpu, struct coher_line *e)
{
    uint64_t bit = 1ull << cpu, others = e->sharers & ~bit;
    if (e->owner == (int)cpu)
        return;
    struct coher_cpu *c = &co->cpu[cpu];
    if (!(e->sharers & bit) && others) {          /* the data comes from another cache */
        int from = nearest_holder(co, e, cpu);
        count_transfer(co, from, cpu);
        pay(co, c, e, coher_latency(co, (unsigned)from, cpu), false);
    } else if (others) {                          /* an upgrade: invalidate the copies */
        pay(co, c, e, invalidation_latency(co, others, cpu), false);
    }
    c->st.invalidations += (uint64_t)__builtin_popcountll(others);
    e->sharers = bit;
    e->owner = (int8_t)cpu;
    e->fetched = 0;             /* the sockets' copies are gone: new fetches from here */
}

unsigned coher_access(struct coher *co, unsigned cpu, uint64_t pa, unsigned size, bool store)
{
    if (cpu >= co->ncpus || !co->cpu[cpu].active || !size)
        return 0;
    uint64_t before = co->cpu[cpu].st.transfers;
    uint64_t first = pa >> COHER_LINE_SHIFT, last = (pa + size - 1) >> COHER_LINE_SHIFT;
    for (uint64_t line = first; line <= last; line++) {
        struct coher_line *e = find_line(co, line);
        if (store)
            store_line(co, cpu, e);
        else
            load_line(co, cpu, e);
    }
    return (unsigned)(co->cpu[cpu].st.transfers - before);
}

void coher_transfer_served(struct coher *co, unsigned cpu, uint64_t n, double cycles)
{
    if (cpu >= co->ncpus || !co->cpu[cpu].active)
        return;
    co->cpu[cpu].st.transfer_served += n;
    co->cpu[cpu].st.memory_cycles_saved += cycles;
}

/* ---- markers ------------------------------------------------------------------------ */

enum { LOCK_WAIT = 0, LOCK_ACQUIRE = 1, LOCK_RELEASE = 2 };

/* A paused vCPU starts running again. Exclusive order: its clock (not modelled while it
 * was paused: idle, a barrier, not yet started) comes up to the horizon, so that it never
 * falls where spans were forgotten. */
static void resume_clock(struct coher *co, struct coher_cpu *c)
{
    if (co->order == COHER_ORDER_EXCLUSIVE && !c->active && !c->waiting &&
        c->st.clock < co->horizon)
        c->st.clock = co->horizon;
}

/* The vCPU waits for the lock until modelled time `until` (not before its clock). */
static void charge_lock_wait(struct coher_cpu *c, struct coher_lock *l, double until)
{
    c->st.lock_wait_cycles += until - c->st.clock;
    l->wait_cycles += until - c->st.clock;
    c->st.clock = until;
}

/* Exclusive order, at the acquire: the hold starts no earlier than the end of any hold
 * its vCPU's clock falls in (and the hand-off after it). The length is not known yet:
 * settle_hold finishes the job at the release. */
static void open_hold(struct coher *co, unsigned cpu, struct coher_lock *l)
{
    struct coher_cpu *c = &co->cpu[cpu];
    double start = span_fit(co, l->spans, l->nspans, c->st.clock, 0, (int)cpu, false);
    charge_lock_wait(c, l, start);
    if (l->holder >= 0)                       /* its release never came: dropped */
        co->cpu[l->holder].open_holds--;
    if (!c->open_holds++)
        c->open_from = start;
    l->holder = (int)cpu;
    l->hold_start = start;
}

/* Recorded and time order settle the wait here: no earlier than the lock's last recorded
 * release. Exclusive order opens a hold (open_hold). */
static void lock_acquired(struct coher *co, unsigned cpu, struct coher_lock *l)
{
    struct coher_cpu *c = &co->cpu[cpu];
    resume_clock(co, c);
    c->active = c->used = true;
    bool later = co->order == COHER_ORDER_TIME && l->acquired > c->st.clock;
    if (co->order == COHER_ORDER_EXCLUSIVE)
        open_hold(co, cpu, l);
    else if (!later && l->released > c->st.clock)   /* held until its recorded release */
        charge_lock_wait(c, l, l->released);
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

/* Exclusive order, at the release: the hold [start, release] of modelled time, now of
 * known length, moves on to the lock's earliest gap that fits it (with the hand-offs on
 * either side) if it overlaps a later hold; the move is charged as lock wait now (the
 * accesses made during the hold keep their unmoved clocks: README "The coherence model",
 * replay order). */
static void settle_hold(struct coher *co, unsigned cpu, struct coher_lock *l)
{
    struct coher_cpu *c = &co->cpu[cpu];
    double len = c->st.clock - l->hold_start;
    l->holder = -1;
    c->open_holds--;
    hold_room(co, l);
    double start = span_fit(co, l->spans, l->nspans, l->hold_start, len, (int)cpu, false);
    if (l->nspans < l->capspans)              /* else no room could be made: forgotten */
        span_insert(l->spans, &l->nspans, start, len, (int)cpu);
    charge_lock_wait(c, l, c->st.clock + (start - l->hold_start));
}

static void lock_released(struct coher *co, unsigned cpu, struct coher_lock *l)
{
    struct coher_cpu *c = &co->cpu[cpu];
    c->st.lock_releases++;
    if (co->order == COHER_ORDER_EXCLUSIVE && l->holder == (int)cpu)
        settle_hold(co, cpu, l);
    if (c->st.clock > l->released)
        l->released = c->st.clock;
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
        lock_released(co, cpu, l);
        break;
    default:
        break;
    }
}

void coher_model_marker(struct coher *co, unsigned cpu, unsigned payload)
{
    if (cpu >= co->ncpus)
        return;
    if (payload == 1)
        resume_clock(co, &co->cpu[cpu]);
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
               ",\"clock\":%.0f,\"transfer_served\":%" PRIu64 ",\"memory_cycles_saved\":%.0f"
               ",\"remote_transfers\":%" PRIu64 "}",
            i, s->instructions, s->misses, s->transfers, s->invalidations, s->lock_acquires,
            s->lock_releases, s->lock_waits, s->handoffs, s->miss_cycles, s->transfer_cycles,
            s->lock_wait_cycles, s->clock, s->transfer_served, s->memory_cycles_saved,
            s->remote_transfers);
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

/* A line's or a page's transfers: where it starts, its lines with transfers, and what
 * they cost the vCPUs (queueing behind the line's previous transfer and latency). */
struct hot {
    uint64_t pa, lines, transfers;
    double cycles;
};

/* Keeps hot[] (COHER_HOT_LINES, dearest first, unused entries of no lines) the dearest
 * offered so far; of equal cost the first offered first. */
static void hot_offer(struct hot *hot, struct hot x)
{
    unsigned k = COHER_HOT_LINES;
    while (k > 0 && (!hot[k - 1].lines || hot[k - 1].cycles < x.cycles)) {
        if (k < COHER_HOT_LINES)
            hot[k] = hot[k - 1];
        k--;
    }
    if (k < COHER_HOT_LINES)
        hot[k] = x;
}

static void put_hot(FILE *f, const char *name, const struct hot *hot, bool lines)
{
    fprintf(f, ",\"%s\":[", name);
    for (unsigned k = 0; k < COHER_HOT_LINES && hot[k].lines; k++) {
        fprintf(f, "%s{\"pa\":%" PRIu64, k ? "," : "", hot[k].pa);
        if (lines)
            fprintf(f, ",\"lines\":%" PRIu64, hot[k].lines);
        fprintf(f, ",\"transfers\":%" PRIu64 ",\"cycles\":%.0f}", hot[k].transfers,
                hot[k].cycles);
    }
    fputc(']', f);
}

static int by_pa(const void *a, const void *b)
{
    uint64_t x = ((const struct hot *)a)->pa, y = ((const struct hot *)b)->pa;
    return (x > y) - (x < y);
}

/* The COHER_HOT_LINES lines whose transfers cost the vCPUs most, dearest first: which
 * data bounds a curve of transfer cycles; and the COHER_HOT_LINES 4 KiB pages whose lines
 * together cost most, with how many of their lines had transfers: a cost spread over
 * many lines each moved a few times (a frame copied or zeroed on another CPU than the
 * one that wrote it last) shows there and in no single line. Since the last directory
 * reset; the pages only if a table of the lines with transfers can be had. */
static void put_hot_lines(FILE *f, const struct coher *co)
{
    struct hot lines[COHER_HOT_LINES] = {0}, pages[COHER_HOT_LINES] = {0};
    struct hot *all = malloc((co->used_lines + 1) * sizeof(*all));
    uint64_t n = 0;
    for (uint64_t i = 0; i < co->cap; i++) {
        const struct coher_line *e = &co->lines[i];
        if (!e->line || e->cycles <= 0)
            continue;
        struct hot x = {(e->line - 1) << COHER_LINE_SHIFT, 1, e->transfers, e->cycles};
        hot_offer(lines, x);
        if (all)
            all[n++] = x;
    }
    if (all)
        qsort(all, n, sizeof(*all), by_pa);
    for (uint64_t i = 0; all && i < n;) {
        struct hot page = {all[i].pa & ~0xfffull, 0, 0, 0};
        for (; i < n && (all[i].pa & ~0xfffull) == page.pa; i++) {
            page.lines++;
            page.transfers += all[i].transfers;
            page.cycles += all[i].cycles;
        }
        hot_offer(pages, page);
    }
    free(all);
    put_hot(f, "hot_lines", lines, false);
    put_hot(f, "hot_pages", pages, true);
}

/* The lines with transfers by how many each had (1, 2-3, 4-15, 16-63, 64-255, 256 or
 * more): their number, transfers and cycles. Data that flows from CPU to CPU (a frame
 * written on one and copied or zeroed on another) is many lines moved a few times each;
 * a line shared by every CPU (a global counter, a lock) is one line moved hundreds of
 * times. Since the last directory reset. */
static void put_line_spread(FILE *f, const struct coher *co)
{
    static const unsigned from[] = {1, 2, 4, 16, 64, 256};
    enum { N = sizeof(from) / sizeof(from[0]) };
    struct hot by[N] = {0};
    for (uint64_t i = 0; i < co->cap; i++) {
        const struct coher_line *e = &co->lines[i];
        if (!e->line || !e->transfers)
            continue;
        unsigned k = N - 1;
        while (e->transfers < from[k])
            k--;
        by[k].lines++;
        by[k].transfers += e->transfers;
        by[k].cycles += e->cycles;
    }
    fputs(",\"line_spread\":[", f);
    for (unsigned k = 0; k < N; k++)
        fprintf(f, "%s{\"transfers_from\":%u,\"lines\":%" PRIu64 ",\"transfers\":%" PRIu64
                   ",\"cycles\":%.0f}", k ? "," : "", from[k], by[k].lines, by[k].transfers,
                by[k].cycles);
    fputc(']', f);
}

void coher_report(FILE *f, const struct coher *co)
{
    const struct coher_preset *p = &co->preset;
    double makespan = 0;
    fprintf(f, "{\"clock_is\":\"modelled: instructions*cpi + private misses*penalties + "
               "transfers*latency + lock waits\",\"preset\":\"%s\",\"order\":\"%s\","
               "\"socket_fetch\":\"%s\",\"source\":\"%s\","
               "\"cores_per_die\":%u,\"dies_per_socket\":%u,\"lat_die\":%.0f,"
               "\"lat_chiplet\":%.0f,\"lat_socket\":%.0f,\"lat_socket2\":%.0f,"
               "\"directory_resets\":%" PRIu64 ",\"cpus\":[",
            p->name, coher_order_name(co->order),
            coher_socket_fetch_name(co->order == COHER_ORDER_EXCLUSIVE ? co->socket_fetch
                                                                       : COHER_FETCH_RECORDED),
            p->source,
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
    put_line_spread(f, co);
    if (co->order == COHER_ORDER_EXCLUSIVE)
        fprintf(f, ",\"fetch_swaps\":%" PRIu64 ",\"hold_merges\":%" PRIu64
                   ",\"transfer_merges\":%" PRIu64 ",\"transfers_forgotten\":%" PRIu64
                   ",\"horizon\":%.0f", co->fetch_swaps, co->hold_merges, co->transfer_merges,
                co->transfers_forgotten, co->horizon);
    fprintf(f, ",\"active_cpus\":%u,\"makespan\":%.0f}", n, makespan);
}
