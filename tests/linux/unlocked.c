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
 * for the main thread (unix_unlocked=off: "served 0"), or the count stood still only
 * because the host did not run the watcher's vCPU for a while (a loaded host, the server
 * not stuck at all). So up to ATTEMPTS batches, one at each time the count stands still,
 * until one is served, at most argv[1] (default 60) x 10^9 TSC ticks after "ready".
 * Prints "ready" first, and at the end "stuck S served V" (S 0: never seen stuck).
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
#define ATTEMPTS 3
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

/* One batch and a munmap of the page at p once the count stands still: whether every
 * call was answered while the count stood still (served); -1 when a call failed. */
static int attempt(char *p)
{
	uint64_t before = answered;
	if (batch(p) || munmap(p, 4096))
		return -1;
	return stands_still() && answered == before;
}

int main(int argc, char **argv)
{
	uint64_t budget = (argc > 1 ? strtoull(argv[1], NULL, 10) : 60) * 1000000000ull;
	char *pages[ATTEMPTS];		/* mapped now: mmap waits for the main thread */
	pthread_t w;
	for (int i = 0; i < ATTEMPTS; i++) {
		pages[i] = mmap(NULL, 4096, PROT_READ | PROT_WRITE,
				MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (pages[i] == MAP_FAILED)
			return 1;
	}
	if (pthread_create(&w, NULL, watcher, NULL))
		return 1;
	printf("ready\n");
	fflush(stdout);
	int stuck = 0, served = 0;
	uint64_t start = __rdtsc();
	for (int i = 0; i < ATTEMPTS && !served && __rdtsc() - start < budget;) {
		if (!stands_still())
			continue;
		stuck = 1;
		served = attempt(pages[i++]);
		if (served < 0)
			return 2;
	}
	printf("stuck %d served %d\n", stuck, served);
	fflush(stdout);
	return 0;
}
