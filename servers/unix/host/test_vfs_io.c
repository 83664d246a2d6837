/* open/openat/creat flags, read, write, pread64, pwrite64, readv, writev, lseek, close,
 * sendfile: the cases of tests/linux/files_io.c (and sendfile from files_fd.c) with the
 * results the Linux peer gives. */
#include "vfs_test.h"

/* A stand-in for a pipe end (unix-dev's): a file without an inode that reads "p" and
 * takes writes into a host buffer through write_buf. */
static char sink[64];
static size_t sink_len;
static long fake_pipe_read(struct file *f, struct ucall *c, uint64_t u, size_t n, uint64_t *off)
{
    (void)f; (void)off;
    return n ? (copy_out(c->proc, u, "p", 1) < 0 ? -EFAULT : 1) : 0;
}
static long fake_pipe_write_buf(struct file *f, struct ucall *c, const void *b, size_t n,
                                uint64_t *off)
{
    (void)f; (void)c; (void)off;
    if (sink_len + n > sizeof(sink))
        n = sizeof(sink) - sink_len;
    memcpy(sink + sink_len, b, n);
    sink_len += n;
    return (long)n;
}
static const struct file_ops fake_pipe_ops = {.read = fake_pipe_read,
                                              .write_buf = fake_pipe_write_buf};
static long fake_pipe(unsigned flags)
{
    return fd_install(vt_proc, file_new(&fake_pipe_ops, NULL, flags), 0, false);
}

static void test_open_flags(void)
{
    CHECK_EQ(t_open("nope", O_RDONLY, 0), -ENOENT);
    long fd = t_open("a", O_WRONLY | O_CREAT, 0644);
    CHECK_EQ(fd, 0);                                    /* lowest free fd */
    CHECK_EQ(t_open("a", O_WRONLY | O_CREAT | O_EXCL, 0644), -EEXIST);
    t_put("b", "hello");
    fd = t_open("b", O_WRONLY | O_TRUNC, 0);
    struct linux_stat st;
    t_fstat(fd, &st);
    CHECK_EQ(st.st_size, 0);
    SYS(close, fd);
    t_put("c", "abc");
    fd = t_open("c", O_WRONLY | O_APPEND, 0);
    SYS(lseek, fd, 0, SEEK_SET);
    CHECK_EQ(SYS(write, fd, ustr("de"), 2), 2);
    CHECK_EQ(SYS(lseek, fd, 0, SEEK_CUR), 5);
    SYS(close, fd);
    CHECK(strcmp(t_read_all("c", 64), "abcde") == 0);
    CHECK_EQ(t_open("c", O_RDONLY | O_DIRECTORY, 0), -ENOTDIR);
    fd = t_open(".", O_RDONLY | O_DIRECTORY, 0);
    CHECK(fd >= 0);
    SYS(close, fd);
    CHECK_EQ(SYS(symlink, ustr("c"), ustr("lnk")), 0);
    CHECK_EQ(t_open("lnk", O_RDONLY | O_NOFOLLOW, 0), -ELOOP);
    fd = t_open("lnk", O_RDONLY, 0);                    /* followed */
    CHECK(fd >= 0);
    SYS(close, fd);
    fd = t_open("c", O_RDONLY | O_CLOEXEC, 0);
    CHECK_EQ(SYS(fcntl, fd, F_GETFD), FD_CLOEXEC);
    SYS(close, fd);
    fd = t_open("c", O_RDONLY | O_NONBLOCK, 0);
    CHECK_EQ(SYS(fcntl, fd, F_GETFL) & O_NONBLOCK, O_NONBLOCK);
    CHECK_EQ(SYS(fcntl, fd, F_GETFL) & O_LARGEFILE, O_LARGEFILE);
    SYS(close, fd);
    CHECK_EQ(t_open(".", O_WRONLY, 0), -EISDIR);
    CHECK_EQ(t_open(".", O_RDONLY | O_CREAT, 0644), -EISDIR);
    CHECK_EQ(t_open("c/x", O_RDONLY, 0), -ENOTDIR);
    CHECK_EQ(t_open("c/", O_RDONLY, 0), -ENOTDIR);
    CHECK_EQ(t_open("newf/", O_RDWR | O_CREAT, 0644), -EISDIR);
    CHECK_EQ(SYS(open, BADPTR, O_RDONLY), -EFAULT);
    char longname[300];
    memset(longname, 'n', sizeof longname - 1);
    longname[sizeof longname - 1] = 0;
    CHECK_EQ(t_open(longname, O_RDONLY, 0), -ENAMETOOLONG);
    CHECK_EQ(t_open(longname, O_RDONLY | O_CREAT, 0644), -ENAMETOOLONG);
    static char longpath[PATH_MAX + 10];
    memset(longpath, 'p', sizeof longpath - 1);
    CHECK_EQ(t_open(longpath, O_RDONLY, 0), -ENAMETOOLONG);
    CHECK_EQ(t_open("", O_RDONLY, 0), -ENOENT);
    long dfd = t_open(".", O_RDONLY | O_DIRECTORY, 0);
    fd = SYS(openat, dfd, ustr("c"), O_RDONLY);
    CHECK(fd >= 0);
    SYS(close, fd);
    CHECK_EQ(SYS(openat, 999, ustr("c"), O_RDONLY), -EBADF);
    CHECK_EQ(SYS(openat, 999, ustr("/c"), O_RDONLY) >= 0, 1);   /* absolute: no dirfd */
    long ffd = t_open("c", O_RDONLY, 0);
    CHECK_EQ(SYS(openat, ffd, ustr("x"), O_RDONLY), -ENOTDIR);
    fd = SYS(openat, AT_FDCWD, ustr("c"), O_RDONLY);
    CHECK(fd >= 0);
    fd = SYS(creat, ustr("cr"), 0600);
    CHECK(fd >= 0);
    CHECK_EQ(SYS(fcntl, fd, F_GETFL) & O_ACCMODE, O_WRONLY);
    CHECK_EQ(SYS(read, fd, ubuf(4), 4), -EBADF);
    /* O_CREAT on a dangling symlink creates its target; O_EXCL does not follow */
    SYS(symlink, ustr("target"), ustr("dang"));
    CHECK_EQ(t_open("dang", O_WRONLY | O_CREAT | O_EXCL, 0644), -EEXIST);
    fd = t_open("dang", O_WRONLY | O_CREAT, 0644);
    CHECK(fd >= 0);
    struct linux_stat lt;
    CHECK_EQ(t_stat("target", &lt, false), 0);
}

