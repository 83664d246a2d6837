/* The root archive (cpio.c): a made-up newc archive with every kind of member unpacks
 * into the tree; every malformed variant and every truncation is an error, never a
 * read outside the archive (AddressSanitizer) or a leak (LeakSanitizer); 20,000 random
 * corruptions from a fixed seed likewise. With ONDOL_ROOTFS=path (tests/unix/
 * test_vfs_rootfs.py sets it) the real build/rootfs.cpio is unpacked and busybox and its
 * applet links are looked up. */
#include <stdio.h>
#include <stdlib.h>
#include "vfs_test.h"

static unsigned char arc[8192];
static size_t arc_len;

static void member(const char *name, unsigned mode, unsigned rmaj, unsigned rmin,
                   const char *data)
{
    size_t size = data ? strlen(data) : 0, namesize = strlen(name) + 1;
    char hdr[160];
    snprintf(hdr, sizeof hdr, "070701%08X%08X%08X%08X%08X%08X%08X%08X%08X%08X%08X%08X%08X",
             7u, mode, 5u, 6u, 1u, 1700000000u, (unsigned)size, 0u, 0u, rmaj, rmin,
             (unsigned)namesize, 0u);
    memcpy(arc + arc_len, hdr, 110);
    memcpy(arc + arc_len + 110, name, namesize);
    arc_len = (arc_len + 110 + namesize + 3) & ~(size_t)3;
    if (size)
        memcpy(arc + arc_len, data, size);
    arc_len = (arc_len + size + 3) & ~(size_t)3;
}

static void build_archive(void)
{
    memset(arc, 0, sizeof arc);
    arc_len = 0;
    member(".", S_IFDIR | 0700, 0, 0, NULL);
    member("bin", S_IFDIR | 0755, 0, 0, NULL);
    member("bin/busybox", S_IFREG | 0755, 0, 0, "\177ELF pretend");
    member("bin/sh", S_IFLNK | 0777, 0, 0, "/bin/busybox");
    member("./bin/ls", S_IFLNK | 0777, 0, 0, "busybox");
    member("dev", S_IFDIR | 0755, 0, 0, NULL);
    member("dev/null", S_IFCHR | 0666, 1, 3, NULL);
    member("tmp", S_IFDIR | 01777, 0, 0, NULL);
    member("etc", S_IFDIR | 0755, 0, 0, NULL);
    member("etc/profile", S_IFREG | 0644, 0, 0, "PS1='ondol$ '\n");
    member("etc/profile", S_IFREG | 0600, 0, 0, "replaced\n");
    member("empty", S_IFREG | 0644, 0, 0, NULL);
    member("TRAILER!!!", 0, 0, 0, NULL);
}

/* An empty tree again (the process keeps its memory and fds: none are open here). */
static void fresh(void)
{
    fs_context_put(vt_proc->fs);
    vfs_teardown();
    vt_proc->fs = fs_context_new();
}

static void test_unpack(void)
{
    build_archive();
    CHECK_EQ(vfs_unpack_cpio(arc, arc_len), 0);
    struct linux_stat st, bb;
    CHECK_EQ(t_stat("/bin/busybox", &bb, false), 0);
    CHECK_EQ(bb.st_mode, S_IFREG | 0755);
    CHECK_EQ(bb.st_size, 12);
    CHECK_EQ(bb.st_uid, 5);
    CHECK_EQ(bb.st_gid, 6);
    CHECK_EQ(bb.st_mtim.tv_sec, 1700000000);
    CHECK_EQ(t_stat("/bin/sh", &st, false), 0);
    CHECK_EQ(st.st_ino, bb.st_ino);
    CHECK_EQ(t_stat("/bin/ls", &st, false), 0);
    CHECK_EQ(st.st_ino, bb.st_ino);
    uint64_t buf = ubuf(64);
    CHECK_EQ(SYS(readlink, ustr("/bin/sh"), buf, 64), 12);
    CHECK(memcmp(host(buf), "/bin/busybox", 12) == 0);
    CHECK(strcmp(t_read_all("/bin/busybox", 64), "\177ELF pretend") == 0);
    CHECK(strcmp(t_read_all("/etc/profile", 64), "replaced\n") == 0);
    t_stat("/etc/profile", &st, false);
    CHECK_EQ(st.st_mode & 0777, 0600);
    CHECK_EQ(st.st_nlink, 1);
    t_stat("/tmp", &st, false);
    CHECK_EQ(st.st_mode, S_IFDIR | 01777);
    t_stat("/", &st, false);
    CHECK_EQ(st.st_mode, S_IFDIR | 0700);
    t_stat("/bin", &st, false);
    CHECK_EQ(st.st_mtim.tv_sec, 1700000000);           /* kept after members were added */
    CHECK_EQ(st.st_nlink, 2);
    t_stat("/dev/null", &st, false);
    CHECK_EQ(st.st_mode, S_IFCHR | 0666);
    CHECK_EQ(st.st_rdev, (1 << 8) | 3);
    long fd = t_open("/dev/null", O_RDWR, 0);
    CHECK_EQ(SYS(write, fd, ustr("x"), 1), 1);
    SYS(close, fd);
    CHECK_EQ(t_stat("/empty", &st, false), 0);
    CHECK_EQ(st.st_size, 0);
    /* unpacking again over the same tree replaces files and keeps directories */
    CHECK_EQ(vfs_unpack_cpio(arc, arc_len), 0);
    CHECK(strcmp(t_read_all("/etc/profile", 64), "replaced\n") == 0);
    fresh();
}

