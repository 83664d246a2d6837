/* peer.c - option parsing, pinning and reporting shared by the peer programs. */
#include "peer.h"

void peer_die(const struct peer_opts *o, const char *what)
{
	int e = errno;
	/* Keep stdout machine-readable: report the failure as an end record. */
	printf("{\"type\":\"end\",\"bench\":\"%s\",\"test\":\"%s\",\"status\":1,"
	       "\"error\":\"%s: %s\"}\n",
	       o->bench, o->test, what, strerror(e));
	fflush(stdout);
	fprintf(stderr, "%s: %s: %s\n", o->test, what, strerror(e));
	exit(1);
}

static void __attribute__((noreturn)) peer_usage(const char *prog)
{
	fprintf(stderr, "usage: %s [-n samples] [-w warmup] [-u icount|tsc] [-c cpu] [-r]\n", prog);
	exit(2);
}

static long peer_parse_long(const char *s, const char *prog)
{
	char *end;
	errno = 0;
	long v = strtol(s, &end, 10);
	if (errno || end == s || *end != '\0' || v < 0)
		peer_usage(prog);
	return v;
}

void peer_parse(struct peer_opts *o, int argc, char **argv)
{
	int c;
	o->n = 1000;
	o->warmup = 2000;
	o->cpu = -1;
	o->mode = "tsc";
	o->raw = 0;
	while ((c = getopt(argc, argv, "n:w:u:c:r")) != -1) {
		switch (c) {
		case 'r': o->raw = 1; break;
		case 'n': o->n = peer_parse_long(optarg, argv[0]); break;
		case 'w': o->warmup = peer_parse_long(optarg, argv[0]); break;
		case 'c': o->cpu = (int)peer_parse_long(optarg, argv[0]); break;
		case 'u': o->mode = optarg; break;
		default: peer_usage(argv[0]);
		}
	}
	if (optind != argc || o->n < 1 || o->n > PEER_MAX_SAMPLES)
		peer_usage(argv[0]);
	if (strcmp(o->mode, "icount") == 0)
		o->unit = "instructions (icount)";
	else if (strcmp(o->mode, "tsc") == 0)
		o->unit = "TSC ticks";
	else
		peer_usage(argv[0]);
}

/* Pin the calling thread (and, through inheritance, later children) to one
 * CPU: ondol's runs are single-CPU, so both partners must share a CPU. */
int peer_pin(struct peer_opts *o)
{
	cpu_set_t set;
	if (o->cpu < 0) {
		CPU_ZERO(&set);
		if (sched_getaffinity(0, sizeof(set), &set) != 0)
			peer_die(o, "sched_getaffinity");
		for (int i = 0; i < CPU_SETSIZE; i++) {
			if (CPU_ISSET(i, &set)) {
				o->cpu = i;
				break;
			}
		}
		if (o->cpu < 0) {
			errno = EINVAL;
			peer_die(o, "no usable cpu");
		}
	}
	CPU_ZERO(&set);
	CPU_SET(o->cpu, &set);
	if (sched_setaffinity(0, sizeof(set), &set) != 0)
		peer_die(o, "sched_setaffinity");
	return o->cpu;
}

static int peer_cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return (x > y) - (x < y);
}

/* Smallest difference between two back-to-back counter reads: the part of
 * every sample that is the measurement itself. Reported, not subtracted. */
uint64_t peer_timer_overhead(void)
{
	uint64_t best = UINT64_MAX;
	for (int i = 0; i < 64; i++) {
		uint64_t a = peer_rdtsc();
		uint64_t b = peer_rdtsc();
		if (b - a < best)
			best = b - a;
	}
	return best;
}

uint64_t *peer_alloc_samples(const struct peer_opts *o)
{
	uint64_t *s = calloc((size_t)o->n, sizeof(*s));
	if (!s)
		peer_die(o, "calloc");
	return s;
}

/* The (up to) PEER_MODES most frequent values of sorted samples s[0..n),
 * as a JSON array of [value,count] pairs, most frequent first (ties: the
 * smaller value first). Under icount the samples take few distinct values,
 * and this shows how they split. */
#define PEER_MODES 4
static void peer_print_modes(const uint64_t *s, long n)
{
	uint64_t val[PEER_MODES];
	long cnt[PEER_MODES];
	int k = 0;
	for (long i = 0; i < n;) {
		long j = i;
		while (j < n && s[j] == s[i])
			j++;
		long c = j - i;
		/* insert (s[i], c) into the top list, kept ordered by count */
		int pos = k;
		while (pos > 0 && cnt[pos - 1] < c)
			pos--;
		if (pos < PEER_MODES) {
			int last = k < PEER_MODES ? k : PEER_MODES - 1;
			for (int m = last; m > pos; m--) {
				val[m] = val[m - 1];
				cnt[m] = cnt[m - 1];
			}
			val[pos] = s[i];
			cnt[pos] = c;
			if (k < PEER_MODES)
				k++;
		}
		i = j;
	}
	printf(",\"modes\":[");
	for (int m = 0; m < k; m++)
		printf("%s[%llu,%ld]", m ? "," : "", (unsigned long long)val[m], cnt[m]);
	printf("]");
}

/* Print the result record (and, with -r, a raw record with the samples in
 * the order taken) and the end record. Sorts s in place. `extra` is either
 * empty or a string of additional ,"key":value pairs starting with a comma. */
void peer_report(const struct peer_opts *o, uint64_t *s, const char *extra)
{
	long n = o->n;
	struct utsname u;
	if (o->raw) {
		printf("{\"type\":\"raw\",\"bench\":\"%s\",\"test\":\"%s\",\"unit\":\"%s\","
		       "\"samples\":[", o->bench, o->test, o->unit);
		for (long i = 0; i < n; i++)
			printf("%s%llu", i ? "," : "", (unsigned long long)s[i]);
		printf("]}\n");
	}
	qsort(s, (size_t)n, sizeof(*s), peer_cmp_u64);
	/* Median of an even count: lower middle, so the value is one that was
	 * actually observed and stays an integer. */
	uint64_t median = s[(n - 1) / 2];
	double mean = 0;
	for (long i = 0; i < n; i++)
		mean += (double)s[i];
	mean /= (double)n;
	if (uname(&u) != 0)
		strcpy(u.release, "unknown");
	printf("{\"type\":\"result\",\"bench\":\"%s\",\"test\":\"%s\",\"unit\":\"%s\","
	       "\"median\":%llu,\"min\":%llu,\"max\":%llu,\"n\":%ld,"
	       "\"mean\":%.1f,\"q1\":%llu,\"q3\":%llu,\"warmup\":%ld,\"cpu\":%d,"
	       "\"timer_overhead\":%llu,\"kernel\":\"linux\",\"release\":\"%s\"",
	       o->bench, o->test, o->unit, (unsigned long long)median,
	       (unsigned long long)s[0], (unsigned long long)s[n - 1], n, mean,
	       (unsigned long long)s[(n - 1) / 4], (unsigned long long)s[(3 * (n - 1)) / 4],
	       o->warmup, o->cpu, (unsigned long long)peer_timer_overhead(), u.release);
	peer_print_modes(s, n);
	printf("%s}\n", extra ? extra : "");
	printf("{\"type\":\"end\",\"bench\":\"%s\",\"test\":\"%s\",\"status\":0}\n", o->bench,
	       o->test);
	fflush(stdout);
}
