/* files_node: mknod/mknodat and FIFOs, statfs/fstatfs, the syncs, flock, the xattr calls,
 * the file side of mmap, FIONREAD and sendfile on more kinds of file, and the refusals
 * of /proc as a read-only file system. */
#include "lt.h"
#include <fcntl.h>
#include <sys/file.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/sendfile.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <sys/wait.h>
#include <sys/xattr.h>

#define TMPFS_MAGIC 0x01021994
#define PROC_SUPER_MAGIC 0x9fa0
#define PIPEFS_MAGIC 0x50495045

static void test_mknod(void)
{
	struct stat st;
	VAL("mknod fifo", mknod("fifo", S_IFIFO | 0666, 0), 0);
	stat("fifo", &st);
	VAL("mknod fifo mode", st.st_mode, S_IFIFO | 0644);
	ERR("mknod existing", mknod("fifo", S_IFIFO | 0644, 0), EEXIST);
	ERR("mknod directory", mknod("d", S_IFDIR | 0755, 0), EPERM);
	ERR("mknod bad type", mknod("d", 0170000 | 0755, 0), EINVAL);
	ERR("mknod missing dir", mknod("missing/x", S_IFIFO | 0644, 0), ENOENT);
	ERR("mknod trailing slash", mknod("x/", S_IFIFO | 0644, 0), ENOENT);
	VAL("mknod type 0 regular", mknod("reg", 0644, 0), 0);
	stat("reg", &st);
	VAL("mknod type 0 mode", st.st_mode, S_IFREG | 0644);
	VAL("mknod char device", mknod("null", S_IFCHR | 0666, makedev(1, 3)), 0);
	stat("null", &st);
	lt_true("mknod char device numbers", major(st.st_rdev) == 1 && minor(st.st_rdev) == 3);
	int fd = open("null", O_WRONLY);
	VAL("write to made /dev/null", write(fd, "x", 1), 1);
	close(fd);
	VAL("mknod socket", mknod("sock", S_IFSOCK | 0600, 0), 0);
	ERR("open socket node", open("sock", O_RDONLY), ENXIO);
	int dir = open(".", O_RDONLY | O_DIRECTORY);
	VAL("mknodat", mknodat(dir, "fifo2", S_IFIFO | 0600, 0), 0);
	ERR("mknodat bad dirfd", mknodat(999, "fifo3", S_IFIFO | 0600, 0), EBADF);
	close(dir);
}

static void test_fifo(void)
{
	char buf[16] = {0};
	ERR("fifo write open no reader", open("fifo", O_WRONLY | O_NONBLOCK), ENXIO);
	int r = open("fifo", O_RDONLY | O_NONBLOCK);
	lt_true("fifo nonblocking read open", r >= 0);
	VAL("fifo read no writer", read(r, buf, sizeof buf), 0);
	int w = open("fifo", O_WRONLY | O_NONBLOCK);
	lt_true("fifo write open with reader", w >= 0);
	ERR("fifo read no data", read(r, buf, sizeof buf), EAGAIN);
	VAL("fifo write", write(w, "hi", 2), 2);
	VAL("fifo read", read(r, buf, sizeof buf), 2);
	ERR("fifo lseek", lseek(r, 0, SEEK_SET), ESPIPE);
	struct stat st;
	fstat(w, &st);
	lt_true("fifo fstat is fifo", S_ISFIFO(st.st_mode));
	write(w, "left", 4);
	close(r);
	close(w);
	int rw = open("fifo", O_RDWR);
	int n = -1;
	ioctl(rw, FIONREAD, &n);
	VAL("fifo data dropped at last close", n, 0);
	close(rw);
	pid_t child = fork();
	if (child == 0) {
		int cw = open("fifo", O_WRONLY);           /* waits for the parent's reader */
		write(cw, "x", 1);
		_exit(0);
	}
	r = open("fifo", O_RDONLY);                    /* waits for the child's writer */
	VAL("fifo blocking opens meet", read(r, buf, 1), 1);
	int status;
	waitpid(child, &status, 0);
	VAL("fifo reader sees end after writer exit", read(r, buf, 1), 0);
	close(r);
}

static void test_statfs(void)
{
	struct statfs s;
	VAL("statfs", statfs(".", &s), 0);
	lt_true("statfs bsize 4096", s.f_bsize == 4096);
	lt_true("statfs namelen 255", s.f_namelen == 255);
	lt_true("statfs free within size", s.f_bfree <= s.f_blocks);
	VAL("statfs /proc", statfs("/proc", &s), 0);
	lt_true("statfs /proc type", s.f_type == PROC_SUPER_MAGIC);
	int p[2];
	pipe(p);
	VAL("fstatfs pipe", fstatfs(p[0], &s), 0);
	lt_true("fstatfs pipe type", s.f_type == PIPEFS_MAGIC);
	ERR("statfs missing", statfs("missing", &s), ENOENT);
	ERR("statfs bad buffer", syscall(SYS_statfs, ".", LT_BADPTR), EFAULT);
	ERR("fstatfs bad fd", fstatfs(999, &s), EBADF);
	int f = open("reg", O_RDWR);
	VAL("fsync file", fsync(f), 0);
	VAL("fdatasync file", fdatasync(f), 0);
	ERR("fsync pipe", fsync(p[1]), EINVAL);
	ERR("fsync bad fd", fsync(999), EBADF);
	VAL("syncfs", syncfs(f), 0);
	VAL("flock exclusive", flock(f, LOCK_EX), 0);
	VAL("flock shared nonblocking", flock(f, LOCK_SH | LOCK_NB), 0);
	VAL("flock unlock", flock(f, LOCK_UN), 0);
	ERR("flock bad operation", flock(f, 0), EINVAL);
	ERR("flock bad fd", flock(999, LOCK_EX), EBADF);
	close(f);
	close(p[0]);
	close(p[1]);
}

