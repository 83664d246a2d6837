/* dev: /dev/null, /dev/zero, /dev/urandom, the console's tty ioctls (TCGETS, TCSETS,
 * TIOCGWINSZ, TIOCGPGRP, FIONREAD) and /proc (self, PID/stat, status, cmdline, exe, fd,
 * meminfo, uptime, stat). Only the shape of /proc contents is printed, never values. */
#include "lt.h"
#include <dirent.h>
#include <fcntl.h>
#include <sys/ioctl.h>
#include <sys/sendfile.h>
#include <sys/stat.h>
#include <termios.h>

static void test_devices(void)
{
	char buf[64];
	int fd = open("/dev/null", O_RDWR);
	VAL("/dev/null read", read(fd, buf, sizeof buf), 0);
	VAL("/dev/null write", write(fd, "abc", 3), 3);
	close(fd);
	fd = open("/dev/zero", O_RDONLY);
	memset(buf, 7, sizeof buf);
	VAL("/dev/zero read", read(fd, buf, sizeof buf), 64);
	VAL("/dev/zero bytes", buf[0] | buf[63], 0);
	close(fd);
	fd = open("/dev/urandom", O_RDONLY);
	VAL("/dev/urandom read", read(fd, buf, 32), 32);
	close(fd);
	struct stat st;
	stat("/dev/null", &st);
	lt_true("/dev/null is a character device", S_ISCHR(st.st_mode));
	ERR("/dev missing device", open("/dev/no-such-device", O_RDONLY), ENOENT);
}

static void test_tty(void)
{
	struct termios t, t2;
	int fd = open("/dev/null", O_RDWR);
	ERR("TCGETS on /dev/null", ioctl(fd, TCGETS, &t), ENOTTY);
	close(fd);
	int p[2];
	pipe(p);
	ERR("TCGETS on a pipe", ioctl(p[0], TCGETS, &t), ENOTTY);
	close(p[0]);
	close(p[1]);
	fd = open("/dev/console", O_RDWR | O_NOCTTY);
	lt_ok("open /dev/console", fd, errno);
	VAL("TCGETS on console", ioctl(fd, TCGETS, &t), 0);
	t2 = t;
	t2.c_lflag &= ~(ICANON | ECHO);
	VAL("TCSETS raw", ioctl(fd, TCSETS, &t2), 0);
	ioctl(fd, TCGETS, &t2);
	VAL("raw mode read back", t2.c_lflag & (ICANON | ECHO), 0);
	VAL("TCSETSW restore", ioctl(fd, TCSETSW, &t), 0);
	ioctl(fd, TCGETS, &t2);
	VAL("canonical mode restored", t2.c_lflag & ICANON, t.c_lflag & ICANON);
	struct winsize ws;
	VAL("TIOCGWINSZ", ioctl(fd, TIOCGWINSZ, &ws), 0);
	int n = -1;
	VAL("FIONREAD on console", ioctl(fd, FIONREAD, &n), 0);
	pid_t pg;
	ERR("TIOCGPGRP not controlling tty", ioctl(fd, TIOCGPGRP, &pg), ENOTTY);
	pg = getpgrp();
	ERR("TIOCSPGRP not controlling tty", ioctl(fd, TIOCSPGRP, &pg), ENOTTY);
	ERR("TCGETS bad pointer", ioctl(fd, TCGETS, LT_BADPTR), EFAULT);
	ERR("unknown tty ioctl", ioctl(fd, 0x5499, 0), ENOTTY);
	close(fd);
	ERR("ioctl bad fd", ioctl(999, TCGETS, &t), EBADF);
	ERR("open /dev/tty without controlling tty", open("/dev/tty", O_RDWR), ENXIO);
}

/* The first line of FILE that starts with PREFIX, without its newline, or "" */
static const char *line_with(const char *file, const char *prefix)
{
	static char line[512];
	FILE *f = fopen(file, "r");
	if (!f)
		return "";
	while (fgets(line, sizeof line, f))
		if (!strncmp(line, prefix, strlen(prefix))) {
			line[strcspn(line, "\n")] = 0;
			fclose(f);
			return line;
		}
	fclose(f);
	return "";
}

