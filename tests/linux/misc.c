/* misc: arch_prctl, getrandom, clocks and sleeps, ids (root at the start), uname, sysinfo,
 * real/effective/saved/fs ids and their rules, rlimits, sched_yield, sched_getaffinity,
 * sched_setaffinity, prctl names, set_robust_list, rseq, reboot
 * argument checks, an unknown system call, and threads (clone through pthreads, futex,
 * set_tid_address). Times are compared, never printed. */
#include "lt.h"
#include <fcntl.h>
#include <grp.h>
#include <pthread.h>
#include <sched.h>
#include <spawn.h>
#include <stdint.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/sysinfo.h>
#include <sys/time.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <time.h>

#define ARCH_SET_FS 0x1002
#define ARCH_GET_FS 0x1003
#define FUTEX_WAIT 0
#define FUTEX_WAKE 1

static void test_arch_random(void)
{
	unsigned long fs = 0;
	VAL("arch_prctl ARCH_GET_FS", syscall(SYS_arch_prctl, ARCH_GET_FS, &fs), 0);
	lt_true("FS base is the thread pointer", fs == (unsigned long)pthread_self());
	VAL("arch_prctl ARCH_SET_FS same value", syscall(SYS_arch_prctl, ARCH_SET_FS, fs), 0);
	ERR("arch_prctl bad code", syscall(SYS_arch_prctl, 0x9999, 0), EINVAL);
	ERR("arch_prctl GET_FS bad pointer", syscall(SYS_arch_prctl, ARCH_GET_FS, LT_BADPTR), EFAULT);
	unsigned char buf[64];
	VAL("getrandom 64 bytes", syscall(SYS_getrandom, buf, 64, 0), 64);
	ERR("getrandom bad flags", syscall(SYS_getrandom, buf, 8, 0x100), EINVAL);
	ERR("getrandom bad buffer", syscall(SYS_getrandom, LT_BADPTR, 8, 0), EFAULT);
}

static void test_time(void)
{
	struct timespec a, b;
	VAL("clock_gettime MONOTONIC", clock_gettime(CLOCK_MONOTONIC, &a), 0);
	clock_gettime(CLOCK_MONOTONIC, &b);
	lt_true("MONOTONIC does not go back", b.tv_sec > a.tv_sec || (b.tv_sec == a.tv_sec && b.tv_nsec >= a.tv_nsec));
	VAL("clock_gettime REALTIME", clock_gettime(CLOCK_REALTIME, &a), 0);
	lt_true("REALTIME after 2020", a.tv_sec > 1577836800);
	ERR("clock_gettime bad clock", syscall(SYS_clock_gettime, 12345, &a), EINVAL);
	ERR("clock_gettime bad pointer", syscall(SYS_clock_gettime, CLOCK_MONOTONIC, LT_BADPTR), EFAULT);
	struct timeval tv;
	VAL("gettimeofday", syscall(SYS_gettimeofday, &tv, NULL), 0);
	lt_true("gettimeofday agrees with time", labs((long)syscall(SYS_time, NULL) - tv.tv_sec) <= 1);
	struct timespec nap = {0, 1000000};
	clock_gettime(CLOCK_MONOTONIC, &a);
	VAL("nanosleep 1 ms", nanosleep(&nap, NULL), 0);
	clock_gettime(CLOCK_MONOTONIC, &b);
	lt_true("nanosleep slept at least 1 ms", (b.tv_sec - a.tv_sec) * 1000000000L + b.tv_nsec - a.tv_nsec >= 1000000);
	ERR("nanosleep bad nsec", syscall(SYS_nanosleep, &(struct timespec){0, 1000000000}, NULL), EINVAL);
	ERR("nanosleep negative", syscall(SYS_nanosleep, &(struct timespec){-1, 0}, NULL), EINVAL);
	VAL("clock_nanosleep relative", clock_nanosleep(CLOCK_MONOTONIC, 0, &nap, NULL), 0);
	clock_gettime(CLOCK_MONOTONIC, &a);
	VAL("clock_nanosleep absolute past", clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &a, NULL), 0);
	VAL("clock_nanosleep bad clock", clock_nanosleep(12345, 0, &nap, NULL), EINVAL);
}

/* Supplementary groups, changed in a child (its cases print there; its exit status says
 * whether any failed): setgroups sorts, getgroups checks the size, fork inherits, only
 * root may set them. */
