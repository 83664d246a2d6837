/* The file system calls with random arguments from a fixed seed (100,000 calls): paths
 * from a small vocabulary (so calls meet each other's files, links and loops), fds that
 * are open, closed or absurd, bad pointers, random flags. Every result must be >= 0 or
 * a Linux errno; afterwards the tree must be consistent (link counts, sizes, parents),
 * and once every fd is closed and the tree freed LeakSanitizer must find nothing. */
#include <stdio.h>
#include "vfs_test.h"

#define CALLS 100000
static uint64_t rng = 12345;
static uint64_t rnd(uint64_t n)
{
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return n ? rng % n : rng;
}

static const char *const names[] = {
    "a", "b", "d", "d/a", "d/e", "d/e/f", "/d/e/../a", "l", "l/a", "loop", "d/l2", "/",
    ".", "..", "", "a/", "d/", "../../d", "/tmp", "nope/x", "a/x",
};

static uint64_t rand_path(void)
{
    switch (rnd(10)) {
    case 0: return BADPTR;
    case 1: return 0;
    default: return ustr(names[rnd(sizeof names / sizeof names[0])]);
    }
}

static uint64_t rand_fd(void)
{
    static const int64_t odd[] = {-1, 999, AT_FDCWD, UNIX_MAX_FDS, 0x7fffffff};
    return rnd(4) ? rnd(8) : (uint64_t)odd[rnd(5)];
}

static uint64_t rand_buf(void)
{
    switch (rnd(8)) {
    case 0: return BADPTR;
    case 1: return 0xffff800000000000ull;
    case 2: return fake_user(vt_proc, VT_MEM - 3);   /* runs off the end */
    default: return ubuf(512);
    }
}

static uint64_t rand_int(void)
{
    static const uint64_t v[] = {0, 1, 2, 3, 4, 5, 100, 5000, 1u << 20, (uint64_t)-1,
                                 1ull << 40, 0x80000000u, 0x7fffffff};
    return rnd(3) ? v[rnd(sizeof v / sizeof v[0])] : rnd(0) & 0x3fffff;
}

/* A readable iovec array or struct timespec pair in user memory. */
static uint64_t rand_vec(void)
{
    uint64_t u = ubuf(64);
    uint64_t *w = host(u);
    for (int i = 0; i < 8; i++)
        w[i] = i % 2 ? rand_int() % 600 : rand_buf();
    return rnd(5) ? u : rand_buf();
}

typedef uint64_t (*argfn)(void);
struct call {
    long (*fn)(struct ucall *);
    argfn args[6];
};
#define P rand_path
#define F rand_fd
#define B rand_buf
#define I rand_int
#define V rand_vec
static const struct call calls[] = {
    {lx_read, {F, B, I}}, {lx_write, {F, B, I}}, {lx_open, {P, I, I}}, {lx_close, {F}},
    {lx_stat, {P, B}}, {lx_fstat, {F, B}}, {lx_lstat, {P, B}}, {lx_lseek, {F, I, I}},
    {lx_pread64, {F, B, I, I}}, {lx_pwrite64, {F, B, I, I}}, {lx_readv, {F, V, I}},
    {lx_writev, {F, V, I}}, {lx_access, {P, I}}, {lx_dup, {F}}, {lx_dup2, {F, F}},
    {lx_sendfile, {F, F, B, I}}, {lx_fcntl, {F, I, I}}, {lx_truncate, {P, I}},
    {lx_ftruncate, {F, I}}, {lx_getcwd, {B, I}}, {lx_chdir, {P}}, {lx_fchdir, {F}},
    {lx_rename, {P, P}}, {lx_mkdir, {P, I}}, {lx_rmdir, {P}}, {lx_creat, {P, I}},
    {lx_link, {P, P}}, {lx_unlink, {P}}, {lx_symlink, {P, P}}, {lx_readlink, {P, B, I}},
    {lx_chmod, {P, I}}, {lx_fchmod, {F, I}}, {lx_chown, {P, I, I}}, {lx_fchown, {F, I, I}},
    {lx_lchown, {P, I, I}}, {lx_umask, {I}}, {lx_getdents64, {F, B, I}},
    {lx_openat, {F, P, I, I}}, {lx_mkdirat, {F, P, I}}, {lx_fchownat, {F, P, I, I, I}},
    {lx_newfstatat, {F, P, B, I}}, {lx_unlinkat, {F, P, I}}, {lx_renameat, {F, P, F, P}},
    {lx_renameat2, {F, P, F, P, I}}, {lx_linkat, {F, P, F, P, I}},
    {lx_symlinkat, {P, F, P}}, {lx_readlinkat, {F, P, B, I}}, {lx_fchmodat, {F, P, I}},
    {lx_faccessat, {F, P, I}}, {lx_utimensat, {F, P, V, I}}, {lx_dup3, {F, F, I}},
    {lx_statx, {F, P, I, I, B}}, {lx_faccessat2, {F, P, I, I}},
};

