/* files_meta: fstat, newfstatat, statx, stat, lstat, chmod, fchmod, chown, umask, access,
 * faccessat, truncate, ftruncate, utimensat. Runs as root (uid 0) in a scratch
 * directory; times are set to fixed values before they are printed. */
#include "lt.h"
#include <fcntl.h>
#include <sys/stat.h>
#include <sys/syscall.h>

/* statx(2) by number (musl 1.2.3 has no wrapper): the struct's layout is the kernel's,
 * stx_mask at offset 0 and stx_size at offset 40. */
#define STATX_BASIC 0x7ffu
#define STATX_SIZE_BIT 0x200u
#define STATX_SIZE_OFFSET 40
static long lt_statx(const char *path, unsigned mask, void *buf)
{
	return syscall(SYS_statx, AT_FDCWD, path, 0, mask, buf);
}

static void put(const char *path, const char *text)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	if (write(fd, text, strlen(text)) < 0)
		perror("write");
	close(fd);
}

static void test_stat(void)
{
	struct stat st, st2;
	put("f", "12345");
	VAL("stat", stat("f", &st), 0);
	VAL("stat size", st.st_size, 5);
	lt_true("stat regular", S_ISREG(st.st_mode));
	VAL("stat nlink", st.st_nlink, 1);
	ERR("stat missing", stat("nope", &st), ENOENT);
	ERR("stat bad buffer", syscall(SYS_stat, "f", LT_BADPTR), EFAULT);
	mkdir("d", 0755);
	stat("d", &st);
	lt_true("stat directory", S_ISDIR(st.st_mode));
	int fd = open("f", O_RDONLY);
	VAL("fstat", fstat(fd, &st2), 0);
	lt_true("fstat same inode as stat", stat("f", &st) == 0 && st.st_ino == st2.st_ino);
	close(fd);
	ERR("fstat closed fd", fstat(fd, &st), EBADF);
	VAL("newfstatat", fstatat(AT_FDCWD, "f", &st, 0), 0);
	VAL("newfstatat AT_EMPTY_PATH size", (fd = open("f", O_RDONLY), fstatat(fd, "", &st, AT_EMPTY_PATH) ? -1 : st.st_size), 5);
	close(fd);
	ERR("newfstatat bad flags", fstatat(AT_FDCWD, "f", &st, 0x40000000), EINVAL);
	symlink("f", "s");
	lstat("s", &st);
	lt_true("lstat symlink mode", S_ISLNK(st.st_mode));
	VAL("lstat symlink size", st.st_size, 1);
	fstatat(AT_FDCWD, "s", &st, AT_SYMLINK_NOFOLLOW);
	lt_true("newfstatat AT_SYMLINK_NOFOLLOW", S_ISLNK(st.st_mode));
	unsigned char sx[256];
	VAL("statx", lt_statx("f", STATX_BASIC, sx), 0);
	VAL("statx size", *(unsigned long long *)(sx + STATX_SIZE_OFFSET), 5);
	lt_true("statx mask has size", (*(unsigned *)sx & STATX_SIZE_BIT) != 0);
	ERR("statx missing", lt_statx("nope", STATX_BASIC, sx), ENOENT);
	ERR("statx reserved mask bit", lt_statx("f", 0x80000000u, sx), EINVAL);
}

