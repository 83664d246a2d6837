/* dup, dup2, dup3, fcntl (the file parts of tests/linux/files_fd.c with the Linux peer's
 * results), the fd table helpers the core calls at fork, execve and exit, reference
 * counts (an unlinked open file lives until closed), device nodes, and running out of
 * memory or fds. */
#include "vfs_test.h"

static void test_dup(void)
{
    long fd = t_open("f", O_RDWR | O_CREAT | O_TRUNC, 0644);
    long d = SYS(dup, fd);
    CHECK_EQ(d, fd + 1);
    SYS(write, fd, ustr("abc"), 3);
    CHECK_EQ(SYS(lseek, d, 0, SEEK_CUR), 3);
    CHECK_EQ(SYS(dup, 999), -EBADF);
    CHECK_EQ(SYS(dup2, fd, 20), 20);
    CHECK_EQ(SYS(dup2, fd, fd), fd);
    CHECK_EQ(SYS(dup2, 999, 999), -EBADF);
    CHECK_EQ(SYS(dup2, 999, 21), -EBADF);
    CHECK_EQ(SYS(dup2, fd, UNIX_MAX_FDS), -EBADF);
    CHECK_EQ(SYS(dup2, fd, -1), -EBADF);
    SYS(fcntl, fd, F_SETFD, FD_CLOEXEC);
    SYS(dup2, fd, 22);
    CHECK_EQ(SYS(fcntl, 22, F_GETFD), 0);
    SYS(dup3, fd, 23, O_CLOEXEC);
    CHECK_EQ(SYS(fcntl, 23, F_GETFD), FD_CLOEXEC);
    CHECK_EQ(SYS(dup3, fd, fd, 0), -EINVAL);
    CHECK_EQ(SYS(dup3, fd, 24, O_NONBLOCK), -EINVAL);
    /* dup2 over an open fd closes what it had */
    long other = t_open("g", O_RDWR | O_CREAT, 0644);
    CHECK_EQ(SYS(dup2, fd, other), other);
    CHECK_EQ(SYS(write, other, ustr("d"), 1), 1);
    CHECK_EQ(SYS(lseek, fd, 0, SEEK_CUR), 4);
    for (long i = 0; i < UNIX_MAX_FDS; i++)
        SYS(close, i);
}

static void test_fcntl(void)
{
    long fd = t_open("g", O_RDWR | O_CREAT | O_TRUNC, 0644);
    CHECK_EQ(SYS(fcntl, fd, F_GETFD), 0);
    CHECK_EQ(SYS(fcntl, fd, F_SETFD, FD_CLOEXEC), 0);
    CHECK_EQ(SYS(fcntl, fd, F_GETFD), FD_CLOEXEC);
    CHECK_EQ(SYS(fcntl, fd, F_GETFL) & O_ACCMODE, O_RDWR);
    CHECK_EQ(SYS(fcntl, fd, F_SETFL, O_APPEND), 0);
    CHECK_EQ(SYS(fcntl, fd, F_GETFL) & O_APPEND, O_APPEND);
    SYS(fcntl, fd, F_SETFL, O_WRONLY | O_NONBLOCK);     /* access mode stays */
    CHECK_EQ(SYS(fcntl, fd, F_GETFL) & (O_ACCMODE | O_APPEND | O_NONBLOCK),
             O_RDWR | O_NONBLOCK);
    CHECK_EQ(SYS(fcntl, fd, F_DUPFD, 30), 30);
    SYS(fcntl, fd, F_DUPFD_CLOEXEC, 40);
    CHECK_EQ(SYS(fcntl, 40, F_GETFD), FD_CLOEXEC);
    CHECK_EQ(SYS(fcntl, fd, F_DUPFD, 40), 41);          /* lowest free from 40 */
    CHECK_EQ(SYS(fcntl, 999, F_GETFD), -EBADF);
    CHECK_EQ(SYS(fcntl, fd, 9999), -EINVAL);
    CHECK_EQ(SYS(fcntl, fd, F_DUPFD, -1), -EINVAL);
    CHECK_EQ(SYS(fcntl, fd, F_DUPFD, UNIX_MAX_FDS), -EINVAL);
    for (long i = 0; i < UNIX_MAX_FDS; i++)
        SYS(close, i);
}

