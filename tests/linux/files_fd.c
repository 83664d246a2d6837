/* files_fd: dup, dup2, dup3, fcntl, pipe, pipe2, poll, ppoll, select, pselect6, sendfile,
 * ioctl FIONREAD, and EPIPE on a pipe without readers (SIGPIPE ignored here; the signals
 * program checks its delivery). Runs in a scratch directory. */
#include "lt.h"
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/ioctl.h>
#include <sys/select.h>
#include <sys/sendfile.h>
#include <sys/stat.h>
#include <sys/syscall.h>

static void test_dup(void)
{
	int fd = open("f", O_RDWR | O_CREAT | O_TRUNC, 0644);
	int d = dup(fd);
	lt_true("dup gives lowest free fd", d == fd + 1);
	write(fd, "abc", 3);
	VAL("dup shares offset", lseek(d, 0, SEEK_CUR), 3);
	ERR("dup bad fd", dup(999), EBADF);
	VAL("dup2 to chosen fd", dup2(fd, 20), 20);
	VAL("dup2 same fd", dup2(fd, fd), fd);
	ERR("dup2 bad old fd", dup2(999, 21), EBADF);
	VAL("dup2 clears FD_CLOEXEC", (fcntl(fd, F_SETFD, FD_CLOEXEC), dup2(fd, 22), fcntl(22, F_GETFD)), 0);
	VAL("dup3 O_CLOEXEC", (dup3(fd, 23, O_CLOEXEC), fcntl(23, F_GETFD)), FD_CLOEXEC);
	ERR("dup3 same fd", dup3(fd, fd, 0), EINVAL);
	ERR("dup3 bad flags", syscall(SYS_dup3, fd, 24, O_NONBLOCK), EINVAL);
	close(d);
}

static void test_fcntl(void)
{
	int fd = open("g", O_RDWR | O_CREAT | O_TRUNC, 0644);
	VAL("fcntl F_GETFD default", fcntl(fd, F_GETFD), 0);
	VAL("fcntl F_SETFD", fcntl(fd, F_SETFD, FD_CLOEXEC), 0);
	VAL("fcntl F_GETFD after set", fcntl(fd, F_GETFD), FD_CLOEXEC);
	VAL("fcntl F_GETFL access mode", fcntl(fd, F_GETFL) & O_ACCMODE, O_RDWR);
	VAL("fcntl F_SETFL O_APPEND", fcntl(fd, F_SETFL, O_APPEND), 0);
	VAL("fcntl F_GETFL has O_APPEND", fcntl(fd, F_GETFL) & O_APPEND, O_APPEND);
	VAL("fcntl F_DUPFD min 30", fcntl(fd, F_DUPFD, 30), 30);
	VAL("fcntl F_DUPFD_CLOEXEC", (fcntl(fd, F_DUPFD_CLOEXEC, 40), fcntl(40, F_GETFD)), FD_CLOEXEC);
	ERR("fcntl bad fd", fcntl(999, F_GETFD), EBADF);
	ERR("fcntl bad command", fcntl(fd, 9999), EINVAL);
	ERR("fcntl F_DUPFD negative", fcntl(fd, F_DUPFD, -1), EINVAL);
	close(fd);
}

static void test_pipes(void)
{
	int p[2];
	char buf[16] = {0};
	VAL("pipe", pipe(p), 0);
	VAL("pipe write", write(p[1], "ping", 4), 4);
	int n = -1;
	VAL("ioctl FIONREAD on pipe", (ioctl(p[0], FIONREAD, &n), n), 4);
	VAL("pipe read", read(p[0], buf, sizeof buf), 4);
	lt_str("pipe data", buf, "ping");
	ERR("write to pipe read end", write(p[0], "x", 1), EBADF);
	fcntl(p[0], F_SETFL, O_NONBLOCK);
	ERR("empty nonblocking pipe read", read(p[0], buf, 1), EAGAIN);
	close(p[1]);
	VAL("read pipe without writers", read(p[0], buf, 1), 0);
	close(p[0]);
	pipe(p);
	close(p[0]);
	signal(SIGPIPE, SIG_IGN);
	ERR("write pipe without readers", write(p[1], "x", 1), EPIPE);
	close(p[1]);
	VAL("pipe2 O_CLOEXEC", (pipe2(p, O_CLOEXEC), fcntl(p[1], F_GETFD)), FD_CLOEXEC);
	VAL("pipe2 O_NONBLOCK", (close(p[0]), close(p[1]), pipe2(p, O_NONBLOCK), fcntl(p[0], F_GETFL) & O_NONBLOCK), O_NONBLOCK);
	close(p[0]);
	close(p[1]);
	ERR("pipe2 bad flags", pipe2(p, 0x1), EINVAL);
	ERR("pipe bad pointer", syscall(SYS_pipe, LT_BADPTR), EFAULT);
}

