/*
 * aim - an AIM7-like multi-process mix for P4's experiment (`./ondol bench aim`, docs/smp.md
 * "The P4 experiment") and the SMP soak. One static musl program, run unmodified as pid 1
 * of ondol's UNIX server and by the Linux peer's /init.
 *
 *   aim WORKERS JOBS [SEED]   WORKERS processes each run JOBS jobs
 *   aim                       the same, read from the name: /bench/aim-W-J runs W workers of
 *                             J jobs each (ondol's linux_init= takes no arguments, so the
 *                             host installs one symbolic link per configuration)
 *   aim child                 what a job's fork+execve runs: checks its arguments, exits 7
 *   aim rmap WORKERS JOBS [SEED], or run as aim-rmap-W-J: the rmap-heavy part (below)
 *
 * A job, its sizes drawn from the worker's seeded generator (the same every run):
 *   - fork with a touched anonymous region of 8..23 pages: the child reads every page
 *     (the copy-on-write mappings: reverse-map inserts), writes half of them (COW breaks),
 *     puts a checksum of what it read into a shared anonymous page (MAP_SHARED) and
 *     exits; the parent checks the sum and that its own pages kept their bytes;
 *   - fork + execve of this program ("child"), wait;
 *   - anonymous mmap of 4..35 pages, a page fault on each, check, munmap;
 *   - a file of 1..4 pages in /tmp written with write(), mapped MAP_SHARED read-only and
 *     checked through the mapping, munmapped, rewritten with pwrite(), read back with
 *     read() and checked, unlinked (ondol's UNIX server has no writable shared file
 *     mappings yet: docs/unix.md);
 *   - a pipe round trip of 4 KiB with the child of the first step.
 * Every byte written is checked where it is read back: any difference ends the worker
 * with status 1 and the run with "ok":false.
 *
 * The rmap-heavy part (P4's reverse-map updates on frames many processes map): the parent
 * fills a private anonymous region of (JOBS + 1) slices of RMAP_PAGES pages and forks the
 * WORKERS before the window, so every worker maps every frame of it copy-on-write (on
 * ondol the fork's clone gives each frame one reverse-map entry per worker). Job j of
 * every worker writes one word in each page of slice j (slice 0 is the warm-up's), each
 * worker from its own page of the slice round: each write is a copy-on-write break, which
 * on ondol removes the worker's entry from the shared frame's reverse map and inserts one
 * for its copy, in the page fault, without the big kernel lock; then it unmaps the slice
 * (the copies' entries go). Before and after the write the job checks the page's words
 * (one in each 64 bytes) and its own word; at the end the parent checks that its own
 * region kept every word (no break leaked into a shared frame). The workers start
 * together on a "go" byte once all are ready, and stay until the window is closed, so the
 * window holds the jobs and not the forks or exits.
 *
 * Output: one result record on the result stream (/dev/results on ondol, else stdout):
 * workers, jobs done, the TSC ticks of the run (under -icount: instructions, exact), and,
 * on ondol, the kernel's counters before and after from /proc/ondol/kernel (frames,
 * objects, the reverse map's operations), then an end record. On ondol the run is a
 * coherence-model window: "begin N" / "end N" written to /dev/window opens it (all CPUs
 * resume) and closes it.
 * As pid 1 it powers off at the end.
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/reboot.h>
#include <sys/wait.h>
#include <unistd.h>

#define PAGE 4096
#define MAX_WORKERS 64
#define AIM_WINDOW 13                 /* the coherence-model window of the run */
#define CHILD_STATUS 7
#define RMAP_PAGES 64                 /* pages of a slice: one rmap-part job's COW breaks */
#define WORD_STRIDE 8                 /* a checked word every 64 bytes */

static char self_path[256];
static int out_fd = 1;
static const char *const counters[] = {
    "frames_free", "tasks", "threads", "aspaces", "kobj_bytes", "rmap_inserts",
    "rmap_removes", "rmap_cancelled", "rmap_applied", "rmap_ticks", "moves_wake",
    "moves_steal", "moves_balance", "move_ticks", "rmap_full_passes", "rmap_foreign",
};
#define NCOUNTERS (sizeof(counters) / sizeof(counters[0]))

/* xorshift64: the worker's sizes and bytes, the same every run for one seed. */
static uint64_t next_random(uint64_t *s)
{
    *s ^= *s << 13;
    *s ^= *s >> 7;
    *s ^= *s << 17;
    return *s;
}

static void fail(const char *what)
{
    dprintf(2, "aim: %s failed\n", what);
    _exit(1);
}

