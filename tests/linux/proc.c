/* proc: getpid, getppid, gettid, fork, vfork, clone (fork-style, CLONE_SIGHAND and the
 * tid words for a process), clone3 (fork-style, its argument checks, CLONE_CLEAR_SIGHAND),
 * execve, exit,
 * exit_group, wait4, waitid, WNOHANG, ECHILD, process groups and sessions, orphans,
 * process limits. Pids are never printed: only relations between them. execve runs this
 * program again (argv[0], found through /proc/self/exe) with "child-exec" arguments. */
#include "lt.h"
#include <fcntl.h>
#include <poll.h>
#include <elf.h>
#include <sched.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/auxv.h>
#include <sys/syscall.h>
#include <sys/wait.h>

/* The child half of the execve cases: report argv/envp, then exit 7. */
static int exec_child(int argc, char **argv)
{
	const char *e = getenv("LT_ENV");
	printf("exec argc %d argv[2] %s env %s\n", argc, argv[2], e ? e : "(none)");
	printf("exec fd 3 cloexec closed: %s\n", fcntl(3, F_GETFD) == -1 ? "yes" : "no");
	fflush(stdout);
	return 7;
}

/* Fork a child that runs FN and exit with its value; return the wait status. */
static int run_child(int (*fn)(void))
{
	int st = -1;
	pid_t pid = fork();
	if (pid == 0)
		_exit(fn());
	waitpid(pid, &st, 0);
	return st;
}

static int ret_42(void) { return 42; }
static int exit_group_3(void) { syscall(SYS_exit_group, 3); return 0; }
static int die_by_abort(void) { signal(SIGABRT, SIG_DFL); abort(); }

static void test_ids(void)
{
	pid_t me = getpid();
	lt_true("getpid positive", me > 0);
	lt_true("gettid equals getpid in main thread", syscall(SYS_gettid) == me);
	int p[2];
	pipe(p);
	pid_t child = fork();
	if (child == 0) {
		char ok = getppid() == me ? 'y' : 'n';
		write(p[1], &ok, 1);
		_exit(0);
	}
	char got = '?';
	read(p[0], &got, 1);
	lt_true("child getppid is parent", got == 'y');
	lt_true("fork returns child pid", child > 0 && child != me);
	int st;
	lt_true("wait4 returns the child", wait4(child, &st, 0, NULL) == child);
	close(p[0]);
	close(p[1]);
}

static void test_wait(void)
{
	int st = run_child(ret_42);
	lt_true("WIFEXITED", WIFEXITED(st));
	VAL("WEXITSTATUS", WEXITSTATUS(st), 42);
	st = run_child(exit_group_3);
	VAL("exit_group status", WEXITSTATUS(st), 3);
	st = run_child(die_by_abort);
	lt_true("WIFSIGNALED after abort", WIFSIGNALED(st));
	VAL("WTERMSIG after abort", WTERMSIG(st), SIGABRT);
	ERR("wait4 no children", wait4(-1, &st, 0, NULL), ECHILD);
	ERR("wait4 WNOHANG no children", wait4(-1, &st, WNOHANG, NULL), ECHILD);
	int p[2];
	pipe(p);
	pid_t c = fork();
	if (c == 0) {
		char b;
		read(p[0], &b, 1);
		_exit(5);
	}
	VAL("wait4 WNOHANG running child", wait4(c, &st, WNOHANG, NULL), 0);
	write(p[1], "x", 1);
	siginfo_t si;
	memset(&si, 0, sizeof si);
	VAL("waitid WEXITED", waitid(P_PID, c, &si, WEXITED), 0);
	VAL("waitid si_code", si.si_code, CLD_EXITED);
	VAL("waitid si_status", si.si_status, 5);
	lt_true("waitid si_pid", si.si_pid == c);
	ERR("waitid bad options", waitid(P_ALL, 0, &si, 0), EINVAL);
	ERR("wait4 bad options", wait4(-1, &st, 0x1000, NULL), EINVAL);
	ERR("wait4 non-child pid", wait4(1, &st, 0, NULL), ECHILD);
	close(p[0]);
	close(p[1]);
}

