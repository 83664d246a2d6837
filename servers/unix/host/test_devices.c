/* Character devices (devices.c) and ioctl's common requests (devioctl.c), mirroring the
 * device cases of tests/linux/dev.c. */
#include <string.h>
#include "fake.h"

#define MEM 8192
#define BUF 1024

static struct proc *p;

/* open the device major:minor at the lowest free fd, as the VFS's open(2) will */
static long open_dev(unsigned major, unsigned minor, unsigned flags)
{
    const struct chardev *d = chardev_lookup(major, minor);
    if (!d)
        return -ENXIO;
    struct file *f = file_new(d->ops, NULL, flags);
    struct ucall c = fake_call(p, 2, 0, flags, 0, 0);
    long err = d->open ? d->open(f, &c) : 0;
    if (err) {
        file_put(f);
        return err;
    }
    return fd_install(p, f, 0, (flags) & O_CLOEXEC);
}

static long xfer(int fd, bool write, uint64_t uaddr, size_t n)
{
    struct file *f = fd_file(p, fd);
    struct ucall c = fake_call(p, write, (uint64_t)fd, uaddr, n, 0);
    uint64_t off = 0;
    return write ? f->ops->write(f, &c, uaddr, n, &off) : f->ops->read(f, &c, uaddr, n, &off);
}

static long ioctl3(long fd, unsigned long cmd, uint64_t arg)
{
    struct ucall c = fake_call(p, 16, (uint64_t)fd, cmd, arg, 0);
    return lx_ioctl(&c);
}

static unsigned char *mem(size_t off)
{
    return fake_host(p, fake_user(p, off));
}

static void test_null_zero_full(void)
{
    long fd = open_dev(1, 3, O_RDWR);
    CHECK_EQ(xfer(fd, false, fake_user(p, BUF), 64), 0);
    CHECK_EQ(xfer(fd, true, fake_user(p, BUF), 3), 3);
    CHECK_EQ(xfer(fd, true, 16, 3), 3);                  /* the data is never read */
    CHECK_EQ(ioctl3(fd, TCGETS, fake_user(p, BUF)), -ENOTTY);
    fd_close(p, fd);
    fd = open_dev(1, 5, O_RDONLY);
    memset(mem(BUF), 7, 1000);
    CHECK_EQ(xfer(fd, false, fake_user(p, BUF), 999), 999);
    CHECK_EQ(mem(BUF)[0] | mem(BUF)[998], 0);
    CHECK_EQ(mem(BUF)[999], 7);
    CHECK_EQ(xfer(fd, false, fake_user(p, MEM - 300), 1000), 256);  /* up to the edge */
    CHECK_EQ(xfer(fd, false, 16, 10), -EFAULT);
    fd_close(p, fd);
    fd = open_dev(1, 7, O_RDWR);
    CHECK_EQ(xfer(fd, true, fake_user(p, BUF), 1), -ENOSPC);
    CHECK_EQ(xfer(fd, true, fake_user(p, BUF), 0), 0);
    CHECK_EQ(xfer(fd, false, fake_user(p, BUF), 8), 8);
    fd_close(p, fd);
}

static void test_random(void)
{
    unsigned char a[40], b[40];
    unix_random_seed(42);
    unix_random(a, sizeof a);
    unix_random_seed(42);
    long fd = open_dev(1, 9, O_RDONLY);
    CHECK_EQ(xfer(fd, false, fake_user(p, BUF), 40), 40);
    CHECK(!memcmp(mem(BUF), a, 40));                     /* same seed, same bytes */
    unix_random(b, sizeof b);
    CHECK(memcmp(a, b, 40) != 0);                        /* the sequence moves on */
    int zeros = 0;
    for (int i = 0; i < 40; i++)
        zeros += b[i] == 0;
    CHECK(zeros < 4);
    fd_close(p, fd);
    fd = open_dev(1, 8, O_RDONLY);                       /* /dev/random: the same source */
    CHECK_EQ(xfer(fd, false, fake_user(p, BUF), 32), 32);
    fd_close(p, fd);
}

