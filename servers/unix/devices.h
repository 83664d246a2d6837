/*
 * unix-dev's parts of the UNIX server (docs/unix.md, "Devices and the tty"): pipes
 * (pipe.c), character devices (devices.c), the console tty and its line discipline
 * (tty.c), poll/select (poll.c), ioctl (devioctl.c) and the text of /proc files
 * (procfs.c). This header says what they give the rest of the server and what they need
 * from it.
 *
 * Concurrency: like every part of the server, these functions assume one call at a time
 * (the server task in MK, the core's lock in IK).
 */
#ifndef UNIX_DEV_H
#define UNIX_DEV_H
#include "unix.h"
#include "vfs.h"

/* The string functions every form's runtime provides (lib/libc in MK, the kernel's in
 * IK, the host's in tests); servers include no C library header. */
void *memcpy(void *restrict dst, const void *restrict src, size_t n);
void *memset(void *dst, int c, size_t n);
int memcmp(const void *a, const void *b, size_t n);
size_t strlen(const char *s);

/* ==== needed from the other parts ===================================================== */

/* Signals (unix-core). signal_send_pipe: SIGPIPE to the thread that wrote to a pipe
 * without readers. signal_send_pgrp: sig to every process of group pgid (pgid > 0).
 * proc_pgrp_session: the session of process group pgid, or -ESRCH if it has no member. */
void signal_send_pipe(struct proc *p);
void signal_send_pgrp(int pgid, int sig);
long proc_pgrp_session(int pgid);
/* Job control: p, in a background group of its controlling tty, reads it (SIGTTIN),
 * writes it under TOSTOP or changes its settings (SIGTTOU). As Linux's tty_check_change:
 * if p ignores or blocks sig, the result is -EIO for SIGTTIN and 0 (go on) for SIGTTOU;
 * if p's group is orphaned, -EIO; else sig goes to p's group and the result is what makes
 * the call restart once the group is continued (Linux's -ERESTARTSYS). */
long signal_tty_background(struct proc *p, int sig);

/* The console (unix-core's runtime): bytes out to the console, as they are. */
void console_write(const char *buf, size_t n);

/* ==== given to the other parts ======================================================== */

/* Poll wake-ups. A poll or select that must wait queues on poll_waiters (one list for
 * every file it watches: a call waits on one list). Whatever can make a file readable or
 * writable calls poll_wake(w): it wakes w (that file's readers or writers) and every
 * waiting poll. Files whose state never changes (regular files, /dev/null) need nothing. */
extern struct waitlist poll_waiters;
void poll_wake(struct waitlist *w);

/* Pipes: a connected read end and write end (O_NONBLOCK in flags applies to both), each
 * with one reference; 0 or -ENOMEM. */
long pipe_create(unsigned flags, struct file **read_end, struct file **write_end);

/* FIFOs (named pipes, mknod S_IFIFO): open of FIFO inode i, as fifo(7) says: a read-only
 * open waits for a writer and a write-only open for a reader (UNIX_BLOCKED; the open runs
 * again when the other side comes); O_NONBLOCK: a reader opens at once, a writer without
 * a reader is -ENXIO; O_RDWR opens at once. The pipe lives with the inode (fifo_free,
 * from tmpfs when the inode goes); its data is dropped when the last end closes. */
long fifo_open(struct ucall *c, struct inode *i, unsigned flags, struct file **out);
void fifo_free(struct inode *i);

/* Random bytes from one seeded deterministic generator (/dev/urandom, /dev/random,
 * getrandom, AT_RANDOM): the same sequence on every boot, so icount runs repeat exactly. */
void unix_random(void *buf, size_t n);
void unix_random_seed(uint64_t seed);

/* The console tty. tty_input is how console bytes arrive (unix-core's runtime calls it);
 * it runs the line discipline: echo, editing, signals to the foreground group. */
struct tty;
struct tty *tty_console(void);
void tty_input(const char *buf, size_t n);
/* /dev/tty and /dev/console opens (devices.c): f->priv becomes the tty, or -ENXIO when the
 * caller has no controlling tty. */