static void test_fork_memory(void)
{
	static volatile int shared_var = 1;
	pid_t c = fork();
	if (c == 0) {
		shared_var = 2;
		_exit(shared_var);
	}
	int st;
	waitpid(c, &st, 0);
	VAL("fork child wrote its copy", WEXITSTATUS(st), 2);
	VAL("fork parent copy unchanged", shared_var, 1);
	volatile int borrowed = 1;
	c = vfork();
	if (c == 0) {
		borrowed = 9;
		_exit(0);
	}
	waitpid(c, &st, 0);
	VAL("vfork shares memory until exit", borrowed, 9);
	borrowed = 1;
	c = vfork();
	if (c == 0) {
		for (int i = 0; i < 200; i++)
			sched_yield();
		borrowed = 2;
		_exit(0);
	}
	VAL("vfork parent resumes after the child's exit", borrowed, 2);
	waitpid(c, &st, 0);
	c = syscall(SYS_clone, SIGCHLD, 0, 0, 0, 0);
	if (c == 0)
		_exit(11);
	waitpid(c, &st, 0);
	VAL("clone fork-style exit status", WEXITSTATUS(st), 11);
	ERR("clone CLONE_THREAD without CLONE_SIGHAND", syscall(SYS_clone, CLONE_THREAD, 0, 0, 0, 0), EINVAL);
}

static char clone_stack[64 * 1024] __attribute__((aligned(16)));
static volatile int clone_shared;

static int clone_vm_child(void *arg)
{
	clone_shared = (int)(long)arg;
	return 4;
}

/* vfork's parent goes on once the child execs (the new program then waits up to 5 s
 * for the parent's byte: "released" shows the parent ran while it lived); CLONE_VM
 * without CLONE_VFORK is a second process in the same memory. */
static void test_vfork_exec(const char *self)
{
	int p[2], st;
	pipe(p);
	pid_t c = vfork();
	if (c == 0) {
		char *argv[] = {(char *)self, "vfork-exec", NULL};
		dup2(p[0], 5);
		execve(self, argv, (char *[]){NULL});
		_exit(99);
	}
	write(p[1], "r", 1);
	waitpid(c, &st, 0);
	VAL("vfork parent resumes at the child's exec", WEXITSTATUS(st), 0);
	close(p[0]);
	close(p[1]);
	c = clone(clone_vm_child, clone_stack + sizeof clone_stack, CLONE_VM | SIGCHLD, (void *)6);
	waitpid(c, &st, 0);
	VAL("clone CLONE_VM child exit status", WEXITSTATUS(st), 4);
	VAL("clone CLONE_VM shares memory", clone_shared, 6);
}

static volatile int sighand_caught;
static pid_t clone_tids[2];             /* CLONE_PARENT_SETTID's word, CLONE_CHILD_SETTID's */

static void on_usr1(int sig)
{
	(void)sig;
	sighand_caught = 1;
}

/* Installs a SIGUSR1 handler (the parent's too under CLONE_SIGHAND); 5 when
 * CLONE_CHILD_SETTID wrote its pid before it ran. */
static int clone_flags_child(void *arg)
{
	(void)arg;
	signal(SIGUSR1, on_usr1);
	return clone_tids[1] == getpid() ? 5 : 6;
}

/* clone of a process (not a thread) with CLONE_SIGHAND and the tid words: the handler
 * table is shared; the parent's word gets the pid, the child's too, and the child's is
 * cleared when it exits (the memory is shared, so the parent sees it). */
static void test_clone_flags(void)
{
	int st;
	struct sigaction old;
	signal(SIGUSR1, SIG_DFL);
	pid_t c = clone(clone_flags_child, clone_stack + sizeof clone_stack,
			CLONE_VM | CLONE_SIGHAND | CLONE_PARENT_SETTID | CLONE_CHILD_SETTID |
			CLONE_CHILD_CLEARTID | SIGCHLD, NULL, &clone_tids[0], NULL, &clone_tids[1]);
	waitpid(c, &st, 0);
	VAL("clone CLONE_CHILD_SETTID child saw its pid", WEXITSTATUS(st), 5);
	VAL("clone CLONE_PARENT_SETTID word is the pid", clone_tids[0] == c, 1);
	VAL("clone CLONE_CHILD_CLEARTID word cleared at exit", clone_tids[1], 0);
	sigaction(SIGUSR1, NULL, &old);
	VAL("clone CLONE_SIGHAND child's handler is the parent's", old.sa_handler == on_usr1, 1);
	raise(SIGUSR1);
	VAL("clone CLONE_SIGHAND handler runs in the parent", sighand_caught, 1);
	signal(SIGUSR1, SIG_DFL);
	c = clone(clone_flags_child, clone_stack + sizeof clone_stack, CLONE_VM | SIGCHLD, NULL);
	waitpid(c, &st, 0);
	sigaction(SIGUSR1, NULL, &old);
	VAL("clone without CLONE_SIGHAND keeps its own table", old.sa_handler == SIG_DFL, 1);
}