static void test_emfile(void)
{
    long last = 0;
    for (int i = 0; i < UNIX_MAX_FDS; i++)
        last = t_open("/", O_RDONLY, 0);
    CHECK_EQ(last, UNIX_MAX_FDS - 1);
    CHECK_EQ(t_open("/", O_RDONLY, 0), -EMFILE);
    CHECK_EQ(t_open("new-file", O_RDONLY | O_CREAT, 0644), -EMFILE);
    struct linux_stat st;
    CHECK_EQ(t_stat("new-file", &st, false), -ENOENT);   /* nothing created */
    CHECK_EQ(SYS(dup, 0), -EMFILE);
    CHECK_EQ(SYS(fcntl, 0, F_DUPFD, 0), -EMFILE);
    SYS(close, 7);
    CHECK_EQ(SYS(dup, 0), 7);
    for (long i = 0; i < UNIX_MAX_FDS; i++)
        SYS(close, i);
}

/* fork copies the table (shared open files, flags copied), execve closes the
 * close-on-exec fds, exit drops the table and closes the rest. */
static void test_fork_exec_exit(void)
{
    long a = t_open("fa", O_RDWR | O_CREAT, 0644);
    long b = t_open("fb", O_RDWR | O_CREAT | O_CLOEXEC, 0644);
    struct fdtable *parent = vt_proc->fds;
    struct fdtable *child = fdtable_copy(parent);
    CHECK(child != NULL);
    CHECK(child->fd[a] == parent->fd[a]);
    CHECK_EQ(parent->fd[a]->refs, 2);
    CHECK_EQ((child->cloexec[0] >> b) & 1, 1);
    fdtable_exec(child);
    CHECK(child->fd[b] == NULL);
    CHECK(child->fd[a] != NULL);
    CHECK_EQ(parent->fd[b]->refs, 1);
    /* the child's offset is the parent's */
    vt_proc->fds = child;
    SYS(write, a, ustr("xy"), 2);
    vt_proc->fds = parent;
    CHECK_EQ(SYS(lseek, a, 0, SEEK_CUR), 2);
    fdtable_put(child);
    CHECK_EQ(parent->fd[a]->refs, 1);
    struct fs_context *fs = fs_context_copy(vt_proc->fs);
    SYS(mkdir, ustr("/sub"), 0755);
    SYS(chdir, ustr("/sub"));
    CHECK(fs->cwd == vfs_root());                       /* a copy, not shared */
    fs_context_put(fs);
    SYS(chdir, ustr("/"));
    SYS(close, a);
    SYS(close, b);
}

static void test_unlinked_open_file(void)
{
    t_put("tmp", "still here");
    long fd = t_open("tmp", O_RDWR, 0);
    CHECK_EQ(SYS(unlink, ustr("tmp")), 0);
    struct linux_stat st;
    CHECK_EQ(t_stat("tmp", &st, false), -ENOENT);
    CHECK_EQ(t_fstat(fd, &st), 0);
    CHECK_EQ(st.st_nlink, 0);
    uint64_t buf = ubuf(16);
    CHECK_EQ(SYS(pread64, fd, buf, 16, 0), 10);
    CHECK(memcmp(host(buf), "still here", 10) == 0);
    CHECK_EQ(SYS(write, fd, ustr("!"), 1), 1);
    /* linking it again through AT_EMPTY_PATH is ENOENT, as on Linux */
    CHECK_EQ(SYS(linkat, fd, ustr(""), AT_FDCWD, ustr("back"), AT_EMPTY_PATH), -ENOENT);
    SYS(close, fd);                                     /* freed here (LeakSanitizer) */
    /* a removed directory held as cwd by a second fs context */
    SYS(mkdir, ustr("/held"), 0755);
    SYS(mkdir, ustr("/held/inner"), 0755);
    struct fs_context *fs = fs_context_copy(vt_proc->fs);
    SYS(chdir, ustr("/held/inner"));
    SYS(rmdir, ustr("/held/inner"));
    SYS(rmdir, ustr("/held"));
    CHECK_EQ(SYS(chdir, ustr("..")), 0);                /* "/held", removed too */
    CHECK_EQ(SYS(getcwd, ubuf(64), 64), -ENOENT);
    fs_context_put(vt_proc->fs);
    vt_proc->fs = fs;
}

/* A device node in /dev (devices.c's character devices, 1,3 and 5,0). */
static void make_dev(const char *name, unsigned major, unsigned minor)
{
    struct inode *dev = inode_new(S_IFCHR | 0666);
    dev->rdev_major = major;
    dev->rdev_minor = minor;
    struct walk w;
    CHECK_EQ(vfs_walk(vt_proc, AT_FDCWD, "/dev", 0, &w), 0);
    CHECK_EQ(dir_link(w.inode, name, strlen(name), dev), 0);
    walk_done(&w);
    inode_put(dev);
}

