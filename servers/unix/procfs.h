/*
 * /proc as a file system (procfs_tree.c; docs/unix.md, "Files", "/proc"). /proc is a
 * directory of the tmpfs tree marked as procfs's root by procfs_mount(). Its entries are
 * ordinary tmpfs inodes with a proc_kind (vfs.h), kept up to date on demand: before the
 * path walk looks a name up in a /proc directory (procfs_lookup) and before getdents64
 * lists one (procfs_list). So the walk, stat, readlink, getdents64, chdir and the
 * reference counts work on /proc unchanged:
 *   - /proc/PID directories exist for every process (zombies too) when looked up or
 *     listed; a directory whose process is gone is emptied and removed;
 *   - symlinks (self, PID/exe, PID/cwd, PID/fd/N) get their target set at each lookup;
 *   - a regular file's text is generated when it is opened (procfs_open) by procfs.c's
 *     formatters, and reads at any offset are served from that copy; it stats with size
 *     0, as on Linux.
 * The numbers come from the providers below, which unix-run implements (process.c and
 * the runtimes) and host/fake.c fakes weakly.
 */
#ifndef UNIX_PROCFS_H
#define UNIX_PROCFS_H
#include "devices.h"

/* What a /proc inode is (struct inode.proc_kind; 0: an ordinary tmpfs inode). */
enum proc_kind {
    PK_NONE,
    PK_ROOT, PK_ONDOL_DIR, PK_NET_DIR, PK_PID_DIR, PK_FD_DIR, /* directories */
    PK_SELF, PK_EXE, PK_CWD, PK_FD_LINK,                        /* symlinks */
    PK_MEMINFO, PK_UPTIME, PK_STAT, PK_LOADAVG, PK_VERSION, PK_MOUNTS,
    PK_FILESYSTEMS, PK_CPUINFO, PK_SYSCALLS, PK_KERNEL, PK_NET_DEV, PK_NET_ROUTE, /* system files */
    PK_VMCHECK, PK_NET_ARP,
    PK_PID_STAT, PK_PID_STATUS, PK_PID_CMDLINE,                 /* per-process files */
};

/* Mark /proc of the root tree (created when missing) as procfs's root and add its
 * files; boot calls it after unpacking the root archive. 0, -ENOTDIR (/proc is not a
 * directory), -ENOMEM. Calling it again does nothing. */
long procfs_mount(void);

/* For the walk (vfs_walk.c) and getdents64 (vfs_cwd.c): bring name (len bytes) of the
 * /proc directory dir up to date for the calling process (caller may be NULL: "self"
 * then does not resolve), or all of dir's entries before a listing. */
void procfs_lookup(struct proc *caller, struct inode *dir, const char *name, size_t len);
void procfs_list(struct proc *caller, struct inode *dir);
/* Open a /proc regular file (vfs_open_inode): its text now, one reference; -ENOENT when
 * its process is gone, -ENOMEM. A write open succeeds (root may), but writes fail: -EIO
 * for the system files (proc_reg_write), -EINVAL for a process's files. */
long procfs_open(struct ucall *c, struct inode *inode, unsigned flags, struct file **out);
/* Names in a /proc directory cannot be created (-ENOENT: /proc makes no name it does not
 * know), removed (-EPERM) or renamed to or from tmpfs (-EXDEV), as on Linux. */
static inline bool procfs_dir_fixed(const struct inode *dir)
{
    return dir && dir->proc_kind != PK_NONE;
}

/* The bytes an open /proc regular file reads (formatted at its open): true, or false
 * when f is not one (sendfile reads those from the inode; it refuses a process's /proc
 * files with -EINVAL, as Linux 6.1, and sends the system's). */
bool procfs_file_text(const struct file *f, const unsigned char **bytes, uint64_t *len);

/* The text of /proc/PID/fd/N's link for open file f: the file's path, "pipe:[INO]", or
 * "(deleted)" for an inode with no name left. Into buf (cap bytes, NUL-terminated). */
void procfs_file_path(struct proc *p, const struct file *f, char *buf, size_t cap);
/* The absolute path of a file that is not a directory, as seen from p's root (the first
 * name found), or "(deleted)" when it has no name left. */
void procfs_inode_path(struct proc *p, struct inode *ino, char *buf, size_t cap);

/* ==== providers (unix-run implements these; host/fake.c has weak fakes) ===============
 * Also proc_find and proc_next (unix.h, process.c): every live and zombie process. */

/* What /proc shows of process p. procfs_tree.c fills task's ids (pid, ppid, pgid, sid),
 * tty_nr, tpgid, umask, uid, gid and fd_slots from struct proc before the call; the
 * provider fills the rest of task (comm, state, threads, times, memory, signal masks)
 * and exe (absolute path of the executable, NULL for none: a zombie's exe link is
 * ENOENT) and args/args_len (the argument area: each argv string with its NUL). The
 * strings must stay valid until the next provider call. */
struct proc_view {
    struct procfs_task task;
    const char *exe;
    const char *args;
    size_t args_len;
};
void proc_view_of(struct proc *p, struct proc_view *v);

/* The system's numbers: memory, uptime and idle time, CPU times (stat.cpu points to
 * stat.ncpu entries owned by the provider), forks, running and blocked counts. */
struct proc_system_view {
    struct procfs_meminfo mem;
    uint64_t uptime_ns, idle_ns;
    struct procfs_stat stat;
};
void proc_system_view(struct proc_system_view *v);

/* The kernel's switch counters for /proc/ondol/syscalls: unix_switch_counts (runtime.h). */

#endif
