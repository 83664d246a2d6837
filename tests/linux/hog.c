/* hog: processes that take a shared resource without end must be stopped by the system's
 * limits, and the system must get everything back (docs/unix.md, "Reliability").
 * usage: hog nproc | table | mmap | brk
 *
 * nproc: a fork bomb run as user 1000 under RLIMIT_NPROC = NPROC_LIMIT; every member
 *        forks until fork fails. Prints the first failure (EAGAIN, as Linux) and how
 *        many members there were (the limit). Compared with the Linux peer.
 * table: the same bomb as root (no RLIMIT_NPROC applies): the process table's limit
 *        stops it. Prints the failure and the member count (ondol only: Linux as root
 *        would stop only when memory ran out).
 * mmap, brk: a child maps (or extends the break) and touches memory 1 MiB at a time
 *        without end. It must be stopped by ENOMEM (it then exits 0) or killed by SIGKILL,
 *        as Linux's OOM killer would (ondol only).
 *
 * A bomb ends in order: once every member has stopped forking (each counts itself as
 * "settled" in a shared page), the main process closes the pipe they all wait on; each
 * member then reaps its own children and exits, so no orphan is left. */
#include "lt.h"
#include <signal.h>
#include <stdint.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>

#define NPROC_LIMIT 16
#define CHUNK (1L << 20)

struct bomb {
	long members, settled;     /* counted by each member's parent; by each member */
	int stop, first_errno;
};

static void pause_ms(long ms)
{
	struct timespec t = {ms / 1000, (ms % 1000) * 1000000};
	nanosleep(&t, NULL);
}

/* A member of the bomb: fork until fork fails or another member's did, then wait for
 * the main process to close HOLD, reap the children and exit. Never returns. */
static void member(struct bomb *b, int hold)
{
	while (!__atomic_load_n(&b->stop, __ATOMIC_SEQ_CST)) {
		pid_t pid = fork();
		if (pid == 0)
			continue;                    /* the child is a member too */
		if (pid > 0) {
			__atomic_add_fetch(&b->members, 1, __ATOMIC_SEQ_CST);
			continue;
		}
		int zero = 0;
		__atomic_compare_exchange_n(&b->first_errno, &zero, errno, 0, __ATOMIC_SEQ_CST,
					    __ATOMIC_SEQ_CST);
		__atomic_store_n(&b->stop, 1, __ATOMIC_SEQ_CST);
	}
	__atomic_add_fetch(&b->settled, 1, __ATOMIC_SEQ_CST);
	char c;
	while (read(hold, &c, 1) > 0)
		;
	while (wait(NULL) > 0)
		;
	_exit(0);
}

/* Start the bomb (as user 1000 under RLIMIT_NPROC when LIMITED), wait until it has
 * settled, end it; print the first fork failure and the member count. */
static void fork_bomb(int limited)
{
	struct bomb *b = mmap(NULL, sizeof *b, PROT_READ | PROT_WRITE,
			      MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	int hold[2];
	if (b == MAP_FAILED || pipe(hold) != 0) {
		lt_true("bomb set up", 0);
		return;
	}
	b->members = 1;
	pid_t root = fork();
	if (root == 0) {
		close(hold[1]);
		struct rlimit lim = {NPROC_LIMIT, NPROC_LIMIT};
		if (limited && (setrlimit(RLIMIT_NPROC, &lim) != 0 || setuid(1000) != 0))
			_exit(99);
		member(b, hold[0]);
	}
	close(hold[0]);
	while (__atomic_load_n(&b->settled, __ATOMIC_SEQ_CST) <
	       __atomic_load_n(&b->members, __ATOMIC_SEQ_CST))
		pause_ms(1);
	char got[64];
	lt_show(got, sizeof got, -1, b->first_errno);
	lt_str("fork bomb stopped by", got, "-1 EAGAIN");
	if (limited)
		lt_val("members at RLIMIT_NPROC", b->members, 0, NPROC_LIMIT);
	else
		printf("members at the table limit: %ld\n", b->members);
	close(hold[1]);
	int status = -1;
	waitpid(root, &status, 0);
	lt_true("bomb ended in order", WIFEXITED(status) && WEXITSTATUS(status) == 0);
	ERR("no child left", waitpid(-1, NULL, WNOHANG), ECHILD);
	pid_t again = fork();
	if (again == 0)
		_exit(0);
	lt_true("fork works again", again > 0 && waitpid(again, NULL, 0) == again);
}

/* CHUNK more bytes: the raw brk call (musl's sbrk refuses to grow the break), which
 * returns the old break when it fails; or an anonymous mapping. NULL with errno set. */
static char *grow(int use_brk)
{
	if (!use_brk) {
		char *p = mmap(NULL, CHUNK, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS,
			       -1, 0);
		return p == MAP_FAILED ? NULL : p;
	}
	char *end = (char *)syscall(SYS_brk, 0);
	if ((char *)syscall(SYS_brk, end + CHUNK) != end + CHUNK) {
		errno = ENOMEM;
		return NULL;
	}
	return end;
}

/* The child's part of a memory hog: grow by CHUNK and touch every page, until a
 * request fails (exit 0 for ENOMEM) or the system kills it. */
static void hog_memory(int use_brk)
{
	for (long mib = 0;; mib++) {
		char *p = grow(use_brk);
		if (!p) {
			int err = errno;
			printf("refused after %ld MiB: -1 %s\n", mib, lt_errname(err));
			fflush(stdout);
			_exit(err == ENOMEM ? 0 : 1);
		}
		for (long off = 0; off < CHUNK; off += 4096)
			p[off] = (char)mib;
	}
}

/* Run a memory hog in a child; it must end by ENOMEM or SIGKILL. */
static void memory_hog(int use_brk)
{
	pid_t pid = fork();
	if (pid == 0)
		hog_memory(use_brk);
	int status = -1;
	waitpid(pid, &status, 0);
	char got[64];
	if (WIFSIGNALED(status))
		snprintf(got, sizeof got, "killed by signal %d", WTERMSIG(status));
	else
		snprintf(got, sizeof got, "exit %d", WEXITSTATUS(status));
	printf("%s hog: %s\n", use_brk ? "brk" : "mmap", got);
	lt_true("hog stopped by ENOMEM or SIGKILL", strcmp(got, "exit 0") == 0 ||
		(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL));
}

int main(int argc, char **argv)
{
	const char *mode = argc == 2 ? argv[1] : "";
	if (strcmp(mode, "nproc") == 0 || strcmp(mode, "table") == 0)
		fork_bomb(strcmp(mode, "nproc") == 0);
	else if (strcmp(mode, "mmap") == 0 || strcmp(mode, "brk") == 0)
		memory_hog(strcmp(mode, "brk") == 0);
	else {
		fprintf(stderr, "usage: hog nproc|table|mmap|brk\n");
		return 2;
	}
	return lt_done();
}
