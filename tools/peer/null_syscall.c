/*
 * null_syscall - Linux peer of ondol's null system call: the cost of one
 * getppid() (lmbench's "null" call), issued through syscall(2) so no C-library
 * caching can stand in for the kernel entry.
 *
 * One sample = counter read just before the call, counter read just after it
 * returns. Output: bench "syscall", test "linux_null_syscall" (see peer.h).
 */
#include "peer.h"

#include <sys/syscall.h>

int main(int argc, char **argv)
{
	struct peer_opts o = { .bench = "syscall", .test = "linux_null_syscall" };
	char extra[64];

	peer_parse(&o, argc, argv);
	peer_pin(&o);
	uint64_t *s = peer_alloc_samples(&o);
	long expect = (long)getppid();

	for (long i = 0; i < o.warmup; i++)
		(void)syscall(SYS_getppid);
	for (long i = 0; i < o.n; i++) {
		uint64_t t0 = peer_rdtsc();
		long r = syscall(SYS_getppid);
		uint64_t t1 = peer_rdtsc();
		if (r != expect) {
			errno = EPROTO;
			peer_die(&o, "getppid changed");
		}
		s[i] = t1 - t0;
	}

	snprintf(extra, sizeof(extra), ",\"scenario\":\"getppid\",\"mode\":\"%s\"", o.mode);
	peer_report(&o, s, extra);
	free(s);
	return 0;
}
