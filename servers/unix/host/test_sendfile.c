/* sendfile into pipes, devices and the tty (their write_buf), FIONREAD on regular files,
 * and poll/select on regular files and directories (always ready), with the results
 * tests/linux/files_fd.c gets from Linux. */
#include <stdio.h>
#include "vfs_test.h"

/* A character device node name major,minor in the root (mknod without the call). */
static void t_node(const char *name, unsigned major, unsigned minor)
{
    struct inode *i = inode_new(S_IFCHR | 0666);
    i->rdev_major = major;
    i->rdev_minor = minor;
    dir_link(vfs_root(), name, strlen(name), i);
    inode_put(i);
}

static long t_sendfile(long out, long in, uint64_t uoff, uint64_t count)
{
    return SYS(sendfile, (uint64_t)out, (uint64_t)in, uoff, count);
}

static long t_file(const char *path, size_t size, char fill)
{
    long fd = t_open(path, O_RDWR | O_CREAT | O_TRUNC, 0644);
    uint64_t u = ubuf(size);
    memset(host(u), fill, size);
    SYS(write, (uint64_t)fd, u, size);
    SYS(lseek, (uint64_t)fd, 0, SEEK_SET);
    return fd;
}

static void test_to_pipe(void)
{
    t_put("/in", "sendfile data");
    long in = t_open("/in", O_RDONLY, 0);
    uint64_t fds = ubuf(8);
    SYS(pipe2, fds, 0);
    int p[2];
    memcpy(p, host(fds), 8);
    CHECK_EQ(t_sendfile(p[1], in, 0, 4), 4);             /* the peer: 4 */
    CHECK_EQ(SYS(lseek, (uint64_t)in, 0, SEEK_CUR), 4);
    uint64_t u = ubuf(64);
    CHECK_EQ(SYS(read, (uint64_t)p[0], u, 64), 4);
    CHECK_EQ(memcmp(host(u), "send", 4), 0);
    uint64_t off = ubuf(8);
    int64_t at = 9;
    memcpy(host(off), &at, 8);
    CHECK_EQ(t_sendfile(p[1], in, off, 100), 4);         /* to the end, from offset 9 */
    memcpy(&at, host(off), 8);
    CHECK_EQ(at, 13);
    CHECK_EQ(SYS(lseek, (uint64_t)in, 0, SEEK_CUR), 4);  /* own offset unmoved */
    CHECK_EQ(SYS(read, (uint64_t)p[0], u, 64), 4);
    CHECK_EQ(memcmp(host(u), "data", 4), 0);
    CHECK_EQ(t_sendfile(p[0], in, 0, 4), -EBADF);        /* the read end */
    SYS(close, (uint64_t)in);

    /* larger than the pipe: it fills, then waits; the core runs it again when the reader
     * makes room, and it finishes from its progress (c->done) */
    long big = t_file("/big", 70000, 'b');
    struct ucall c = fake_call(vt_proc, 40, (uint64_t)p[1], (uint64_t)big, 0, 70000);
    CHECK_EQ(unix_dispatch(&c), UNIX_BLOCKED);
    uint64_t n = ubuf(4);
    SYS(ioctl, (uint64_t)p[0], FIONREAD, n);
    CHECK_EQ(*(int32_t *)host(n), 65536);
    CHECK_EQ(SYS(lseek, (uint64_t)big, 0, SEEK_CUR), 0);  /* nothing counted yet */
    uint64_t drain = ubuf(65536);
    int answers = fake_answers;
    CHECK_EQ(SYS(read, (uint64_t)p[0], drain, 65536), 65536);
    unix_run_woken();
    CHECK_EQ(fake_answers, answers + 1);
    CHECK_EQ(fake_answer, 70000);
    CHECK_EQ(SYS(lseek, (uint64_t)big, 0, SEEK_CUR), 70000);
    CHECK_EQ(SYS(read, (uint64_t)p[0], drain, 65536), 70000 - 65536);
    /* O_NONBLOCK and a full pipe: what fitted, then EAGAIN */
    SYS(lseek, (uint64_t)big, 0, SEEK_SET);
    SYS(fcntl, (uint64_t)p[1], F_SETFL, O_NONBLOCK);
    CHECK_EQ(t_sendfile(p[1], big, 0, 70000), 65536);
    CHECK_EQ(t_sendfile(p[1], big, 0, 10), -EAGAIN);
    /* no reader: EPIPE and SIGPIPE */
    SYS(close, (uint64_t)p[0]);
    CHECK(!(vt_proc->sig_pending.set & (1ull << (SIGPIPE - 1))));
    CHECK_EQ(t_sendfile(p[1], big, 0, 10), -EPIPE);
    CHECK(vt_proc->sig_pending.set & (1ull << (SIGPIPE - 1)));   /* signal.c: pending */
    SYS(close, (uint64_t)p[1]);
    SYS(close, (uint64_t)big);
}