static void test_poll(void)
{
	int p[2];
	pipe(p);
	struct pollfd fds[2] = {{p[0], POLLIN, 0}, {p[1], POLLOUT, 0}};
	VAL("poll empty pipe", poll(fds, 1, 0), 0);
	VAL("poll writable end", poll(fds + 1, 1, 0), 1);
	VAL("poll writable revents", fds[1].revents, POLLOUT);
	write(p[1], "x", 1);
	VAL("poll readable", poll(fds, 2, 0), 2);
	VAL("poll readable revents", fds[0].revents, POLLIN);
	struct pollfd bad = {999, POLLIN, 0};
	VAL("poll bad fd counts", poll(&bad, 1, 0), 1);
	VAL("poll bad fd POLLNVAL", bad.revents, POLLNVAL);
	struct timespec zero = {0, 0};
	VAL("ppoll", ppoll(fds, 1, &zero, NULL), 1);
	ERR("poll bad pointer", poll(LT_BADPTR, 1, 0), EFAULT);
	ERR("ppoll bad timeout", ppoll(fds, 1, &(struct timespec){0, 2000000000}, NULL), EINVAL);
	close(p[1]);
	VAL("poll hangup", (poll(fds, 1, 0), fds[0].revents & POLLHUP), POLLHUP);
	close(p[0]);
}

static void test_select(void)
{
	int p[2];
	pipe(p);
	fd_set r;
	FD_ZERO(&r);
	FD_SET(p[0], &r);
	struct timeval tv = {0, 0};
	VAL("select empty pipe", select(p[0] + 1, &r, NULL, NULL, &tv), 0);
	write(p[1], "x", 1);
	FD_SET(p[0], &r);
	VAL("select readable", select(p[0] + 1, &r, NULL, NULL, &tv), 1);
	lt_true("select set kept", FD_ISSET(p[0], &r));
	struct timespec ts = {0, 0};
	FD_SET(p[0], &r);
	VAL("pselect6", pselect(p[0] + 1, &r, NULL, NULL, &ts, NULL), 1);
	ERR("select negative nfds", select(-1, &r, NULL, NULL, &tv), EINVAL);
	fd_set b;
	int closed = dup(0);
	close(closed); /* a free slot inside the fd table: Linux ignores fds beyond it */
	FD_ZERO(&b);
	FD_SET(closed, &b);
	ERR("select closed fd", select(closed + 1, &b, NULL, NULL, &tv), EBADF);
	close(p[0]);
	close(p[1]);
}

static void test_sendfile(void)
{
	int in = open("src", O_RDWR | O_CREAT | O_TRUNC, 0644);
	write(in, "sendfile data", 13);
	int out = open("dst", O_WRONLY | O_CREAT | O_TRUNC, 0644);
	off_t off = 9;
	VAL("sendfile with offset", sendfile(out, in, &off, 100), 4);
	VAL("sendfile advances offset", off, 13);
	lseek(in, 0, SEEK_SET);
	VAL("sendfile from file position", sendfile(out, in, NULL, 8), 8);
	struct stat st;
	fstat(out, &st);
	VAL("sendfile output size", st.st_size, 12);
	ERR("sendfile bad in fd", sendfile(out, 999, NULL, 1), EBADF);
	int p[2];
	pipe(p);
	lseek(in, 0, SEEK_SET);
	VAL("sendfile to pipe", sendfile(p[1], in, NULL, 4), 4);
	close(in);
	close(out);
}

int main(void)
{
	test_dup();
	test_fcntl();
	test_pipes();
	test_poll();
	test_select();
	test_sendfile();
	return lt_done();
}