static void test_read_write(void)
{
    t_put("d", "0123456789");
    long fd = t_open("d", O_RDWR, 0);
    uint64_t buf = ubuf(32);
    CHECK_EQ(SYS(read, fd, buf, 4), 4);
    CHECK(memcmp(host(buf), "0123", 4) == 0);
    CHECK_EQ(SYS(read, fd, buf, 32), 6);
    CHECK_EQ(SYS(read, fd, buf, 32), 0);
    SYS(lseek, fd, 0, SEEK_SET);
    CHECK_EQ(SYS(read, fd, BADPTR, 4), -EFAULT);
    CHECK_EQ(SYS(write, fd, BADPTR, 4), -EFAULT);
    CHECK(strcmp(t_read_all("d", 64), "0123456789") == 0);     /* unchanged */
    CHECK_EQ(SYS(read, fd, buf, 0), 0);
    CHECK_EQ(SYS(read, fd, BADPTR, 0), 0);
    CHECK_EQ(SYS(read, fd, buf, (uint64_t)-1), -EFAULT);        /* beyond user space */
    CHECK_EQ(SYS(write, fd, 0xffff800000000000ull, 0), -EFAULT);
    SYS(close, fd);
    CHECK_EQ(SYS(read, fd, buf, 1), -EBADF);
    CHECK_EQ(SYS(write, fd, ustr("x"), 1), -EBADF);
    CHECK_EQ(SYS(read, -1, buf, 1), -EBADF);
    CHECK_EQ(SYS(read, 0x7fffffff, buf, 1), -EBADF);
    fd = t_open("d", O_RDONLY, 0);
    CHECK_EQ(SYS(write, fd, ustr("x"), 1), -EBADF);
    SYS(close, fd);
    fd = t_open("d", O_WRONLY, 0);
    CHECK_EQ(SYS(read, fd, buf, 1), -EBADF);
    SYS(close, fd);
    fd = t_open(".", O_RDONLY | O_DIRECTORY, 0);
    CHECK_EQ(SYS(read, fd, buf, 1), -EISDIR);
    SYS(close, fd);
    /* a failed write past the end leaves zeros beyond the size */
    fd = t_open("z", O_RDWR | O_CREAT, 0644);
    SYS(write, fd, ustr("ab"), 2);
    CHECK_EQ(SYS(write, fd, fake_user(vt_proc, VT_MEM - 2), 8), -EFAULT);
    CHECK_EQ(SYS(ftruncate, fd, 6), 0);
    CHECK_EQ(SYS(pread64, fd, buf, 6, 0), 6);
    CHECK(memcmp(host(buf), "ab\0\0\0\0", 6) == 0);
    SYS(close, fd);
}