static void test_to_devices(void)
{
    unix_random_seed(1);                  /* links devices.c: the real /dev nodes */
    t_node("null", 1, 3);
    t_node("full", 1, 7);
    t_node("console", 5, 1);
    long in = t_file("/lines", 6, 'x');
    uint64_t u = ubuf(6);
    memcpy(host(u), "a\nb\nc\n", 6);
    SYS(pwrite64, (uint64_t)in, u, 6, 0);
    long null = t_open("/null", O_WRONLY, 0);
    CHECK_EQ(t_sendfile(null, in, 0, 100), 6);
    CHECK_EQ(SYS(lseek, (uint64_t)in, 0, SEEK_CUR), 6);
    long full = t_open("/full", O_WRONLY, 0);
    SYS(lseek, (uint64_t)in, 0, SEEK_SET);
    CHECK_EQ(t_sendfile(full, in, 0, 3), -EINVAL);         /* the peer: no splice_write */
    CHECK_EQ(SYS(lseek, (uint64_t)in, 0, SEEK_CUR), 0);
    long con = t_open("/console", O_WRONLY | O_NOCTTY, 0);
    fake_console_len = 0;
    CHECK_EQ(t_sendfile(con, in, 0, 4), 4);             /* ONLCR, as write */
    CHECK_EQ(fake_console_len, 6);
    CHECK_EQ(memcmp(fake_console, "a\r\nb\r\n", 6), 0);
    SYS(close, (uint64_t)null);
    SYS(close, (uint64_t)full);
    SYS(close, (uint64_t)con);
    SYS(close, (uint64_t)in);
}

static void test_fionread(void)
{
    long fd = t_file("/ten", 10, 't');
    uint64_t n = ubuf(4);
    CHECK_EQ(SYS(ioctl, (uint64_t)fd, FIONREAD, n), 0);
    CHECK_EQ(*(int32_t *)host(n), 10);
    SYS(lseek, (uint64_t)fd, 4, SEEK_SET);
    SYS(ioctl, (uint64_t)fd, FIONREAD, n);
    CHECK_EQ(*(int32_t *)host(n), 6);
    SYS(lseek, (uint64_t)fd, 15, SEEK_SET);
    SYS(ioctl, (uint64_t)fd, FIONREAD, n);
    CHECK_EQ(*(int32_t *)host(n), -5);                   /* as Linux: size - pos */
    CHECK_EQ(SYS(ioctl, (uint64_t)fd, FIONREAD, BADPTR), -EFAULT);
    long dir = t_open("/", O_RDONLY, 0);
    CHECK_EQ(SYS(ioctl, (uint64_t)dir, FIONREAD, n), -ENOTTY);
    SYS(close, (uint64_t)dir);
    SYS(close, (uint64_t)fd);
}

static void test_poll_files(void)
{
    long fd = t_file("/p", 1, 'p');
    long dir = t_open("/", O_RDONLY | O_DIRECTORY, 0);
    uint64_t pfd = ubuf(16);
    int32_t fds[4] = {(int32_t)fd, POLLIN | POLLOUT, (int32_t)dir, POLLIN};
    memcpy(host(pfd), fds, 16);
    CHECK_EQ(SYS(poll, pfd, 2, (uint64_t)-1), 2);        /* never waits */
    memcpy(fds, host(pfd), 16);
    CHECK_EQ(fds[1] >> 16, POLLIN | POLLOUT);
    CHECK_EQ(fds[3] >> 16, POLLIN);
    uint64_t set = ubuf(8);
    *(uint64_t *)host(set) = (1ull << fd) | (1ull << dir);
    CHECK_EQ(SYS(select, (uint64_t)dir + 1, set, 0, 0), 2);
    SYS(close, (uint64_t)fd);
    SYS(close, (uint64_t)dir);
}

int main(void)
{
    vfs_test_begin();
    test_to_pipe();
    test_to_devices();
    test_fionread();
    test_poll_files();
    vfs_test_end();
    return fake_done();
}
