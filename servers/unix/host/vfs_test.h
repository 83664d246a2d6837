/*
 * Helpers for the hosted tests of the file system (test_vfs_*.c, test_cpio.c): a process
 * with an fd table and a working directory at the root of a fresh tmpfs, strings and
 * buffers placed in its user memory, and SYS(name, args...) calling lx_name as the core
 * would. vfs_test_end() frees everything, so LeakSanitizer sees any inode or file that
 * was not released.
 */
#ifndef UNIX_VFS_TEST_H
#define UNIX_VFS_TEST_H
#include <string.h>
#include "fake.h"
#include "signal.h"
#include "vfs.h"

#define VT_MEM (4u << 20)
static struct proc *vt_proc;
static size_t vt_top;

static inline void vfs_test_begin(void)
{
    vt_proc = fake_proc(VT_MEM);
    vt_proc->fds = fdtable_new();
    vt_proc->fs = fs_context_new();
    vt_top = 0;
}

static inline void vfs_test_end(void)
{
    fdtable_put(vt_proc->fds);
    fs_context_put(vt_proc->fs);
    signal_exit(vt_proc);           /* a SIGPIPE a test caused is still pending */
    fake_proc_free(vt_proc);
    vfs_teardown();
}

/* n bytes of user memory (zeroed), 16-aligned; the scratch area wraps when full. */
static inline uint64_t ubuf(size_t n)
{
    n = (n + 15) & ~(size_t)15;
    if (vt_top + n > VT_MEM)
        vt_top = 0;
    uint64_t u = fake_user(vt_proc, vt_top);
    memset(fake_host(vt_proc, u), 0, n);
    vt_top += n;
    return u;
}

static inline uint64_t ustr(const char *s)
{
    uint64_t u = ubuf(strlen(s) + 1);
    memcpy(fake_host(vt_proc, u), s, strlen(s) + 1);
    return u;
}

static inline void *host(uint64_t u)
{
    return fake_host(vt_proc, u);
}

/* A user address no process has mapped (as LT_BADPTR in tests/linux/lt.h). */
#define BADPTR 8

static inline long vt_call(long (*fn)(struct ucall *), const uint64_t a[6])
{
    struct ucall c = {.proc = vt_proc};
    memcpy(c.a, a, sizeof(c.a));
    return fn(&c);
}
#define SYS(name, ...) vt_call(lx_##name, (const uint64_t[6]){__VA_ARGS__})

/* Shorthands on paths given as host strings. */
static inline long t_open(const char *path, long flags, long mode)
{
    return SYS(open, ustr(path), (uint64_t)flags, (uint64_t)mode);
}

static inline void t_put(const char *path, const char *text)
{
    long fd = t_open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    SYS(write, (uint64_t)fd, ustr(text), strlen(text));
    SYS(close, (uint64_t)fd);
}

static inline void t_touch(const char *path)
{
    SYS(close, (uint64_t)t_open(path, O_WRONLY | O_CREAT, 0644));
}

/* stat (following links: lstat when nofollow) into *st: the call's result. */
static inline long t_stat(const char *path, struct linux_stat *st, bool nofollow)
{
    uint64_t u = ubuf(sizeof(*st));
    long r = nofollow ? SYS(lstat, ustr(path), u) : SYS(stat, ustr(path), u);
    memcpy(st, host(u), sizeof(*st));
    return r;
}

static inline long t_fstat(long fd, struct linux_stat *st)
{
    uint64_t u = ubuf(sizeof(*st));
    long r = SYS(fstat, (uint64_t)fd, u);
    memcpy(st, host(u), sizeof(*st));
    return r;
}

/* The file's whole contents as a host string (up to cap - 1 bytes). */
static inline const char *t_read_all(const char *path, size_t cap)
{
    static char out[4096];
    long fd = t_open(path, O_RDONLY, 0);
    uint64_t u = ubuf(cap);
    long n = SYS(read, (uint64_t)fd, u, cap - 1);
    SYS(close, (uint64_t)fd);
    memset(out, 0, sizeof(out));
    if (n > 0)
        memcpy(out, host(u), (size_t)n);
    return out;
}
#endif