static void test_xattr(void)
{
	char v[64];
	ERR("getxattr user", getxattr("reg", "user.x", v, sizeof v), EOPNOTSUPP);
	ERR("getxattr missing file", getxattr("missing", "user.x", v, sizeof v), ENOENT);
	ERR("getxattr empty name", getxattr("reg", "", v, sizeof v), ERANGE);
	VAL("listxattr empty", listxattr("reg", v, sizeof v), 0);
	ERR("setxattr user", setxattr("reg", "user.x", "1", 1, 0), EOPNOTSUPP);
	ERR("setxattr bad flags", setxattr("reg", "user.x", "1", 1, 4), EINVAL);
	ERR("removexattr user", removexattr("reg", "user.x"), EOPNOTSUPP);
	ERR("fgetxattr bad fd", fgetxattr(999, "user.x", v, sizeof v), EBADF);
}

static void test_mmap_files(void)
{
	int dir = open(".", O_RDONLY), p[2], wo = open("reg", O_WRONLY);
	int null = open("/dev/null", O_RDWR), zero = open("/dev/zero", O_RDWR);
	pipe(p);
	ERR("mmap directory", (long)mmap(NULL, 4096, PROT_READ, MAP_PRIVATE, dir, 0), ENODEV);
	ERR("mmap pipe", (long)mmap(NULL, 4096, PROT_READ, MAP_PRIVATE, p[0], 0), ENODEV);
	ERR("mmap write-only fd", (long)mmap(NULL, 4096, PROT_READ, MAP_PRIVATE, wo, 0), EACCES);
	ERR("mmap /dev/null", (long)mmap(NULL, 4096, PROT_READ, MAP_PRIVATE, null, 0), ENODEV);
	char *z = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE, zero, 0);
	lt_true("mmap /dev/zero", z != MAP_FAILED && z[100] == 0);
	close(dir);
	close(p[0]);
	close(p[1]);
	close(wo);
	close(null);
	close(zero);
}

static void test_more_io(void)
{
	int f = open("ten", O_RDWR | O_CREAT | O_TRUNC, 0644);
	write(f, "0123456789", 10);
	int n = -1;
	lseek(f, 4, SEEK_SET);
	ioctl(f, FIONREAD, &n);
	VAL("FIONREAD regular file", n, 6);
	int null = open("/dev/null", O_WRONLY);
	VAL("sendfile to /dev/null", sendfile(null, f, NULL, 100), 6);
	close(null);
	int full = open("/dev/full", O_WRONLY);
	lseek(f, 0, SEEK_SET);
	ERR("sendfile to /dev/full", sendfile(full, f, NULL, 3), EINVAL);   /* no splice_write */
	close(full);
	close(f);
}

static void test_proc_read_only(void)
{
	int w = open("/proc/meminfo", O_WRONLY);        /* root may open it */
	lt_true("open /proc file for writing", w >= 0);
	ERR("write to /proc file", write(w, "x", 1), EIO);
	close(w);
	ERR("create in /proc", open("/proc/new", O_CREAT | O_WRONLY, 0644), ENOENT);
	ERR("mkdir in /proc", mkdir("/proc/d", 0755), ENOENT);
	ERR("mkdir existing in /proc", mkdir("/proc/meminfo", 0755), EEXIST);
	ERR("unlink in /proc", unlink("/proc/meminfo"), EPERM);
	ERR("rename out of /proc", rename("/proc/meminfo", "m"), EXDEV);
	ERR("link out of /proc", link("/proc/meminfo", "m"), EXDEV);
	int fd = open("/proc/meminfo", O_RDONLY);
	struct stat st;
	fstat(fd, &st);
	VAL("/proc file size", st.st_size, 0);
	ERR("/proc lseek SEEK_END", lseek(fd, 0, SEEK_END), EINVAL);
	char buf[8];
	VAL("/proc pread", pread(fd, buf, 3, 0), 3);
	close(fd);
	char link[64], path[64];
	fd = open("fifo2", O_RDWR);
	snprintf(path, sizeof path, "/proc/self/fd/%d", fd);
	ssize_t len = readlink(path, link, sizeof link - 1);
	link[len > 0 ? len : 0] = 0;
	lt_true("/proc/self/fd of a fifo names it", len > 6 && !strcmp(link + len - 6, "/fifo2"));
	close(fd);
}

int main(void)
{
	test_mknod();
	test_fifo();
	test_statfs();
	test_xattr();
	test_mmap_files();
	test_more_io();
	test_proc_read_only();
	return lt_done();
}
