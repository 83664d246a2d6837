/* mknod/mknodat and FIFOs (named pipes opened through the VFS: open waits for the other
 * side, through the core's real wait lists), statfs/fstatfs, the syncs, flock and the
 * extended-attribute calls, with the errors Linux gives. */
#include "vfs_test.h"

enum { NR_OPEN = 2 };

/* open through the core: the result, or UNIX_BLOCKED (answered later by unix_run_woken) */
static long open_call(const char *path, long flags)
{
    struct ucall c = fake_call(vt_proc, NR_OPEN, ustr(path), (uint64_t)flags, 0, 0);
    return unix_dispatch(&c);
}

static long woken_answer(void)
{
    int before = fake_answers;
    unix_run_woken();
    return fake_answers == before + 1 ? fake_answer : -9999;
}

static void test_mknod(void)
{
    struct linux_stat st;
    CHECK_EQ(SYS(mknod, ustr("/fifo"), S_IFIFO | 0666, 0), 0);
    CHECK_EQ(t_stat("/fifo", &st, false), 0);
    CHECK_EQ(st.st_mode, S_IFIFO | 0644);                  /* umask 022 */
    CHECK_EQ(st.st_size, 0);
    CHECK_EQ(SYS(mknod, ustr("/fifo"), S_IFIFO | 0666, 0), -EEXIST);
    CHECK_EQ(SYS(mknod, ustr("/d"), S_IFDIR | 0755, 0), -EPERM);
    CHECK_EQ(SYS(mknod, ustr("/d"), 0170000 | 0755, 0), -EINVAL);
    CHECK_EQ(SYS(mknod, ustr("/missing/x"), S_IFIFO | 0644, 0), -ENOENT);
    CHECK_EQ(SYS(mknod, ustr("/x/"), S_IFIFO | 0644, 0), -ENOENT);
    CHECK_EQ(SYS(mknod, BADPTR, S_IFIFO | 0644, 0), -EFAULT);
    CHECK_EQ(SYS(mknod, ustr("/reg"), 0644, 0), 0);        /* type 0: a regular file */
    CHECK_EQ(t_stat("/reg", &st, false), 0);
    CHECK_EQ(st.st_mode, S_IFREG | 0644);
    CHECK_EQ(SYS(mknod, ustr("/null"), S_IFCHR | 0666, (1 << 8) | 3), 0);
    CHECK_EQ(t_stat("/null", &st, false), 0);
    CHECK_EQ(st.st_rdev, 0x103);
    long fd = t_open("/null", O_WRONLY, 0);
    CHECK_EQ(SYS(write, (uint64_t)fd, ustr("x"), 1), 1);
    SYS(close, (uint64_t)fd);
    CHECK_EQ(SYS(mknod, ustr("/big"), S_IFCHR | 0600, 0x12345), 0);   /* 23,0x145 */
    t_stat("/big", &st, false);
    CHECK_EQ(st.st_rdev, 0x12345);
    CHECK_EQ(SYS(mknod, ustr("/sock"), S_IFSOCK | 0600, 0), 0);
    CHECK_EQ(t_open("/sock", O_RDONLY, 0), -ENXIO);
    CHECK_EQ(SYS(mknod, ustr("/blk"), S_IFBLK | 0600, 0x801), 0);
    CHECK_EQ(t_open("/blk", O_RDONLY, 0), -ENXIO);
    SYS(mkdir, ustr("/dir"), 0755);
    long dir = t_open("/dir", O_RDONLY | O_DIRECTORY, 0);
    CHECK_EQ(SYS(mknodat, (uint64_t)dir, ustr("f2"), S_IFIFO | 0600, 0), 0);
    CHECK_EQ(t_stat("/dir/f2", &st, false), 0);
    CHECK_EQ(st.st_mode, S_IFIFO | 0600);
    CHECK_EQ(SYS(mknodat, 999, ustr("f3"), S_IFIFO | 0600, 0), -EBADF);
    SYS(close, (uint64_t)dir);
}