static int vfork_exec_child(void)
{
	struct pollfd pfd = {.fd = 5, .events = POLLIN};
	char b = 0;
	return poll(&pfd, 1, 5000) == 1 && read(5, &b, 1) == 1 && b == 'r' ? 0 : 1;
}

static void test_exec(const char *self)
{
	int st;
	int fd = open("/dev/null", O_RDONLY | O_CLOEXEC);
	if (fd != 3)
		dup2(fd, 3), fcntl(3, F_SETFD, FD_CLOEXEC);
	pid_t c = fork();
	if (c == 0) {
		char *argv[] = {(char *)self, "child-exec", "two", NULL};
		char *envp[] = {"LT_ENV=seen", NULL};
		execve(self, argv, envp);
		_exit(99);
	}
	waitpid(c, &st, 0);
	VAL("execve child exit status", WEXITSTATUS(st), 7);
	char *none[] = {"x", NULL};
	ERR("execve missing", execve("/nonexistent", none, none), ENOENT);
	ERR("execve directory", execve("/", none, none), EACCES);
	ERR("execve bad path pointer", execve(LT_BADPTR, none, none), EFAULT);
	int f = open("notexec", O_WRONLY | O_CREAT | O_TRUNC, 0644);
	write(f, "data", 4);
	close(f);
	ERR("execve without x permission", execve("notexec", none, none), EACCES);
	chmod("notexec", 0755);
	ERR("execve not an executable", execve("notexec", none, none), ENOEXEC);
	close(3);
}

static void test_groups(void)
{
	pid_t c = fork();
	if (c == 0) {
		pid_t me = getpid();
		int ok = setpgid(0, 0) == 0 && getpgid(0) == me && getpgrp() == me;
		ok = ok && setsid() == -1 && errno == EPERM;
		_exit(ok ? 0 : 1);
	}
	int st;
	waitpid(c, &st, 0);
	VAL("setpgid/getpgid own group, setsid as leader EPERM", WEXITSTATUS(st), 0);
	c = fork();
	if (c == 0) {
		pid_t sid = setsid();
		int ok = sid == getpid() && getsid(0) == sid && getpgid(0) == sid;
		_exit(ok ? 0 : 1);
	}
	waitpid(c, &st, 0);
	VAL("setsid new session", WEXITSTATUS(st), 0);
	ERR("setpgid negative pgid", setpgid(0, -1), EINVAL);
	ERR("getpgid missing process", getpgid(999999), ESRCH);
	ERR("getsid missing process", getsid(999999), ESRCH);
}

static void test_orphan(void)
{
	int go[2], answer[2];
	pipe(go);
	pipe(answer);
	pid_t c = fork();
	if (c == 0) {
		if (fork() == 0) {
			char b;
			read(go[0], &b, 1); /* the parent has been reaped by now */
			char ok = getppid() == 1 ? 'y' : 'n';
			write(answer[1], &ok, 1);
			_exit(0);
		}
		_exit(0);
	}
	waitpid(c, NULL, 0);
	write(go[1], "g", 1);
	char got = '?';
	read(answer[0], &got, 1);
	lt_true("orphan adopted by init", got == 'y');
	close(go[0]);
	close(go[1]);
	close(answer[0]);
	close(answer[1]);
}