static void test_positional(void)
{
    t_put("e", "abcdefgh");
    long fd = t_open("e", O_RDWR, 0);
    uint64_t buf = ubuf(16);
    CHECK_EQ(SYS(pread64, fd, buf, 3, 3), 3);
    CHECK(memcmp(host(buf), "def", 3) == 0);
    CHECK_EQ(SYS(lseek, fd, 0, SEEK_CUR), 0);
    CHECK_EQ(SYS(pwrite64, fd, ustr("XY"), 2, 6), 2);
    CHECK_EQ(SYS(read, fd, buf, 8), 8);
    CHECK(memcmp(host(buf), "abcdefXY", 8) == 0);
    CHECK_EQ(SYS(pread64, fd, buf, 1, -1), -EINVAL);
    CHECK_EQ(SYS(pwrite64, fd, ustr("Z"), 1, 12), 1);
    struct linux_stat st;
    t_fstat(fd, &st);
    CHECK_EQ(st.st_size, 13);
    CHECK_EQ(st.st_blocks, 8);
    CHECK_EQ(SYS(pread64, fd, buf, 1, 10), 1);
    CHECK_EQ(((char *)host(buf))[0], 0);
    SYS(close, fd);
    long p = fake_pipe(O_RDONLY);
    CHECK_EQ(SYS(pread64, p, buf, 1, 0), -ESPIPE);
    CHECK_EQ(SYS(read, p, buf, 1), 1);
    SYS(close, p);
    /* pwrite on an O_APPEND file appends, as on Linux */
    fd = t_open("e", O_WRONLY | O_APPEND, 0);
    CHECK_EQ(SYS(pwrite64, fd, ustr("!"), 1, 0), 1);
    t_fstat(fd, &st);
    CHECK_EQ(st.st_size, 14);
    SYS(close, fd);
}

static void test_vectors(void)
{
    long fd = t_open("v", O_RDWR | O_CREAT | O_TRUNC, 0644);
    uint64_t out = ubuf(2 * sizeof(struct linux_iovec));
    struct linux_iovec *o = host(out);
    o[0] = (struct linux_iovec){ustr("abc"), 3};
    o[1] = (struct linux_iovec){ustr("defgh"), 5};
    CHECK_EQ(SYS(writev, fd, out, 2), 8);
    SYS(lseek, fd, 0, SEEK_SET);
    uint64_t a = ubuf(4), b = ubuf(8), in = ubuf(2 * sizeof(struct linux_iovec));
    struct linux_iovec *iv = host(in);
    iv[0] = (struct linux_iovec){a, 3};
    iv[1] = (struct linux_iovec){b, 7};
    CHECK_EQ(SYS(readv, fd, in, 2), 8);
    CHECK(strcmp(host(a), "abc") == 0);
    CHECK(strcmp(host(b), "defgh") == 0);
    CHECK_EQ(SYS(writev, fd, out, 0), 0);
    CHECK_EQ(SYS(writev, fd, out, -1), -EINVAL);
    CHECK_EQ(SYS(writev, fd, out, IOV_MAX + 1), -EINVAL);
    CHECK_EQ(SYS(readv, fd, BADPTR, 1), -EFAULT);
    /* a bad buffer in the second vector: the first one's bytes are the result */
    SYS(lseek, fd, 0, SEEK_SET);
    iv[1] = (struct linux_iovec){BADPTR, 7};
    CHECK_EQ(SYS(readv, fd, in, 2), 3);
    iv[1] = (struct linux_iovec){b, (uint64_t)-1};
    CHECK_EQ(SYS(readv, fd, in, 2), -EINVAL);
    iv[1] = (struct linux_iovec){0xffff800000000000ull, 1};
    CHECK_EQ(SYS(readv, fd, in, 2), -EFAULT);
    CHECK_EQ(SYS(lseek, fd, 0, SEEK_CUR), 3);          /* nothing moved */
    SYS(close, fd);
}

static void test_lseek(void)
{
    t_put("s", "0123456789");
    long fd = t_open("s", O_RDONLY, 0);
    CHECK_EQ(SYS(lseek, fd, 0, SEEK_END), 10);
    CHECK_EQ(SYS(lseek, fd, -4, SEEK_CUR), 6);
    CHECK_EQ(SYS(lseek, fd, 100, SEEK_SET), 100);
    CHECK_EQ(SYS(lseek, fd, -200, SEEK_CUR), -EINVAL);
    CHECK_EQ(SYS(lseek, fd, 0, 42), -EINVAL);
    CHECK_EQ(SYS(lseek, fd, 3, 3), 3);                 /* SEEK_DATA */
    CHECK_EQ(SYS(lseek, fd, 3, 4), 10);                /* SEEK_HOLE */
    CHECK_EQ(SYS(lseek, fd, 10, 3), -ENXIO);
    SYS(close, fd);
    CHECK_EQ(SYS(lseek, fd, 0, SEEK_SET), -EBADF);
    long p = fake_pipe(O_RDONLY);
    CHECK_EQ(SYS(lseek, p, 0, SEEK_SET), -ESPIPE);
    CHECK_EQ(SYS(close, p), 0);
    CHECK_EQ(SYS(close, p), -EBADF);
    CHECK_EQ(SYS(close, -5), -EBADF);
    /* a directory: rewind only */
    long d = t_open(".", O_RDONLY | O_DIRECTORY, 0);
    CHECK_EQ(SYS(lseek, d, 0, SEEK_SET), 0);
    CHECK_EQ(SYS(lseek, d, 0, SEEK_END), -EINVAL);
    SYS(close, d);
}