static void test_fifo_nonblocking(void)
{
    CHECK_EQ(t_open("/fifo", O_WRONLY | O_NONBLOCK, 0), -ENXIO);   /* no reader */
    long r = t_open("/fifo", O_RDONLY | O_NONBLOCK, 0);
    CHECK(r >= 0);
    uint64_t u = ubuf(16);
    CHECK_EQ(SYS(read, (uint64_t)r, u, 16), 0);           /* no writer: end of file */
    long w = t_open("/fifo", O_WRONLY | O_NONBLOCK, 0);
    CHECK(w >= 0);
    CHECK_EQ(SYS(read, (uint64_t)r, u, 16), -EAGAIN);     /* a writer, no data */
    CHECK_EQ(SYS(write, (uint64_t)w, ustr("hi"), 2), 2);
    CHECK_EQ(SYS(read, (uint64_t)r, u, 16), 2);
    CHECK_EQ(memcmp(host(u), "hi", 2), 0);
    CHECK_EQ(SYS(lseek, (uint64_t)r, 0, SEEK_SET), -ESPIPE);
    CHECK_EQ(SYS(pread64, (uint64_t)r, u, 1, 0), -ESPIPE);
    struct linux_stat st;
    CHECK_EQ(t_fstat(w, &st), 0);
    CHECK_EQ(st.st_mode & S_IFMT, S_IFIFO);
    CHECK_EQ(SYS(write, (uint64_t)w, ustr("left"), 4), 4);
    SYS(close, (uint64_t)r);
    SYS(close, (uint64_t)w);
    long rw = t_open("/fifo", O_RDWR, 0);                 /* never waits */
    uint64_t n = ubuf(4);
    CHECK_EQ(SYS(ioctl, (uint64_t)rw, FIONREAD, n), 0);
    CHECK_EQ(*(int32_t *)host(n), 0);                     /* dropped at the last close */
    CHECK_EQ(SYS(write, (uint64_t)rw, ustr("me"), 2), 2);
    CHECK_EQ(SYS(read, (uint64_t)rw, u, 16), 2);
    SYS(close, (uint64_t)rw);
}

static void test_fifo_blocking(void)
{
    CHECK_EQ(open_call("/fifo", O_RDONLY), UNIX_BLOCKED);  /* a reader waits for a writer */
    long w = open_call("/fifo", O_WRONLY);                 /* it sees the waiting reader */
    CHECK(w >= 0);
    long r = woken_answer();                               /* the reader's open, run again */
    CHECK(r >= 0 && r != w);
    CHECK_EQ(SYS(write, (uint64_t)w, ustr("abc"), 3), 3);
    uint64_t u = ubuf(8);
    CHECK_EQ(SYS(read, (uint64_t)r, u, 8), 3);
    SYS(close, (uint64_t)w);
    SYS(close, (uint64_t)r);

    CHECK_EQ(open_call("/fifo", O_WRONLY), UNIX_BLOCKED);  /* the other way round */
    r = open_call("/fifo", O_RDONLY);
    CHECK(r >= 0);
    w = woken_answer();
    CHECK(w >= 0);
    SYS(close, (uint64_t)r);
    SYS(close, (uint64_t)w);

    /* the FIFO goes while an open waits: the open runs again and finds no name */
    CHECK_EQ(SYS(mknod, ustr("/gone"), S_IFIFO | 0600, 0), 0);
    CHECK_EQ(open_call("/gone", O_RDONLY), UNIX_BLOCKED);
    CHECK_EQ(SYS(unlink, ustr("/gone")), 0);
    CHECK_EQ(woken_answer(), -ENOENT);
}