/* The auxiliary vector execve gave this program, checked against its own ELF file. */
static void test_auxv(const char *self)
{
	Elf64_Ehdr eh;
	Elf64_Phdr ph[16];
	int fd = open(self, O_RDONLY);
	int ok = read(fd, &eh, sizeof eh) == sizeof eh && eh.e_phnum <= 16 &&
		 pread(fd, ph, eh.e_phnum * sizeof ph[0], eh.e_phoff) == (long)(eh.e_phnum * sizeof ph[0]);
	close(fd);
	lt_true("own ELF headers readable", ok);
	VAL("AT_PAGESZ", getauxval(AT_PAGESZ), 4096);
	VAL("AT_UID", getauxval(AT_UID), 0);
	VAL("AT_EUID", getauxval(AT_EUID), 0);
	VAL("AT_GID", getauxval(AT_GID), 0);
	VAL("AT_PHENT", getauxval(AT_PHENT), sizeof(Elf64_Phdr));
	lt_true("AT_ENTRY is e_entry", getauxval(AT_ENTRY) == eh.e_entry);
	lt_true("AT_PHNUM is e_phnum", getauxval(AT_PHNUM) == eh.e_phnum);
	lt_true("AT_PHDR shows the program headers",
		ok && getauxval(AT_PHDR) && !memcmp((void *)getauxval(AT_PHDR), ph, eh.e_phnum * sizeof ph[0]));
	lt_true("AT_RANDOM points at 16 bytes", getauxval(AT_RANDOM) != 0);
	const char *fn = (const char *)getauxval(AT_EXECFN);
	lt_true("AT_EXECFN is the executed path", fn && !strcmp(fn, self));
}

/* A non-root child limited to 4 processes forks until fork fails; it reports whether
 * the failure was EAGAIN, then kills its own process group. */
static void test_limits(void)
{
	int p[2];
	pipe(p);
	pid_t c = fork();
	if (c == 0) {
		struct rlimit rl = {4, 4};
		setpgid(0, 0);
		setrlimit(RLIMIT_NPROC, &rl);
		if (setuid(1000) != 0) /* root ignores RLIMIT_NPROC */
			_exit(2);
		char verdict = 'n';
		for (int i = 0; i < 10; i++) {
			pid_t g = fork();
			if (g == 0) {
				pause();
				_exit(0);
			}
			if (g < 0) {
				verdict = errno == EAGAIN ? 'y' : 'e';
				break;
			}
		}
		write(p[1], &verdict, 1);
		kill(0, SIGKILL);
		_exit(0);
	}
	char got = '?';
	read(p[0], &got, 1);
	waitpid(c, NULL, 0);
	lt_true("RLIMIT_NPROC stops fork with EAGAIN", got == 'y');
	ERR("setrlimit soft above hard", setrlimit(RLIMIT_NOFILE, &(struct rlimit){10, 5}), EINVAL);
	close(p[0]);
	close(p[1]);
}

/* clone3's struct clone_args (Linux 6.1: 88 bytes); musl has no wrapper. */
#ifndef SYS_clone3
#define SYS_clone3 435
#endif
#define LT_CLONE_CLEAR_SIGHAND 0x100000000ull
struct lt_clone_args {
	unsigned long long flags, pidfd, child_tid, parent_tid, exit_signal, stack, stack_size,
		tls, set_tid, set_tid_size, cgroup;
};

static long clone3(const void *args, size_t size)
{
	return syscall(SYS_clone3, args, size);
}

/* clone3 of a process without CLONE_VM or a stack: the child returns 0 on a copy of the
 * parent's memory, as fork's does, so plain C can take both halves. */
static int clone3_status(const void *args, size_t size, int code)
{
	int st = -1;
	pid_t c = (pid_t)clone3(args, size);
	if (c == 0)
		_exit(code);
	if (c < 0 || waitpid(c, &st, 0) != c)
		return -1;
	return WEXITSTATUS(st);
}

static void clone3_refuses(const char *name, struct lt_clone_args a, int want)
{
	ERR(name, clone3(&a, sizeof a), want);
}

/* The child's dispositions after CLONE_CLEAR_SIGHAND: 1 = SIGUSR1 (caught by the parent)
 * is default, 2 = SIGUSR2 (ignored by the parent) still ignored. */
static int clear_sighand_child(void)
{
	struct sigaction one, two;
	sigaction(SIGUSR1, NULL, &one);
	sigaction(SIGUSR2, NULL, &two);
	return (one.sa_handler == SIG_DFL) + 2 * (two.sa_handler == SIG_IGN);
}

