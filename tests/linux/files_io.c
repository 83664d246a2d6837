/* files_io: open/openat flags, read, write, pread64, pwrite64, readv, writev, lseek, close,
 * fadvise64. Runs in an empty scratch directory (the runner's cwd). */
#include "lt.h"
#include <fcntl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/uio.h>

static void put(const char *path, const char *text)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	if (fd >= 0) {
		if (write(fd, text, strlen(text)) < 0)
			perror("write");
		close(fd);
	}
}

static void test_open_flags(void)
{
	ERR("open missing", open("nope", O_RDONLY), ENOENT);
	OK("open O_CREAT new", open("a", O_WRONLY | O_CREAT, 0644));
	ERR("open O_CREAT|O_EXCL existing", open("a", O_WRONLY | O_CREAT | O_EXCL, 0644), EEXIST);
	put("b", "hello");
	int fd = open("b", O_WRONLY | O_TRUNC);
	struct stat st;
	fstat(fd, &st);
	VAL("open O_TRUNC size", st.st_size, 0);
	close(fd);
	put("c", "abc");
	fd = open("c", O_WRONLY | O_APPEND);
	lseek(fd, 0, SEEK_SET);
	VAL("write O_APPEND", write(fd, "de", 2), 2);
	VAL("O_APPEND offset after write", lseek(fd, 0, SEEK_CUR), 5);
	close(fd);
	ERR("open O_DIRECTORY on file", open("c", O_RDONLY | O_DIRECTORY), ENOTDIR);
	OK("open O_DIRECTORY on dir", open(".", O_RDONLY | O_DIRECTORY));
	symlink("c", "lnk");
	ERR("open O_NOFOLLOW on symlink", open("lnk", O_RDONLY | O_NOFOLLOW), ELOOP);
	fd = open("c", O_RDONLY | O_CLOEXEC);
	VAL("O_CLOEXEC sets FD_CLOEXEC", fcntl(fd, F_GETFD) & FD_CLOEXEC, FD_CLOEXEC);
	close(fd);
	fd = open("c", O_RDONLY | O_NONBLOCK);
	VAL("O_NONBLOCK in F_GETFL", fcntl(fd, F_GETFL) & O_NONBLOCK, O_NONBLOCK);
	close(fd);
	ERR("open dir for writing", open(".", O_WRONLY), EISDIR);
	ERR("open path through file", open("c/x", O_RDONLY), ENOTDIR);
	ERR("open bad path pointer", open(LT_BADPTR, O_RDONLY), EFAULT);
	char longname[300];
	memset(longname, 'n', sizeof longname - 1);
	longname[sizeof longname - 1] = 0;
	ERR("open name too long", open(longname, O_RDONLY), ENAMETOOLONG);
	ERR("open empty path", open("", O_RDONLY), ENOENT);
	int dfd = open(".", O_RDONLY | O_DIRECTORY);
	OK("openat relative to dirfd", openat(dfd, "c", O_RDONLY));
	ERR("openat bad dirfd", openat(999, "c", O_RDONLY), EBADF);
	ERR("openat file as dirfd", openat(open("c", O_RDONLY), "x", O_RDONLY), ENOTDIR);
	OK("openat AT_FDCWD", openat(AT_FDCWD, "c", O_RDONLY));
}

static void test_read_write(void)
{
	char buf[32];
	put("d", "0123456789");
	int fd = open("d", O_RDWR);
	VAL("read 4", read(fd, buf, 4), 4);
	buf[4] = 0;
	lt_str("read 4 data", buf, "0123");
	VAL("read rest", read(fd, buf, sizeof buf), 6);
	VAL("read at EOF", read(fd, buf, sizeof buf), 0);
	lseek(fd, 0, SEEK_SET);
	ERR("read bad buffer", read(fd, LT_BADPTR, 4), EFAULT);
	ERR("write bad buffer", write(fd, LT_BADPTR, 4), EFAULT);
	VAL("read zero bytes", read(fd, buf, 0), 0);
	close(fd);
	ERR("read closed fd", read(fd, buf, 1), EBADF);
	ERR("write closed fd", write(fd, "x", 1), EBADF);
	ERR("read negative fd", read(-1, buf, 1), EBADF);
	fd = open("d", O_RDONLY);
	ERR("write read-only fd", write(fd, "x", 1), EBADF);
	close(fd);
	fd = open("d", O_WRONLY);
	ERR("read write-only fd", read(fd, buf, 1), EBADF);
	close(fd);
	fd = open(".", O_RDONLY | O_DIRECTORY);
	ERR("read directory", read(fd, buf, 1), EISDIR);
	close(fd);
}

static void test_positional(void)
{
	char buf[16] = {0};
	put("e", "abcdefgh");
	int fd = open("e", O_RDWR);
	VAL("pread64 at 3", pread(fd, buf, 3, 3), 3);
	lt_str("pread64 data", buf, "def");
	VAL("pread64 keeps offset", lseek(fd, 0, SEEK_CUR), 0);
	VAL("pwrite64 at 6", pwrite(fd, "XY", 2, 6), 2);
	memset(buf, 0, sizeof buf);
	read(fd, buf, 8);
	lt_str("pwrite64 data", buf, "abcdefXY");
	ERR("pread64 negative offset", pread(fd, buf, 1, -1), EINVAL);
	VAL("pwrite64 beyond end", pwrite(fd, "Z", 1, 12), 1);
	struct stat st;
	fstat(fd, &st);
	VAL("size after hole write", st.st_size, 13);
	VAL("pread64 in hole", pread(fd, buf, 1, 10), 1);
	VAL("hole reads zero", buf[0], 0);
	close(fd);
	int p[2];
	pipe(p);
	ERR("pread64 on pipe", pread(p[0], buf, 1, 0), ESPIPE);
	close(p[0]);
	close(p[1]);
}