static void fill(unsigned char *p, size_t n, uint64_t seed)
{
    for (size_t i = 0; i < n; i++)
        p[i] = (unsigned char)(seed + i * 31 + (i >> 12));
}

static uint64_t checksum(const unsigned char *p, size_t n)
{
    uint64_t s = 0;
    for (size_t i = 0; i < n; i += 64)
        s = s * 131 + p[i];
    return s;
}

static void expect(const unsigned char *p, size_t n, uint64_t seed, const char *what)
{
    for (size_t i = 0; i < n; i++)
        if (p[i] != (unsigned char)(seed + i * 31 + (i >> 12)))
            fail(what);
}

static void read_all(int fd, void *buf, size_t n, const char *what)
{
    for (size_t got = 0; got < n;) {
        ssize_t r = read(fd, (char *)buf + got, n - got);
        if (r <= 0)
            fail(what);
        got += (size_t)r;
    }
}

static void wait_for(pid_t pid, int status_wanted, const char *what)
{
    int st;
    if (pid < 0 || waitpid(pid, &st, 0) != pid || !WIFEXITED(st) ||
        WEXITSTATUS(st) != status_wanted)
        fail(what);
}

/* The child of the COW step: read every page, write half, send the sum, then echo the
 * pipe step's 4 KiB back. */
static void cow_child(unsigned char *region, size_t pages, uint64_t *shared, int to_parent,
                      int from_parent)
{
    *shared = checksum(region, pages * PAGE);
    for (size_t p = 0; p < pages; p += 2)
        region[p * PAGE] ^= 0xff;
    static unsigned char buf[PAGE];
    read_all(from_parent, buf, PAGE, "pipe read (child)");
    if (write(to_parent, buf, PAGE) != PAGE)
        fail("pipe write (child)");
    _exit(0);
}

static void job_cow_pipe(uint64_t *rng)
{
    size_t pages = 8 + next_random(rng) % 16, len = pages * PAGE;
    uint64_t seed = next_random(rng);
    unsigned char *region = mmap(NULL, len, PROT_READ | PROT_WRITE,
                                 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    uint64_t *shared = mmap(NULL, PAGE, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS,
                            -1, 0);
    if (region == MAP_FAILED || shared == MAP_FAILED)
        fail("mmap (cow)");
    fill(region, len, seed);
    int up[2], down[2];
    if (pipe(up) || pipe(down))
        fail("pipe");
    pid_t pid = fork();
    if (pid == 0)
        cow_child(region, pages, shared, up[1], down[0]);
    static unsigned char out[PAGE], back[PAGE];
    fill(out, PAGE, seed ^ 0x55);
    if (write(down[1], out, PAGE) != PAGE)
        fail("pipe write");
    read_all(up[0], back, PAGE, "pipe read (echo)");
    wait_for(pid, 0, "wait (cow)");
    if (*shared != checksum(region, len) || memcmp(out, back, PAGE) != 0)
        fail("cow child's view");
    expect(region, len, seed, "cow parent's pages");
    close(up[0]), close(up[1]), close(down[0]), close(down[1]);
    if (munmap(region, len) || munmap(shared, PAGE))
        fail("munmap (cow)");
}

static void job_exec(void)
{
    pid_t pid = fork();
    if (pid == 0) {
        char *argv[] = {self_path, "child", NULL};
        char *envp[] = {NULL};
        execve(self_path, argv, envp);
        _exit(127);
    }
    wait_for(pid, CHILD_STATUS, "fork+execve");
}

static void job_anon(uint64_t *rng)
{
    size_t len = (4 + next_random(rng) % 32) * PAGE;
    uint64_t seed = next_random(rng);
    unsigned char *p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS,
                            -1, 0);
    if (p == MAP_FAILED)
        fail("mmap (anon)");
    for (size_t i = 0; i < len; i += PAGE)
        if (p[i] != 0)
            fail("anonymous page not zero");
    fill(p, len, seed);
    expect(p, len, seed, "anonymous pages");
    if (munmap(p, len))
        fail("munmap (anon)");
}

static void job_file(uint64_t *rng, int worker, int job)
{
    char path[64];
    snprintf(path, sizeof(path), "/tmp/aim.%d.%d", worker, job);
    size_t len = (1 + next_random(rng) % 4) * PAGE;
    uint64_t seed = next_random(rng);
    static unsigned char buf[4 * PAGE];
    fill(buf, len, seed);
    int fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0600);
    if (fd < 0 || write(fd, buf, len) != (ssize_t)len)
        fail("file create+write");
    unsigned char *m = mmap(NULL, len, PROT_READ, MAP_SHARED, fd, 0);
    if (m == MAP_FAILED)
        fail("mmap (shared file)");
    expect(m, len, seed, "file seen through its mapping");
    if (munmap(m, len))
        fail("munmap (file)");
    fill(buf, len, seed + 1);
    if (pwrite(fd, buf, len, 0) != (ssize_t)len || lseek(fd, 0, SEEK_SET) != 0)
        fail("pwrite+lseek");
    memset(buf, 0, len);
    read_all(fd, buf, len, "file read");
    expect(buf, len, seed + 1, "file rewritten");
    if (close(fd) || unlink(path))
        fail("close+unlink");
}

