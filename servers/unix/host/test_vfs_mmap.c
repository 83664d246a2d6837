/* The file side of mmap (vfs_mmap_file): Linux's errors in Linux's order for each kind
 * of file (tests/linux/mem.c: bad fd EBADF, unaligned offset EINVAL, shared writable on a
 * read-only fd EACCES) and the bytes a private mapping starts with. */
#include "vfs_test.h"

static struct vfs_mapping m;

static long t_map(long fd, uint64_t off, uint64_t len, unsigned prot, unsigned flags)
{
    long r = vfs_mmap_file(vt_proc, fd, off, len, prot, flags, &m);
    if (r == 0)
        inode_put(m.inode);
    return r;
}

static void node(const char *name, unsigned major, unsigned minor)
{
    struct inode *i = inode_new(S_IFCHR | 0666);
    i->rdev_major = major;
    i->rdev_minor = minor;
    dir_link(vfs_root(), name, strlen(name), i);
    inode_put(i);
}

static void test_errors(void)
{
    t_put("/f", "file contents");
    long ro = t_open("/f", O_RDONLY, 0), wo = t_open("/f", O_WRONLY, 0);
    long rw = t_open("/f", O_RDWR, 0), app = t_open("/f", O_RDWR | O_APPEND, 0);
    long dir = t_open("/", O_RDONLY, 0), path = t_open("/f", O_PATH, 0);
    uint64_t fds = ubuf(8);
    SYS(pipe2, fds, 0);
    int p[2];
    memcpy(p, host(fds), 8);
    node("null", 1, 3);
    node("zero", 1, 5);
    long null = t_open("/null", O_RDWR, 0), zero = t_open("/zero", O_RDWR, 0);
    CHECK_EQ(t_map(999, 0, 4096, PROT_READ, MAP_PRIVATE), -EBADF);
    CHECK_EQ(t_map(999, 1, 4096, PROT_READ, MAP_PRIVATE), -EINVAL);     /* offset first */
    CHECK_EQ(t_map(ro, 1, 4096, PROT_READ, MAP_PRIVATE), -EINVAL);
    CHECK_EQ(t_map(path, 0, 4096, PROT_READ, MAP_PRIVATE), -EBADF);
    CHECK_EQ(t_map(ro, 0, 0, PROT_READ, MAP_PRIVATE), -EINVAL);
    CHECK_EQ(t_map(ro, 0, 4096, PROT_READ, 0), -EINVAL);                /* no type */
    CHECK_EQ(t_map(ro, 0, 4096, PROT_READ, 0xf), -EINVAL);
    CHECK_EQ(t_map(ro, 0, 1ull << 62, PROT_READ, MAP_PRIVATE), -ENOMEM);
    CHECK_EQ(t_map(ro, UINT64_MAX & ~4095ull, 8192, PROT_READ, MAP_PRIVATE), -EOVERFLOW);
    CHECK_EQ(t_map(wo, 0, 4096, PROT_READ, MAP_PRIVATE), -EACCES);
    CHECK_EQ(t_map(ro, 0, 4096, PROT_WRITE, MAP_SHARED), -EACCES);      /* the peer's case */
    CHECK_EQ(t_map(app, 0, 4096, PROT_WRITE, MAP_SHARED), -EACCES);
    CHECK_EQ(t_map(rw, 0, 4096, PROT_WRITE, MAP_SHARED), 0);            /* the page cache's */
    CHECK_EQ(t_map(dir, 0, 4096, PROT_READ, MAP_PRIVATE), -ENODEV);
    CHECK_EQ(t_map(p[0], 0, 4096, PROT_READ, MAP_PRIVATE), -ENODEV);
    CHECK_EQ(t_map(p[1], 0, 4096, PROT_READ, MAP_PRIVATE), -EACCES);    /* write end */
    CHECK_EQ(t_map(null, 0, 4096, PROT_READ, MAP_PRIVATE), -ENODEV);
    CHECK_EQ(t_map(zero, 0, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE), 0);
    CHECK(m.zero && m.inode == NULL);
    long fds_used[] = {ro, wo, rw, app, dir, path, p[0], p[1], null, zero};
    for (size_t k = 0; k < sizeof fds_used / sizeof fds_used[0]; k++)
        SYS(close, (uint64_t)fds_used[k]);
}

static void test_bytes(void)
{
    long fd = t_open("/big", O_RDWR | O_CREAT, 0644);
    uint64_t u = ubuf(10000);
    for (int k = 0; k < 10000; k++)
        ((char *)host(u))[k] = (char)('a' + k % 26);
    SYS(write, (uint64_t)fd, u, 10000);
    CHECK_EQ(vfs_mmap_file(vt_proc, fd, 0, 4096, PROT_READ, MAP_PRIVATE, &m), 0);
    CHECK(!m.zero && m.inode && m.size == 4096 && m.data[0] == 'a' && m.data[26] == 'a');
    inode_put(m.inode);
    CHECK_EQ(vfs_mmap_file(vt_proc, fd, 8192, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE, &m), 0);
    CHECK_EQ(m.size, 10000 - 8192);                        /* the rest reads zeros */
    CHECK_EQ(m.data[0], 'a' + 8192 % 26);
    /* the mapping's reference keeps the bytes of an unlinked, closed file */
    SYS(unlink, ustr("/big"));
    SYS(close, (uint64_t)fd);
    CHECK_EQ(m.data[1], 'a' + 8193 % 26);
    inode_put(m.inode);
    fd = t_open("/f", O_RDONLY, 0);
    CHECK_EQ(vfs_mmap_file(vt_proc, fd, 4096, 4096, PROT_READ, MAP_PRIVATE, &m), 0);
    CHECK(m.size == 0 && m.data == NULL);                  /* past the end */
    inode_put(m.inode);
    CHECK_EQ(vfs_mmap_file(vt_proc, fd, 0, 4096, PROT_READ, MAP_SHARED, &m), 0);
    CHECK(m.size == 13 && !memcmp(m.data, "file contents", 13));
    inode_put(m.inode);
    SYS(close, (uint64_t)fd);
}

int main(void)
{
    vfs_test_begin();
    unix_random_seed(1);                  /* links devices.c: the real /dev nodes */
    test_errors();
    test_bytes();
    vfs_test_end();
    return fake_done();
}
