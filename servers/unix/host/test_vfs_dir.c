/* mkdir, rmdir, unlink(at), rename(at), renameat2, link(at), symlink(at), readlink(at),
 * chdir, fchdir, getcwd, getdents64: the cases of tests/linux/files_dir.c with the Linux
 * peer's results, plus path resolution (symlink chains, ELOOP, "..", trailing slashes). */
#include <stdio.h>
#include <stdlib.h>
#include "vfs_test.h"

static int cmp_names(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* The names in directory path, sorted, joined by spaces (getdents64 with a small buffer
 * so that several calls are needed). */
static const char *list_dir(const char *path, size_t bufsize)
{
    static char out[1024];
    static char names[64][64];
    char *sorted[64];
    int n = 0;
    long fd = t_open(path, O_RDONLY | O_DIRECTORY, 0);
    uint64_t buf = ubuf(bufsize);
    long got;
    while ((got = SYS(getdents64, fd, buf, bufsize)) > 0) {
        for (long off = 0; off < got && n < 64;) {
            unsigned char *rec = (unsigned char *)host(buf) + off;
            unsigned short reclen;
            memcpy(&reclen, rec + 16, 2);
            strncpy(names[n], (char *)rec + 19, 63);
            sorted[n] = names[n];
            n++;
            off += reclen;
        }
    }
    SYS(close, fd);
    qsort(sorted, (size_t)n, sizeof(sorted[0]), cmp_names);
    out[0] = 0;
    for (int i = 0; i < n; i++) {
        if (i)
            strcat(out, " ");
        strcat(out, sorted[i]);
    }
    return out;
}

static void test_mkdir_rmdir(void)
{
    CHECK_EQ(SYS(mkdir, ustr("d"), 0755), 0);
    CHECK_EQ(SYS(mkdir, ustr("d"), 0755), -EEXIST);
    CHECK_EQ(SYS(mkdir, ustr("no/d"), 0755), -ENOENT);
    CHECK_EQ(SYS(mkdir, ustr("d2/"), 0755), 0);         /* trailing slash allowed */
    CHECK_EQ(SYS(mkdir, ustr("."), 0755), -EEXIST);
    t_touch("d/f");
    CHECK_EQ(SYS(rmdir, ustr("d")), -ENOTEMPTY);
    CHECK_EQ(SYS(rmdir, ustr("d/f")), -ENOTDIR);
    CHECK_EQ(SYS(rmdir, ustr("zz")), -ENOENT);
    CHECK_EQ(SYS(rmdir, ustr("d/.")), -EINVAL);
    CHECK_EQ(SYS(rmdir, ustr("d/..")), -ENOTEMPTY);
    CHECK_EQ(SYS(rmdir, ustr("/")), -EBUSY);
    CHECK_EQ(SYS(unlink, ustr("d/f")), 0);
    CHECK_EQ(SYS(unlink, ustr("d/f")), -ENOENT);
    CHECK_EQ(SYS(unlink, ustr("d")), -EISDIR);
    CHECK_EQ(SYS(unlink, ustr("d/.")), -EISDIR);
    CHECK_EQ(SYS(rmdir, ustr("d")), 0);
    CHECK_EQ(SYS(rmdir, ustr("d2")), 0);
    SYS(mkdir, ustr("e"), 0755);
    t_touch("e/g");
    CHECK_EQ(SYS(unlinkat, AT_FDCWD, ustr("e/g"), AT_REMOVEDIR), -ENOTDIR);
    CHECK_EQ(SYS(unlink, ustr("e/g/")), -ENOTDIR);
    CHECK_EQ(SYS(unlinkat, AT_FDCWD, ustr("e/g"), 0), 0);
    CHECK_EQ(SYS(unlinkat, AT_FDCWD, ustr("e"), AT_REMOVEDIR), 0);
    CHECK_EQ(SYS(unlinkat, AT_FDCWD, ustr("x"), 0x1234), -EINVAL);
    /* link counts of directories: 2 + subdirectories */
    SYS(mkdir, ustr("n"), 0755);
    SYS(mkdir, ustr("n/a"), 0755);
    SYS(mkdir, ustr("n/b"), 0755);
    struct linux_stat st;
    t_stat("n", &st, false);
    CHECK_EQ(st.st_nlink, 4);
    CHECK_EQ(st.st_size, 4 * TMPFS_DIRENT_SIZE);
    SYS(rmdir, ustr("n/a"));
    t_stat("n", &st, false);
    CHECK_EQ(st.st_nlink, 3);
    long dfd = t_open("n", O_RDONLY | O_DIRECTORY, 0);
    CHECK_EQ(SYS(mkdirat, dfd, ustr("c"), 0700), 0);
    t_stat("n/c", &st, false);
    CHECK_EQ(st.st_mode, S_IFDIR | 0700);
    SYS(close, dfd);
}

static void test_rename(void)
{
    t_touch("r1");
    CHECK_EQ(SYS(rename, ustr("r1"), ustr("r2")), 0);
    CHECK_EQ(SYS(access, ustr("r1"), F_OK), -ENOENT);
    t_put("r3", "three");
    CHECK_EQ(SYS(rename, ustr("r2"), ustr("r3")), 0);
    CHECK(strcmp(t_read_all("r3", 64), "") == 0);       /* r2's contents now */
    CHECK_EQ(SYS(rename, ustr("r2"), ustr("r4")), -ENOENT);
    SYS(mkdir, ustr("rd"), 0755);
    CHECK_EQ(SYS(rename, ustr("r3"), ustr("rd")), -EISDIR);
    SYS(mkdir, ustr("rd2"), 0755);
    t_touch("rd2/x");
    CHECK_EQ(SYS(rename, ustr("rd"), ustr("rd2")), -ENOTEMPTY);
    CHECK_EQ(SYS(rename, ustr("rd"), ustr("rd/sub")), -EINVAL);
    CHECK_EQ(SYS(rename, ustr("rd"), ustr("r3")), -ENOTDIR);
    CHECK_EQ(SYS(rename, ustr("r3"), ustr("r5/")), -ENOTDIR);
    CHECK_EQ(SYS(rename, ustr("rd/."), ustr("x")), -EBUSY);
    CHECK_EQ(SYS(rename, ustr("rd2/x"), ustr("rd2/x")), 0);  /* same name: nothing */
    t_touch("n1");
    t_touch("n2");
    CHECK_EQ(SYS(renameat2, AT_FDCWD, ustr("n1"), AT_FDCWD, ustr("n2"), RENAME_NOREPLACE),
             -EEXIST);
    CHECK_EQ(SYS(renameat2, AT_FDCWD, ustr("n1"), AT_FDCWD, ustr("n3"), RENAME_NOREPLACE), 0);
    CHECK_EQ(SYS(renameat2, AT_FDCWD, ustr("n3"), AT_FDCWD, ustr("n2"), 3), -EINVAL);
    CHECK_EQ(SYS(renameat2, AT_FDCWD, ustr("n3"), AT_FDCWD, ustr("n2"), 8), -EINVAL);
    /* a directory moves to another parent: link counts and ".." follow it */
    SYS(mkdir, ustr("p1"), 0755);
    SYS(mkdir, ustr("p2"), 0755);
    SYS(mkdir, ustr("p1/m"), 0755);
    t_touch("p1/m/inside");
    CHECK_EQ(SYS(rename, ustr("p1/m"), ustr("p2/m")), 0);
    struct linux_stat a, b;
    t_stat("p1", &a, false);
    t_stat("p2", &b, false);
    CHECK_EQ(a.st_nlink, 2);
    CHECK_EQ(b.st_nlink, 3);
    t_stat("p2/m/..", &a, false);
    CHECK_EQ(a.st_ino, b.st_ino);
    CHECK_EQ(t_stat("p2/m/inside", &a, false), 0);
    /* over an empty directory */
    SYS(mkdir, ustr("p1/e"), 0755);
    CHECK_EQ(SYS(rename, ustr("p2/m"), ustr("p1/e")), 0);
    t_stat("p2", &b, false);
    CHECK_EQ(b.st_nlink, 2);
    CHECK_EQ(t_stat("p1/e/inside", &a, false), 0);
    /* RENAME_EXCHANGE: a file and a directory in two directories swap */
    t_put("p2/file", "F");
    CHECK_EQ(SYS(renameat2, AT_FDCWD, ustr("p1/e"), AT_FDCWD, ustr("p2/file"),
                 RENAME_EXCHANGE), 0);
    CHECK(strcmp(t_read_all("p1/e", 64), "F") == 0);
    CHECK_EQ(t_stat("p2/file/inside", &a, false), 0);
    t_stat("p1", &a, false);
    t_stat("p2", &b, false);
    CHECK_EQ(a.st_nlink, 2);
    CHECK_EQ(b.st_nlink, 3);
    CHECK_EQ(SYS(renameat2, AT_FDCWD, ustr("p1/e"), AT_FDCWD, ustr("p1/none"),
                 RENAME_EXCHANGE), -ENOENT);
    CHECK_EQ(SYS(renameat, AT_FDCWD, ustr("p1/e"), AT_FDCWD, ustr("p1/f")), 0);
}

static void test_links(void)
{
    struct linux_stat a, b;
    t_touch("l1");
    CHECK_EQ(SYS(link, ustr("l1"), ustr("l2")), 0);
    t_stat("l1", &a, false);
    t_stat("l2", &b, false);
    CHECK_EQ(a.st_nlink, 2);
    CHECK_EQ(a.st_ino, b.st_ino);
    CHECK_EQ(SYS(link, ustr("l1"), ustr("l2")), -EEXIST);
    CHECK_EQ(SYS(link, ustr("zz"), ustr("l3")), -ENOENT);
    CHECK_EQ(SYS(link, ustr("l1"), ustr("l3/")), -ENOENT);
    SYS(mkdir, ustr("ld"), 0755);
    CHECK_EQ(SYS(link, ustr("ld"), ustr("ld2")), -EPERM);
    CHECK_EQ(SYS(linkat, AT_FDCWD, ustr("l1"), AT_FDCWD, ustr("l4"), 0x1), -EINVAL);
    CHECK_EQ(SYS(symlink, ustr("l1"), ustr("s1")), 0);
    CHECK_EQ(SYS(symlink, ustr("l1"), ustr("s1")), -EEXIST);
    CHECK_EQ(SYS(symlink, ustr(""), ustr("s9")), -ENOENT);
    /* linkat links the symlink itself, or its target with AT_SYMLINK_FOLLOW */
    CHECK_EQ(SYS(linkat, AT_FDCWD, ustr("s1"), AT_FDCWD, ustr("hs"), 0), 0);
    t_stat("hs", &a, true);
    CHECK_EQ(a.st_mode & S_IFMT, S_IFLNK);
    CHECK_EQ(SYS(linkat, AT_FDCWD, ustr("s1"), AT_FDCWD, ustr("hf"), AT_SYMLINK_FOLLOW), 0);
    t_stat("hf", &a, true);
    CHECK_EQ(a.st_nlink, 3);
    uint64_t buf = ubuf(64);
    CHECK_EQ(SYS(readlink, ustr("s1"), buf, 64), 2);
    CHECK(strcmp(host(buf), "l1") == 0);
    CHECK_EQ(SYS(readlink, ustr("s1"), buf, 1), 1);
    CHECK_EQ(SYS(readlink, ustr("s1"), buf, 0), -EINVAL);
    CHECK_EQ(SYS(readlink, ustr("l1"), buf, 64), -EINVAL);
    CHECK_EQ(SYS(readlink, ustr("zz"), buf, 64), -ENOENT);
    CHECK_EQ(SYS(readlink, ustr("s1"), BADPTR, 64), -EFAULT);
    CHECK_EQ(SYS(readlinkat, AT_FDCWD, ustr(""), buf, 64), -ENOENT);
    long fd = t_open("s1", O_PATH | O_NOFOLLOW, 0);
    CHECK_EQ(SYS(readlinkat, fd, ustr(""), buf, 64), 2);
    CHECK_EQ(SYS(read, fd, buf, 1), -EBADF);
    SYS(close, fd);
    SYS(symlink, ustr("dangling-target"), ustr("s2"));
    CHECK_EQ(t_stat("s2", &a, false), -ENOENT);
    CHECK_EQ(t_stat("s2", &a, true), 0);
    CHECK_EQ(a.st_mode & S_IFMT, S_IFLNK);
    CHECK_EQ(a.st_size, 15);
    SYS(symlink, ustr("s3"), ustr("s3"));
    CHECK_EQ(t_open("s3", O_RDONLY, 0), -ELOOP);
    /* chains: 40 links resolve, 41 are ELOOP */
    char name[32], target[32];
    t_touch("chain0");
    for (int i = 1; i <= 41; i++) {
        snprintf(name, sizeof name, "chain%d", i);
        snprintf(target, sizeof target, "chain%d", i - 1);
        SYS(symlink, ustr(target), ustr(name));
    }
    CHECK_EQ(t_stat("chain40", &a, false), 0);
    CHECK_EQ(t_stat("chain41", &a, false), -ELOOP);
    /* symlinks in the middle of a path, absolute and relative, and to directories */
    SYS(mkdir, ustr("sd"), 0755);
    SYS(mkdir, ustr("sd/in"), 0755);
    t_put("sd/in/f", "deep");
    SYS(symlink, ustr("sd/in"), ustr("tosd"));
    SYS(symlink, ustr("/sd"), ustr("abs"));
    CHECK(strcmp(t_read_all("tosd/f", 64), "deep") == 0);
    CHECK(strcmp(t_read_all("abs/in/../in/f", 64), "deep") == 0);
    CHECK(strcmp(t_read_all("/../../sd/./in//f", 64), "deep") == 0);
    CHECK_EQ(t_stat("tosd/", &a, true), 0);             /* trailing slash follows */
    CHECK_EQ(a.st_mode & S_IFMT, S_IFDIR);
    CHECK_EQ(SYS(unlink, ustr("tosd")), 0);             /* the link, not the directory */
    CHECK_EQ(t_stat("sd/in/f", &a, false), 0);
}

static void test_cwd(void)
{
    uint64_t buf = ubuf(512);
    CHECK_EQ(SYS(getcwd, buf, 512), 2);
    CHECK(strcmp(host(buf), "/") == 0);
    SYS(mkdir, ustr("cw"), 0755);
    CHECK_EQ(SYS(chdir, ustr("cw")), 0);
    CHECK_EQ(SYS(getcwd, buf, 512), 4);
    CHECK(strcmp(host(buf), "/cw") == 0);
    SYS(mkdir, ustr("sub"), 0755);
    SYS(chdir, ustr("sub"));
    CHECK_EQ(SYS(getcwd, buf, 512), 8);
    CHECK(strcmp(host(buf), "/cw/sub") == 0);
    CHECK_EQ(SYS(getcwd, buf, 7), -ERANGE);
    CHECK_EQ(SYS(getcwd, BADPTR, 512), -EFAULT);
    SYS(chdir, ustr(".."));
    CHECK_EQ(SYS(chdir, ustr("nowhere")), -ENOENT);
    t_touch("f");
    CHECK_EQ(SYS(chdir, ustr("f")), -ENOTDIR);
    CHECK_EQ(SYS(getcwd, buf, 2), -ERANGE);
    long fd = t_open("/", O_RDONLY | O_DIRECTORY, 0);
    CHECK_EQ(SYS(fchdir, fd), 0);
    SYS(getcwd, buf, 512);
    CHECK(strcmp(host(buf), "/") == 0);
    CHECK_EQ(SYS(fchdir, 999), -EBADF);
    long ffd = t_open("cw/f", O_RDONLY, 0);
    CHECK_EQ(SYS(fchdir, ffd), -ENOTDIR);
    SYS(close, ffd);
    SYS(close, fd);
    /* a removed working directory: getcwd is ENOENT, names in it are gone, ".." works */
    SYS(mkdir, ustr("gone"), 0755);
    SYS(chdir, ustr("gone"));
    CHECK_EQ(SYS(rmdir, ustr("/gone")), 0);
    CHECK_EQ(SYS(getcwd, buf, 512), -ENOENT);
    CHECK_EQ(t_open("new", O_WRONLY | O_CREAT, 0644), -ENOENT);
    CHECK_EQ(SYS(mkdir, ustr("newd"), 0755), -ENOENT);
    CHECK_EQ(SYS(chdir, ustr("..")), 0);
    CHECK_EQ(SYS(getcwd, buf, 512), 2);
}

static void test_getdents(void)
{
    SYS(mkdir, ustr("/g"), 0755);
    t_touch("/g/b");
    t_touch("/g/a");
    SYS(mkdir, ustr("/g/c"), 0755);
    CHECK(strcmp(list_dir("/g", 4096), ". .. a b c") == 0);
    CHECK(strcmp(list_dir("/g", 24), ". .. a b c") == 0);       /* one record a call */
    SYS(unlink, ustr("/g/a"));
    CHECK(strcmp(list_dir("/g", 4096), ". .. b c") == 0);
    long fd = t_open("/g/b", O_RDONLY, 0);
    uint64_t buf = ubuf(256);
    CHECK_EQ(SYS(getdents64, fd, buf, 256), -ENOTDIR);
    SYS(close, fd);
    CHECK_EQ(SYS(getdents64, 999, buf, 256), -EBADF);
    fd = t_open("/g", O_RDONLY | O_DIRECTORY, 0);
    CHECK_EQ(SYS(getdents64, fd, buf, 4), -EINVAL);
    CHECK_EQ(SYS(getdents64, fd, BADPTR, 256), -EFAULT);
    /* a name removed while listing is not returned; a rewind starts again */
    CHECK_EQ(SYS(getdents64, fd, buf, 24), 24);         /* "." */
    SYS(unlink, ustr("/g/b"));
    long n = SYS(getdents64, fd, buf, 256);
    CHECK_EQ(n, 48);                                   /* ".." and "c" */
    unsigned char *rec = host(buf);
    CHECK(strcmp((char *)rec + 24 + 19, "c") == 0);
    CHECK_EQ(rec[24 + 18], DT_DIR);
    CHECK_EQ(SYS(getdents64, fd, buf, 256), 0);
    SYS(lseek, fd, 0, SEEK_SET);
    CHECK_EQ(SYS(getdents64, fd, buf, 256), 72);
    SYS(close, fd);
}

int main(void)
{
    vfs_test_begin();
    test_mkdir_rmdir();
    test_rename();
    test_links();
    test_cwd();
    test_getdents();
    vfs_test_end();
    return fake_done();
}