/* Overwrite len bytes at off of a fresh copy of the archive and unpack it. */
static long unpack_patched(size_t off, const char *bytes, size_t len, size_t total)
{
    static unsigned char copy[sizeof arc];
    memcpy(copy, arc, arc_len);
    memcpy(copy + off, bytes, len);
    long r = vfs_unpack_cpio(copy, total);
    fresh();
    return r;
}

static void test_malformed(void)
{
    build_archive();
    /* the second member ("bin") starts at 112 ("." is 110 + 2 bytes of name) */
    CHECK_EQ(unpack_patched(0, "070707", 6, arc_len), -EINVAL);         /* old magic */
    CHECK_EQ(unpack_patched(6, "zzzzzzzz", 8, arc_len), -EINVAL);       /* not hex */
    CHECK_EQ(unpack_patched(112 + 6 + 8 * 11, "00000000", 8, arc_len), -EINVAL);  /* namesize 0 */
    CHECK_EQ(unpack_patched(112 + 6 + 8 * 11, "00000003", 8, arc_len), -EINVAL);  /* no NUL */
    CHECK_EQ(unpack_patched(112 + 6 + 8 * 11, "00000006", 8, arc_len), -EINVAL);  /* NUL early */
    CHECK_EQ(unpack_patched(112 + 6 + 8 * 11, "FFFFFFFF", 8, arc_len), -EINVAL);  /* huge */
    CHECK_EQ(unpack_patched(112 + 6 + 8 * 6, "7FFFFFFF", 8, arc_len), -EINVAL);   /* filesize */
    CHECK_EQ(unpack_patched(112 + 6 + 8 * 1, "00000000", 8, arc_len), -EINVAL);   /* no type */
    CHECK_EQ(unpack_patched(112 + 110, "..\0", 3, arc_len), -EINVAL);   /* ".." itself */
    CHECK_EQ(vfs_unpack_cpio(arc, arc_len - 124), -EINVAL);            /* no trailer */
    fresh();
    CHECK_EQ(vfs_unpack_cpio(arc, 0), -EINVAL);
    CHECK_EQ(vfs_unpack_cpio("", 0), -EINVAL);
    /* a member under a missing directory, a file as a directory, a symlink loop */
    arc_len = 0;
    member("a/b", S_IFREG | 0644, 0, 0, "x");
    member("TRAILER!!!", 0, 0, 0, NULL);
    CHECK_EQ(vfs_unpack_cpio(arc, arc_len), -ENOENT);
    fresh();
    arc_len = 0;
    member("f", S_IFREG | 0644, 0, 0, "x");
    member("f/b", S_IFREG | 0644, 0, 0, "x");
    member("TRAILER!!!", 0, 0, 0, NULL);
    CHECK_EQ(vfs_unpack_cpio(arc, arc_len), -ENOTDIR);
    fresh();
    arc_len = 0;
    member("l", S_IFLNK | 0777, 0, 0, "l");
    member("l/x", S_IFREG | 0644, 0, 0, "x");
    member("TRAILER!!!", 0, 0, 0, NULL);
    CHECK_EQ(vfs_unpack_cpio(arc, arc_len), -ELOOP);
    fresh();
    arc_len = 0;
    member("d", S_IFDIR | 0755, 0, 0, NULL);
    member("d/x", S_IFREG | 0644, 0, 0, "x");
    member("d", S_IFREG | 0644, 0, 0, "x");             /* over a non-empty directory */
    member("TRAILER!!!", 0, 0, 0, NULL);
    CHECK_EQ(vfs_unpack_cpio(arc, arc_len), -EEXIST);
    fresh();
    arc_len = 0;
    member("s", S_IFLNK | 0777, 0, 0, NULL);             /* empty symlink target */
    member("TRAILER!!!", 0, 0, 0, NULL);
    CHECK_EQ(vfs_unpack_cpio(arc, arc_len), -EINVAL);
    fresh();
    arc_len = 0;
    member("/", S_IFREG | 0644, 0, 0, "x");              /* the root as a file */
    member("TRAILER!!!", 0, 0, 0, NULL);
    CHECK_EQ(vfs_unpack_cpio(arc, arc_len), -EINVAL);
    fresh();
}

