/*
 * The text of /proc files (proc(5)), in the exact layout Linux 6.1 writes, which is what
 * busybox ps, top, free and uptime parse: "label: value" columns in /proc/meminfo, the 52
 * space-separated fields of /proc/PID/stat, the tab-separated lines of /proc/PID/status.
 * The numbers come from plain structs the core fills (devices.h); this file only formats, so
 * the hosted tests can check every byte.
 */
#include "devices.h"

#define RLIM_INFINITY_TEXT "18446744073709551615"
#define SIGCHLD_NUMBER 17
#define COMM_MAX 15              /* TASK_COMM_LEN - 1 */

/* Text written into a bounded buffer; len counts every byte, written or not. */
struct text {
    char *buf;
    size_t cap, len;
};

static void put_char(struct text *t, char ch)
{
    if (t->len < t->cap)
        t->buf[t->len] = ch;
    t->len++;
}

static void put_str(struct text *t, const char *s)
{
    while (*s)
        put_char(t, *s++);
}

/* v in base (8, 10 or 16), at least width digits/characters wide, padded with pad. */
static void put_num(struct text *t, uint64_t v, unsigned base, int width, char pad)
{
    char digits[24];
    int n = 0;
    do {
        digits[n++] = "0123456789abcdef"[v % base];
        v /= base;
    } while (v);
    for (int i = n; i < width; i++)
        put_char(t, pad);
    while (n)
        put_char(t, digits[--n]);
}

static void put_u(struct text *t, uint64_t v)
{
    put_num(t, v, 10, 0, ' ');
}

static void put_i(struct text *t, int64_t v)
{
    if (v < 0)
        put_char(t, '-');
    put_num(t, v < 0 ? 0 - (uint64_t)v : (uint64_t)v, 10, 0, ' ');
}

/* " v": the separator and a number, as in /proc/stat and /proc/PID/stat */
static void put_su(struct text *t, uint64_t v)
{
    put_char(t, ' ');
    put_u(t, v);
}

static void put_si(struct text *t, int64_t v)
{
    put_char(t, ' ');
    put_i(t, v);
}

/* ---- /proc/meminfo ---- */

/* "Label:" padded to 16 columns, the value right-aligned in 8, " kB" */
static void put_kb_line(struct text *t, const char *label, uint64_t kib)
{
    size_t n = strlen(label);
    put_str(t, label);
    put_char(t, ':');
    for (size_t i = n + 1; i < 16; i++)
        put_char(t, ' ');
    put_num(t, kib, 10, 8, ' ');
    put_str(t, " kB\n");
}

size_t procfs_meminfo(char *buf, size_t cap, const struct procfs_meminfo *m)
{
    struct text t = {buf, cap, 0};
    const struct { const char *label; uint64_t kib; } lines[] = {
        {"MemTotal", m->total_kib}, {"MemFree", m->free_kib},
        {"MemAvailable", m->available_kib}, {"Buffers", m->buffers_kib},
        {"Cached", m->cached_kib}, {"SwapCached", 0}, {"Active", 0}, {"Inactive", 0},
        {"SwapTotal", 0}, {"SwapFree", 0}, {"Dirty", 0}, {"Writeback", 0},
        {"Shmem", m->shmem_kib}, {"KReclaimable", m->slab_reclaimable_kib},
        {"Slab", m->slab_reclaimable_kib}, {"SReclaimable", m->slab_reclaimable_kib},
        {"SUnreclaim", 0},
    };
    for (size_t i = 0; i < sizeof lines / sizeof lines[0]; i++)
        put_kb_line(&t, lines[i].label, lines[i].kib);
    return t.len;
}

/* ---- /proc/uptime ---- */

static void put_seconds_2(struct text *t, uint64_t ns)
{
    put_u(t, ns / 1000000000);
    put_char(t, '.');
    put_num(t, ns / 10000000 % 100, 10, 2, '0');
}

size_t procfs_uptime(char *buf, size_t cap, uint64_t uptime_ns, uint64_t idle_ns)
{
    struct text t = {buf, cap, 0};
    put_seconds_2(&t, uptime_ns);
    put_char(&t, ' ');
    put_seconds_2(&t, idle_ns);
    put_char(&t, '\n');
    return t.len;
}

/* ---- /proc/stat ---- */