static void groups_child(void)
{
	gid_t set[3] = {5, 1, 3}, got[4] = {0};
	VAL("setgroups 3", setgroups(3, set), 0);
	VAL("getgroups count", getgroups(0, NULL), 3);
	VAL("getgroups list", getgroups(4, got), 3);
	lt_true("getgroups sorted 1 3 5", got[0] == 1 && got[1] == 3 && got[2] == 5);
	ERR("getgroups list too small", getgroups(2, got), EINVAL);
	ERR("getgroups negative size", getgroups(-1, got), EINVAL);
	ERR("getgroups bad pointer", syscall(SYS_getgroups, 3, LT_BADPTR), EFAULT);
	ERR("setgroups bad pointer", syscall(SYS_setgroups, 2, LT_BADPTR), EFAULT);
	ERR("setgroups above NGROUPS_MAX", syscall(SYS_setgroups, 65537, set), EINVAL);
	pid_t c = fork();
	if (c == 0)
		_exit(getgroups(0, NULL));
	int st = 0;
	waitpid(c, &st, 0);
	VAL("fork inherits groups", WEXITSTATUS(st), 3);
	VAL("setgroups 0", setgroups(0, NULL), 0);
	VAL("getgroups after clearing", getgroups(0, NULL), 0);
	VAL("setuid 1000", setuid(1000), 0);
	ERR("setgroups as non-root", setgroups(1, set), EPERM);
	_exit(lt_failed);
}

static void test_groups(void)
{
	VAL("getgroups at start", getgroups(0, NULL), 0);
	uid_t r = 9, e = 9, s = 9;
	VAL("getresuid", getresuid(&r, &e, &s), 0);
	lt_true("getresuid all 0", r == 0 && e == 0 && s == 0);
	gid_t gr = 9, ge = 9, gs = 9;
	VAL("getresgid", getresgid(&gr, &ge, &gs), 0);
	lt_true("getresgid all 0", gr == 0 && ge == 0 && gs == 0);
	ERR("getresuid bad pointer", syscall(SYS_getresuid, LT_BADPTR, &e, &s), EFAULT);
	pid_t c = fork();
	if (c == 0)
		groups_child();
	int st = 0;
	waitpid(c, &st, 0);
	VAL("groups child cases failed", WEXITSTATUS(st), 0);
}

/* The line of /proc/self/status that starts with label (e.g. "Uid:"), without its
 * newline, or "" when there is none. */
static const char *status_line(const char *label)
{
	static char buf[4096], line[128];
	line[0] = 0;
	FILE *f = fopen("/proc/self/status", "r");
	if (!f)
		return line;
	size_t n = fread(buf, 1, sizeof buf - 1, f);
	fclose(f);
	buf[n] = 0;
	char *at = strstr(buf, label);
	if (at) {
		size_t len = strcspn(at, "\n");
		if (len >= sizeof line)
			len = sizeof line - 1;
		memcpy(line, at, len);
		line[len] = 0;
	}
	return line;
}

static void expect_resuid(const char *name, uid_t r, uid_t e, uid_t s)
{
	uid_t gr = 9, ge = 9, gs = 9;
	syscall(SYS_getresuid, &gr, &ge, &gs);
	lt_true(name, gr == r && ge == e && gs == s);
}

/* Real, effective, saved and fs ids, changed in a child (its cases print there; its exit
 * status says whether any failed): first the group ids as root, then the user ids, ending
 * unprivileged, where only held ids may be taken (credentials(7)). Raw system calls, so
 * no library wrapper adds rules of its own. */