static void test_lookup_and_tty_nodes(void)
{
    CHECK(chardev_lookup(1, 4) == NULL);
    CHECK(chardev_lookup(4, 64) == NULL);
    CHECK(chardev_lookup(5, 1) != NULL);
    CHECK_EQ(open_dev(5, 0, O_RDWR), -ENXIO);            /* no controlling tty */
    long fd = open_dev(5, 1, O_RDWR | O_NOCTTY);
    CHECK(fd >= 0);
    CHECK(fd_file(p, fd)->priv == tty_console());
    CHECK(p->ctty == NULL);                               /* opening never takes it */
    fd_close(p, fd);
}

static void test_common_ioctls(void)
{
    long fd = open_dev(1, 3, O_RDWR);
    CHECK_EQ(ioctl3(999, TCGETS, 0), -EBADF);
    CHECK_EQ(ioctl3(-1, FIONBIO, 0), -EBADF);
    CHECK_EQ(ioctl3(fd, FIOCLEX, 0), 0);
    CHECK(p->fds->cloexec[0] & (1ull << fd));
    CHECK_EQ(ioctl3(fd, FIONCLEX, 0), 0);
    CHECK(!(p->fds->cloexec[0] & (1ull << fd)));
    int32_t on = 1;
    memcpy(mem(BUF), &on, 4);
    CHECK_EQ(ioctl3(fd, FIONBIO, fake_user(p, BUF)), 0);
    CHECK(fd_file(p, fd)->flags & O_NONBLOCK);
    on = 0;
    memcpy(mem(BUF), &on, 4);
    CHECK_EQ(ioctl3(fd, FIONBIO, fake_user(p, BUF)), 0);
    CHECK(!(fd_file(p, fd)->flags & O_NONBLOCK));
    CHECK_EQ(ioctl3(fd, FIONBIO, 8), -EFAULT);
    CHECK_EQ(ioctl3(fd, 0x5499, 0), -ENOTTY);
    fd_close(p, fd);
}

static unsigned window_calls[4], window_last;
long rt_measure(unsigned op, unsigned arg)     /* overrides fake.c's: what it was told */
{
    window_calls[op & 3]++;
    if (op != MEASURE_MODEL)
        window_last = arg;
    return 0;
}

/* /dev/window: "begin ID" / "end ID" (ID < 4096, one newline allowed) reach rt_measure;
 * anything else is -EINVAL and reaches nothing. */
static long window_text(long fd, const char *text)
{
    memcpy(mem(BUF), text, strlen(text));
    return xfer(fd, true, fake_user(p, BUF), strlen(text));
}

static void test_window(void)
{
    long fd = open_dev(240, 1, O_WRONLY);
    CHECK_EQ(window_text(fd, "begin 16\n"), 9);
    CHECK(window_calls[MEASURE_WINDOW_BEGIN] == 1 && window_last == 16);
    CHECK(window_calls[MEASURE_MODEL] == 1);          /* a begin resumes the model's clocks */
    CHECK_EQ(window_text(fd, "end 4095"), 8);
    CHECK(window_calls[MEASURE_WINDOW_END] == 1 && window_last == 4095);
    static const char *bad[] = {"begin 4096", "begin ", "begin\n", "end x", "end 1 ",
                                "start 1", "begin 1\n\n", "end -1", "begin 00000000000001"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
        CHECK_EQ(window_text(fd, bad[i]), -EINVAL);
    CHECK(window_calls[MEASURE_WINDOW_END] == 1 && window_calls[MEASURE_WINDOW_BEGIN] == 1);
    CHECK_EQ(xfer(fd, true, 16, 7), -EFAULT);
    CHECK_EQ(xfer(fd, false, fake_user(p, BUF), 8), 0);
    fd_close(p, fd);
}

int main(void)
{
    p = fake_proc(MEM);
    fake_fds(p);
    test_null_zero_full();
    test_random();
    test_lookup_and_tty_nodes();
    test_common_ioctls();
    test_window();
    fake_fds_free(p);
    fake_proc_free(p);
    return fake_done();
}
