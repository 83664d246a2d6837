/* files_dir: mkdir, rmdir, unlink, unlinkat, rename, renameat2, link, symlink, readlink,
 * chdir, fchdir, getcwd, getdents64. Runs in an empty scratch directory. Directory
 * listings are sorted before printing (getdents64 order is the file system's own). */
#include "lt.h"
#include <fcntl.h>
#include <stdint.h>
#include <sys/stat.h>
#include <sys/syscall.h>

#ifndef RENAME_NOREPLACE
#define RENAME_NOREPLACE 1
#endif

static void touch(const char *path)
{
	close(open(path, O_WRONLY | O_CREAT, 0644));
}

static int cmp_names(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* The names in directory PATH, sorted, joined by spaces, into OUT. */
static void list_dir(const char *path, char *out, size_t len)
{
	char buf[4096], *names[64];
	int n = 0, fd = open(path, O_RDONLY | O_DIRECTORY);
	long got;
	while ((got = syscall(SYS_getdents64, fd, buf, sizeof buf)) > 0) {
		for (long off = 0; off < got && n < 64;) {
			unsigned short reclen = *(unsigned short *)(buf + off + 16);
			names[n++] = strdup(buf + off + 19);
			off += reclen;
		}
	}
	close(fd);
	qsort(names, n, sizeof names[0], cmp_names);
	out[0] = 0;
	for (int i = 0; i < n; i++) {
		strncat(out, i ? " " : "", len - strlen(out) - 1);
		strncat(out, names[i], len - strlen(out) - 1);
		free(names[i]);
	}
}

static void test_mkdir_rmdir(void)
{
	VAL("mkdir new", mkdir("d", 0755), 0);
	ERR("mkdir existing", mkdir("d", 0755), EEXIST);
	ERR("mkdir missing parent", mkdir("no/d", 0755), ENOENT);
	touch("d/f");
	ERR("rmdir not empty", rmdir("d"), ENOTEMPTY);
	ERR("rmdir file", rmdir("d/f"), ENOTDIR);
	ERR("rmdir missing", rmdir("zz"), ENOENT);
	ERR("rmdir dot", rmdir("d/."), EINVAL);
	VAL("unlink file", unlink("d/f"), 0);
	ERR("unlink missing", unlink("d/f"), ENOENT);
	ERR("unlink directory", unlink("d"), EISDIR);
	VAL("rmdir empty", rmdir("d"), 0);
	mkdir("e", 0755);
	touch("e/g");
	ERR("unlinkat file with AT_REMOVEDIR", unlinkat(AT_FDCWD, "e/g", AT_REMOVEDIR), ENOTDIR);
	VAL("unlinkat file", unlinkat(AT_FDCWD, "e/g", 0), 0);
	VAL("unlinkat AT_REMOVEDIR", unlinkat(AT_FDCWD, "e", AT_REMOVEDIR), 0);
	ERR("unlinkat bad flags", unlinkat(AT_FDCWD, "x", 0x1234), EINVAL);
}

static void test_rename(void)
{
	touch("r1");
	VAL("rename file", rename("r1", "r2"), 0);
	ERR("rename old name gone", access("r1", F_OK), ENOENT);
	touch("r3");
	VAL("rename over existing file", rename("r2", "r3"), 0);
	ERR("rename missing source", rename("r2", "r4"), ENOENT);
	mkdir("rd", 0755);
	ERR("rename file over directory", rename("r3", "rd"), EISDIR);
	mkdir("rd2", 0755);
	touch("rd2/x");
	ERR("rename dir over non-empty dir", rename("rd", "rd2"), ENOTEMPTY);
	ERR("rename dir into itself", rename("rd", "rd/sub"), EINVAL);
	touch("n1");
	touch("n2");
	ERR("renameat2 RENAME_NOREPLACE existing",
	    syscall(SYS_renameat2, AT_FDCWD, "n1", AT_FDCWD, "n2", RENAME_NOREPLACE), EEXIST);
	VAL("renameat2 RENAME_NOREPLACE new",
	    syscall(SYS_renameat2, AT_FDCWD, "n1", AT_FDCWD, "n3", RENAME_NOREPLACE), 0);
}

static void test_links(void)
{
	struct stat a, b;
	char buf[64];
	touch("l1");
	VAL("link", link("l1", "l2"), 0);
	stat("l1", &a);
	stat("l2", &b);
	VAL("link nlink", a.st_nlink, 2);
	lt_true("link same inode", a.st_ino == b.st_ino);
	ERR("link existing target", link("l1", "l2"), EEXIST);
	ERR("link missing source", link("zz", "l3"), ENOENT);
	mkdir("ld", 0755);
	ERR("link directory", link("ld", "ld2"), EPERM);
	VAL("symlink", symlink("l1", "s1"), 0);
	ERR("symlink existing", symlink("l1", "s1"), EEXIST);
	memset(buf, 0, sizeof buf);
	VAL("readlink length", readlink("s1", buf, sizeof buf), 2);
	lt_str("readlink target", buf, "l1");
	VAL("readlink truncates", readlink("s1", buf, 1), 1);
	ERR("readlink not a link", readlink("l1", buf, sizeof buf), EINVAL);
	ERR("readlink missing", readlink("zz", buf, sizeof buf), ENOENT);
	symlink("dangling-target", "s2");
	ERR("stat dangling symlink", stat("s2", &a), ENOENT);
	VAL("lstat dangling symlink", lstat("s2", &a), 0);
	lt_true("lstat says symlink", S_ISLNK(a.st_mode));
	symlink("s3", "s3");
	ERR("open symlink loop", open("s3", O_RDONLY), ELOOP);
}

static void test_cwd(void)
{
	char start[512], buf[512];
	getcwd(start, sizeof start);
	mkdir("cw", 0755);
	VAL("chdir", chdir("cw"), 0);
	getcwd(buf, sizeof buf);
	lt_true("getcwd after chdir ends in /cw", strlen(buf) > 3 && !strcmp(buf + strlen(buf) - 3, "/cw"));
	ERR("chdir missing", chdir("nowhere"), ENOENT);
	touch("f");
	ERR("chdir to file", chdir("f"), ENOTDIR);
	ERR("getcwd small buffer", (long)getcwd(buf, 2) ? 0 : -1, ERANGE);
	int fd = open(start, O_RDONLY | O_DIRECTORY);
	VAL("fchdir", fchdir(fd), 0);
	getcwd(buf, sizeof buf);
	lt_true("fchdir back to start", !strcmp(buf, start));
	ERR("fchdir closed fd", fchdir(999), EBADF);
	int ffd = open("cw/f", O_RDONLY);
	ERR("fchdir file", fchdir(ffd), ENOTDIR);
	close(ffd);
	close(fd);
}

static void test_getdents(void)
{
	char names[512];
	mkdir("g", 0755);
	touch("g/b");
	touch("g/a");
	mkdir("g/c", 0755);
	list_dir("g", names, sizeof names);
	lt_str("getdents64 names", names, ". .. a b c");
	unlink("g/a");
	list_dir("g", names, sizeof names);
	lt_str("getdents64 after unlink", names, ". .. b c");
	int fd = open("g/b", O_RDONLY);
	char buf[256];
	ERR("getdents64 on file", syscall(SYS_getdents64, fd, buf, sizeof buf), ENOTDIR);
	close(fd);
	ERR("getdents64 bad fd", syscall(SYS_getdents64, 999, buf, sizeof buf), EBADF);
	fd = open("g", O_RDONLY | O_DIRECTORY);
	ERR("getdents64 tiny buffer", syscall(SYS_getdents64, fd, buf, 4), EINVAL);
	close(fd);
}

int main(void)
{
	test_mkdir_rmdir();
	test_rename();
	test_links();
	test_cwd();
	test_getdents();
	return lt_done();
}
