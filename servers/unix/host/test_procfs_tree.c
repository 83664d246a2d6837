/* /proc as a file system (procfs_tree.c, procfs_files.c) through the system calls:
 * listing, pid directories appearing and going, self/exe/cwd/fd links, reads at offsets,
 * lseek, stat as Linux shows it, execve through /proc/self/exe, the refusals of a
 * read-only file system, /proc/ondol/syscalls, and every allocation failing in turn.
 * The cases of tests/linux/dev.c's test_proc and sh_proc.sh that the VFS answers. */
#include <stdio.h>
#include "vfs_test.h"

static struct proc *init, *other, *zombie;

/* init (pid 1) is the caller: it shares vt_proc's fd table and fs context, so calls made
 * as vt_proc act as pid 1; other (pid 2) has its own, with its cwd in /tmp. */
static void procs_begin(void)
{
    init = proc_create(NULL);
    init->fds = vt_proc->fds;
    init->fs = vt_proc->fs;
    vt_proc->pid = init->pid;
    other = proc_create(init);
    other->fds = fdtable_new();
    other->fs = fs_context_new();
    zombie = proc_create(init);
    zombie->zombie = true;
}

static void procs_end(void)
{
    init->fds = NULL;
    init->fs = NULL;
    proc_free(init);
    if (other) {
        fdtable_put(other->fds);
        fs_context_put(other->fs);
        proc_free(other);
    }
    proc_free(zombie);
}

static long t_readlink(const char *path, char *out, size_t cap)
{
    uint64_t u = ubuf(cap);
    long n = SYS(readlink, ustr(path), u, cap - 1);
    memset(out, 0, cap);
    if (n > 0)
        memcpy(out, host(u), (size_t)n);
    return n;
}

/* The names getdents64 gives for path, joined by spaces (in listing order). */
static const char *t_list(const char *path)
{
    static char out[4096];
    long fd = t_open(path, O_RDONLY | O_DIRECTORY, 0);
    uint64_t u = ubuf(8192);
    long n = SYS(getdents64, (uint64_t)fd, u, 8192);
    SYS(close, (uint64_t)fd);
    out[0] = 0;
    for (long pos = 0; pos < n;) {
        const unsigned char *rec = (const unsigned char *)host(u) + pos;
        uint16_t reclen;
        memcpy(&reclen, rec + 16, 2);
        const char *name = (const char *)rec + 19;
        if (strcmp(name, ".") && strcmp(name, "..")) {
            strcat(out, out[0] ? " " : "");
            strcat(out, name);
        }
        pos += reclen;
    }
    return out;
}

static void test_mount_and_list(void)
{
    CHECK_EQ(procfs_mount(), 0);
    CHECK_EQ(procfs_mount(), 0);                     /* again: nothing changes */
    struct linux_stat st;
    CHECK_EQ(t_stat("/proc", &st, false), 0);
    CHECK_EQ(st.st_mode, S_IFDIR | 0555);
    CHECK_EQ(strcmp(t_list("/proc"), "meminfo uptime stat loadavg version mounts "
                                     "filesystems cpuinfo ondol net 3 2 1 self"), 0);
    CHECK_EQ(strcmp(t_list("/proc/ondol"), "syscalls kernel vmcheck"), 0);
    CHECK_EQ(strcmp(t_list("/proc/1"), "stat status cmdline fd exe cwd"), 0);
    CHECK_EQ(strcmp(t_list("/proc/3"), "stat status cmdline fd"), 0);   /* zombie: no exe, cwd */
    CHECK_EQ(t_stat("/proc/meminfo", &st, false), 0);
    CHECK_EQ(st.st_mode, S_IFREG | 0444);
    CHECK_EQ(st.st_size, 0);                         /* as Linux: text has no size */
    CHECK_EQ(t_stat("/proc/1/fd", &st, false), 0);
    CHECK_EQ(st.st_mode, S_IFDIR | 0500);
    CHECK_EQ(t_stat("/proc/999/stat", &st, false), -ENOENT);
    CHECK_EQ(t_stat("/proc/0", &st, false), -ENOENT);
    CHECK_EQ(t_stat("/proc/01", &st, false), -ENOENT);
    CHECK_EQ(t_stat("/proc/1x", &st, false), -ENOENT);
    CHECK_EQ(t_stat("/proc/2/stat", &st, false), 0);  /* looked up without a listing */
}