static void credentials_child(void)
{
	gid_t gr = 9, ge = 9, gs = 9;
	VAL("setresgid 10 11 12", syscall(SYS_setresgid, 10, 11, 12), 0);
	syscall(SYS_getresgid, &gr, &ge, &gs);
	lt_true("getresgid 10 11 12", gr == 10 && ge == 11 && gs == 12);
	VAL("setregid -1 13 (saved follows)", syscall(SYS_setregid, -1, 13), 0);
	syscall(SYS_getresgid, &gr, &ge, &gs);
	lt_true("getresgid 10 13 13", gr == 10 && ge == 13 && gs == 13);
	VAL("setfsgid -1 gives the fs gid", syscall(SYS_setfsgid, -1), 13);
	lt_str("status Gid", status_line("Gid:"), "Gid:\t10\t13\t13\t13");
	VAL("setresuid 1000 1001 1002", syscall(SYS_setresuid, 1000, 1001, 1002), 0);
	expect_resuid("getresuid 1000 1001 1002", 1000, 1001, 1002);
	VAL("getuid is the real uid", getuid(), 1000);
	VAL("geteuid is the effective uid", geteuid(), 1001);
	VAL("setfsuid 1002 gives the old fs uid", syscall(SYS_setfsuid, 1002), 1001);
	VAL("setfsuid -1 gives the new fs uid", syscall(SYS_setfsuid, -1), 1002);
	VAL("setfsuid 7 (not held) gives the fs uid", syscall(SYS_setfsuid, 7), 1002);
	VAL("setfsuid -1 after a refused change", syscall(SYS_setfsuid, -1), 1002);
	lt_str("status Uid", status_line("Uid:"), "Uid:\t1000\t1001\t1002\t1002");
	ERR("setresuid to an id not held", syscall(SYS_setresuid, 2000, -1, -1), EPERM);
	ERR("setgid unprivileged to 99", syscall(SYS_setgid, 99), EPERM);
	VAL("setgid unprivileged to the real gid", syscall(SYS_setgid, 10), 0);
	VAL("setuid unprivileged to the real uid", syscall(SYS_setuid, 1000), 0);
	expect_resuid("getresuid 1000 1000 1002", 1000, 1000, 1002);
	ERR("setuid unprivileged to 5", syscall(SYS_setuid, 5), EPERM);
	ERR("setuid -1", syscall(SYS_setuid, -1), EINVAL);
	VAL("setreuid -1 1002 (saved follows)", syscall(SYS_setreuid, -1, 1002), 0);
	expect_resuid("getresuid 1000 1002 1002", 1000, 1002, 1002);
	VAL("setreuid 1002 -1", syscall(SYS_setreuid, 1002, -1), 0);
	expect_resuid("getresuid 1002 1002 1002", 1002, 1002, 1002);
	ERR("setreuid real to 1000, no longer held", syscall(SYS_setreuid, 1000, -1), EPERM);
	VAL("setresuid -1 -1 -1", syscall(SYS_setresuid, -1, -1, -1), 0);
	_exit(lt_failed);
}

/* The fs uid is the one file access checks use (credentials(7)): with fs uid 1000, root
 * may not open its own 0600 file (the fs capabilities go with the fs uid), a new file is
 * owned by 1000, and access(2) still answers for the real uid 0. */
static void fs_uid_child(void)
{
	const char *secret = "/tmp/misc_fsuid_secret", *mine = "/tmp/misc_fsuid_mine";
	int fd = open(secret, O_CREAT | O_WRONLY | O_TRUNC, 0600);
	OK("create a 0600 file as root", fd);
	close(fd);
	VAL("setfsuid 1000 gives the old fs uid", syscall(SYS_setfsuid, 1000), 0);
	ERR("open it with fs uid 1000", open(secret, O_RDONLY), EACCES);
	ERR("open it for writing with fs uid 1000", open(secret, O_WRONLY), EACCES);
	VAL("access R_OK answers for the real uid", access(secret, R_OK), 0);
	fd = open(mine, O_CREAT | O_WRONLY | O_TRUNC, 0600);
	OK("create a file with fs uid 1000", fd);
	struct stat st = {0};
	fstat(fd, &st);
	VAL("its owner is the fs uid", st.st_uid, 1000);
	VAL("its group is the fs gid", st.st_gid, 0);
	close(fd);
	VAL("setfsuid 0 gives the old fs uid", syscall(SYS_setfsuid, 0), 1000);
	fd = open(secret, O_RDONLY);
	OK("open it again with fs uid 0", fd);
	close(fd);
	unlink(secret);
	unlink(mine);
	_exit(lt_failed);
}

static void test_credentials(void)
{
	pid_t f = fork();
	if (f == 0)
		fs_uid_child();
	int fst = 0;
	waitpid(f, &fst, 0);
	VAL("fs uid child cases failed", WEXITSTATUS(fst), 0);
	pid_t c = fork();
	if (c == 0)
		credentials_child();
	int st = 0;
	waitpid(c, &st, 0);
	VAL("credentials child cases failed", WEXITSTATUS(st), 0);
	VAL("the parent keeps uid 0", getuid(), 0);
}