/* Every prefix of the archive: an error unless it holds the trailer. */
static void test_truncated(void)
{
    build_archive();
    int bad = 0;
    for (size_t n = 0; n < arc_len; n++) {
        unsigned char *copy = malloc(n ? n : 1);      /* exact size: ASan sees overreads */
        memcpy(copy, arc, n);
        long r = vfs_unpack_cpio(copy, n);
        free(copy);
        bad += r != -EINVAL;
        fresh();
    }
    CHECK_EQ(bad, 0);
}

static uint64_t rng = 1;
static uint64_t next_random(void)
{
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return rng;
}

/* Random corruptions: bytes replaced by random values, hex digits or NULs, and random
 * lengths. Every result is 0 or a negative errno, and nothing is read out of bounds. */
static void fuzz(const unsigned char *base, size_t len, int rounds)
{
    static const char pick[] = "0123456789ABCDEF\0\377/.";
    unsigned char *copy = malloc(len);
    int odd = 0;
    for (int i = 0; i < rounds; i++) {
        memcpy(copy, base, len);
        int changes = 1 + (int)(next_random() % 8);
        for (int k = 0; k < changes; k++) {
            size_t at = next_random() % len;
            copy[at] = (next_random() & 1) ? (unsigned char)next_random()
                                           : (unsigned char)pick[next_random() % (sizeof pick - 1)];
        }
        size_t n = (next_random() % 4 == 0) ? next_random() % len : len;
        long r = vfs_unpack_cpio(copy, n);
        odd += !(r == 0 || (r < 0 && r > -4096));
        fresh();
    }
    free(copy);
    CHECK_EQ(odd, 0);
}

static unsigned char *read_file(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    fseek(f, 0, SEEK_END);
    *len = (size_t)ftell(f);
    fseek(f, 0, SEEK_SET);
    unsigned char *data = malloc(*len);
    if (fread(data, 1, *len, f) != *len) {
        free(data);
        data = NULL;
    }
    fclose(f);
    return data;
}

/* The real archive: busybox, every applet link resolving to it, /etc, /tmp. */
static void test_rootfs(const char *path)
{
    size_t len;
    unsigned char *data = read_file(path, &len);
    CHECK(data != NULL);
    if (!data)
        return;
    CHECK_EQ(vfs_unpack_cpio(data, len), 0);
    struct linux_stat bb, st;
    CHECK_EQ(t_stat("/bin/busybox", &bb, false), 0);
    CHECK_EQ(bb.st_mode, S_IFREG | 0755);
    CHECK(bb.st_size > 500000);
    long fd = t_open("/bin/busybox", O_RDONLY, 0);
    uint64_t buf = ubuf(4096);
    CHECK_EQ(SYS(read, fd, buf, 4), 4);
    CHECK(memcmp(host(buf), "\177ELF", 4) == 0);
    SYS(close, fd);
    const char *applets[] = {"/bin/sh", "/bin/ls", "/bin/cat", "/usr/bin/awk", "/sbin/halt"};
    for (size_t i = 0; i < sizeof applets / sizeof applets[0]; i++) {
        CHECK_EQ(t_stat(applets[i], &st, false), 0);
        CHECK_EQ(st.st_ino, bb.st_ino);
        CHECK_EQ(t_stat(applets[i], &st, true), 0);
        CHECK_EQ(st.st_mode & S_IFMT, S_IFLNK);
    }
    /* count the links to busybox in /bin with getdents64 */
    fd = t_open("/bin", O_RDONLY | O_DIRECTORY, 0);
    int links = 0;
    long got;
    char name[300];
    while ((got = SYS(getdents64, fd, buf, 4096)) > 0) {
        for (long off = 0; off < got;) {
            unsigned char *rec = (unsigned char *)host(buf) + off;
            unsigned short reclen;
            memcpy(&reclen, rec + 16, 2);
            snprintf(name, sizeof name, "/bin/%s", (char *)rec + 19);
            if (rec[18] == DT_LNK && t_stat(name, &st, false) == 0 && st.st_ino == bb.st_ino)
                links++;
            off += reclen;
        }
    }
    SYS(close, fd);
    printf("rootfs: /bin/busybox %ld bytes, %d applet links in /bin\n", (long)bb.st_size,
           links);
    CHECK(links > 50);
    CHECK_EQ(t_stat("/tmp", &st, false), 0);
    CHECK_EQ(st.st_mode, S_IFDIR | 01777);
    CHECK(strstr(t_read_all("/etc/profile", 4096), "ondol$ ") != NULL);
    CHECK(strstr(t_read_all("/etc/passwd", 4096), "root:") != NULL);
    fresh();
    fuzz(data, len, 100);
    free(data);
}

int main(void)
{
    vfs_test_begin();
    test_unpack();
    test_malformed();
    test_truncated();
    build_archive();
    fuzz(arc, arc_len, 20000);
    const char *rootfs = getenv("ONDOL_ROOTFS");
    if (rootfs)
        test_rootfs(rootfs);
    vfs_test_end();
    return fake_done();
}