static void test_self_and_files(void)
{
    char buf[256];
    CHECK_EQ(t_readlink("/proc/self", buf, sizeof buf), 1);
    CHECK_EQ(strcmp(buf, "1"), 0);
    struct linux_stat st;
    CHECK_EQ(t_stat("/proc/self", &st, true), 0);
    CHECK_EQ(st.st_mode, S_IFLNK | 0777);
    const char *stat = t_read_all("/proc/self/stat", 1024);
    CHECK_EQ(strncmp(stat, "1 (fake) R 0 1 1 ", 17), 0);
    CHECK(strstr(t_read_all("/proc/self/status", 2048), "Name:\tfake\nUmask:\t0022\n"));
    CHECK(strstr(t_read_all("/proc/2/status", 2048), "\nPPid:\t1\n"));
    CHECK(strstr(t_read_all("/proc/3/status", 2048), "\nState:\tZ (zombie)\n"));
    CHECK(strstr(t_read_all("/proc/meminfo", 2048), "MemTotal:         131072 kB\n"));
    CHECK_EQ(strcmp(t_read_all("/proc/loadavg", 256), "0.00 0.00 0.00 1/3 3\n"), 0);
    CHECK_EQ(strncmp(t_read_all("/proc/stat", 1024), "cpu  6 8 10 12 ", 15), 0);
    CHECK(strstr(t_read_all("/proc/cpuinfo", 2048), "processor\t: 1\n"));
    CHECK(strstr(t_read_all("/proc/mounts", 256), "proc /proc proc "));
    CHECK(strstr(t_read_all("/proc/filesystems", 256), "nodev\tproc\n"));
    CHECK_EQ(strncmp(t_read_all("/proc/version", 256), "Linux version 6.1.0-ondol ", 26), 0);
    fake_now_ns = 12340000000ull;
    CHECK_EQ(strncmp(t_read_all("/proc/uptime", 256), "12.34 ", 6), 0);
    fake_now_ns = 0;
}

static void test_offsets(void)
{
    long fd = t_open("/proc/self/cmdline", O_RDONLY, 0);
    uint64_t u = ubuf(64);
    CHECK_EQ(SYS(read, (uint64_t)fd, u, 64), 8);
    CHECK_EQ(memcmp(host(u), "fake\0-x", 8), 0);
    CHECK_EQ(SYS(read, (uint64_t)fd, u, 64), 0);
    CHECK_EQ(SYS(pread64, (uint64_t)fd, u, 2, 5), 2);
    CHECK_EQ(memcmp(host(u), "-x", 2), 0);
    CHECK_EQ(SYS(lseek, (uint64_t)fd, 1, SEEK_SET), 1);
    CHECK_EQ(SYS(read, (uint64_t)fd, u, 3), 3);
    CHECK_EQ(memcmp(host(u), "ake", 3), 0);
    CHECK_EQ(SYS(lseek, (uint64_t)fd, 1, SEEK_CUR), 5);
    CHECK_EQ(SYS(lseek, (uint64_t)fd, 0, SEEK_END), -EINVAL);
    CHECK_EQ(SYS(write, (uint64_t)fd, u, 1), -EBADF);
    CHECK_EQ(SYS(read, (uint64_t)fd, BADPTR, 1), -EFAULT);
    struct linux_stat st;
    CHECK_EQ(t_fstat(fd, &st), 0);
    CHECK_EQ(st.st_size, 0);
    SYS(close, (uint64_t)fd);
    /* the text is taken at open: a later change does not show in an open file */
    fd = t_open("/proc/1/status", O_RDONLY, 0);
    fake_view_comm = "renamed";
    CHECK_EQ(SYS(read, (uint64_t)fd, u, 10), 10);
    CHECK_EQ(memcmp(host(u), "Name:\tfake", 10), 0);
    SYS(close, (uint64_t)fd);
    CHECK_EQ(strncmp(t_read_all("/proc/1/status", 64), "Name:\trenamed", 13), 0);
    fake_view_comm = "fake";
}

static void test_links(void)
{
    char buf[256];
    SYS(mkdir, ustr("/bin"), 0755);
    SYS(mkdir, ustr("/tmp"), 01777);
    t_put("/bin/fake", "\177ELF");
    SYS(chmod, ustr("/bin/fake"), 0755);
    CHECK_EQ(t_readlink("/proc/self/exe", buf, sizeof buf), 9);
    CHECK_EQ(strcmp(buf, "/bin/fake"), 0);
    struct inode *exe = NULL;
    CHECK_EQ(vfs_exec_inode(vt_proc, "/proc/self/exe", &exe), 0);   /* busybox re-execs */
    struct linux_stat st;
    t_stat("/bin/fake", &st, false);
    CHECK(exe && exe->ino == st.st_ino);
    inode_put(exe);
    CHECK_EQ(t_readlink("/proc/3/exe", buf, sizeof buf), -ENOENT);   /* a zombie */
    CHECK_EQ(t_readlink("/proc/1/cwd", buf, sizeof buf), 1);
    CHECK_EQ(strcmp(buf, "/"), 0);
    struct inode *old = other->fs->cwd;
    struct walk w;
    vfs_walk_from(vfs_root(), vfs_root(), "/tmp", 0, &w);
    other->fs->cwd = inode_get(w.inode);
    walk_done(&w);
    inode_put(old);
    CHECK_EQ(t_readlink("/proc/2/cwd", buf, sizeof buf), 4);
    CHECK_EQ(strcmp(buf, "/tmp"), 0);
    CHECK_EQ(SYS(chdir, ustr("/proc/self/cwd")), 0);   /* a link to a directory */
    CHECK_EQ(SYS(chdir, ustr("/")), 0);
}

