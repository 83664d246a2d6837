/* fuzz: the Linux-ABI fuzzer. usage: fuzz SEED CALLS
 *
 * Makes CALLS system calls with random numbers and random arguments, in a child process
 * that the parent forks again whenever it dies. Call i's number and arguments depend
 * only on (SEED, i), so a run is the same sequence of calls whatever happens to the
 * children: before call i the child stores i in a shared page, and a new child resumes
 * after the call that killed (or stalled) the old one. A child that makes no progress
 * for STALL_POLLS polls (blocked in pause, a pipe read, a long sleep...) is killed.
 *
 * Calls that would end the run on any system are never made (denied[] below): signals
 * to other processes, reboot, process creation and exec (a fork bomb or a different
 * program), clock setting (breaks deterministic runs), mounts, modules, swap, tracing,
 * scheduling or priorities of other processes, tty hang-up, and calls creating
 * system-wide objects that outlive the process. The child's stdin, stdout and stderr are
 * /dev/null so random writes do not reach the output.
 *
 * Prints "fuzz seed S: calls N denied D respawns R" and "system still answers: yes". */
#include "lt.h"
#include <fcntl.h>
#include <signal.h>
#include <stdint.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>

#define STALL_POLLS 20

static const int denied[] = {
	SYS_kill, SYS_tkill, SYS_tgkill, SYS_rt_sigqueueinfo, SYS_rt_tgsigqueueinfo, 424,
	SYS_reboot, SYS_fork, SYS_vfork, SYS_clone, 435, SYS_execve, SYS_execveat,
	SYS_ptrace, SYS_settimeofday, SYS_clock_settime, SYS_adjtimex, SYS_clock_adjtime,
	SYS_mount, SYS_umount2, SYS_pivot_root, SYS_swapon, SYS_swapoff, SYS_init_module,
	SYS_finit_module, SYS_delete_module, SYS_kexec_load, SYS_kexec_file_load, SYS_acct,
	SYS_syslog, SYS_iopl, SYS_ioperm, SYS_vhangup, SYS_sethostname, SYS_setdomainname,
	SYS_prlimit64, SYS_sched_setaffinity, SYS_sched_setscheduler, SYS_sched_setparam,
	SYS_sched_setattr, SYS_setpriority, SYS_ioprio_set, SYS_migrate_pages, SYS_move_pages,
	SYS_process_vm_writev, 440, SYS_unshare, SYS_setns, SYS_bpf, SYS_perf_event_open,
	SYS_userfaultfd, SYS_quotactl, SYS_keyctl, SYS_add_key, SYS_request_key,
	SYS_fanotify_init, SYS_open_by_handle_at, SYS_shmget, SYS_semget, SYS_msgget,
};

/* splitmix64: call I's random stream. */
static uint64_t mix(uint64_t x)
{
	x += 0x9e3779b97f4a7c15ull;
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
	x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
	return x ^ (x >> 31);
}

static int is_denied(long nr)
{
	for (size_t i = 0; i < sizeof denied / sizeof denied[0]; i++)
		if (denied[i] == nr)
			return 1;
	return 0;
}

/* A system-call number: mostly the Linux range, sometimes just above it or far off. */
static long pick_number(uint64_t r)
{
	if (r % 16 == 0)
		return 335 + (long)((r >> 8) % 130);
	if (r % 64 == 1)
		return (long)(r >> 16);
	return (long)((r >> 8) % 335);
}

/* An argument: small numbers, -1, a valid scratch pointer, a bad pointer, or noise. */
static long pick_argument(uint64_t r, char *scratch)
{
	switch (r % 8) {
	case 0: return 0;
	case 1: return (long)((r >> 8) % 64);
	case 2: return -1;
	case 3: return (long)(scratch + (r >> 8) % 4000);
	case 4: return 8;
	case 5: return (long)0xffff800000000000ull;
	case 6: return (long)((r >> 8) % 4096);
	default: return (long)(r >> 3);
	}
}

/* Make calls FROM..COUNT-1, storing each index in *PROGRESS first. Never returns. */
static void child(uint64_t seed, long from, long count, volatile long *progress)
{
	static char scratch[4096];
	int null = open("/dev/null", O_RDWR);
	dup2(null, 0);
	dup2(null, 1);
	dup2(null, 2);
	for (long i = from; i < count; i++) {
		*progress = i;
		uint64_t r = mix(seed * 1000003u + (uint64_t)i);
		long nr = pick_number(r);
		if (is_denied(nr))
			continue;
		for (int b = 0; b < (int)sizeof scratch; b += 8)
			*(uint64_t *)(scratch + b) = mix(r + (uint64_t)b);
		long a[6];
		for (int k = 0; k < 6; k++)
			a[k] = pick_argument(mix(r + 0x1000u + (uint64_t)k), scratch);
		syscall(nr, a[0], a[1], a[2], a[3], a[4], a[5]);
	}
	*progress = count;
	_exit(0);
}

/* Wait for child PID; kill it when *PROGRESS stays still for STALL_POLLS polls. */
static void watch(pid_t pid, volatile long *progress)
{
	long last = -1;
	int still = 0;
	struct timespec poll_interval = {0, 1000000};
	while (waitpid(pid, NULL, WNOHANG) == 0) {
		if (*progress != last) {
			last = *progress;
			still = 0;
		} else if (++still >= STALL_POLLS) {
			kill(pid, SIGKILL);
			waitpid(pid, NULL, 0);
			return;
		}
		nanosleep(&poll_interval, NULL);
	}
}

int main(int argc, char **argv)
{
	if (argc != 3) {
		fprintf(stderr, "usage: fuzz SEED CALLS\n");
		return 2;
	}
	uint64_t seed = strtoull(argv[1], NULL, 0);
	long count = strtol(argv[2], NULL, 0), denied_calls = 0, respawns = 0;
	for (long i = 0; i < count; i++)
		denied_calls += is_denied(pick_number(mix(seed * 1000003u + (uint64_t)i)));
	volatile long *progress = mmap(NULL, 4096, PROT_READ | PROT_WRITE,
				       MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	long next = 0;
	while (next < count) {
		*progress = next;
		pid_t pid = fork();
		if (pid == 0)
			child(seed, next, count, progress);
		watch(pid, progress);
		long reached = *progress;
		next = (reached >= next ? reached : next) + 1;
		respawns += next < count;
	}
	printf("fuzz seed %llu: calls %ld denied %ld respawns %ld\n",
	       (unsigned long long)seed, count, denied_calls, respawns);
	lt_true("system still answers", getppid() > 0 && access("/", F_OK) == 0);
	return lt_done();
}