static void test_clone3(void)
{
	struct lt_clone_args a = {.exit_signal = SIGCHLD};
	VAL("clone3 fork-style exit status", clone3_status(&a, sizeof a, 12), 12);
	VAL("clone3 64-byte struct (no set_tid)", clone3_status(&a, 64, 13), 13);
	struct { struct lt_clone_args a; unsigned long long more[3]; } big = {.a = a};
	VAL("clone3 larger struct, zero tail", clone3_status(&big, sizeof big, 14), 14);
	big.more[2] = 1;
	ERR("clone3 larger struct, non-zero tail", clone3(&big, sizeof big), E2BIG);
	ERR("clone3 size below 64", clone3(&a, 56), EINVAL);
	ERR("clone3 size above a page", clone3(&a, 4097), E2BIG);
	ERR("clone3 bad pointer", clone3(LT_BADPTR, sizeof a), EFAULT);
	clone3_refuses("clone3 exit_signal 65", (struct lt_clone_args){.exit_signal = 65}, EINVAL);
	clone3_refuses("clone3 a signal in flags", (struct lt_clone_args){.flags = SIGCHLD}, EINVAL);
	clone3_refuses("clone3 unknown flag", (struct lt_clone_args){.flags = 1ull << 40}, EINVAL);
	clone3_refuses("clone3 CLONE_THREAD with exit_signal", (struct lt_clone_args){
		.flags = CLONE_THREAD | CLONE_SIGHAND | CLONE_VM, .exit_signal = SIGCHLD}, EINVAL);
	clone3_refuses("clone3 CLONE_THREAD without CLONE_SIGHAND",
		       (struct lt_clone_args){.flags = CLONE_THREAD}, EINVAL);
	clone3_refuses("clone3 CLONE_SIGHAND with CLONE_CLEAR_SIGHAND", (struct lt_clone_args){
		.flags = CLONE_SIGHAND | CLONE_VM | LT_CLONE_CLEAR_SIGHAND}, EINVAL);
	clone3_refuses("clone3 stack without a size", (struct lt_clone_args){
		.stack = (unsigned long long)(uintptr_t)clone_stack, .exit_signal = SIGCHLD}, EINVAL);
	clone3_refuses("clone3 stack size without a stack",
		       (struct lt_clone_args){.stack_size = 4096, .exit_signal = SIGCHLD}, EINVAL);
	clone3_refuses("clone3 set_tid_size without set_tid",
		       (struct lt_clone_args){.set_tid_size = 1, .exit_signal = SIGCHLD}, EINVAL);
	signal(SIGUSR1, on_usr1);
	signal(SIGUSR2, SIG_IGN);
	struct lt_clone_args clear = {.flags = LT_CLONE_CLEAR_SIGHAND, .exit_signal = SIGCHLD};
	pid_t c = (pid_t)clone3(&clear, sizeof clear);
	if (c == 0)
		_exit(clear_sighand_child());
	int st = -1;
	waitpid(c, &st, 0);
	VAL("clone3 CLONE_CLEAR_SIGHAND: caught to default, ignored kept", WEXITSTATUS(st), 3);
	struct sigaction now;
	sigaction(SIGUSR1, NULL, &now);
	lt_true("clone3 CLONE_CLEAR_SIGHAND leaves the parent's", now.sa_handler == on_usr1);
	signal(SIGUSR1, SIG_DFL);
	signal(SIGUSR2, SIG_DFL);
}

int main(int argc, char **argv)
{
	if (argc > 1 && !strcmp(argv[1], "child-exec"))
		return exec_child(argc, argv);
	if (argc > 1 && !strcmp(argv[1], "vfork-exec"))
		return vfork_exec_child();
	char self[256] = {0};
	if (readlink("/proc/self/exe", self, sizeof self - 1) < 0)
		strcpy(self, argv[0]);
	test_ids();
	test_auxv(self);
	test_wait();
	test_fork_memory();
	test_exec(self);
	test_vfork_exec(self);
	test_clone_flags();
	test_clone3();
	test_groups();
	test_orphan();
	test_limits();
	return lt_done();
}