static void test_vectors(void)
{
	char a[4] = {0}, b[8] = {0};
	struct iovec out[2] = {{"abc", 3}, {"defgh", 5}};
	int fd = open("v", O_RDWR | O_CREAT | O_TRUNC, 0644);
	VAL("writev 2 vectors", writev(fd, out, 2), 8);
	lseek(fd, 0, SEEK_SET);
	struct iovec in[2] = {{a, 3}, {b, 7}};
	VAL("readv 2 vectors", readv(fd, in, 2), 8);
	lt_str("readv first", a, "abc");
	lt_str("readv second", b, "defgh");
	VAL("writev zero vectors", writev(fd, out, 0), 0);
	ERR("writev negative count", writev(fd, out, -1), EINVAL);
	ERR("readv bad iovec pointer", readv(fd, LT_BADPTR, 1), EFAULT);
	close(fd);
}

static void test_lseek(void)
{
	put("s", "0123456789");
	int fd = open("s", O_RDONLY);
	VAL("lseek SEEK_END", lseek(fd, 0, SEEK_END), 10);
	VAL("lseek SEEK_CUR back", lseek(fd, -4, SEEK_CUR), 6);
	VAL("lseek SEEK_SET past end", lseek(fd, 100, SEEK_SET), 100);
	ERR("lseek negative result", lseek(fd, -200, SEEK_CUR), EINVAL);
	ERR("lseek bad whence", lseek(fd, 0, 42), EINVAL);
	close(fd);
	ERR("lseek closed fd", lseek(fd, 0, SEEK_SET), EBADF);
	int p[2];
	pipe(p);
	ERR("lseek pipe", lseek(p[0], 0, SEEK_SET), ESPIPE);
	VAL("close pipe read end", close(p[0]), 0);
	VAL("close pipe write end", close(p[1]), 0);
	ERR("close twice", close(p[1]), EBADF);
	ERR("close negative fd", close(-5), EBADF);
}

/* fadvise64 through syscall() (posix_fadvise returns the error instead of setting errno):
 * checked, and on tmpfs, devices and directories nothing to do; pipes and FIFOs refuse. */
static long fadvise(int fd, long off, long len, int advice)
{
	return syscall(SYS_fadvise64, fd, off, len, advice);
}

static void test_fadvise(void)
{
	put("adv", "advice");
	int fd = open("adv", O_RDONLY);
	VAL("fadvise64 SEQUENTIAL", fadvise(fd, 0, 0, POSIX_FADV_SEQUENTIAL), 0);
	VAL("fadvise64 DONTNEED a range", fadvise(fd, 2, 3, POSIX_FADV_DONTNEED), 0);
	VAL("fadvise64 NOREUSE past the end", fadvise(fd, 100, 0, POSIX_FADV_NOREUSE), 0);
	ERR("fadvise64 unknown advice", fadvise(fd, 0, 0, 6), EINVAL);
	ERR("fadvise64 negative length", fadvise(fd, 0, -1, POSIX_FADV_NORMAL), EINVAL);
	close(fd);
	ERR("fadvise64 closed fd", fadvise(fd, 0, 0, POSIX_FADV_NORMAL), EBADF);
	fd = open("adv", O_WRONLY);
	VAL("fadvise64 write-only fd", fadvise(fd, 0, 0, POSIX_FADV_WILLNEED), 0);
	close(fd);
	fd = open("adv", O_PATH);
	ERR("fadvise64 O_PATH fd", fadvise(fd, 0, 0, POSIX_FADV_NORMAL), EBADF);
	close(fd);
	fd = open(".", O_RDONLY | O_DIRECTORY);
	VAL("fadvise64 directory", fadvise(fd, 0, 0, POSIX_FADV_RANDOM), 0);
	close(fd);
	fd = open("/dev/null", O_RDONLY);
	VAL("fadvise64 /dev/null", fadvise(fd, 0, 0, POSIX_FADV_NORMAL), 0);
	close(fd);
	int p[2];
	pipe(p);
	ERR("fadvise64 pipe", fadvise(p[0], 0, 0, POSIX_FADV_NORMAL), ESPIPE);
	ERR("fadvise64 pipe before bad advice", fadvise(p[1], 0, -1, 99), ESPIPE);
	close(p[0]);
	close(p[1]);
	mkfifo("advfifo", 0644);
	fd = open("advfifo", O_RDONLY | O_NONBLOCK);
	ERR("fadvise64 FIFO", fadvise(fd, 0, 0, POSIX_FADV_NORMAL), ESPIPE);
	close(fd);
}

int main(void)
{
	test_open_flags();
	test_read_write();
	test_positional();
	test_vectors();
	test_lseek();
	test_fadvise();
	return lt_done();
}
