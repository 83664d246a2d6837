/*
 * peer.h - shared helpers for ondol's Linux peer benchmarks.
 *
 * These are ordinary static Linux programs. They run inside a QEMU guest booted
 * from Debian's stock kernel (see build-initramfs.sh) and also natively on the
 * host (the tests do that). Each program prints newline-delimited JSON in the
 * ondol result-stream format on stdout:
 *
 *   {"type":"result","bench":"ipc","test":"linux_pipe_roundtrip","unit":"...",
 *    "median":M,"min":A,"max":B,"n":N, ...extra fields...}
 *   {"type":"end","bench":"ipc","status":0}
 *
 * Common options:
 *   -n N      number of timed samples (default 1000, at least 1)
 *   -w W      untimed warm-up iterations before sampling (default 2000; Linux
 *             CFS needs ~1,000 round trips after fork to reach its steady
 *             state, see README.md)
 *   -u MODE   "icount" -> unit "instructions (icount)", "tsc" -> "TSC ticks"
 *   -c CPU    CPU to pin to (default: lowest CPU in the current affinity mask)
 *   -r        also print {"type":"raw",...,"samples":[...]} (in the order taken)
 *             before the result record
 *
 * Timing follows P1: the counter is read just before the send and just after
 * the receive returns. The counter is the TSC; under QEMU -icount shift=0 the
 * guest TSC advances once per executed instruction.
 */
#ifndef ONDOL_PEER_H
#define ONDOL_PEER_H

#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif

#include <errno.h>
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>
#include <unistd.h>

#define PEER_MAX_SAMPLES 10000000L

struct peer_opts {
	long n;
	long warmup;
	int cpu;
	const char *unit;
	const char *mode; /* "icount" or "tsc" */
	const char *bench;
	const char *test;
	int raw; /* -r: also print every sample (a "raw" record) */
};

/* Read the TSC. The lfence before keeps earlier loads from drifting past the
 * read, the one after keeps the following send from starting before it. */
static inline uint64_t peer_rdtsc(void)
{
	uint32_t lo, hi;
	__asm__ __volatile__("lfence\n\trdtsc\n\tlfence" : "=a"(lo), "=d"(hi) : : "memory");
	return ((uint64_t)hi << 32) | lo;
}

/* Print an end record with status 1 and the errno text, then exit(1). */
void peer_die(const struct peer_opts *o, const char *what) __attribute__((noreturn));
/* Parse the common options (exits with status 2 on bad usage). */
void peer_parse(struct peer_opts *o, int argc, char **argv);
/* Pin the calling thread to o->cpu (choosing one if -1); returns the CPU. */
int peer_pin(struct peer_opts *o);
/* Smallest difference between two back-to-back counter reads. */
uint64_t peer_timer_overhead(void);
/* Zeroed array of o->n samples. */
uint64_t *peer_alloc_samples(const struct peer_opts *o);
/* Print the raw record (with -r), the result record (plus `extra`, a string of
 * ,"key":value pairs starting with a comma, or "") and the end record.
 * Sorts the samples in place. */
void peer_report(const struct peer_opts *o, uint64_t *s, const char *extra);

#endif