static void test_sendfile(void)
{
    long in = t_open("src", O_RDWR | O_CREAT | O_TRUNC, 0644);
    SYS(write, in, ustr("sendfile data"), 13);
    long out = t_open("dst", O_WRONLY | O_CREAT | O_TRUNC, 0644);
    uint64_t off = ubuf(8);
    *(int64_t *)host(off) = 9;
    CHECK_EQ(SYS(sendfile, out, in, off, 100), 4);
    CHECK_EQ(*(int64_t *)host(off), 13);
    CHECK_EQ(SYS(lseek, in, 0, SEEK_CUR), 13);          /* own offset untouched */
    SYS(lseek, in, 0, SEEK_SET);
    CHECK_EQ(SYS(sendfile, out, in, 0, 8), 8);
    CHECK_EQ(SYS(lseek, in, 0, SEEK_CUR), 8);
    struct linux_stat st;
    t_fstat(out, &st);
    CHECK_EQ(st.st_size, 12);
    CHECK(strcmp(t_read_all("dst", 64), "datasendfile") == 0);
    CHECK_EQ(SYS(sendfile, out, 999, 0, 1), -EBADF);
    CHECK_EQ(SYS(sendfile, in, out, 0, 1), -EBADF);     /* out is write-only */
    CHECK_EQ(SYS(sendfile, out, in, BADPTR, 1), -EFAULT);
    *(int64_t *)host(off) = -1;
    CHECK_EQ(SYS(sendfile, out, in, off, 1), -EINVAL);
    long p = fake_pipe(O_RDWR);
    SYS(lseek, in, 0, SEEK_SET);
    CHECK_EQ(SYS(sendfile, p, in, 0, 4), 4);
    CHECK(memcmp(sink, "send", 4) == 0);
    CHECK_EQ(SYS(sendfile, out, p, 0, 4), -EINVAL);     /* from a pipe */
    long ap = t_open("dst", O_WRONLY | O_APPEND, 0);
    CHECK_EQ(SYS(sendfile, ap, in, 0, 4), -EINVAL);
    CHECK_EQ(SYS(sendfile, out, in, 0, 0), 0);
    /* from a file to itself, growing it (its data moves while being copied) */
    long self = t_open("self", O_RDWR | O_CREAT, 0644);
    static char big[200];
    memset(big, 'q', sizeof big - 1);
    SYS(write, self, ustr(big), sizeof big - 1);
    long self2 = t_open("self", O_RDONLY, 0);
    CHECK_EQ(SYS(sendfile, self, self2, 0, 199), 199);
    struct linux_stat ss;
    t_fstat(self, &ss);
    CHECK_EQ(ss.st_size, 398);
    CHECK_EQ(SYS(pread64, self2, ubuf(8), 1, 397), 1);
    /* O_PATH files only name a file */
    long op = t_open("src", O_PATH, 0);
    CHECK_EQ(SYS(sendfile, out, op, 0, 1), -EBADF);
    CHECK_EQ(SYS(lseek, op, 0, SEEK_SET), -EBADF);
    CHECK_EQ(SYS(ftruncate, op, 0), -EBADF);
    CHECK_EQ(SYS(fchmod, op, 0600), -EBADF);
    CHECK_EQ(SYS(fstat, op, ubuf(sizeof(ss))), 0);
    CHECK_EQ(SYS(fcntl, op, F_GETFL) & O_PATH, O_PATH);
    long dp = t_open("/", O_PATH | O_DIRECTORY, 0);
    CHECK_EQ(SYS(getdents64, dp, ubuf(256), 256), -EBADF);
    CHECK(SYS(openat, dp, ustr("src"), O_RDONLY) >= 0);     /* still a dirfd */
}

int main(void)
{
    vfs_test_begin();
    test_open_flags();
    test_read_write();
    test_positional();
    test_vectors();
    test_lseek();
    test_sendfile();
    vfs_test_end();
    return fake_done();
}