extern const struct file_ops tty_file_ops;
long tty_open_ctty(struct file *f, struct ucall *c);
long tty_open_console(struct file *f, struct ucall *c);
/* For /proc/PID/stat: p's controlling tty as a device number (0 if none) and its
 * foreground process group (-1 if none). */
unsigned tty_devnum_of(const struct proc *p);
int tty_fg_pgrp_of(const struct proc *p);

/* ==== /proc text (procfs.c) ===========================================================
 * Each function writes the whole text of one file into buf (at most cap bytes, cut short
 * when it does not fit) and returns its full length; the caller serves reads at any
 * offset from it. The inputs are plain values the core fills. Formats: proc(5), as
 * busybox ps, top, free and uptime parse them. */
struct procfs_meminfo {
    uint64_t total_kib, free_kib, available_kib, buffers_kib, cached_kib, shmem_kib;
    uint64_t slab_reclaimable_kib;
};
size_t procfs_meminfo(char *buf, size_t cap, const struct procfs_meminfo *m);

size_t procfs_uptime(char *buf, size_t cap, uint64_t uptime_ns, uint64_t idle_ns);

struct procfs_cpu {               /* in clock ticks of 1/100 s (USER_HZ) */
    uint64_t user, nice, system, idle, iowait, irq, softirq, steal;
};
struct procfs_stat {
    struct procfs_cpu total;
    const struct procfs_cpu *cpu;     /* one per CPU */
    unsigned ncpu;
    uint64_t interrupts, context_switches, boot_time_s, forks;
    unsigned running, blocked;
};
size_t procfs_stat(char *buf, size_t cap, const struct procfs_stat *s);

struct procfs_task {
    int pid, ppid, pgid, sid, tpgid, threads;
    unsigned tty_nr;
    char state;                   /* R, S, D, T, Z, X */
    const char *comm;             /* at most 15 characters are shown */
    uint64_t utime, stime, cutime, cstime, start_time;   /* clock ticks */
    uint64_t vsize_bytes, rss_pages, minflt, majflt;
    uint64_t sig_pending, sig_blocked, sig_ignored, sig_caught;
    int nice, processor;
    unsigned umask, fd_slots;
    unsigned uid[4], gid[4];      /* real, effective, saved, file system (as Uid: shows) */
};
size_t procfs_pid_stat(char *buf, size_t cap, const struct procfs_task *t);
size_t procfs_pid_status(char *buf, size_t cap, const struct procfs_task *t);
/* /proc/PID/cmdline: the argument area (argv strings, each with its NUL) as it is. */
size_t procfs_pid_cmdline(char *buf, size_t cap, const char *args, size_t len);

/* /proc/loadavg (loads are 0: no load average is kept), /proc/version (uname's fields),
 * /proc/mounts, /proc/filesystems, /proc/cpuinfo (ncpu entries of what busybox and
 * musl's sysconf read). */
size_t procfs_loadavg(char *buf, size_t cap, unsigned running, unsigned total, int last_pid);
size_t procfs_version(char *buf, size_t cap);
size_t procfs_mounts(char *buf, size_t cap);
size_t procfs_filesystems(char *buf, size_t cap);
size_t procfs_cpuinfo(char *buf, size_t cap, unsigned ncpu);
/* /proc/net/dev and /proc/net/route of the one interface (NETIF_NAME), in Linux's
 * layouts (busybox ifconfig and route read them): netif.c fills the view from the network
 * server; with no interface (present false) the files hold their headers only. Addresses
 * are host byte order; the route table is the gateway's default route and the subnet's. */
#define NETIF_NAME "eth0"
#define IFNAMSIZ 16                /* an interface name's bytes, its NUL included */
#define NETIF_INDEX 1              /* no loopback before it */
#define NETIF_MTU 1500
#define NETIF_TXQLEN 1000          /* what Linux reports for an Ethernet device */
#define IFF_UP 0x1                 /* its flags (SIOCGIFFLAGS, RTM_NEWLINK) */
#define IFF_BROADCAST 0x2
#define IFF_RUNNING 0x40
#define ARPHRD_ETHER 1
struct procfs_netif {
    bool present, up;
    uint32_t ip, mask, gw;
    uint64_t rx_bytes, rx_frames, rx_dropped, tx_bytes, tx_frames, tx_dropped;
};
size_t procfs_net_dev(char *buf, size_t cap, const struct procfs_netif *n);
size_t procfs_net_route(char *buf, size_t cap, const struct procfs_netif *n);
/* netif.c: the interface as the network server reports it (false: none); and the
 * interface ioctls of a socket (SIOCGIFCONF, SIOCGIFFLAGS, ...): -ENOTTY for any other. */