static void test_devices(void)
{
    SYS(mkdir, ustr("/dev"), 0755);
    make_dev("null", 1, 3);
    make_dev("tty", 5, 0);
    long fd = t_open("/dev/null", O_RDWR, 0);
    CHECK(fd >= 0);
    /* the device's open runs and its error is open's, with no fd left behind:
     * /dev/tty without a controlling tty is ENXIO */
    CHECK_EQ(t_open("/dev/tty", O_RDWR, 0), -ENXIO);
    CHECK_EQ(SYS(dup, fd), fd + 1);
    SYS(close, fd + 1);
    SYS(close, fd);
    fd = t_open("/dev/null", O_RDWR | O_NOCTTY, 0);
    CHECK_EQ(SYS(fcntl, fd, F_GETFL) & O_NOCTTY, 0);    /* F_GETFL does not show it */
    CHECK_EQ(SYS(write, fd, ustr("abc"), 3), 3);
    CHECK_EQ(SYS(read, fd, ubuf(8), 8), 0);
    CHECK_EQ(SYS(lseek, fd, 10, SEEK_SET), 0);
    CHECK_EQ(SYS(ftruncate, fd, 0), -EINVAL);
    CHECK_EQ(SYS(truncate, ustr("/dev/null"), 0), -EINVAL);
    SYS(close, fd);
    CHECK_EQ(t_open("/dev/no-such-device", O_RDONLY, 0), -ENOENT);
}

/* Every allocation failing in turn: each call fails cleanly (an error, no leak) or
 * succeeds. */
static void test_out_of_memory(void)
{
    for (long n = 0; n < 12; n++) {
        fake_alloc_fail_after = n;
        long fd = t_open("/oom", O_RDWR | O_CREAT, 0644);
        long w = fd >= 0 ? SYS(write, fd, ustr("data"), 4) : 0;
        long m = SYS(mkdir, ustr("/oomd"), 0755);
        long s = SYS(symlink, ustr("x"), ustr("/ooml"));
        long r = SYS(rename, ustr("/oom"), ustr("/oom2"));
        fake_alloc_fail_after = -1;
        CHECK(fd >= 0 || fd == -ENOSPC || fd == -ENOMEM);
        CHECK(w >= 0 || w == -ENOSPC);
        CHECK(m == 0 || m == -ENOSPC || m == -ENOMEM);
        CHECK(s == 0 || s == -ENOSPC || s == -ENOMEM);
        CHECK(r == 0 || r == -ENOMEM || r == -ENOENT);
        if (fd >= 0)
            SYS(close, fd);
        SYS(unlink, ustr("/oom"));
        SYS(unlink, ustr("/oom2"));
        SYS(rmdir, ustr("/oomd"));
        SYS(unlink, ustr("/ooml"));
    }
    struct linux_stat st;
    CHECK_EQ(t_stat("/oom", &st, false), -ENOENT);
    CHECK_EQ(t_stat("/oom2", &st, false), -ENOENT);
}

static void test_exec_inode(void)
{
    t_put("/prog", "\177ELF");
    SYS(symlink, ustr("/prog"), ustr("/progl"));
    struct inode *i = NULL;
    CHECK_EQ(vfs_exec_inode(vt_proc, "/prog", &i), -EACCES);     /* 0644 */
    SYS(chmod, ustr("/prog"), 0700);
    CHECK_EQ(vfs_exec_inode(vt_proc, "/progl", &i), 0);
    CHECK(i && i->size == 4 && memcmp(i->data, "\177ELF", 4) == 0);
    inode_put(i);
    CHECK_EQ(vfs_exec_inode(vt_proc, "/", &i), -EACCES);
    CHECK_EQ(vfs_exec_inode(vt_proc, "/none", &i), -ENOENT);
    CHECK_EQ(vfs_exec_inode(vt_proc, "/prog/x", &i), -ENOTDIR);
    CHECK_EQ(vfs_exec_inode(vt_proc, "", &i), -ENOENT);
}

int main(void)
{
    vfs_test_begin();
    test_dup();
    test_fcntl();
    test_emfile();
    test_fork_exec_exit();
    test_unlinked_open_file();
    test_devices();
    test_out_of_memory();
    test_exec_inode();
    vfs_test_end();
    return fake_done();
}
