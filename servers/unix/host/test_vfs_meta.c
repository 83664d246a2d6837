/* stat, lstat, fstat, newfstatat, statx, chmod, fchmod(at), chown family, umask, access,
 * faccessat(2), truncate, ftruncate, utimensat: the cases of tests/linux/files_meta.c with
 * the Linux peer's results, and the exact stat/statx layouts. */
#include <stddef.h>
#include "vfs_test.h"

_Static_assert(sizeof(struct linux_stat) == 144, "struct stat is 144 bytes on x86-64");
_Static_assert(offsetof(struct linux_stat, st_mode) == 24, "st_mode");
_Static_assert(offsetof(struct linux_stat, st_size) == 48, "st_size");
_Static_assert(offsetof(struct linux_stat, st_mtim) == 88, "st_mtim");
_Static_assert(sizeof(struct linux_statx) == 256, "struct statx is 256 bytes");
_Static_assert(offsetof(struct linux_statx, stx_size) == 40, "stx_size");
_Static_assert(offsetof(struct linux_statx, stx_mtime) == 112, "stx_mtime");
_Static_assert(offsetof(struct linux_statx, stx_rdev_major) == 128, "stx_rdev_major");
_Static_assert(offsetof(struct linux_statx, stx_mnt_id) == 144, "stx_mnt_id");

static void test_stat(void)
{
    struct linux_stat st, st2;
    t_put("f", "12345");
    CHECK_EQ(t_stat("f", &st, false), 0);
    CHECK_EQ(st.st_size, 5);
    CHECK_EQ(st.st_mode, S_IFREG | 0644);
    CHECK_EQ(st.st_nlink, 1);
    CHECK_EQ(st.st_blksize, 4096);
    CHECK_EQ(st.st_dev, TMPFS_DEV);
    CHECK_EQ(t_stat("nope", &st, false), -ENOENT);
    CHECK_EQ(SYS(stat, ustr("f"), BADPTR), -EFAULT);
    CHECK_EQ(SYS(stat, BADPTR, ubuf(sizeof(st))), -EFAULT);
    SYS(mkdir, ustr("d"), 0755);
    t_stat("d", &st, false);
    CHECK_EQ(st.st_mode & S_IFMT, S_IFDIR);
    long fd = t_open("f", O_RDONLY, 0);
    CHECK_EQ(t_fstat(fd, &st2), 0);
    t_stat("f", &st, false);
    CHECK_EQ(st.st_ino, st2.st_ino);
    SYS(close, fd);
    CHECK_EQ(t_fstat(fd, &st), -EBADF);
    uint64_t u = ubuf(sizeof(st));
    CHECK_EQ(SYS(newfstatat, AT_FDCWD, ustr("f"), u, 0), 0);
    fd = t_open("f", O_RDONLY, 0);
    CHECK_EQ(SYS(newfstatat, fd, ustr(""), u, AT_EMPTY_PATH), 0);
    CHECK_EQ(((struct linux_stat *)host(u))->st_size, 5);
    CHECK_EQ(SYS(newfstatat, fd, ustr(""), u, 0), -ENOENT);
    CHECK_EQ(SYS(newfstatat, 999, ustr(""), u, AT_EMPTY_PATH), -EBADF);
    SYS(close, fd);
    CHECK_EQ(SYS(newfstatat, AT_FDCWD, ustr("f"), u, 0x40000000), -EINVAL);
    SYS(symlink, ustr("f"), ustr("s"));
    t_stat("s", &st, true);
    CHECK_EQ(st.st_mode, S_IFLNK | 0777);
    CHECK_EQ(st.st_size, 1);
    SYS(newfstatat, AT_FDCWD, ustr("s"), u, AT_SYMLINK_NOFOLLOW);
    CHECK_EQ(((struct linux_stat *)host(u))->st_mode & S_IFMT, S_IFLNK);
    /* a file without an inode (a pipe end) stats as a FIFO, by fd or AT_EMPTY_PATH */
    static const struct file_ops none;
    long p = fd_install(vt_proc, file_new(&none, NULL, O_RDONLY), 0, false);
    CHECK_EQ(t_fstat(p, &st), 0);
    CHECK_EQ(st.st_mode & S_IFMT, S_IFIFO);
    CHECK_EQ(SYS(newfstatat, p, ustr(""), u, AT_EMPTY_PATH), 0);
    CHECK_EQ(((struct linux_stat *)host(u))->st_mode & S_IFMT, S_IFIFO);
    SYS(close, p);
    /* statx */
    uint64_t sx = ubuf(256);
    CHECK_EQ(SYS(statx, AT_FDCWD, ustr("f"), 0, STATX_BASIC_STATS, sx), 0);
    struct linux_statx *x = host(sx);
    CHECK_EQ(x->stx_size, 5);
    CHECK((x->stx_mask & 0x200) != 0);
    CHECK_EQ(x->stx_mode, S_IFREG | 0644);
    CHECK_EQ(x->stx_ino, st2.st_ino);
    CHECK_EQ(SYS(statx, AT_FDCWD, ustr("nope"), 0, STATX_BASIC_STATS, sx), -ENOENT);
    CHECK_EQ(SYS(statx, AT_FDCWD, ustr("f"), 0, 0x80000000u, sx), -EINVAL);
    CHECK_EQ(SYS(statx, AT_FDCWD, ustr("f"), AT_STATX_SYNC_TYPE, 0x7ff, sx), -EINVAL);
    CHECK_EQ(SYS(statx, AT_FDCWD, ustr("f"), 0, 0x7ff, BADPTR), -EFAULT);
    CHECK_EQ(SYS(statx, AT_FDCWD, ustr("s"), AT_SYMLINK_NOFOLLOW, 0x7ff, sx), 0);
    CHECK_EQ(x->stx_mode & S_IFMT, S_IFLNK);
    /* a device node: st_rdev encodes major and minor; st_size is 0 */
    struct inode *dev = inode_new(S_IFCHR | 0666);
    dev->rdev_major = 4;
    dev->rdev_minor = 300;
    CHECK_EQ(dir_link(vfs_root(), "tty300", 6, dev), 0);
    inode_put(dev);
    t_stat("/tty300", &st, false);
    CHECK_EQ(st.st_rdev, (4 << 8) | (300 & 0xff) | ((300 & ~0xff) << 12));
    SYS(statx, AT_FDCWD, ustr("/tty300"), 0, 0x7ff, sx);
    CHECK_EQ(x->stx_rdev_major, 4);
    CHECK_EQ(x->stx_rdev_minor, 300);
    CHECK_EQ(t_open("/tty300", O_RDONLY, 0), -ENXIO);   /* no such device */
}