bool netif_view(struct procfs_netif *n);
/* The interface's address, netmask, gateway (host order; 0: none), MAC and flags
 * (NET_CF_UP, NET_CF_BRD: interfaces/net.idl), from op config: false when there is no
 * network server or device. */
struct netif_config {
    uint32_t ip, mask, gw;
    uint8_t mac[6];
    unsigned flags;
};
bool netif_config(struct netif_config *n);
long netif_ioctl(struct ucall *c, unsigned long cmd, uint64_t arg);
/* Changes with Linux's meaning (docs/net.md, "Changing the configuration"), shared by the
 * ioctls and rtnetlink; each 0 or -errno (the network server's, or -ENETDOWN). The
 * address ip/mask (ip 0: none) with the subnet's broadcast when brd: the routes through
 * the interface go with the old address, the default route too, as on Linux. */
long netif_set_address(uint32_t ip, uint32_t mask, bool brd);
/* The interface up or down: down, the routes go (the default route does not come back
 * with up, the subnet's does). */
long netif_set_up(bool up);
/* The default route through gw, or none (gw 0). */
long netif_set_gateway(uint32_t gw);
/* Whether gw can be a gateway of configuration n (on its subnet, the interface up): 0 or
 * -ENETUNREACH; Linux checks the next hop before it looks for the route already there. */
long netif_gateway_check(const struct netif_config *n, uint32_t gw);
/* The caller may change the network configuration (Linux: CAP_NET_ADMIN; here root). */
bool netif_may_change(const struct ucall *c);
/* The ARP cache for `ip neigh` and /proc/net/arp: up to max entries (state NEIGH_*). */
#define NETIF_NEIGH_MAX 16
enum { NEIGH_INCOMPLETE = 1, NEIGH_REACHABLE = 2, NEIGH_STALE = 3 };
struct netif_neigh {
    uint32_t ip;
    uint8_t mac[6];
    uint8_t state;
};
int netif_neighbours(struct netif_neigh *out, int max);
size_t procfs_net_arp(char *buf, size_t cap, const struct netif_neigh *n, int count);

/* /proc/ondol/syscalls (issue 10, item 7): "calls N", "unknown N", "thread_switches N",
 * "as_switches N", "idle_ns N" (time halted with nothing to run), then "nr NR NAME
 * COUNT" for every number called (unknown ones named "-") and "pid PID COUNT" for every
 * process: the counts of dispatch.c. */
struct procfs_calls {
    uint64_t thread_switches, as_switches;
    uint64_t idle_ns;             /* "idle_ns N": the CPUs' halted time (unix_idle_ns) */
};
size_t procfs_syscalls(char *buf, size_t cap, const struct procfs_calls *k);
/* /proc/ondol/kernel: the kernel's SYS_MEMINFO figures, "name N" a line (frames_free,
 * tasks, threads, aspaces, kobj_bytes, kobj_frames, the reverse map's rmap_inserts,
 * rmap_removes, rmap_cancelled, rmap_applied, rmap_ticks, rmap_families, rmap_full_passes
 * and rmap_foreign, the scheduler's moves_wake, moves_steal, moves_balance and
 * move_ticks): the SMP soak's baseline and `./ondol bench aim`'s counters (docs/smp.md). */
struct meminfo;
size_t procfs_kernel(char *buf, size_t cap, const struct meminfo *m);
/* /proc/ondol/vmcheck: the kernel's reverse-map checker run now (runtime.h rt_vm_check,
 * docs/memory.md): "mappings N" (anonymous and file PTEs of all address spaces),
 * "entries N" (reverse-map entries), "errors N" (0 when they agree). */
size_t procfs_vmcheck(char *buf, size_t cap, const uint64_t v[3]);

#endif