/* sendfile of a /proc file into a pipe: "bytes", "0" (nothing) or "-1 ENAME". */
static const char *sendfile_from(const char *path)
{
	static char got[32];
	int pp[2], fd = open(path, O_RDONLY);
	pipe(pp);
	long r = sendfile(pp[1], fd, NULL, 4096);
	if (r > 0)
		snprintf(got, sizeof got, "bytes");
	else
		lt_show(got, sizeof got, r, errno);
	close(fd);
	close(pp[0]);
	close(pp[1]);
	return got;
}

static void test_proc(char *argv0)
{
	char path[64], buf[512] = {0};
	lt_true("/proc/meminfo MemTotal", *line_with("/proc/meminfo", "MemTotal:"));
	lt_true("/proc/meminfo MemFree", *line_with("/proc/meminfo", "MemFree:"));
	double up = -1, idle = -1;
	FILE *f = fopen("/proc/uptime", "r");
	int fields = f ? fscanf(f, "%lf %lf", &up, &idle) : 0;
	if (f)
		fclose(f);
	VAL("/proc/uptime two numbers", fields, 2);
	lt_true("/proc/stat cpu line", *line_with("/proc/stat", "cpu "));
	snprintf(path, sizeof path, "/proc/%d/stat", getpid());
	f = fopen(path, "r");
	int pid = 0;
	char state = '?';
	char comm[64] = {0};
	fields = f ? fscanf(f, "%d %63s %c", &pid, comm, &state) : 0;
	if (f)
		fclose(f);
	VAL("/proc/PID/stat fields", fields, 3);
	lt_true("/proc/PID/stat pid", pid == getpid());
	lt_str("/proc/PID/stat comm", comm, "(dev)");
	VAL("/proc/PID/stat state", state, 'R');
	lt_str("/proc/self/status Name", line_with("/proc/self/status", "Name:"), "Name:\tdev");
	snprintf(buf, sizeof buf, "PPid:\t%d", getppid());
	lt_true("/proc/self/status PPid is getppid", !strcmp(line_with("/proc/self/status", "PPid:"), buf));
	int fd = open("/proc/self/cmdline", O_RDONLY);
	memset(buf, 0, sizeof buf);
	long n = read(fd, buf, sizeof buf);
	close(fd);
	VAL("/proc/self/cmdline length", n, (long)strlen(argv0) + 1);
	lt_str("/proc/self/cmdline is argv[0]", buf, argv0);
	lt_str("sendfile from /proc/self/cmdline", sendfile_from("/proc/self/cmdline"), "-1 EINVAL");
	lt_str("sendfile from /proc/self/stat", sendfile_from("/proc/self/stat"), "-1 EINVAL");
	lt_str("sendfile from /proc/meminfo", sendfile_from("/proc/meminfo"), "bytes");
	memset(buf, 0, sizeof buf);
	n = readlink("/proc/self/exe", buf, sizeof buf);
	lt_true("/proc/self/exe ends in /dev", n > 4 && !strcmp(buf + n - 4, "/dev"));
	fd = open("/dev/null", O_RDONLY);
	snprintf(path, sizeof path, "/proc/self/fd/%d", fd);
	memset(buf, 0, sizeof buf);
	readlink(path, buf, sizeof buf);
	lt_str("/proc/self/fd link", buf, "/dev/null");
	DIR *d = opendir("/proc/self/fd");
	int has0 = 0, hasfd = 0;
	struct dirent *e;
	while (d && (e = readdir(d)))
		has0 |= !strcmp(e->d_name, "0"), hasfd |= atoi(e->d_name) == fd;
	if (d)
		closedir(d);
	lt_true("/proc/self/fd lists 0 and the new fd", has0 && hasfd);
	close(fd);
	ERR("/proc missing pid", open("/proc/999999/stat", O_RDONLY), ENOENT);
}

int main(int argc, char **argv)
{
	(void)argc;
	test_devices();
	test_tty();
	test_proc(argv[0]);
	return lt_done();
}