static void test_modes(void)
{
    struct linux_stat st;
    t_put("m", "x");
    CHECK_EQ(SYS(chmod, ustr("m"), 0600), 0);
    t_stat("m", &st, false);
    CHECK_EQ(st.st_mode & 07777, 0600);
    long fd = t_open("m", O_RDONLY, 0);
    CHECK_EQ(SYS(fchmod, fd, 0751), 0);
    t_fstat(fd, &st);
    CHECK_EQ(st.st_mode & 07777, 0751);
    CHECK_EQ(st.st_mode & S_IFMT, S_IFREG);
    SYS(close, fd);
    CHECK_EQ(SYS(chmod, ustr("nope"), 0600), -ENOENT);
    CHECK_EQ(SYS(fchmod, 999, 0600), -EBADF);
    CHECK_EQ(SYS(fchmodat, AT_FDCWD, ustr("m"), 04755), 0);
    t_stat("m", &st, false);
    CHECK_EQ(st.st_mode & 07777, 04755);
    CHECK_EQ(SYS(chown, ustr("m"), 12, 34), 0);
    t_stat("m", &st, false);
    CHECK_EQ(st.st_uid, 12);
    CHECK_EQ(st.st_gid, 34);
    CHECK_EQ(st.st_mode & 07777, 0755);                 /* set-user-ID cleared */
    SYS(chown, ustr("m"), -1, 56);
    t_stat("m", &st, false);
    CHECK_EQ(st.st_uid, 12);
    CHECK_EQ(st.st_gid, 56);
    CHECK_EQ(SYS(chown, ustr("nope"), 0, 0), -ENOENT);
    SYS(symlink, ustr("m"), ustr("ml"));
    CHECK_EQ(SYS(lchown, ustr("ml"), 7, 7), 0);
    t_stat("ml", &st, true);
    CHECK_EQ(st.st_uid, 7);
    t_stat("m", &st, false);
    CHECK_EQ(st.st_uid, 12);
    CHECK_EQ(SYS(fchownat, AT_FDCWD, ustr("ml"), 9, 9, AT_SYMLINK_NOFOLLOW), 0);
    CHECK_EQ(SYS(fchownat, AT_FDCWD, ustr("ml"), 9, 9, 0x1), -EINVAL);
    fd = t_open("m", O_RDONLY, 0);
    CHECK_EQ(SYS(fchown, fd, 1, 2), 0);
    t_fstat(fd, &st);
    CHECK_EQ(st.st_uid, 1);
    SYS(close, fd);
    CHECK_EQ(SYS(fchown, 999, 1, 2), -EBADF);
    SYS(umask, 022);
    CHECK_EQ(SYS(umask, 077), 022);
    t_put("u", "");
    t_stat("u", &st, false);
    CHECK_EQ(st.st_mode & 0777, 0600);
    SYS(umask, 022);
    SYS(mkdir, ustr("ud"), 0777);
    t_stat("ud", &st, false);
    CHECK_EQ(st.st_mode & 0777, 0755);
    CHECK_EQ(SYS(umask, 01777), 022);
    CHECK_EQ(SYS(umask, 022), 0777);                    /* only the permission bits */
}

