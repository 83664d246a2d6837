/*
 * vm_ops - Linux peer of ondol's memory benchmark (bench/vmbench.c, `./ondol bench vm`).
 *
 *   vm_ops OPERATION [common options, see peer.h]
 *
 * OPERATION (one sample each; counter read just before and just after):
 *   fork0      fork(); the child _exit(0)s at once; waitpid()      -> linux_fork0
 *   fork64     the same, the child first writing each of 64 pages
 *              the parent wrote (64 copy-on-write breaks)           -> linux_fork64
 *   pagefault  the first write to an untouched anonymous page       -> linux_pagefault
 *   cowfault   a write to a private page shared with a live child   -> linux_cowfault
 *   mmap16     mmap 16 anonymous pages, write each, munmap          -> linux_mmap16
 * Anonymous regions get MADV_NOHUGEPAGE, so every fault is a 4 KiB page as on ondol.
 * Warm-up (-w) repeats the operation untimed (for the faults: on other pages).
 */
#include "peer.h"

#include <signal.h>
#include <sys/mman.h>
#include <sys/wait.h>

#define PAGE 4096L
#define TOUCHED 64
#define MAP_PAGES 16

static struct peer_opts o = { .bench = "vm" };
static volatile char *buffer;            /* TOUCHED pages, written before any fork */

static volatile char *map_pages(long pages)
{
	void *p = mmap(NULL, (size_t)(pages * PAGE), PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED)
		peer_die(&o, "mmap");
	(void)madvise(p, (size_t)(pages * PAGE), MADV_NOHUGEPAGE);
	return p;
}

static void write_pages(volatile char *p, long pages, char value)
{
	for (long i = 0; i < pages; i++)
		p[i * PAGE] = value;
}

/* fork, the child writing `touch` pages of buffer and exiting, wait for it. */
static void fork_wait(long touch)
{
	pid_t pid = fork();
	if (pid < 0)
		peer_die(&o, "fork");
	if (pid == 0) {
		write_pages(buffer, touch, 2);
		_exit(0);
	}
	int st;
	if (waitpid(pid, &st, 0) != pid || !WIFEXITED(st) || WEXITSTATUS(st) != 0)
		peer_die(&o, "waitpid");
}

static void run_fork(uint64_t *s, long touch)
{
	for (long i = 0; i < o.warmup; i++)
		fork_wait(touch);
	for (long i = 0; i < o.n; i++) {
		uint64_t t0 = peer_rdtsc();
		fork_wait(touch);
		s[i] = peer_rdtsc() - t0;
	}
}

/* Timed first writes to each of n pages at p. */
static void time_writes(uint64_t *s, volatile char *p, long n, char value)
{
	for (long i = 0; i < n; i++) {
		uint64_t t0 = peer_rdtsc();
		p[i * PAGE] = value;
		s[i] = peer_rdtsc() - t0;
	}
}

static void run_pagefault(uint64_t *s)
{
	write_pages(map_pages(o.warmup + 1), o.warmup, 1);
	time_writes(s, map_pages(o.n), o.n, 1);
}

/* The child holds the pages shared until the parent has written them all. */
static void run_cowfault(uint64_t *s)
{
	write_pages(map_pages(o.warmup + 1), o.warmup, 1);
	volatile char *p = map_pages(o.n);
	write_pages(p, o.n, 1);
	pid_t pid = fork();
	if (pid < 0)
		peer_die(&o, "fork");
	if (pid == 0) {
		for (;;)
			pause();
	}
	time_writes(s, p, o.n, 2);
	int st;
	if (kill(pid, SIGKILL) != 0 || waitpid(pid, &st, 0) != pid)
		peer_die(&o, "kill the sharer");
}

static void map_touch_unmap(void)
{
	volatile char *p = map_pages(MAP_PAGES);
	write_pages(p, MAP_PAGES, 1);
	if (munmap((void *)p, MAP_PAGES * PAGE) != 0)
		peer_die(&o, "munmap");
}

static void run_mmap16(uint64_t *s)
{
	for (long i = 0; i < o.warmup; i++)
		map_touch_unmap();
	for (long i = 0; i < o.n; i++) {
		uint64_t t0 = peer_rdtsc();
		map_touch_unmap();
		s[i] = peer_rdtsc() - t0;
	}
}

static const char *const tests[][2] = {
	{ "fork0", "linux_fork0" },         { "fork64", "linux_fork64" },
	{ "pagefault", "linux_pagefault" }, { "cowfault", "linux_cowfault" },
	{ "mmap16", "linux_mmap16" },
};

int main(int argc, char **argv)
{
	const char *op = argc > 1 ? argv[1] : "";
	for (size_t i = 0; i < sizeof(tests) / sizeof(tests[0]); i++)
		if (strcmp(op, tests[i][0]) == 0)
			o.test = tests[i][1];
	if (!o.test) {
		fprintf(stderr, "usage: %s fork0|fork64|pagefault|cowfault|mmap16 [options]\n",
			argv[0]);
		return 2;
	}
	argv[1] = argv[0];                   /* the common options follow the operation */
	peer_parse(&o, argc - 1, argv + 1);
	peer_pin(&o);
	uint64_t *s = peer_alloc_samples(&o);
	buffer = map_pages(TOUCHED);
	write_pages(buffer, TOUCHED, 1);

	if (strcmp(op, "fork0") == 0)
		run_fork(s, 0);
	else if (strcmp(op, "fork64") == 0)
		run_fork(s, TOUCHED);
	else if (strcmp(op, "pagefault") == 0)
		run_pagefault(s);
	else if (strcmp(op, "cowfault") == 0)
		run_cowfault(s);
	else
		run_mmap16(s);

	char extra[96];
	snprintf(extra, sizeof(extra), ",\"scenario\":\"%s\",\"mode\":\"%s\"", op, o.mode);
	peer_report(&o, s, extra);
	free(s);
	return 0;
}