/* user nice system idle iowait irq softirq steal guest guest_nice */
static void put_cpu_times(struct text *t, const struct procfs_cpu *c)
{
    const uint64_t v[] = {c->user, c->nice, c->system, c->idle, c->iowait, c->irq,
                          c->softirq, c->steal, 0, 0};
    for (size_t i = 0; i < sizeof v / sizeof v[0]; i++)
        put_su(t, v[i]);
    put_char(t, '\n');
}

static void put_named(struct text *t, const char *name, uint64_t v)
{
    put_str(t, name);
    put_su(t, v);
    put_char(t, '\n');
}

size_t procfs_stat(char *buf, size_t cap, const struct procfs_stat *s)
{
    struct text t = {buf, cap, 0};
    put_str(&t, "cpu ");
    put_cpu_times(&t, &s->total);
    for (unsigned i = 0; i < s->ncpu; i++) {
        put_str(&t, "cpu");
        put_u(&t, i);
        put_cpu_times(&t, &s->cpu[i]);
    }
    put_named(&t, "intr", s->interrupts);
    put_named(&t, "ctxt", s->context_switches);
    put_named(&t, "btime", s->boot_time_s);
    put_named(&t, "processes", s->forks);
    put_named(&t, "procs_running", s->running);
    put_named(&t, "procs_blocked", s->blocked);
    put_str(&t, "softirq 0 0 0 0 0 0 0 0 0 0 0\n");
    return t.len;
}

/* ---- /proc/PID/stat ---- */

/* The command name, at most COMM_MAX bytes; escaped for status (\n, \t, \\). */
static void put_comm(struct text *t, const char *comm, bool escape)
{
    for (size_t i = 0; comm[i] && i < COMM_MAX; i++) {
        char ch = comm[i];
        if (escape && (ch == '\n' || ch == '\t' || ch == '\\')) {
            put_char(t, '\\');
            ch = ch == '\n' ? 'n' : ch == '\t' ? 't' : '\\';
        }
        put_char(t, ch);
    }
}

/* Fields 4-21: ppid pgrp session tty_nr tpgid flags minflt cminflt majflt cmajflt utime
 * stime cutime cstime priority nice num_threads itrealvalue */
static void put_stat_ids_and_times(struct text *t, const struct procfs_task *k)
{
    put_si(t, k->ppid);
    put_si(t, k->pgid);
    put_si(t, k->sid);
    put_su(t, k->tty_nr);
    put_si(t, k->tpgid);
    put_su(t, 0);                          /* flags */
    put_su(t, k->minflt);
    put_su(t, 0);
    put_su(t, k->majflt);
    put_su(t, 0);
    put_su(t, k->utime);
    put_su(t, k->stime);
    put_su(t, k->cutime);
    put_su(t, k->cstime);
    put_si(t, 20 + k->nice);               /* priority of a normal task */
    put_si(t, k->nice);
    put_si(t, k->threads);
    put_su(t, 0);
}

/* Fields 22-52: starttime vsize rss rsslim, the code/stack addresses (0: hidden), the
 * signal masks (low 31 bits, as Linux), wchan nswap cnswap exit_signal processor
 * rt_priority policy blkio guest cguest, the data/arg/env addresses, exit_code */
static void put_stat_memory_and_signals(struct text *t, const struct procfs_task *k)
{
    put_su(t, k->start_time);
    put_su(t, k->vsize_bytes);
    put_su(t, k->rss_pages);
    put_str(t, " " RLIM_INFINITY_TEXT);
    for (int i = 0; i < 5; i++)
        put_su(t, 0);                      /* startcode endcode startstack esp eip */
    put_su(t, k->sig_pending & 0x7fffffff);
    put_su(t, k->sig_blocked & 0x7fffffff);
    put_su(t, k->sig_ignored & 0x7fffffff);
    put_su(t, k->sig_caught & 0x7fffffff);
    put_su(t, 0);                          /* wchan */
    put_su(t, 0);
    put_su(t, 0);
    put_si(t, SIGCHLD_NUMBER);
    put_si(t, k->processor);
    for (int i = 0; i < 13; i++)
        put_su(t, 0);                      /* rt_priority ... exit_code */
}

size_t procfs_pid_stat(char *buf, size_t cap, const struct procfs_task *k)
{
    struct text t = {buf, cap, 0};
    put_i(&t, k->pid);
    put_str(&t, " (");
    put_comm(&t, k->comm, false);
    put_str(&t, ") ");
    put_char(&t, k->state);
    put_stat_ids_and_times(&t, k);
    put_stat_memory_and_signals(&t, k);
    put_char(&t, '\n');
    return t.len;
}