static void test_access(void)
{
    t_put("a", "x");
    SYS(chmod, ustr("a"), 0644);
    CHECK_EQ(SYS(access, ustr("a"), F_OK), 0);
    CHECK_EQ(SYS(access, ustr("a"), R_OK | W_OK), 0);
    CHECK_EQ(SYS(access, ustr("a"), X_OK), -EACCES);
    SYS(chmod, ustr("a"), 0700);
    CHECK_EQ(SYS(access, ustr("a"), X_OK), 0);
    CHECK_EQ(SYS(access, ustr("/"), X_OK), 0);
    CHECK_EQ(SYS(access, ustr("nope"), F_OK), -ENOENT);
    CHECK_EQ(SYS(access, ustr("a"), 0x100), -EINVAL);
    CHECK_EQ(SYS(faccessat, AT_FDCWD, ustr("a"), R_OK), 0);
    CHECK_EQ(SYS(faccessat, 999, ustr("a"), R_OK), -EBADF);
    CHECK_EQ(SYS(faccessat2, AT_FDCWD, ustr("a"), R_OK, AT_EACCESS), 0);
    CHECK_EQ(SYS(faccessat2, AT_FDCWD, ustr("a"), R_OK, 0x4), -EINVAL);
}

static void test_truncate(void)
{
    struct linux_stat st;
    t_put("t", "0123456789");
    CHECK_EQ(SYS(truncate, ustr("t"), 4), 0);
    t_stat("t", &st, false);
    CHECK_EQ(st.st_size, 4);
    CHECK_EQ(SYS(truncate, ustr("t"), 8192), 0);
    t_stat("t", &st, false);
    CHECK_EQ(st.st_size, 8192);
    CHECK_EQ(st.st_blocks, 16);
    CHECK(strcmp(t_read_all("t", 64), "0123") == 0);   /* then zeros */
    CHECK_EQ(SYS(truncate, ustr("t"), -1), -EINVAL);
    SYS(mkdir, ustr("td"), 0755);
    CHECK_EQ(SYS(truncate, ustr("td"), 0), -EISDIR);
    CHECK_EQ(SYS(truncate, ustr("nope"), 0), -ENOENT);
    CHECK_EQ(SYS(truncate, ustr("t"), TMPFS_MAX_FILE + 1), -EFBIG);
    long fd = t_open("t", O_RDWR, 0);
    CHECK_EQ(SYS(ftruncate, fd, 2), 0);
    t_fstat(fd, &st);
    CHECK_EQ(st.st_size, 2);
    SYS(close, fd);
    fd = t_open("t", O_RDONLY, 0);
    CHECK_EQ(SYS(ftruncate, fd, 0), -EINVAL);
    SYS(close, fd);
    CHECK_EQ(SYS(ftruncate, 999, 0), -EBADF);
    CHECK_EQ(SYS(ftruncate, 999, -1), -EINVAL);
}

