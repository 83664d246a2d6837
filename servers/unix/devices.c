/*
 * Character devices by Linux major/minor (devices(7), mem(4), random(4)):
 *   1,3 /dev/null     reads end at once, writes vanish
 *   1,5 /dev/zero     reads give zeros, writes vanish
 *   1,7 /dev/full     reads give zeros, writes fail with ENOSPC
 *   1,8 /dev/random, 1,9 /dev/urandom   the server's seeded generator (unix_random)
 *   5,0 /dev/tty      the caller's controlling tty (ENXIO without one)
 *   5,1 /dev/console  the console tty
 *   240,0 /dev/results ondol's result stream (COM2; rt_result_write): benchmark records
 *                     from Linux programs (tools/unixbench); reads end at once. 240 is
 *                     in the range Linux keeps for local use. Its ioctls open and close
 *                     a model window around a measured run (RESULTS_WINDOW_*, below).
 * The generator is deterministic on purpose: the same boot gives the same bytes, so runs
 * under icount repeat exactly. It is splitmix64 (Steele, Lea and Flood, 2014), which is
 * fast and well mixed but not a cryptographic generator.
 */
#include "devices.h"
#include "runtime.h"

#define RANDOM_SEED 0x6f6e646f6c2d3130ull    /* "ondol-10" */
#define FILL_CHUNK 256                       /* bytes produced per copy_out */

static uint64_t random_state = RANDOM_SEED;

void unix_random_seed(uint64_t seed)
{
    random_state = seed;
}

static uint64_t random_next(void)
{
    uint64_t z = (random_state += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

void unix_random(void *buf, size_t n)
{
    unsigned char *out = buf;
    while (n) {
        uint64_t r = random_next();
        size_t k = n < sizeof r ? n : sizeof r;
        memcpy(out, &r, k);
        out += k;
        n -= k;
    }
}

/* Give the caller n bytes made by fill, a chunk at a time: n, or what was copied before
 * a bad address (-EFAULT if nothing was). */
static long give_bytes(struct ucall *c, uint64_t uaddr, size_t n,
                       void (*fill)(void *buf, size_t n))
{
    unsigned char chunk[FILL_CHUNK];
    size_t done = 0;
    while (done < n) {
        size_t k = n - done < sizeof chunk ? n - done : sizeof chunk;
        fill(chunk, k);
        if (copy_out(c->proc, uaddr + done, chunk, k))
            return done ? (long)done : -EFAULT;
        done += k;
    }
    return (long)n;
}

static void fill_zero(void *buf, size_t n)
{
    memset(buf, 0, n);
}

static long null_read(struct file *f, struct ucall *c, uint64_t uaddr, size_t n, uint64_t *off)
{
    (void)f, (void)c, (void)uaddr, (void)n, (void)off;
    return 0;
}

static long sink_write(struct file *f, struct ucall *c, uint64_t uaddr, size_t n, uint64_t *off)
{
    (void)f, (void)c, (void)uaddr, (void)off;
    return (long)n;
}

static long full_write(struct file *f, struct ucall *c, uint64_t uaddr, size_t n, uint64_t *off)
{
    (void)f, (void)c, (void)uaddr, (void)off;
    return n ? -ENOSPC : 0;
}

/* sendfile to /dev/null, zero, random, urandom: as write, from the server's memory. */
static long sink_write_buf(struct file *f, struct ucall *c, const void *buf, size_t n,
                           uint64_t *off)
{
    (void)f, (void)c, (void)buf, (void)off;
    return (long)n;
}

static long zero_read(struct file *f, struct ucall *c, uint64_t uaddr, size_t n, uint64_t *off)
{
    (void)f, (void)off;
    return give_bytes(c, uaddr, n, fill_zero);
}

static long random_read(struct file *f, struct ucall *c, uint64_t uaddr, size_t n,
                        uint64_t *off)
{
    (void)f, (void)off;
    return give_bytes(c, uaddr, n, unix_random);
}

/* The caller's bytes to the result stream, a chunk at a time: n, or what was written
 * before a bad address (-EFAULT if nothing was). */
static long results_write(struct file *f, struct ucall *c, uint64_t uaddr, size_t n,
                          uint64_t *off)
{
    (void)f, (void)off;
    char chunk[FILL_CHUNK];
    for (size_t done = 0; done < n;) {
        size_t k = n - done < sizeof chunk ? n - done : sizeof chunk;
        if (copy_in(c->proc, chunk, uaddr + done, k))
            return done ? (long)done : -EFAULT;
        rt_result_write(chunk, k);
        done += k;
    }
    return (long)n;
}

/* ioctl(/dev/results, RESULTS_WINDOW_BEGIN, id): the cache/coherence model's window id
 * begins and every CPU's model clock resumes (tests/linux/aim.c); RESULTS_WINDOW_END ends
 * it. Without the plugin loaded these are marker loads nobody sees. -EINVAL for an id
 * above 0xfff. */
#define RESULTS_WINDOW_BEGIN 0x4f01
#define RESULTS_WINDOW_END 0x4f02

static long results_ioctl(struct file *f, struct ucall *c, unsigned long cmd, uint64_t arg)
{
    (void)f, (void)c;
    if (cmd != RESULTS_WINDOW_BEGIN && cmd != RESULTS_WINDOW_END)
        return -ENOTTY;
    if (arg > 0xfff)
        return -EINVAL;
    if (cmd == RESULTS_WINDOW_END)
        return rt_errno(rt_measure(MEASURE_WINDOW_END, (unsigned)arg));
    long r = rt_measure(MEASURE_WINDOW_BEGIN, (unsigned)arg);
    return rt_errno(r < 0 ? r : rt_measure(MEASURE_MODEL, 1));
}

static const struct file_ops null_ops = {.read = null_read, .write = sink_write,
                                         .write_buf = sink_write_buf};
static const struct file_ops zero_ops = {.read = zero_read, .write = sink_write,
                                         .write_buf = sink_write_buf};
/* /dev/full has no write_buf: sendfile to it is -EINVAL, as Linux (no splice_write). */
static const struct file_ops full_ops = {.read = zero_read, .write = full_write};
static const struct file_ops results_ops = {.read = null_read, .write = results_write,
                                            .ioctl = results_ioctl};
static const struct file_ops random_ops = {.read = random_read, .write = sink_write,
                                           .write_buf = sink_write_buf};

static const struct chardev chardevs[] = {
    {1, 3, &null_ops, NULL},
    {1, 5, &zero_ops, NULL},
    {1, 7, &full_ops, NULL},
    {1, 8, &random_ops, NULL},
    {1, 9, &random_ops, NULL},
    {5, 0, &tty_file_ops, tty_open_ctty},
    {5, 1, &tty_file_ops, tty_open_console},
    {240, 0, &results_ops, NULL},
};

const struct chardev *chardev_lookup(unsigned major, unsigned minor)
{
    for (size_t i = 0; i < sizeof chardevs / sizeof chardevs[0]; i++)
        if (chardevs[i].major == major && chardevs[i].minor == minor)
            return &chardevs[i];
    return NULL;
}