/* ---- /proc/PID/status ---- */

static const char *state_name(char state)
{
    switch (state) {
    case 'R': return "R (running)";
    case 'S': return "S (sleeping)";
    case 'D': return "D (disk sleep)";
    case 'T': return "T (stopped)";
    case 'Z': return "Z (zombie)";
    default: return "X (dead)";
    }
}

static void put_field_i(struct text *t, const char *label, int64_t v)
{
    put_str(t, label);
    put_char(t, '\t');
    put_i(t, v);
    put_char(t, '\n');
}

static void put_field_kb(struct text *t, const char *label, uint64_t kib)
{
    put_str(t, label);
    put_char(t, '\t');
    put_num(t, kib, 10, 8, ' ');
    put_str(t, " kB\n");
}

static void put_field_mask(struct text *t, const char *label, uint64_t mask)
{
    put_str(t, label);
    put_char(t, '\t');
    put_num(t, mask, 16, 16, '0');
    put_char(t, '\n');
}

/* "Uid:\treal\teffective\tsaved\tfs" (one user: all four the same) */
static void put_ids4(struct text *t, const char *label, const unsigned id[4])
{
    put_str(t, label);
    for (int i = 0; i < 4; i++) {
        put_char(t, '\t');
        put_u(t, id[i]);
    }
    put_char(t, '\n');
}

static void put_status_head(struct text *t, const struct procfs_task *k)
{
    put_str(t, "Name:\t");
    put_comm(t, k->comm, true);
    put_str(t, "\nUmask:\t");
    put_num(t, k->umask, 8, 4, '0');
    put_str(t, "\nState:\t");
    put_str(t, state_name(k->state));
    put_char(t, '\n');
    put_field_i(t, "Tgid:", k->pid);
    put_field_i(t, "Ngid:", 0);
    put_field_i(t, "Pid:", k->pid);
    put_field_i(t, "PPid:", k->ppid);
    put_field_i(t, "TracerPid:", 0);
    put_ids4(t, "Uid:", k->uid);
    put_ids4(t, "Gid:", k->gid);
    put_field_i(t, "FDSize:", k->fd_slots);
    put_str(t, "Groups:\t \n");             /* Linux ends the list with a space */
}

size_t procfs_pid_status(char *buf, size_t cap, const struct procfs_task *k)
{
    struct text t = {buf, cap, 0};
    put_status_head(&t, k);
    put_field_i(&t, "NStgid:", k->pid);
    put_field_i(&t, "NSpid:", k->pid);
    put_field_i(&t, "NSpgid:", k->pgid);
    put_field_i(&t, "NSsid:", k->sid);
    put_field_kb(&t, "VmSize:", k->vsize_bytes / 1024);
    put_field_kb(&t, "VmRSS:", k->rss_pages * 4);
    put_field_i(&t, "Threads:", k->threads);
    put_field_mask(&t, "SigPnd:", k->sig_pending);
    put_field_mask(&t, "ShdPnd:", 0);
    put_field_mask(&t, "SigBlk:", k->sig_blocked);
    put_field_mask(&t, "SigIgn:", k->sig_ignored);
    put_field_mask(&t, "SigCgt:", k->sig_caught);
    return t.len;
}

size_t procfs_pid_cmdline(char *buf, size_t cap, const char *args, size_t len)
{
    if (len && cap)
        memcpy(buf, args, len < cap ? len : cap);
    return len;
}

/* ---- /proc/loadavg, version, mounts, filesystems, cpuinfo ---- */

size_t procfs_loadavg(char *buf, size_t cap, unsigned running, unsigned total, int last_pid)
{
    struct text t = {buf, cap, 0};
    put_str(&t, "0.00 0.00 0.00 ");
    put_u(&t, running);
    put_char(&t, '/');
    put_u(&t, total);
    put_char(&t, ' ');
    put_i(&t, last_pid);
    put_char(&t, '\n');
    return t.len;
}

/* The same release and version as uname (misc.c). */
size_t procfs_version(char *buf, size_t cap)
{
    struct text t = {buf, cap, 0};
    put_str(&t, "Linux version 6.1.0-ondol (root@ondol) (gcc) #1 ondol UNIX server\n");
    return t.len;
}

size_t procfs_mounts(char *buf, size_t cap)
{
    struct text t = {buf, cap, 0};
    put_str(&t, "rootfs / rootfs rw 0 0\n");
    put_str(&t, "proc /proc proc rw,nosuid,nodev,noexec,relatime 0 0\n");
    return t.len;
}