static void test_times(void)
{
    struct linux_stat st;
    fake_now_ns = 5000000000ull;
    t_put("tm", "x");
    t_stat("tm", &st, false);
    CHECK_EQ(st.st_mtim.tv_sec, 1704067200 + 5);        /* the epoch plus uptime */
    uint64_t ts = ubuf(32);
    struct linux_timespec *t = host(ts);
    t[0] = (struct linux_timespec){1000000000, 5};
    t[1] = (struct linux_timespec){1100000000, 7};
    CHECK_EQ(SYS(utimensat, AT_FDCWD, ustr("tm"), ts, 0), 0);
    t_stat("tm", &st, false);
    CHECK_EQ(st.st_atim.tv_sec, 1000000000);
    CHECK_EQ(st.st_atim.tv_nsec, 5);
    CHECK_EQ(st.st_mtim.tv_sec, 1100000000);
    CHECK_EQ(st.st_mtim.tv_nsec, 7);
    t[0] = (struct linux_timespec){0, UTIME_OMIT};
    t[1] = (struct linux_timespec){1200000000, 0};
    SYS(utimensat, AT_FDCWD, ustr("tm"), ts, 0);
    t_stat("tm", &st, false);
    CHECK_EQ(st.st_atim.tv_sec, 1000000000);
    CHECK_EQ(st.st_mtim.tv_sec, 1200000000);
    t[0] = (struct linux_timespec){0, 2000000000};
    CHECK_EQ(SYS(utimensat, AT_FDCWD, ustr("tm"), ts, 0), -EINVAL);
    t[0] = (struct linux_timespec){0, UTIME_NOW};
    CHECK_EQ(SYS(utimensat, AT_FDCWD, ustr("nope"), ts, 0), -ENOENT);
    CHECK_EQ(SYS(utimensat, AT_FDCWD, ustr("tm"), ts, 0x2), -EINVAL);
    CHECK_EQ(SYS(utimensat, AT_FDCWD, ustr("tm"), BADPTR, 0), -EFAULT);
    fake_now_ns = 7000000000ull;
    CHECK_EQ(SYS(utimensat, AT_FDCWD, ustr("tm"), 0, 0), 0);
    t_stat("tm", &st, false);
    CHECK_EQ(st.st_mtim.tv_sec, 1704067200 + 7);
    CHECK(st.st_mtim.tv_sec > 1200000000);
    long fd = t_open("tm", O_RDONLY, 0);
    t[0] = t[1] = (struct linux_timespec){42, 0};
    CHECK_EQ(SYS(utimensat, fd, 0, ts, 0), 0);          /* NULL path: the fd's file */
    t_stat("tm", &st, false);
    CHECK_EQ(st.st_atim.tv_sec, 42);
    CHECK_EQ(SYS(utimensat, AT_FDCWD, 0, ts, 0), -EFAULT);
    CHECK_EQ(SYS(utimensat, 999, 0, ts, 0), -EBADF);
    SYS(close, fd);
    /* writes move mtime and ctime */
    fake_now_ns = 9000000000ull;
    t_put("tm", "y");
    t_stat("tm", &st, false);
    CHECK_EQ(st.st_mtim.tv_sec, 1704067200 + 9);
    CHECK_EQ(st.st_ctim.tv_sec, 1704067200 + 9);
    vfs_set_epoch(0);
    t_put("tm", "z");
    t_stat("tm", &st, false);
    CHECK_EQ(st.st_mtim.tv_sec, 9);
    vfs_set_epoch(1704067200);
}

int main(void)
{
    vfs_test_begin();
    test_stat();
    test_modes();
    test_access();
    test_truncate();
    test_times();
    vfs_test_end();
    return fake_done();
}