static void test_modes(void)
{
	struct stat st;
	put("m", "x");
	VAL("chmod", chmod("m", 0600), 0);
	stat("m", &st);
	VAL("chmod mode", st.st_mode & 07777, 0600);
	int fd = open("m", O_RDONLY);
	VAL("fchmod", fchmod(fd, 0751), 0);
	fstat(fd, &st);
	VAL("fchmod mode", st.st_mode & 07777, 0751);
	close(fd);
	ERR("chmod missing", chmod("nope", 0600), ENOENT);
	ERR("fchmod bad fd", fchmod(999, 0600), EBADF);
	VAL("chown", chown("m", 12, 34), 0);
	stat("m", &st);
	VAL("chown uid stored", st.st_uid, 12);
	VAL("chown gid stored", st.st_gid, 34);
	VAL("chown -1 keeps uid", (chown("m", -1, 56), stat("m", &st), st.st_uid), 12);
	ERR("chown missing", chown("nope", 0, 0), ENOENT);
	umask(022);
	VAL("umask returns old", umask(077), 022);
	put("u", "");
	stat("u", &st);
	VAL("umask applied at create", st.st_mode & 0777, 0600);
	umask(022);
	mkdir("ud", 0777);
	stat("ud", &st);
	VAL("umask applied at mkdir", st.st_mode & 0777, 0755);
}

static void test_access(void)
{
	put("a", "x");
	chmod("a", 0644);
	VAL("access F_OK", access("a", F_OK), 0);
	VAL("access R_OK|W_OK as root", access("a", R_OK | W_OK), 0);
	ERR("access X_OK without x bits", access("a", X_OK), EACCES);
	chmod("a", 0700);
	VAL("access X_OK with x bit", access("a", X_OK), 0);
	ERR("access missing", access("nope", F_OK), ENOENT);
	ERR("access bad mode", access("a", 0x100), EINVAL);
	VAL("faccessat", faccessat(AT_FDCWD, "a", R_OK, 0), 0);
	ERR("faccessat bad dirfd", faccessat(999, "a", R_OK, 0), EBADF);
}

static void test_truncate(void)
{
	struct stat st;
	put("t", "0123456789");
	VAL("truncate shrink", truncate("t", 4), 0);
	stat("t", &st);
	VAL("truncate size", st.st_size, 4);
	VAL("truncate grow", truncate("t", 8192), 0);
	stat("t", &st);
	VAL("truncate grown size", st.st_size, 8192);
	ERR("truncate negative", truncate("t", -1), EINVAL);
	ERR("truncate directory", (mkdir("td", 0755), truncate("td", 0)), EISDIR);
	ERR("truncate missing", truncate("nope", 0), ENOENT);
	int fd = open("t", O_RDWR);
	VAL("ftruncate", ftruncate(fd, 2), 0);
	fstat(fd, &st);
	VAL("ftruncate size", st.st_size, 2);
	close(fd);
	fd = open("t", O_RDONLY);
	ERR("ftruncate read-only fd", ftruncate(fd, 0), EINVAL);
	close(fd);
	ERR("ftruncate bad fd", ftruncate(999, 0), EBADF);
}

static void test_times(void)
{
	struct stat st;
	struct timespec ts[2] = {{1000000000, 5}, {1100000000, 7}};
	put("tm", "x");
	VAL("utimensat", utimensat(AT_FDCWD, "tm", ts, 0), 0);
	stat("tm", &st);
	VAL("utimensat atime", st.st_atim.tv_sec, 1000000000);
	VAL("utimensat mtime", st.st_mtim.tv_sec, 1100000000);
	VAL("utimensat mtime ns", st.st_mtim.tv_nsec, 7);
	struct timespec omit[2] = {{0, UTIME_OMIT}, {1200000000, 0}};
	utimensat(AT_FDCWD, "tm", omit, 0);
	stat("tm", &st);
	VAL("utimensat UTIME_OMIT keeps atime", st.st_atim.tv_sec, 1000000000);
	ERR("utimensat bad nsec", utimensat(AT_FDCWD, "tm", (struct timespec[2]){{0, 2000000000}, {0, 0}}, 0), EINVAL);
	ERR("utimensat missing", utimensat(AT_FDCWD, "nope", ts, 0), ENOENT);
	VAL("utimensat now", utimensat(AT_FDCWD, "tm", NULL, 0), 0);
	stat("tm", &st);
	lt_true("utimensat now is later", st.st_mtim.tv_sec > 1200000000);
}

int main(void)
{
	test_stat();
	test_modes();
	test_access();
	test_truncate();
	test_times();
	return lt_done();
}