static void test_fds(void)
{
    char buf[256];
    t_put("/tmp/f", "x");
    long f = t_open("/tmp/f", O_RDONLY, 0);
    long d = t_open("/tmp", O_RDONLY, 0);
    uint64_t fds = ubuf(8);
    CHECK_EQ(SYS(pipe2, fds, 0), 0);
    int pfd[2];
    memcpy(pfd, host(fds), 8);
    CHECK_EQ(strcmp(t_list("/proc/self/fd"), "0 1 2 3 4 5 6"), 0);   /* 6: the listing */
    snprintf(buf, sizeof buf, "/proc/self/fd/%ld", f);
    char got[256];
    CHECK_EQ(t_readlink(buf, got, sizeof got), 6);
    CHECK_EQ(strcmp(got, "/tmp/f"), 0);
    snprintf(buf, sizeof buf, "/proc/1/fd/%ld", d);
    t_readlink(buf, got, sizeof got);
    CHECK_EQ(strcmp(got, "/tmp"), 0);
    snprintf(buf, sizeof buf, "/proc/self/fd/%d", pfd[0]);
    t_readlink(buf, got, sizeof got);
    CHECK_EQ(strncmp(got, "pipe:[", 6), 0);
    long m = t_open("/proc/meminfo", O_RDONLY, 0);       /* a /proc file's own path */
    snprintf(buf, sizeof buf, "/proc/self/fd/%ld", m);
    t_readlink(buf, got, sizeof got);
    CHECK_EQ(strcmp(got, "/proc/meminfo"), 0);
    SYS(close, (uint64_t)m);
    /* reading through the link opens the file again */
    snprintf(buf, sizeof buf, "/proc/self/fd/%ld", f);
    CHECK_EQ(strcmp(t_read_all(buf, 16), "x"), 0);
    SYS(unlink, ustr("/tmp/f"));
    snprintf(buf, sizeof buf, "/proc/self/fd/%ld", f);
    t_readlink(buf, got, sizeof got);
    CHECK_EQ(strcmp(got, "(deleted)"), 0);
    SYS(close, (uint64_t)pfd[0]);
    SYS(close, (uint64_t)pfd[1]);
    snprintf(buf, sizeof buf, "/proc/self/fd/%d", pfd[0]);
    CHECK_EQ(t_readlink(buf, got, sizeof got), -ENOENT);
    CHECK_EQ(strcmp(t_list("/proc/self/fd"), "0 1 2 3 4"), 0);
    CHECK_EQ(strcmp(t_list("/proc/2/fd"), ""), 0);
    CHECK_EQ(t_readlink("/proc/self/fd/999", got, sizeof got), -ENOENT);
    SYS(close, (uint64_t)f);
    SYS(close, (uint64_t)d);
}

static void test_read_only(void)
{
    struct linux_stat st;
    long fd = t_open("/proc/meminfo", O_WRONLY, 0);     /* root may, as on Linux */
    CHECK(fd >= 0);
    CHECK_EQ(SYS(write, (uint64_t)fd, ustr("x"), 1), -EIO);
    SYS(close, (uint64_t)fd);
    fd = t_open("/proc/self/stat", O_RDWR, 0);
    CHECK_EQ(SYS(write, (uint64_t)fd, ustr("x"), 1), -EINVAL);
    SYS(close, (uint64_t)fd);
    CHECK_EQ(t_open("/proc/new", O_CREAT | O_WRONLY, 0644), -ENOENT);   /* the peer */
    CHECK_EQ(SYS(mkdir, ustr("/proc/d"), 0755), -ENOENT);
    CHECK_EQ(SYS(mkdir, ustr("/proc/1/d"), 0755), -ENOENT);
    CHECK_EQ(SYS(mknod, ustr("/proc/f"), S_IFIFO | 0600, 0), -ENOENT);
    CHECK_EQ(SYS(mkdir, ustr("/proc/meminfo"), 0755), -EEXIST);
    CHECK_EQ(SYS(unlink, ustr("/proc/meminfo")), -EPERM);
    CHECK_EQ(SYS(rmdir, ustr("/proc/1")), -EPERM);
    CHECK_EQ(SYS(rmdir, ustr("/proc")), -EBUSY);
    CHECK_EQ(SYS(symlink, ustr("/x"), ustr("/proc/l")), -ENOENT);
    CHECK_EQ(SYS(rename, ustr("/proc/meminfo"), ustr("/tmp/m")), -EXDEV);
    CHECK_EQ(SYS(rename, ustr("/bin/fake"), ustr("/proc/fake")), -EXDEV);
    CHECK_EQ(SYS(link, ustr("/proc/meminfo"), ustr("/tmp/m")), -EXDEV);
    CHECK_EQ(t_stat("/proc/meminfo", &st, false), 0);   /* all still there */
}