static void test_statfs(void)
{
    uint64_t u = ubuf(sizeof(struct linux_statfs));
    struct linux_statfs *s = host(u);
    CHECK_EQ(SYS(statfs, ustr("/reg"), u), 0);
    CHECK_EQ(s->f_type, TMPFS_MAGIC);
    CHECK_EQ(s->f_bsize, 4096);
    CHECK_EQ(s->f_blocks, 131072 / 8);                    /* half of the fake's 128 MiB */
    CHECK(s->f_bfree == s->f_bavail && s->f_bfree <= s->f_blocks);
    CHECK(s->f_ffree > 0 && s->f_ffree < s->f_files);
    CHECK_EQ(s->f_namelen, 255);
    CHECK_EQ(SYS(statfs, ustr("/missing"), u), -ENOENT);
    CHECK_EQ(SYS(statfs, ustr("/reg"), BADPTR), -EFAULT);
    uint64_t fds = ubuf(8);
    SYS(pipe2, fds, 0);
    int p[2];
    memcpy(p, host(fds), 8);
    CHECK_EQ(SYS(fstatfs, (uint64_t)p[0], u), 0);
    CHECK_EQ(s->f_type, PIPEFS_MAGIC);
    long path = t_open("/reg", O_PATH, 0);
    CHECK_EQ(SYS(fstatfs, (uint64_t)path, u), 0);         /* O_PATH is enough */
    CHECK_EQ(s->f_type, TMPFS_MAGIC);
    CHECK_EQ(SYS(fstatfs, 999, u), -EBADF);
    /* syncs */
    long f = t_open("/reg", O_RDONLY, 0), d = t_open("/", O_RDONLY, 0);
    CHECK_EQ(SYS(fsync, (uint64_t)f), 0);
    CHECK_EQ(SYS(fdatasync, (uint64_t)d), 0);
    CHECK_EQ(SYS(fsync, (uint64_t)p[1]), -EINVAL);
    CHECK_EQ(SYS(fsync, (uint64_t)path), -EBADF);
    CHECK_EQ(SYS(fdatasync, 999), -EBADF);
    CHECK_EQ(SYS(sync), 0);
    CHECK_EQ(SYS(syncfs, (uint64_t)f), 0);
    CHECK_EQ(SYS(syncfs, 999), -EBADF);
    /* flock */
    CHECK_EQ(SYS(flock, (uint64_t)f, LOCK_EX), 0);
    CHECK_EQ(SYS(flock, (uint64_t)f, LOCK_SH | LOCK_NB), 0);
    CHECK_EQ(SYS(flock, (uint64_t)f, LOCK_UN), 0);
    CHECK_EQ(SYS(flock, (uint64_t)f, 0), -EINVAL);
    CHECK_EQ(SYS(flock, (uint64_t)f, LOCK_SH | LOCK_EX), -EINVAL);
    CHECK_EQ(SYS(flock, (uint64_t)path, LOCK_EX), -EBADF);
    CHECK_EQ(SYS(flock, 999, LOCK_EX), -EBADF);
    long all[] = {p[0], p[1], path, f, d};
    for (size_t k = 0; k < sizeof all / sizeof all[0]; k++)
        SYS(close, (uint64_t)all[k]);
}

static void test_xattr(void)
{
    uint64_t v = ubuf(64), name = ustr("user.x");
    char longname[300];
    memset(longname, 'n', sizeof longname - 1);
    longname[sizeof longname - 1] = 0;
    CHECK_EQ(SYS(getxattr, ustr("/reg"), name, v, 64), -EOPNOTSUPP);
    CHECK_EQ(SYS(lgetxattr, ustr("/reg"), name, v, 64), -EOPNOTSUPP);
    CHECK_EQ(SYS(getxattr, ustr("/missing"), name, v, 64), -ENOENT);
    CHECK_EQ(SYS(getxattr, ustr("/reg"), ustr(""), v, 64), -ERANGE);
    CHECK_EQ(SYS(getxattr, ustr("/reg"), ustr(longname), v, 64), -ERANGE);
    CHECK_EQ(SYS(getxattr, ustr("/reg"), BADPTR, v, 64), -EFAULT);
    CHECK_EQ(SYS(listxattr, ustr("/reg"), v, 64), 0);     /* no attributes */
    CHECK_EQ(SYS(llistxattr, ustr("/missing"), v, 64), -ENOENT);
    CHECK_EQ(SYS(setxattr, ustr("/reg"), name, v, 1, 0), -EOPNOTSUPP);
    CHECK_EQ(SYS(setxattr, ustr("/reg"), name, v, 1, 4), -EINVAL);
    CHECK_EQ(SYS(setxattr, ustr("/missing"), name, v, 70000, 0), -E2BIG);   /* first */
    CHECK_EQ(SYS(lsetxattr, ustr("/missing"), name, v, 1, 0), -ENOENT);
    CHECK_EQ(SYS(removexattr, ustr("/reg"), name), -EOPNOTSUPP);
    CHECK_EQ(SYS(lremovexattr, ustr("/reg"), ustr("")), -ERANGE);
    long f = t_open("/reg", O_RDONLY, 0), path = t_open("/reg", O_PATH, 0);
    CHECK_EQ(SYS(fgetxattr, (uint64_t)f, name, v, 64), -EOPNOTSUPP);
    CHECK_EQ(SYS(fsetxattr, (uint64_t)f, name, v, 1, 0), -EOPNOTSUPP);
    CHECK_EQ(SYS(flistxattr, (uint64_t)f, v, 64), 0);
    CHECK_EQ(SYS(fremovexattr, (uint64_t)f, name), -EOPNOTSUPP);
    CHECK_EQ(SYS(fgetxattr, (uint64_t)path, name, v, 64), -EBADF);
    CHECK_EQ(SYS(fgetxattr, 999, name, v, 64), -EBADF);
    SYS(close, (uint64_t)f);
    SYS(close, (uint64_t)path);
}

int main(void)
{
    vfs_test_begin();
    test_mknod();
    test_fifo_nonblocking();
    test_fifo_blocking();
    test_statfs();
    test_xattr();
    vfs_test_end();
    return fake_done();
}