static void test_ids_system(void)
{
	VAL("getuid", getuid(), 0);
	VAL("geteuid", geteuid(), 0);
	VAL("getgid", getgid(), 0);
	VAL("getegid", getegid(), 0);
	struct utsname u;
	VAL("uname", uname(&u), 0);
	lt_str("uname machine", u.machine, "x86_64");
	ERR("uname bad pointer", syscall(SYS_uname, LT_BADPTR), EFAULT);
	struct sysinfo si;
	VAL("sysinfo", sysinfo(&si), 0);
	lt_true("sysinfo totalram > freeram > 0", si.totalram > si.freeram && si.freeram > 0);
	struct rlimit rl;
	VAL("getrlimit NOFILE", getrlimit(RLIMIT_NOFILE, &rl), 0);
	lt_true("soft <= hard", rl.rlim_cur <= rl.rlim_max);
	struct rlimit set = {64, rl.rlim_max}, back;
	VAL("prlimit64 set NOFILE", syscall(SYS_prlimit64, 0, RLIMIT_NOFILE, &set, &back), 0);
	getrlimit(RLIMIT_NOFILE, &back);
	VAL("prlimit64 new soft limit", back.rlim_cur, 64);
	ERR("getrlimit bad resource", getrlimit(999, &rl), EINVAL);
	VAL("sched_yield", sched_yield(), 0);
	cpu_set_t cpus;
	CPU_ZERO(&cpus);
	lt_true("sched_getaffinity", syscall(SYS_sched_getaffinity, 0, sizeof cpus, &cpus) > 0);
	VAL("sched_getaffinity CPU 0", CPU_ISSET(0, &cpus), 1);
	ERR("sched_getaffinity tiny mask", syscall(SYS_sched_getaffinity, 0, 1, &cpus), EINVAL);
	char name[16] = {0};
	VAL("prctl PR_SET_NAME", prctl(PR_SET_NAME, "lt-name-test"), 0);
	VAL("prctl PR_GET_NAME", prctl(PR_GET_NAME, name), 0);
	lt_str("prctl name read back", name, "lt-name-test");
	ERR("prctl bad option", prctl(99999, 0), EINVAL);
	VAL("set_robust_list", syscall(SYS_set_robust_list, NULL, 24), 0);
	ERR("set_robust_list bad length", syscall(SYS_set_robust_list, NULL, 7), EINVAL);
	ERR("reboot bad magic", syscall(SYS_reboot, 1, 2, 3, NULL), EINVAL);
	ERR("unknown system call 1000", syscall(1000), ENOSYS);
	ERR("rseq bad length", syscall(SYS_rseq, NULL, 1, 0, 0), EINVAL);
}

/* sched_setaffinity as Linux orders its checks (the mask read first: EFAULT, then the
 * thread: ESRCH, then an empty or offline mask: EINVAL); a fork inherits the mask, and a
 * thread's own mask is restored at the end. Only CPU 0 is assumed to exist. */
static void test_affinity(void)
{
	cpu_set_t all, one, none, child;
	CPU_ZERO(&one);
	CPU_SET(0, &one);
	CPU_ZERO(&none);
	VAL("sched_getaffinity saved", syscall(SYS_sched_getaffinity, 0, sizeof all, &all) > 0, 1);
	ERR("sched_setaffinity bad mask pointer", syscall(SYS_sched_setaffinity, 0, 8, (void *)8), EFAULT);
	ERR("sched_setaffinity bad pointer before pid", syscall(SYS_sched_setaffinity, -1, 8, (void *)8), EFAULT);
	ERR("sched_setaffinity pid -1", syscall(SYS_sched_setaffinity, -1, sizeof one, &one), ESRCH);
	ERR("sched_setaffinity no such pid", syscall(SYS_sched_setaffinity, 999999, sizeof one, &one), ESRCH);
	ERR("sched_setaffinity empty mask", syscall(SYS_sched_setaffinity, 0, sizeof none, &none), EINVAL);
	ERR("sched_setaffinity length 0", syscall(SYS_sched_setaffinity, 0, 0, &one), EINVAL);
	CPU_SET(63, &none);
	ERR("sched_setaffinity offline CPU only", syscall(SYS_sched_setaffinity, 0, sizeof none, &none), EINVAL);
	VAL("sched_setaffinity CPU 0", syscall(SYS_sched_setaffinity, 0, sizeof one, &one), 0);
	VAL("sched_setaffinity 4-byte mask", syscall(SYS_sched_setaffinity, 0, 4, &one), 0);
	VAL("sched_setaffinity own pid", syscall(SYS_sched_setaffinity, getpid(), sizeof one, &one), 0);
	CPU_ZERO(&child);
	VAL("sched_getaffinity after set", syscall(SYS_sched_getaffinity, 0, sizeof child, &child) > 0, 1);
	VAL("sched_getaffinity just CPU 0", CPU_COUNT(&child) == 1 && CPU_ISSET(0, &child), 1);
	pid_t c = fork();
	if (c == 0) {
		CPU_ZERO(&child);
		syscall(SYS_sched_getaffinity, 0, sizeof child, &child);
		_exit(CPU_COUNT(&child) == 1 && CPU_ISSET(0, &child) ? 7 : 1);
	}
	int status = 0;
	waitpid(c, &status, 0);
	VAL("sched_getaffinity in a fork", WEXITSTATUS(status), 7);
	VAL("sched_setaffinity restored", syscall(SYS_sched_setaffinity, 0, sizeof all, &all), 0);
}

