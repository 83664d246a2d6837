/*
 * The server's entries (runtime.h): what every runtime (MK, IK) calls for a forwarded
 * system call, a fault, an interrupted thread or console input, and the start: unpack
 * the root archive and run the first program (the option linux_init, /bin/sh by default)
 * as init, pid 1, whose fds 0, 1 and 2 are /dev/console, with /dev and /proc made first.
 * As on Linux, /dev/console does not become a controlling tty, so busybox sh as init
 * runs without job control (`setsid -c sh` starts one that has it).
 */
#include "devices.h"
#include "procfs.h"
#include "runtime.h"
#include "signal.h"

/* Resume thread t that came in from user mode (a fault, an interrupt): what is pending
 * is delivered and it is answered 0 (its registers kept), unless it ended or is held. */
static void resume_from_user(struct uthread *t)
{
    struct ucall c = {.proc = t->proc, .thread = t, .nr = -1};
    unix_answer(&c, SIGNAL_INTERRUPTED);
}

void unix_fault(int tid, unsigned vector, uint64_t error, uint64_t addr, uint64_t rip)
{
    struct uthread *t = uthread_find(tid);
    if (!t)
        return;
    signal_fault(t, vector, error, addr, rip);
    resume_from_user(t);            /* at the handler, or not at all when the process ended */
}

void unix_interrupted(int tid)
{
    struct uthread *t = uthread_find(tid);
    if (t)
        resume_from_user(t);
}

void unix_console_input(const char *buf, size_t n) { tty_input(buf, n); }

/* /dev's character devices (devices.c has their operations), made at boot as Linux's
 * devtmpfs does: the archive's /dev is empty. A name that exists is left alone. */
static long make_dev_nodes(void)
{
    static const struct {
        const char *name;
        unsigned major, minor;
    } nodes[] = {{"null", 1, 3}, {"zero", 1, 5}, {"full", 1, 7}, {"random", 1, 8},
                 {"urandom", 1, 9}, {"tty", 5, 0}, {"console", 5, 1},
                 {"results", 240, 0}, {"window", 240, 1}};
    struct walk w;
    long r = vfs_walk_from(vfs_root(), vfs_root(), "/dev", WALK_FOLLOW, &w);
    if (r < 0)
        return r;
    for (size_t i = 0; i < sizeof(nodes) / sizeof(nodes[0]) && r >= 0; i++) {
        size_t len = vfs_strlen(nodes[i].name);
        if (dir_find(w.inode, nodes[i].name, len))
            continue;
        struct inode *node = inode_new(S_IFCHR | 0666);
        if (!node) {
            r = -ENOMEM;
            break;
        }
        node->rdev_major = nodes[i].major;
        node->rdev_minor = nodes[i].minor;
        r = dir_link(w.inode, nodes[i].name, len, node);
        inode_put(node);
    }
    walk_done(&w);
    return r < 0 ? r : 0;
}

/* fds 0, 1, 2 of init: /dev/console, through the VFS as an open(2) would. */
static long open_console(struct proc *init)
{
    static const char path[] = "/dev/console";
    struct walk w;
    long r = vfs_walk(init, AT_FDCWD, path, WALK_FOLLOW, &w);
    if (r < 0)
        return r;
    for (int fd = 0; fd < 3 && r >= 0; fd++) {
        struct file *f;
        struct ucall c = {.proc = init};
        r = vfs_open_inode(&c, w.inode, O_RDWR, &f);
        if (r >= 0)
            r = fd_install(init, f, fd, false);       /* takes over the reference */
    }
    walk_done(&w);
    return r < 0 ? r : 0;
}

/* The first process: pid 1 in its own session and group, no controlling tty. */
static long start_init(const char *program)
{
    struct proc *init = proc_create(NULL);
    if (!init)
        return -ENOMEM;
    init->fds = fdtable_new();
    init->fs = fs_context_new();
    if (!init->fds || !init->fs)
        return -ENOMEM;
    long r = open_console(init);
    if (r < 0)
        return r;
    const char *argv[] = {program, NULL};
    const char *envp[] = {"HOME=/", "TERM=vt100", "PATH=/bin:/sbin:/usr/bin:/usr/sbin",
                          "PS1=ondol$ ", NULL};
    return exec_image(init, NULL, program, argv, envp);
}

static void say(const char *what, const char *detail, long err)
{
    char line[160];
    size_t n = 0;
    for (const char *s = what; *s && n < 100; s++)
        line[n++] = *s;
    for (const char *s = detail; *s && n < 150; s++)
        line[n++] = *s;
    line[n++] = ' ';
    char digits[24];
    int k = 0;
    unsigned long v = err < 0 ? (unsigned long)-err : (unsigned long)err;
    do
        digits[k++] = (char)('0' + v % 10);
    while ((v /= 10) && k < 20);
    if (err < 0)
        line[n++] = '-';
    while (k)
        line[n++] = digits[--k];
    line[n] = 0;
    unix_log(line);
}

void unix_start(void)
{
    size_t len = 0;
    const void *archive = rt_rootfs(&len);
    long r = archive ? vfs_unpack_cpio(archive, len) : -ENOENT;
    if (r < 0)
        say("unix: cannot unpack the root archive (build/rootfs.cpio): error", "", r);
    else if ((r = make_dev_nodes()) < 0)
        say("unix: cannot make /dev: error", "", r);
    else if ((r = procfs_mount()) < 0)
        say("unix: cannot mount /proc: error", "", r);
    static char program[256];
    if (rt_option("linux_init", program, sizeof(program)) <= 0)
        vfs_memcpy(program, "/bin/sh", 8);
    r = start_init(program);
    if (r < 0)
        say("unix: cannot start init ", program, r);
}

/* ondol's error codes as Linux's (runtime.h): the same in every placement, so here. */
long rt_errno(long e)
{
    switch (e) {
    case E_FAULT: return -EFAULT;
    case E_INVAL: return -EINVAL;
    case E_NOMEM: return -ENOMEM;
    case E_SRCH: return -ESRCH;
    case E_NOENT: return -ENOENT;
    case E_PERM: return -EPERM;
    case E_TIMEOUT: return -ETIMEDOUT;
    case E_2BIG: return -E2BIG;
    default: return e >= 0 ? e : -EIO;
    }
}