static void test_gone(void)
{
    struct linux_stat st;
    long fd = t_open("/proc/2/status", O_RDONLY, 0);
    long dfd = t_open("/proc/2", O_RDONLY | O_DIRECTORY, 0);
    CHECK(fd >= 0 && dfd >= 0);
    fdtable_put(other->fds);
    fs_context_put(other->fs);
    proc_free(other);
    other = NULL;
    CHECK_EQ(t_stat("/proc/2", &st, false), -ENOENT);
    CHECK_EQ(strcmp(t_list("/proc"), "meminfo uptime stat loadavg version mounts "
                                     "filesystems cpuinfo ondol net 3 1 self"), 0);
    uint64_t u = ubuf(16);
    CHECK_EQ(SYS(read, (uint64_t)fd, u, 5), 5);          /* the text taken at open */
    CHECK_EQ(SYS(newfstatat, (uint64_t)dfd, ustr("stat"), ubuf(sizeof st), 0), -ENOENT);
    SYS(close, (uint64_t)fd);
    SYS(close, (uint64_t)dfd);
    other = proc_create(init);                            /* pid 4: a new directory */
    other->fds = fdtable_new();
    other->fs = fs_context_new();
    CHECK_EQ(t_stat("/proc/4/cmdline", &st, false), 0);
}

static void test_syscalls_file(void)
{
    struct ucall c = fake_call(init, 39, 0, 0, 0, 0);    /* getpid, through dispatch */
    CHECK_EQ(unix_dispatch(&c), 1);
    c = fake_call(init, 499, 0, 0, 0, 0);
    CHECK_EQ(unix_dispatch(&c), -ENOSYS);
    const char *t = t_read_all("/proc/ondol/syscalls", 4096);
    CHECK_EQ(strncmp(t, "calls 2\nunknown 1\nthread_switches 7\nas_switches 3\n", 49), 0);
    CHECK(strstr(t, "\nnr 39 getpid 1\n"));
    CHECK(strstr(t, "\nnr 499 - 1\n"));
    CHECK(strstr(t, "\npid 1 2\n"));
    CHECK(strstr(t, "\npid 3 0\n"));
}

/* Every allocation failing in turn: each call fails cleanly or works; no leak. */
static void test_out_of_memory(void)
{
    const char *paths[] = {"/proc/self/status", "/proc/ondol/syscalls", "/proc/self/fd/0"};
    for (long k = 0; k < 12; k++) {
        for (size_t p = 0; p < sizeof paths / sizeof paths[0]; p++) {
            fake_alloc_fail_after = k;
            long fd = t_open(paths[p], O_RDONLY, 0);
            fake_alloc_fail_after = -1;
            CHECK(fd >= 0 || fd == -ENOMEM || fd == -ENOENT);
            if (fd >= 0)
                SYS(close, (uint64_t)fd);
        }
        fake_alloc_fail_after = k;
        t_list("/proc");
        fake_alloc_fail_after = -1;
    }
    CHECK(strstr(t_read_all("/proc/self/status", 2048), "Name:\tfake\n"));
    CHECK_EQ(strcmp(t_list("/proc/self/fd"), "0 1 2"), 0);
}

int main(void)
{
    vfs_test_begin();
    t_touch("/a");                                   /* fds 0 and 1 stay open throughout */
    t_open("/a", O_RDONLY, 0);
    t_open("/a", O_RDONLY, 0);
    procs_begin();
    test_mount_and_list();
    test_self_and_files();
    test_offsets();
    test_links();
    test_fds();
    test_read_only();
    test_gone();
    test_syscalls_file();
    test_out_of_memory();
    procs_end();
    vfs_test_end();
    return fake_done();
}