static int futex_word;
static int counter;
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;

static void *add_many(void *arg)
{
	for (int i = 0; i < 1000; i++) {
		pthread_mutex_lock(&lock);
		counter++;
		pthread_mutex_unlock(&lock);
	}
	return arg;
}

static void *wake_later(void *arg)
{
	__atomic_store_n(&futex_word, 1, __ATOMIC_SEQ_CST);
	syscall(SYS_futex, &futex_word, FUTEX_WAKE, 1, NULL, NULL, 0);
	return arg;
}

static void *report_tid(void *arg)
{
	*(long *)arg = syscall(SYS_gettid);
	return NULL;
}

static void test_threads(void)
{
	pthread_t t[4];
	for (int i = 0; i < 4; i++)
		pthread_create(&t[i], NULL, add_many, NULL);
	void *ret = (void *)1;
	for (int i = 0; i < 4; i++)
		pthread_join(t[i], &ret);
	VAL("4 threads x 1000 locked increments", counter, 4000);
	lt_true("thread return value", ret == NULL);
	long tid = 0;
	pthread_create(&t[0], NULL, report_tid, &tid);
	pthread_join(t[0], NULL);
	lt_true("thread has its own tid", tid > 0 && tid != getpid());
	pthread_create(&t[0], NULL, wake_later, NULL);
	while (!__atomic_load_n(&futex_word, __ATOMIC_SEQ_CST))
		syscall(SYS_futex, &futex_word, FUTEX_WAIT, 0, NULL, NULL, 0);
	pthread_join(t[0], NULL);
	VAL("futex wait woken", futex_word, 1);
	ERR("futex wait value differs", syscall(SYS_futex, &futex_word, FUTEX_WAIT, 0, NULL, NULL, 0), EAGAIN);
	ERR("futex wait timeout", syscall(SYS_futex, &futex_word, FUTEX_WAIT, 1, &(struct timespec){0, 1000000}, NULL, 0), ETIMEDOUT);
	VAL("futex wake nobody", syscall(SYS_futex, &futex_word, FUTEX_WAKE, 1, NULL, NULL, 0), 0);
	ERR("futex bad op", syscall(SYS_futex, &futex_word, 99, 0, NULL, NULL, 0), ENOSYS);
	ERR("futex unaligned", syscall(SYS_futex, (char *)&futex_word + 1, FUTEX_WAIT, 0, NULL, NULL, 0), EINVAL);
	lt_true("set_tid_address returns tid", syscall(SYS_set_tid_address, &futex_word) == getpid());
}

/* posix_spawn: glibc's (dyn_misc) makes the child with clone3 (CLONE_VM | CLONE_VFORK |
 * CLONE_CLEAR_SIGHAND, on a stack of its own), musl's (misc) with clone. */
static void test_spawn(void)
{
	extern char **environ;
	char *argv[] = {"sh", "-c", "exit 5", NULL};
	pid_t pid = -1;
	int st = -1;
	VAL("posix_spawn /bin/sh", posix_spawn(&pid, "/bin/sh", NULL, NULL, argv, environ), 0);
	VAL("posix_spawn child's exit status", waitpid(pid, &st, 0) == pid ? WEXITSTATUS(st) : -1, 5);
	int e = posix_spawn(&pid, "/no/such/program", NULL, NULL, argv, environ);
	lt_str("posix_spawn missing program", lt_errname(e), "ENOENT");
	if (e == 0)
		waitpid(pid, &st, 0);
}

int main(void)
{
	test_arch_random();
	test_time();
	test_ids_system();
	test_affinity();
	test_groups();
	test_credentials();
	test_threads();
	test_spawn();
	return lt_done();
}
