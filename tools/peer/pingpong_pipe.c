/*
 * pingpong_pipe - Linux peer of ondol's IPC round trip: two processes, one pipe
 * each way, a 1-byte token bounced back and forth, both pinned to one CPU.
 *
 * One sample = counter read just before write() of the token to the child,
 * counter read just after read() of the child's reply returns. Every sample
 * therefore contains two pipe transfers and two context switches (plus an
 * address-space switch each way).
 *
 * Output: test "linux_pipe_roundtrip" (see peer.h for the format and options).
 */
#include "peer.h"

#include <signal.h>
#include <sys/wait.h>

static int xread1(int fd, char *c)
{
	for (;;) {
		ssize_t r = read(fd, c, 1);
		if (r == 1)
			return 0;
		if (r < 0 && errno == EINTR)
			continue;
		if (r == 0)
			errno = EPIPE;
		return -1;
	}
}

static int xwrite1(int fd, char c)
{
	for (;;) {
		ssize_t r = write(fd, &c, 1);
		if (r == 1)
			return 0;
		if (r < 0 && errno == EINTR)
			continue;
		return -1;
	}
}

/* Child: echo every token back until the parent closes its end. */
static void __attribute__((noreturn)) echo_loop(int in, int out)
{
	char c;
	while (xread1(in, &c) == 0) {
		if (xwrite1(out, c) != 0)
			_exit(1);
	}
	_exit(0);
}

int main(int argc, char **argv)
{
	struct peer_opts o = { .bench = "ipc", .test = "linux_pipe_roundtrip" };
	int to_child[2], to_parent[2];
	char extra[96];

	peer_parse(&o, argc, argv);
	peer_pin(&o); /* before fork: the child inherits the affinity mask */
	uint64_t *s = peer_alloc_samples(&o);
	signal(SIGPIPE, SIG_IGN);

	if (pipe(to_child) != 0 || pipe(to_parent) != 0)
		peer_die(&o, "pipe");
	pid_t pid = fork();
	if (pid < 0)
		peer_die(&o, "fork");
	if (pid == 0) {
		close(to_child[1]);
		close(to_parent[0]);
		echo_loop(to_child[0], to_parent[1]);
	}
	close(to_child[0]);
	close(to_parent[1]);

	char tok = 'x', back;
	for (long i = 0; i < o.warmup; i++) {
		if (xwrite1(to_child[1], tok) != 0 || xread1(to_parent[0], &back) != 0)
			peer_die(&o, "warm-up round trip");
	}
	for (long i = 0; i < o.n; i++) {
		uint64_t t0 = peer_rdtsc();
		if (xwrite1(to_child[1], tok) != 0)
			peer_die(&o, "write");
		if (xread1(to_parent[0], &back) != 0)
			peer_die(&o, "read");
		uint64_t t1 = peer_rdtsc();
		if (back != tok)
			peer_die(&o, "token mismatch");
		s[i] = t1 - t0;
		tok = (char)(tok == 'x' ? 'y' : 'x');
	}

	close(to_child[1]);
	int st;
	if (waitpid(pid, &st, 0) != pid || !WIFEXITED(st) || WEXITSTATUS(st) != 0)
		peer_die(&o, "child exit");
	close(to_parent[0]);

	snprintf(extra, sizeof(extra), ",\"scenario\":\"processes\",\"mode\":\"%s\"", o.mode);
	peer_report(&o, s, extra);
	free(s);
	return 0;
}