static void worker(int id, int jobs, uint64_t seed)
{
    uint64_t rng = seed * 0x9e3779b97f4a7c15ull + (uint64_t)id + 1;
    for (int j = 0; j < jobs; j++) {
        job_cow_pipe(&rng);
        job_exec();
        job_anon(&rng);
        job_file(&rng, id, j);
    }
    _exit(0);
}

/* ---- the rmap-heavy part ------------------------------------------------------------ */

/* The word at index w of page `page` of the rmap part's region, as the parent wrote it. */
static uint64_t region_word(uint64_t seed, size_t page, size_t w)
{
    return seed ^ ((uint64_t)page << 20) ^ ((uint64_t)w * 0x9e3779b97f4a7c15ull);
}

/* Every WORD_STRIDE-th word of the page as the parent wrote it, word 0 `first`. */
static void check_page(const uint64_t *p, uint64_t seed, size_t page, uint64_t first,
                       const char *what)
{
    if (p[0] != first)
        fail(what);
    for (size_t w = WORD_STRIDE; w < PAGE / 8; w += WORD_STRIDE)
        if (p[w] != region_word(seed, page, w))
            fail(what);
}

/* One job: break copy-on-write on each page of slice `slice` with a word of this worker's,
 * checking the page before and after; then unmap the slice. Worker `id` of `workers`
 * starts at its own page of the slice and wraps round, as independent processes would
 * not go through shared pages in step (all in one order, every worker would queue behind
 * the others on each page's lines and locks). */
static void rmap_job(unsigned char *region, uint64_t seed, int id, int workers, int slice)
{
    size_t first = (size_t)slice * RMAP_PAGES, start = (size_t)id * RMAP_PAGES / workers;
    unsigned char *base = region + first * PAGE;
    for (size_t k = 0; k < RMAP_PAGES; k++) {
        size_t i = (start + k) % RMAP_PAGES;
        uint64_t *p = (uint64_t *)(base + i * PAGE);
        check_page(p, seed, first + i, region_word(seed, first + i, 0), "rmap shared page");
        uint64_t mine = seed ^ ((uint64_t)id << 32) ^ (first + i);
        p[0] = mine;                                /* the copy-on-write break */
        check_page(p, seed, first + i, mine, "rmap copied page");
    }
    if (munmap(base, RMAP_PAGES * PAGE))
        fail("munmap (rmap slice)");
}

struct rmap_pipes {
    int ready[2], go[2], done[2], quit[2];
};

/* A worker: the warm-up job on slice 0, "ready", wait for "go" (end of file: the run was
 * called off), JOBS jobs, "done", then wait until the parent lets it go. */
static void rmap_worker(struct rmap_pipes *pp, unsigned char *region, uint64_t seed, int id,
                        int workers, int jobs)
{
    close(pp->ready[0]), close(pp->go[1]), close(pp->done[0]), close(pp->quit[1]);
    rmap_job(region, seed, id, workers, 0);
    char byte = 'r';
    if (write(pp->ready[1], &byte, 1) != 1)
        fail("ready");
    close(pp->ready[1]);
    if (read(pp->go[0], &byte, 1) != 1)
        _exit(1);
    for (int j = 1; j <= jobs; j++)
        rmap_job(region, seed, id, workers, j);
    if (write(pp->done[1], &byte, 1) != 1)
        fail("done");
    close(pp->done[1]);
    (void)read(pp->quit[0], &byte, 1);             /* end of file: the window is closed */
    _exit(0);
}

/* Up to n bytes from fd, until end of file; how many came. */
static int read_bytes(int fd, int n)
{
    char byte;
    int got = 0;
    while (got < n && read(fd, &byte, 1) == 1)
        got++;
    return got;
}