size_t procfs_filesystems(char *buf, size_t cap)
{
    struct text t = {buf, cap, 0};
    put_str(&t, "nodev\trootfs\nnodev\ttmpfs\nnodev\tproc\nnodev\tpipefs\n");
    return t.len;
}

/* One block per CPU, separated by an empty line, in Linux's "name\t: value" layout. */
size_t procfs_cpuinfo(char *buf, size_t cap, unsigned ncpu)
{
    struct text t = {buf, cap, 0};
    for (unsigned i = 0; i < ncpu; i++) {
        put_str(&t, "processor\t: ");
        put_u(&t, i);
        put_str(&t, "\nvendor_id\t: ondol\nmodel name\t: QEMU Virtual CPU\n"
                    "cpu MHz\t\t: 1000.000\ncpu cores\t: ");
        put_u(&t, ncpu);
        put_str(&t, "\nflags\t\t: fpu tsc msr pae cx8 apic sep cmov pat clflush mmx fxsr "
                    "sse sse2 syscall nx lm\n\n");
    }
    return t.len;
}

/* ---- /proc/net/dev and /proc/net/route ---- */

size_t procfs_net_dev(char *buf, size_t cap, const struct procfs_netif *n)
{
    struct text t = {buf, cap, 0};
    put_str(&t, "Inter-|   Receive                                                |  Transmit\n"
                " face |bytes    packets errs drop fifo frame compressed multicast|"
                "bytes    packets errs drop fifo colls carrier compressed\n");
    if (!n->present)
        return t.len;
    /* Linux's "%6s: %7llu %7llu %4llu %4llu %4llu %5llu %10llu %9llu %8llu %7llu %4llu
     * %4llu %4llu %5llu %7llu %10llu" */
    static const int width[16] = {7, 7, 4, 4, 4, 5, 10, 9, 8, 7, 4, 4, 4, 5, 7, 10};
    const uint64_t v[16] = {n->rx_bytes, n->rx_frames, 0, n->rx_dropped, 0, 0, 0, 0,
                            n->tx_bytes, n->tx_frames, 0, n->tx_dropped, 0, 0, 0, 0};
    put_str(&t, "  " NETIF_NAME ":");
    for (int k = 0; k < 16; k++) {
        put_char(&t, ' ');
        put_num(&t, v[k], 10, width[k], ' ');
    }
    put_char(&t, '\n');
    return t.len;
}

/* An address as Linux prints a __be32 with %08X on x86: the bytes in memory order read
 * as a little-endian number. */
static void put_be32_hex(struct text *t, uint32_t host_order)
{
    uint32_t v = host_order >> 24 | (host_order >> 8 & 0xff00) | (host_order << 8 & 0xff0000) |
                 host_order << 24;
    for (int shift = 28; shift >= 0; shift -= 4)
        put_char(t, "0123456789ABCDEF"[v >> shift & 0xf]);
}

/* One line padded with spaces to 127 columns, as Linux's seq_pad. */
static void pad_line(struct text *t, size_t start)
{
    while (t->len - start < 127)
        put_char(t, ' ');
    put_char(t, '\n');
}

static void put_route(struct text *t, uint32_t dest, uint32_t gw, unsigned flags, uint32_t mask)
{
    size_t start = t->len;
    put_str(t, NETIF_NAME "\t");
    put_be32_hex(t, dest);
    put_char(t, '\t');
    put_be32_hex(t, gw);
    put_char(t, '\t');
    put_num(t, flags, 16, 4, '0');
    put_str(t, "\t0\t0\t0\t");
    put_be32_hex(t, mask);
    put_str(t, "\t0\t0\t0");
    pad_line(t, start);
}

#define RTF_UP 0x1
#define RTF_GATEWAY 0x2

size_t procfs_net_route(char *buf, size_t cap, const struct procfs_netif *n)
{
    struct text t = {buf, cap, 0};
    put_str(&t, "Iface\tDestination\tGateway \tFlags\tRefCnt\tUse\tMetric\tMask\t\tMTU\tWindow\tIRTT");
    pad_line(&t, 0);
    if (!n->present || !n->ip || !n->up)  /* down: Linux removes its routes */
        return t.len;
    if (n->gw)
        put_route(&t, 0, n->gw, RTF_UP | RTF_GATEWAY, 0);
    put_route(&t, n->ip & n->mask, 0, RTF_UP, n->mask);
    return t.len;
}

