/*
 * The coherence model (README "The coherence model"): a MESI-like directory over 64-byte
 * lines shared by all vCPUs, and a modelled clock per vCPU.
 *
 * Under -icount QEMU 7.2 runs the vCPUs round robin on one host thread, so their virtual
 * time is the sum of all of them and no parallel speed-up can show. This model replays the
 * recorded execution with a clock per vCPU instead:
 *     clock = instructions * cpi + private-cache stall cycles (the hierarchy's penalties,
 *             less lat_mem for each access whose miss to memory a transfer served)
 *           + core-to-core transfers * latency(source, destination)
 *           + lock waits
 * in the order QEMU executed the accesses. A line is a resource: a transfer for writing or
 * an invalidating upgrade cannot start before the line's previous transfer has finished, so
 * N vCPUs hammering one line serialise on it; a transfer for reading waits only for the
 * previous one for writing (reads of a shared copy are answered in parallel). A lock acquire cannot complete before the
 * recorded previous release of that lock (hand-offs in recorded order; the other replay
 * orders are below, enum coher_order). Work the guest
 * marks as not modelled (its barriers, the time a waiter spends halted) is left out.
 * Only accesses while a window is open and the vCPU is active are recorded.
 * QEMU-free: the host tests feed it synthetic streams.
 */
#ifndef CACHESIM_COHER_H
#define CACHESIM_COHER_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#define COHER_MAX_CPUS 64          /* ondol's MAX_CPUS; a line's sharers are a u64 mask */
#define COHER_LOCKS 1024
#define COHER_LINE_SHIFT 6
#define COHER_HOT_LINES 16          /* the report's "hot_lines": the dearest lines */
#define COHER_LINE_SPANS 8          /* exclusive order: transfers remembered per line */
#define COHER_LOCK_SPANS_MAX 8192   /* exclusive order: holds remembered per lock, at most */
#define COHER_FETCH_SOCKETS 8       /* socket_fetch=clock: sockets whose fetches are kept */

/* The latency matrix: vCPU i is core i; cores fill a die, dies a socket. A transfer pays
 * lat_die inside a die, lat_chiplet between dies of one socket, and lat_socket (one hop)
 * or lat_socket2 (two hops: sockets whose numbers differ in more than one bit) between
 * sockets. Cycles of the core's clock. */
struct coher_preset {
    const char *name;
    unsigned cores_per_die, dies_per_socket;
    double lat_die, lat_chiplet, lat_socket, lat_socket2;
    const char *source;
};

/* The named presets (README lists them with their sources); NULL if unknown. */
const struct coher_preset *coher_preset_find(const char *name);

struct coher_cpu_stats {
    uint64_t instructions, misses, transfers, invalidations;
    uint64_t lock_acquires, lock_releases, lock_waits, handoffs;
    double miss_cycles, transfer_cycles, lock_wait_cycles, clock;
    /* transfers whose access also missed the private hierarchy to memory, served by the
     * transfer alone, and the memory latency they did not pay (not in miss_cycles; the
     * misses are in misses): coher_transfer_served */
    uint64_t transfer_served;
    double memory_cycles_saved;
    /* transfers whose source was on another socket: the vCPU brought the line into its
     * socket, and its socket-mates may then take it from it (README "Which vCPU pays a
     * socket's fetches") */
    uint64_t remote_transfers;
};

struct coher_cpu {
    struct coher_cpu_stats st;
    bool active, waiting, used;
    unsigned open_holds;    /* exclusive order: holds it has open, the first from open_from */
    double open_from;
};

/* An interval of modelled time [start, end) a line is busy with a transfer or a lock is
 * held (exclusive order), and the vCPU holding it at its start and at its end (one vCPU
 * unless two spans were joined; -1 for a line's). A set of them is kept sorted by start,
 * never overlapping. `read`: a line's reads of a shared copy, which other reads may
 * overlap (they are joined into one span when they do); every other span is exclusive. */
struct coher_span {
    double start, end;
    int8_t first, last;
    bool read;
};

struct coher_line {
    uint64_t line;          /* line number + 1; 0: empty slot */
    uint64_t sharers;       /* vCPUs holding a copy, bit n = vCPU n */
    int8_t owner;           /* the vCPU holding it modified, or -1 */
    uint8_t nspans;         /* exclusive order: its spans in coher.spans (same slot) */
    uint8_t fetched;        /* socket_fetch=clock: sockets (bit n = socket n) whose latest
                             * fetch of it is in coher.fetches (same slot); 0 at a store */
    uint32_t transfers;     /* transfers and upgrades paid on it in this window */
    double start;           /* modelled time its latest transfer started */
    double ready;           /* modelled time its last transfer completed */
    /* the same for its transfers that made it exclusive (a write's or an upgrade's): a read
     * waits only for these, reads of a shared copy being answered in parallel */
    double own_start, own_ready;
    double cycles;          /* what they cost the vCPUs: queueing and latency */
};

struct coher_lock {
    double acquired;        /* modelled time of the latest acquire */
    double released;        /* modelled time of the last recorded release */
    int last_holder;        /* -1: never held in this window */
    /* this lock's share of the vCPUs' lock figures (the report's "locks", by id) */
    uint64_t acquires, waits, handoffs;
    double wait_cycles;
    /* exclusive order: the open hold (holder -1: none) and the settled holds */
    int holder;
    double hold_start;
    unsigned nspans, capspans;  /* spans: grown on demand, kept across windows */
    struct coher_span *spans;
};

