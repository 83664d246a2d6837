/*
 * pingpong_futex - Linux peer of ondol's IPC hand-off: a token word passed
 * back and forth between two threads with futex wait/wake, both pinned to one
 * CPU. With -p the partners are two processes sharing one MAP_SHARED page
 * (different address spaces, shared futex) instead of two threads.
 *
 * The word counts hand-offs: the initiator stores an odd value and wakes the
 * partner, the partner answers with the next even value and wakes it back.
 * Each side sleeps in FUTEX_WAIT while the word still holds the value it
 * last saw, so a wake can never be lost.
 *
 * One sample = counter read just before the initiator's store+wake, counter
 * read just after its wait observes the partner's answer.
 *
 * Output: test "linux_futex_handoff" (threads) or "linux_futex_handoff_proc"
 * (processes, -p). Other options: see peer.h.
 */
#include "peer.h"

#include <linux/futex.h>
#include <pthread.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/wait.h>

static int g_private = 1; /* FUTEX_PRIVATE_FLAG only when not shared */

static long futex(uint32_t *addr, int op, uint32_t val)
{
	if (g_private)
		op |= FUTEX_PRIVATE_FLAG;
	return syscall(SYS_futex, addr, op, val, NULL, NULL, 0);
}

static uint32_t load(const uint32_t *w)
{
	return __atomic_load_n(w, __ATOMIC_ACQUIRE);
}

/* Block until *w differs from `seen`; return the new value. */
static uint32_t wait_change(uint32_t *w, uint32_t seen)
{
	uint32_t v;
	while ((v = load(w)) == seen) {
		if (futex(w, FUTEX_WAIT, seen) != 0 && errno != EAGAIN && errno != EINTR)
			return seen; /* caller checks */
	}
	return v;
}

static void post(uint32_t *w, uint32_t v)
{
	__atomic_store_n(w, v, __ATOMIC_RELEASE);
	futex(w, FUTEX_WAKE, 1);
}

struct partner {
	uint32_t *word;
	long rounds;
	int failed;
};

/* Partner side: answer each odd value v with v+1. */
static void *partner_loop(void *arg)
{
	struct partner *p = arg;
	uint32_t seen = 0;
	for (long i = 0; i < p->rounds; i++) {
		uint32_t v = wait_change(p->word, seen);
		if (v == seen || (v & 1u) == 0) {
			p->failed = 1;
			return NULL;
		}
		seen = v + 1;
		post(p->word, seen);
	}
	return NULL;
}

int main(int argc, char **argv)
{
	struct peer_opts o = { .bench = "ipc", .test = "linux_futex_handoff" };
	int procs = 0;
	char extra[96];

	/* Take -p out before the common parser sees the arguments. */
	int m = 1;
	for (int i = 1; i < argc; i++) {
		if (strcmp(argv[i], "-p") == 0)
			procs = 1;
		else
			argv[m++] = argv[i];
	}
	argc = m;
	argv[argc] = NULL;
	if (procs) {
		o.test = "linux_futex_handoff_proc";
		g_private = 0;
	}
	peer_parse(&o, argc, argv);
	peer_pin(&o); /* the thread / child inherits the mask */
	uint64_t *s = peer_alloc_samples(&o);

	uint32_t *word = mmap(NULL, 4096, PROT_READ | PROT_WRITE,
			      (procs ? MAP_SHARED : MAP_PRIVATE) | MAP_ANONYMOUS, -1, 0);
	if (word == MAP_FAILED)
		peer_die(&o, "mmap");
	*word = 0;

	struct partner p = { .word = word, .rounds = o.warmup + o.n, .failed = 0 };
	pthread_t th;
	pid_t pid = -1;
	if (procs) {
		pid = fork();
		if (pid < 0)
			peer_die(&o, "fork");
		if (pid == 0) {
			partner_loop(&p);
			_exit(p.failed ? 1 : 0);
		}
	} else {
		int e = pthread_create(&th, NULL, partner_loop, &p);
		if (e != 0) {
			errno = e;
			peer_die(&o, "pthread_create");
		}
	}

	uint32_t v = 0;
	for (long i = 0; i < o.warmup + o.n; i++) {
		uint64_t t0 = peer_rdtsc();
		post(word, v + 1);
		uint32_t r = wait_change(word, v + 1);
		uint64_t t1 = peer_rdtsc();
		if (r != v + 2) {
			errno = EPROTO;
			peer_die(&o, "unexpected futex word");
		}
		v = r;
		if (i >= o.warmup)
			s[i - o.warmup] = t1 - t0;
	}

	if (procs) {
		int st;
		if (waitpid(pid, &st, 0) != pid || !WIFEXITED(st) || WEXITSTATUS(st) != 0)
			peer_die(&o, "partner exit");
	} else {
		pthread_join(th, NULL);
		if (p.failed) {
			errno = EPROTO;
			peer_die(&o, "partner failed");
		}
	}

	snprintf(extra, sizeof(extra), ",\"scenario\":\"%s\",\"mode\":\"%s\"",
		 procs ? "processes" : "threads", o.mode);
	peer_report(&o, s, extra);
	free(s);
	return 0;
}
