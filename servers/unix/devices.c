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
 *                     in the range Linux keeps for local use.
 *   240,1 /dev/window  cache-model windows (rt_measure): a write of "begin ID" or "end ID"
 *                     (ID 0..4095, one optional newline) opens or closes window ID, so a
 *                     Linux workload (tools/sdet/bench.sh, tests/linux/aim.c) delimits
 *                     what the plugin counts; a window's begin also resumes every CPU's
 *                     coherence-model clock (MEASURE_MODEL); anything else is -EINVAL;
 *                     reads end at once. Without the plugin the markers go unseen.
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

/* "begin ID" / "end ID" (devices' comment above): 1 for begin, 0 for end, -1 if neither;
 * *id the window. */
static int window_parse(const char *s, size_t n, unsigned *id)
{
    int begin = n > 6 && !memcmp(s, "begin ", 6) ? 1 : n > 4 && !memcmp(s, "end ", 4) ? 0 : -1;
    if (begin < 0)
        return -1;
    size_t i = begin ? 6 : 4;
    if (n > i && s[n - 1] == '\n')
        n--;
    unsigned v = 0;
    for (; i < n && s[i] >= '0' && s[i] <= '9' && v < 4096; i++)
        v = v * 10 + (unsigned)(s[i] - '0');
    *id = v;
    return i == n && s[n - 1] >= '0' && s[n - 1] <= '9' && v < 4096 ? begin : -1;
}

static long window_write(struct file *f, struct ucall *c, uint64_t uaddr, size_t n,
                         uint64_t *off)
{
    (void)f, (void)off;
    char text[16];
    unsigned id;
    if (n > sizeof text)
        return -EINVAL;
    if (copy_in(c->proc, text, uaddr, n))
        return -EFAULT;
    int begin = window_parse(text, n, &id);
    if (begin < 0)
        return -EINVAL;
    long r = rt_measure(begin ? MEASURE_WINDOW_BEGIN : MEASURE_WINDOW_END, id);
    if (r >= 0 && begin)
        r = rt_measure(MEASURE_MODEL, 1);
    return r < 0 ? rt_errno(r) : (long)n;
}

static const struct file_ops null_ops = {.read = null_read, .write = sink_write,
                                         .write_buf = sink_write_buf};
static const struct file_ops zero_ops = {.read = zero_read, .write = sink_write,
                                         .write_buf = sink_write_buf};
/* /dev/full has no write_buf: sendfile to it is -EINVAL, as Linux (no splice_write). */
static const struct file_ops full_ops = {.read = zero_read, .write = full_write};
static const struct file_ops results_ops = {.read = null_read, .write = results_write};
static const struct file_ops window_ops = {.read = null_read, .write = window_write};
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
    {240, 1, &window_ops, NULL},
};

const struct chardev *chardev_lookup(unsigned major, unsigned minor)
{
    for (size_t i = 0; i < sizeof chardevs / sizeof chardevs[0]; i++)
        if (chardevs[i].major == major && chardevs[i].minor == minor)
            return &chardevs[i];
    return NULL;
}