/* The order transfers and hand-offs are replayed in (README "The coherence model", replay
 * order). RECORDED (the default): as QEMU ran them; a vCPU whose clock is behind waits for
 * a line or lock another vCPU used later in modelled time. TIME: a transfer or hand-off
 * that started later in modelled time than this vCPU's clock does not delay it (it would
 * have come first); only one in flight at its clock does; lock holds may then overlap.
 * EXCLUSIVE: modelled-time order with exclusion kept in modelled time: a line's transfers
 * and a lock's holds are spans of modelled time that never overlap; a transfer starts in
 * the earliest gap at or after the vCPU's clock that fits it; a hold starts after any
 * hold its clock falls in, and at its release (when its length is known) moves on to the
 * earliest gap that fits it, both moves lock wait; a hand-off between two vCPUs' holds
 * costs a transfer of the lock's line. QEMU runs each vCPU for a share of a timer period
 * at a time, so in RECORDED order every line written once a turn by all vCPUs drags their
 * clocks to the one furthest ahead (docs/smp.md, "The rmap-heavy part"). */
enum coher_order { COHER_ORDER_RECORDED, COHER_ORDER_TIME, COHER_ORDER_EXCLUSIVE };

/* Which vCPU of a socket takes a line into it from another socket when several of them read
 * it after a write (README "Which vCPU pays a socket's fetches"). RECORDED: the first to read
 * it in QEMU's order; under icount QEMU runs the vCPUs round robin by number, so the first
 * vCPU of each socket reads shared lines first every round and pays nearly all its socket's
 * cross-socket fetches, its socket-mates then taking the line from it at the socket's
 * latency. CLOCK (the default; exclusive order only): the one whose modelled clock reaches
 * it first. A socket-mate that takes the line at the socket's latency at a clock where it
 * would have had the line from the other socket, and the fetcher the line from it, before
 * the fetcher's own fetch ended makes the fetch instead: it pays the remote latency, and
 * the fetcher is credited what it paid beyond waiting for the line and taking it from the
 * mate (coher.c, fetch_first). */
enum coher_socket_fetch { COHER_FETCH_CLOCK, COHER_FETCH_RECORDED };

/* socket_fetch=clock: a line's latest fetch into one socket (a read whose copy came from
 * another socket): the vCPU that made it, its source, its clock when it asked for the line
 * and when the line arrived. Kept until the line is next written (coher_line.fetched). */
struct coher_fetch {
    double asked, done;
    int8_t cpu, from;
};

struct coher {
    struct coher_preset preset;
    enum coher_order order;
    double cpi;
    unsigned ncpus;
    struct coher_cpu cpu[COHER_MAX_CPUS];
    struct coher_lock locks[COHER_LOCKS];
    struct coher_line *lines;
    struct coher_span *spans;   /* exclusive order: COHER_LINE_SPANS per line slot */
    enum coher_socket_fetch socket_fetch;
    /* exclusive order and socket_fetch=clock on more than one socket: fetch_sockets per
     * line slot (the sockets the vCPUs span, at most COHER_FETCH_SOCKETS), else NULL */
    struct coher_fetch *fetches;
    unsigned fetch_sockets;
    uint64_t fetch_swaps;       /* fetches moved to a socket-mate with an earlier clock */
    uint64_t cap, used_lines, resets;
    /* exclusive order (README): the clock below which spans were forgotten; two holds
     * joined for room; a line's transfers joined (close) or forgotten (far) for room */
    double horizon;
    uint64_t hold_merges, transfer_merges, transfers_forgotten;
};

int coher_init(struct coher *co, const struct coher_preset *p, double cpi, unsigned ncpus);
void coher_free(struct coher *co);
/* The replay order's name ("recorded", "time", "exclusive") and back: -1 if unknown. */
const char *coher_order_name(enum coher_order order);
int coher_order_find(const char *name);
/* Sets the replay order (before the first window); -1 if the spans cannot be allocated. */
int coher_set_order(struct coher *co, enum coher_order order);
/* The socket_fetch rule's name ("clock", "recorded") and back: -1 if unknown. */
const char *coher_socket_fetch_name(enum coher_socket_fetch rule);
int coher_socket_fetch_find(const char *name);
/* Sets who takes a line into a socket (before the first window; CLOCK from coher_init);
 * -1 if the fetches' table cannot be allocated. */
int coher_set_socket_fetch(struct coher *co, enum coher_socket_fetch rule);
double coher_latency(const struct coher *co, unsigned from, unsigned to);
/* A window begins: every clock at 0, every vCPU inactive until it resumes. */
void coher_window_begin(struct coher *co);
/* Instructions executed and the private hierarchy's misses and stall cycles they caused. */
void coher_account(struct coher *co, unsigned cpu, uint64_t insns, uint64_t misses, double stall);
/* A data access to physical address pa (size bytes); the transfers it made (data from
 * another vCPU's cache; upgrades are not counted). */
unsigned coher_access(struct coher *co, unsigned cpu, uint64_t pa, unsigned size, bool store);
/* n of the access's transfers also missed the private hierarchy to memory: the transfers
 * served them, and `cycles` of memory latency were left out of the stall the access's
 * coher_account charged (README "The coherence model"). Counted here. */
void coher_transfer_served(struct coher *co, unsigned cpu, uint64_t n, double cycles);
/* Marker 11 (payload kind << 10 | lock) and marker 12 (0 pause, 1 resume). */
void coher_lock_marker(struct coher *co, unsigned cpu, unsigned payload);
void coher_model_marker(struct coher *co, unsigned cpu, unsigned payload);
/* The window's "coherence" object (without a leading comma). */
void coher_report(FILE *f, const struct coher *co);
#endif