/* Text padded with spaces to width, as printf's %-Ns. */
static void put_padded(struct text *t, const char *s, size_t width)
{
    size_t start = t->len;
    put_str(t, s);
    while (t->len - start < width)
        put_char(t, ' ');
}

/* /proc/net/arp: Linux's "%-16s 0x%-10x0x%-10x%-17s     %-8s %s\n" per entry, flags
 * ATF_COM (0x2) once the MAC is known; an incomplete entry has zeros. */
size_t procfs_net_arp(char *buf, size_t cap, const struct netif_neigh *n, int count)
{
    struct text t = {buf, cap, 0};
    put_str(&t, "IP address       HW type     Flags       HW address            Mask     Device\n");
    for (int i = 0; i < count; i++) {
        char ip[16], mac[18];
        struct text a = {ip, sizeof ip, 0}, m = {mac, sizeof mac, 0};
        for (int k = 0; k < 4; k++) {
            put_u(&a, n[i].ip >> (24 - 8 * k) & 0xff);
            put_char(&a, k < 3 ? '.' : '\0');
        }
        for (int k = 0; k < 6; k++) {
            put_num(&m, n[i].mac[k], 16, 2, '0');
            put_char(&m, k < 5 ? ':' : '\0');
        }
        put_padded(&t, ip, 17);
        put_padded(&t, "0x1", 12);
        put_padded(&t, n[i].state == NEIGH_INCOMPLETE ? "0x0" : "0x2", 12);
        put_str(&t, mac);
        put_str(&t, "     *        " NETIF_NAME "\n");
    }
    return t.len;
}

/* ---- /proc/ondol/syscalls ---- */

static void put_calls_by_number(struct text *t)
{
    for (long nr = 0; nr < UNIX_NR_MAX; nr++) {
        uint64_t n = unix_call_count(nr);
        if (!n)
            continue;
        const char *name = unix_call_name(nr);
        put_str(t, "nr ");
        put_u(t, (uint64_t)nr);
        put_char(t, ' ');
        put_str(t, name ? name : "-");
        put_su(t, n);
        put_char(t, '\n');
    }
}

size_t procfs_kernel(char *buf, size_t cap, const struct meminfo *m)
{
    struct text t = {buf, cap, 0};
    put_named(&t, "frames_total", m->frames_total);
    put_named(&t, "frames_free", m->frames_free);
    put_named(&t, "tasks", m->tasks);
    put_named(&t, "threads", m->threads);
    put_named(&t, "aspaces", m->aspaces);
    put_named(&t, "kobj_bytes", m->kobj_bytes);
    put_named(&t, "kobj_frames", m->kobj_frames);
    put_named(&t, "rmap_inserts", m->rmap_inserts);
    put_named(&t, "rmap_removes", m->rmap_removes);
    put_named(&t, "rmap_cancelled", m->rmap_cancelled);
    put_named(&t, "rmap_applied", m->rmap_applied);
    put_named(&t, "rmap_ticks", m->rmap_probe_ticks);
    put_named(&t, "rmap_families", m->rmap_families);
    put_named(&t, "rmap_full_passes", m->rmap_full_passes);
    put_named(&t, "rmap_foreign", m->rmap_foreign);
    put_named(&t, "moves_wake", m->moves_wake);
    put_named(&t, "moves_steal", m->moves_steal);
    put_named(&t, "moves_balance", m->moves_balance);
    put_named(&t, "move_ticks", m->move_ticks);
    return t.len;
}

size_t procfs_vmcheck(char *buf, size_t cap, const uint64_t v[3])
{
    struct text t = {buf, cap, 0};
    put_named(&t, "mappings", v[0]);
    put_named(&t, "entries", v[1]);
    put_named(&t, "errors", v[2]);
    return t.len;
}

size_t procfs_syscalls(char *buf, size_t cap, const struct procfs_calls *k)
{
    struct text t = {buf, cap, 0};
    put_named(&t, "calls", unix_total_count());
    put_named(&t, "unknown", unix_unknown_count());
    put_named(&t, "thread_switches", k->thread_switches);
    put_named(&t, "as_switches", k->as_switches);
    put_named(&t, "idle_ns", k->idle_ns);
    put_calls_by_number(&t);
    for (struct proc *p = proc_next(NULL); p; p = proc_next(p)) {
        put_str(&t, "pid ");
        put_i(&t, p->pid);
        put_su(&t, p->calls);
        put_char(&t, '\n');
    }
    return t.len;
}
