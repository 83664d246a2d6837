/* unlocked.c - the UNIX server's calls without the server lock (docs/unix.md, "Calls
 * without the server lock"), served while the server's main thread is stuck: run by
 * tests/test_smp.py with the MK server, two CPUs and a network server that stops
 * answering (net_hang), so that the main thread waits for it for net_timeout seconds.
 *
 * A watcher thread calls getppid in a loop (every call goes to the main thread) and
 * counts its answers. The main thread waits (spinning on the TSC, no system call) until
 * the count has stood still for STILL_TSC ticks, i.e. the server's main thread is stuck
 * (the count moves every few microseconds otherwise); then it makes BATCH rounds of
 * mprotect and madvise(MADV_DONTNEED) and a munmap, and waits STILL_TSC more. The count
 * still unchanged: every one of those calls was answered while the main thread answered
 * nothing, so by another thread of the server ("served 1"). It moved: the calls waited
 * for the main thread (unix_unlocked=off: "served 0"). One batch, at the first time the
 * count stands still, at most argv[1] (default 60) x 10^9 TSC ticks after "ready". Prints
 * "ready" first, and at the end "stuck S served V" (S 0: never seen stuck).
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>
#include <x86intrin.h>

#define BATCH 200
#define STILL_TSC 1500000000ull         /* how long the count must stand still */

static volatile uint64_t answered;      /* the watcher's getppid answers */

static void *watcher(void *arg)
{
	(void)arg;
	for (;;) {
		getppid();
		__atomic_fetch_add(&answered, 1, __ATOMIC_RELAXED);
	}
	return NULL;
}

/* True when no getppid was answered for STILL_TSC ticks. */
static int stands_still(void)
{
	uint64_t seen = answered, start = __rdtsc();
	while (__rdtsc() - start < STILL_TSC)
		if (answered != seen)
			return 0;
	return 1;
}

/* BATCH rounds of the calls without the server lock on the page at p: 0 on success. */
static int batch(char *p)
{
	for (int i = 0; i < BATCH; i++) {
		if (mprotect(p, 4096, PROT_READ) || mprotect(p, 4096, PROT_READ | PROT_WRITE))
			return -1;
		if (madvise(p, 4096, MADV_DONTNEED))
			return -1;
	}
	return 0;
}

int main(int argc, char **argv)
{
	uint64_t budget = (argc > 1 ? strtoull(argv[1], NULL, 10) : 60) * 1000000000ull;
	char *p = mmap(NULL, 4096, PROT_READ | PROT_WRITE,
			   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	pthread_t w;
	if (p == MAP_FAILED || pthread_create(&w, NULL, watcher, NULL))
		return 1;
	printf("ready\n");
	fflush(stdout);
	int stuck = 0, served = 0;
	uint64_t start = __rdtsc();
	while (!stuck && __rdtsc() - start < budget)
		stuck = stands_still();
	if (stuck) {
		uint64_t before = answered;
		if (batch(p) || munmap(p, 4096))
			return 2;
		served = stands_still() && answered == before;
	}
	printf("stuck %d served %d\n", stuck, served);
	fflush(stdout);
	return 0;
}