/* The region: JOBS + 1 slices, every checked word written (and so every page touched). */
static unsigned char *rmap_region(int jobs, uint64_t seed, size_t *len)
{
    size_t pages = (size_t)(jobs + 1) * RMAP_PAGES;
    *len = pages * PAGE;
    unsigned char *region = mmap(NULL, *len, PROT_READ | PROT_WRITE,
                                 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (region == MAP_FAILED)
        fail("mmap (rmap region)");
    for (size_t pg = 0; pg < pages; pg++) {
        uint64_t *p = (uint64_t *)(region + pg * PAGE);
        for (size_t w = 0; w < PAGE / 8; w += WORD_STRIDE)
            p[w] = region_word(seed, pg, w);
    }
    return region;
}

static void window_begin(void);   /* below, with the mix's window */
static void window_end(void);

/* The part: `workers` processes of `jobs` jobs, the window around the jobs only; how many
 * workers finished (*warm_ok: every worker did its warm-up job). */
static int run_rmap(int workers, int jobs, uint64_t seed, int *warm_ok)
{
    size_t len;
    unsigned char *region = rmap_region(jobs, seed, &len);
    struct rmap_pipes pp;
    if (pipe(pp.ready) || pipe(pp.go) || pipe(pp.done) || pipe(pp.quit))
        fail("pipe (rmap)");
    pid_t pids[MAX_WORKERS];
    for (int w = 0; w < workers; w++) {
        pids[w] = fork();
        if (pids[w] == 0)
            rmap_worker(&pp, region, seed, w, workers, jobs);
        if (pids[w] < 0)
            fail("fork (rmap worker)");
    }
    close(pp.ready[1]), close(pp.go[0]), close(pp.done[1]), close(pp.quit[0]);
    *warm_ok = read_bytes(pp.ready[0], workers) == workers;
    if (*warm_ok) {
        static char go[MAX_WORKERS];
        window_begin();
        if (write(pp.go[1], go, (size_t)workers) != workers)
            fail("go");
        read_bytes(pp.done[0], workers);
        window_end();
    }
    close(pp.ready[0]), close(pp.go[1]), close(pp.done[0]), close(pp.quit[1]);
    int ok = 0;
    for (int w = 0; w < workers; w++) {
        int st;
        if (waitpid(pids[w], &st, 0) == pids[w] && WIFEXITED(st) && WEXITSTATUS(st) == 0)
            ok++;
    }
    for (size_t pg = 0; pg < len / PAGE; pg++)   /* the parent's own pages kept their words */
        check_page((const uint64_t *)(region + pg * PAGE), seed, pg,
                   region_word(seed, pg, 0), "rmap parent's pages");
    munmap(region, len);
    return ok;
}

/* The kernel's counters (ondol's /proc/ondol/kernel, "name value" lines); false elsewhere. */
static int read_counters(long long *v)
{
    static char text[4096];
    int fd = open("/proc/ondol/kernel", O_RDONLY);
    if (fd < 0)
        return 0;
    ssize_t n = read(fd, text, sizeof(text) - 1);
    close(fd);
    text[n > 0 ? n : 0] = 0;
    for (size_t k = 0; k < NCOUNTERS; k++) {
        v[k] = -1;
        size_t len = strlen(counters[k]);
        for (char *line = text; line; line = strchr(line, '\n'), line = line ? line + 1 : NULL)
            if (strncmp(line, counters[k], len) == 0 && line[len] == ' ')
                v[k] = strtoll(line + len + 1, NULL, 10);
    }
    return 1;
}

static uint64_t rdtsc(void)
{
    uint32_t lo, hi;
    __asm__ __volatile__("lfence\n\trdtsc\n\tlfence" : "=a"(lo), "=d"(hi) : : "memory");
    return ((uint64_t)hi << 32) | lo;
}

/* Run `workers` processes of `jobs` jobs; how many finished all of theirs. */
static int run_workers(int workers, int jobs, uint64_t seed)
{
    pid_t pids[MAX_WORKERS];
    for (int w = 0; w < workers; w++) {
        pids[w] = fork();
        if (pids[w] == 0)
            worker(w, jobs, seed);
        if (pids[w] < 0)
            fail("fork (worker)");
    }
    int ok = 0;
    for (int w = 0; w < workers; w++) {
        int st;
        if (waitpid(pids[w], &st, 0) == pids[w] && WIFEXITED(st) && WEXITSTATUS(st) == 0)
            ok++;
    }
    return ok;
}

static void print_counters(const char *name, const long long *v)
{
    dprintf(out_fd, ",\"%s\":{", name);
    for (size_t k = 0; k < NCOUNTERS; k++)
        dprintf(out_fd, "%s\"%s\":%lld", k ? "," : "", counters[k], v[k]);
    dprintf(out_fd, "}");
}

/* argv[0]'s "aim-W-J" or "aim-rmap-W-J" (the host's symbolic links); 0 if it is neither. */
static int name_config(const char *name, int *rmap, int *workers, int *jobs)
{
    const char *base = strrchr(name, '/');
    base = base ? base + 1 : name;
    if (strncmp(base, "aim-", 4) != 0)
        return 0;
    *rmap = strncmp(base, "aim-rmap-", 9) == 0;
    return sscanf(base + (*rmap ? 9 : 4), "%d-%d", workers, jobs) == 2;
}

/* "begin N" or "end N" to /dev/window in one write, as the device parses it (N the run's
 * window); nothing where there is no such device (the Linux peer). */
static void model_window(int fd, const char *what)
{
    char text[32];
    int n = snprintf(text, sizeof text, "%s %d\n", what, AIM_WINDOW);
    if (fd >= 0 && write(fd, text, (size_t)n) != n)
        fprintf(stderr, "aim: /dev/window refused \"%s\"\n", what);
}

/* The run's window: the counters before and after, the TSC ticks, the model's window. */
static long long before[NCOUNTERS], after[NCOUNTERS];
static int ondol_counters, window_fd = -1;
static uint64_t t0, tsc;

static void window_begin(void)
{
    ondol_counters = read_counters(before);
    model_window(window_fd, "begin");
    t0 = rdtsc();
}

static void window_end(void)
{
    tsc = rdtsc() - t0;
    model_window(window_fd, "end");
    if (ondol_counters)
        read_counters(after);
}

/* argv: "rmap" before the numbers picks the rmap-heavy part; else from the name. */
static int parse_config(int argc, char **argv, int *rmap, int *workers, int *jobs,
                        uint64_t *seed)
{
    *rmap = argc > 1 && strcmp(argv[1], "rmap") == 0;
    argc -= *rmap, argv += *rmap;
    *seed = argc > 3 ? strtoull(argv[3], NULL, 0) : 1;
    if (argc > 2) {
        *workers = atoi(argv[1]);
        *jobs = atoi(argv[2]);
        return 1;
    }
    return !*rmap && name_config(argv[0], rmap, workers, jobs);
}

int main(int argc, char **argv)
{
    if (argc > 1 && strcmp(argv[1], "child") == 0)
        return argc == 2 ? CHILD_STATUS : 1;
    int rmap = 0, workers = 0, jobs = 0;
    uint64_t seed = 1;
    if (!parse_config(argc, argv, &rmap, &workers, &jobs, &seed)) {
        fprintf(stderr, "usage: aim [rmap] WORKERS JOBS [SEED] (or run as aim-W-J, "
                        "aim-rmap-W-J)\n");
        return 2;
    }
    if (workers < 1 || workers > MAX_WORKERS || jobs < 1) {
        fprintf(stderr, "aim: 1..%d workers, at least one job\n", MAX_WORKERS);
        return 2;
    }
    if (readlink("/proc/self/exe", self_path, sizeof(self_path) - 1) <= 0)
        snprintf(self_path, sizeof(self_path), "%s", argv[0]);
    int results = open("/dev/results", O_WRONLY);
    if (results >= 0)
        out_fd = results;
    window_fd = open("/dev/window", O_WRONLY);      /* ondol's model windows (docs/unix.md) */
    int warm_ok, done;
    if (rmap) {
        done = run_rmap(workers, jobs, seed, &warm_ok);
    } else {
        /* a warm-up round: the kernel's and server's caches settle before the baseline */
        warm_ok = run_workers(workers, 1, seed + 1000) == workers;
        window_begin();
        done = run_workers(workers, jobs, seed);
        window_end();
    }
    int ok = done == workers && warm_ok;
    dprintf(out_fd, "{\"type\":\"result\",\"bench\":\"aim\",\"test\":\"aim\",\"part\":\"%s\","
            "\"workers\":%d,\"jobs_per_worker\":%d,\"jobs\":%d,\"seed\":%llu,\"ok\":%s,"
            "\"tsc\":%llu,\"window\":%d", rmap ? "rmap" : "mix", workers, jobs, done * jobs,
            (unsigned long long)seed, ok ? "true" : "false", (unsigned long long)tsc,
            AIM_WINDOW);
    if (rmap)
        dprintf(out_fd, ",\"pages_per_job\":%d", RMAP_PAGES);
    if (ondol_counters) {
        print_counters("before", before);
        print_counters("after", after);
    }
    dprintf(out_fd, "}\n{\"type\":\"end\",\"bench\":\"aim\",\"status\":%d}\n", ok ? 0 : 1);
    sync();
    if (getpid() == 1)
        reboot(RB_POWER_OFF);
    return ok ? 0 : 1;
}