/* Opens of likely names, so that many calls meet open files. */
static void seed_tree(void)
{
    SYS(mkdir, ustr("/d"), 0755);
    SYS(mkdir, ustr("/d/e"), 0755);
    t_put("/a", "some bytes");
    SYS(symlink, ustr("d"), ustr("/l"));
    SYS(symlink, ustr("loop"), ustr("/loop"));
    SYS(symlink, ustr("/d/e"), ustr("/d/l2"));
    for (int i = 0; i < 6; i++)
        t_open(i % 2 ? "/a" : "/d", i % 2 ? O_RDWR : O_RDONLY, 0);
}

/* Names per non-directory inode, counted over the whole tree. */
struct seen {
    struct inode *i;
    unsigned names;
};
static struct seen seen[4096];
static int nseen;

static void count_name(struct inode *i)
{
    for (int k = 0; k < nseen; k++)
        if (seen[k].i == i) {
            seen[k].names++;
            return;
        }
    if (nseen < 4096)
        seen[nseen++] = (struct seen){i, 1};
}

/* Link counts (directories: 2 + subdirectories; others: their names), sizes and
 * parents over the whole tree, without recursion. */
static int check_tree(void)
{
    int bad = 0;
    struct inode *stack[512];
    int top = 0;
    stack[top++] = vfs_root();
    while (top) {
        struct inode *dir = stack[--top];
        unsigned subdirs = 0, names = 0;
        for (struct dentry *d = dir->entries; d; d = d->next) {
            names++;
            if (inode_is(d->inode, S_IFDIR)) {
                subdirs++;
                bad += d->inode->parent != dir;
                if (top < 512)
                    stack[top++] = d->inode;
            } else {
                count_name(d->inode);
            }
        }
        bad += dir->nlink != 2 + subdirs;
        bad += dir->size != (2 + names) * TMPFS_DIRENT_SIZE;
    }
    for (int k = 0; k < nseen; k++)
        bad += seen[k].i->nlink != seen[k].names;
    printf("tree: %d files checked\n", nseen);
    return bad;
}

int main(void)
{
    fake_alloc_max = 4u << 20;          /* a bounded heap: files stop growing at 4 MiB */
    vfs_test_begin();
    seed_tree();
    int odd = 0;
    long ok = 0;
    for (int i = 0; i < CALLS; i++) {
        const struct call *k = &calls[rnd(sizeof calls / sizeof calls[0])];
        uint64_t a[6] = {0};
        for (int j = 0; j < 6 && k->args[j]; j++)
            a[j] = k->args[j]();
        long r = vt_call(k->fn, a);
        odd += !(r >= 0 || (r < 0 && r >= -4095));
        ok += r >= 0;
        if (rnd(500) == 0)
            SYS(chdir, ustr("/"));
    }
    printf("fuzz: %d calls, %ld succeeded\n", CALLS, ok);
    CHECK_EQ(odd, 0);
    CHECK(ok > 10000);
    CHECK_EQ(check_tree(), 0);
    vfs_test_end();
    return fake_done();
}
