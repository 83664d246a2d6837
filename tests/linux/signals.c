/* signals: kill, tgkill, rt_sigaction, rt_sigprocmask, rt_sigreturn (by returning from
 * handlers), sigaltstack, rt_sigsuspend, pending sets, default actions, SIGCHLD, SIGPIPE,
 * SIGALRM from alarm and setitimer, faults delivered to handlers (SIGSEGV, SIGFPE,
 * SIGILL, SIGBUS), EINTR and SA_RESTART. Signal numbers are printed as numbers (the
 * Linux x86-64 ABI fixes them). */
#include "lt.h"
#include <fcntl.h>
#include <setjmp.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <time.h>

/* An address no process has mapped, hidden from the compiler's bounds checks. */
static volatile unsigned long unmapped_address = 8;

static volatile sig_atomic_t got_signal, on_altstack;
static sigjmp_buf fault_jump;
static char altstack[16384];

static void note(int sig) { got_signal = sig; }

static void note_stack(int sig)
{
	char here;
	got_signal = sig;
	on_altstack = &here >= altstack && &here < altstack + sizeof altstack;
}

static void escape(int sig)
{
	siglongjmp(fault_jump, sig);
}

static void handle(int sig, void (*fn)(int), int flags)
{
	struct sigaction sa;
	memset(&sa, 0, sizeof sa);
	sa.sa_handler = fn;
	sa.sa_flags = flags;
	sigaction(sig, &sa, NULL);
}

/* Status of a child that sends itself SIG with the default action in place. */
static int default_action_status(int sig)
{
	pid_t c = fork();
	if (c == 0) {
		signal(sig, SIG_DFL);
		raise(sig);
		_exit(0);
	}
	int st;
	waitpid(c, &st, 0);
	return st;
}

static void test_delivery(void)
{
	handle(SIGUSR1, note, 0);
	got_signal = 0;
	VAL("kill self", kill(getpid(), SIGUSR1), 0);
	VAL("handler ran", got_signal, SIGUSR1);
	got_signal = 0;
	VAL("tgkill self", syscall(SYS_tgkill, getpid(), syscall(SYS_gettid), SIGUSR1), 0);
	VAL("tgkill handler ran", got_signal, SIGUSR1);
	VAL("kill signal 0 probes", kill(getpid(), 0), 0);
	ERR("kill bad signal", kill(getpid(), 65), EINVAL);
	ERR("kill missing process", kill(999999, SIGUSR1), ESRCH);
	ERR("tgkill wrong tgid", syscall(SYS_tgkill, 999999, syscall(SYS_gettid), SIGUSR1), ESRCH);
	ERR("tgkill bad tid", syscall(SYS_tgkill, getpid(), 0, SIGUSR1), EINVAL);
	ERR("sigaction SIGKILL", sigaction(SIGKILL, &(struct sigaction){.sa_handler = note}, NULL), EINVAL);
	ERR("sigaction SIGSTOP", sigaction(SIGSTOP, &(struct sigaction){.sa_handler = note}, NULL), EINVAL);
	ERR("sigaction signal 0", sigaction(0, NULL, NULL), EINVAL);
	ERR("rt_sigaction bad sigsetsize", syscall(SYS_rt_sigaction, SIGUSR1, NULL, NULL, 4), EINVAL);
	struct sigaction old;
	sigaction(SIGUSR1, NULL, &old);
	lt_true("sigaction reads back handler", old.sa_handler == note);
}

static void test_masks(void)
{
	sigset_t set, old, pend;
	sigemptyset(&set);
	sigaddset(&set, SIGUSR2);
	handle(SIGUSR2, note, 0);
	VAL("sigprocmask block", sigprocmask(SIG_BLOCK, &set, &old), 0);
	got_signal = 0;
	kill(getpid(), SIGUSR2);
	VAL("blocked signal not delivered", got_signal, 0);
	sigpending(&pend);
	VAL("blocked signal pending", sigismember(&pend, SIGUSR2), 1);
	sigprocmask(SIG_SETMASK, &old, NULL);
	VAL("unblock delivers", got_signal, SIGUSR2);
	sigpending(&pend);
	VAL("pending cleared", sigismember(&pend, SIGUSR2), 0);
	ERR("sigprocmask bad how", syscall(SYS_rt_sigprocmask, 99, &set, NULL, 8), EINVAL);
	sigemptyset(&set);
	sigaddset(&set, SIGKILL);
	sigprocmask(SIG_BLOCK, &set, NULL);
	sigprocmask(SIG_BLOCK, NULL, &old);
	VAL("SIGKILL cannot be blocked", sigismember(&old, SIGKILL), 0);
	sigemptyset(&set);
	sigaddset(&set, SIGUSR2);
	sigprocmask(SIG_BLOCK, &set, NULL);
	got_signal = 0;
	kill(getpid(), SIGUSR2);
	sigemptyset(&set);
	ERR("sigsuspend returns EINTR", sigsuspend(&set), EINTR);
	VAL("sigsuspend handler ran", got_signal, SIGUSR2);
	sigprocmask(SIG_UNBLOCK, &(sigset_t){0}, NULL);
	sigemptyset(&set);
	sigprocmask(SIG_SETMASK, &set, NULL);
}

static void test_altstack(void)
{
	stack_t ss = {.ss_sp = altstack, .ss_size = sizeof altstack, .ss_flags = 0};
	VAL("sigaltstack", sigaltstack(&ss, NULL), 0);
	handle(SIGUSR1, note_stack, SA_ONSTACK);
	kill(getpid(), SIGUSR1);
	VAL("handler on alternate stack", on_altstack, 1);
	stack_t small = {.ss_sp = altstack, .ss_size = 16, .ss_flags = 0};
	ERR("sigaltstack too small", sigaltstack(&small, NULL), ENOMEM);
	stack_t bad = {.ss_sp = altstack, .ss_size = sizeof altstack, .ss_flags = 0x77};
	ERR("sigaltstack bad flags", sigaltstack(&bad, NULL), EINVAL);
	stack_t off = {.ss_flags = SS_DISABLE};
	sigaltstack(&off, NULL);
}

static void test_defaults(void)
{
	int st = default_action_status(SIGTERM);
	lt_true("SIGTERM default terminates", WIFSIGNALED(st) && WTERMSIG(st) == SIGTERM);
	st = default_action_status(SIGQUIT);
	lt_true("SIGQUIT default terminates (core)", WIFSIGNALED(st) && WTERMSIG(st) == SIGQUIT);
	st = default_action_status(SIGCHLD);
	lt_true("SIGCHLD default ignored", WIFEXITED(st) && WEXITSTATUS(st) == 0);
	st = default_action_status(SIGURG);
	lt_true("SIGURG default ignored", WIFEXITED(st));
	/* The continued child waits on a pipe until the parent has seen WCONTINUED: had it
	 * exited first, waitpid would report the exit instead (on Linux too), and whether
	 * it does would depend on where a timer tick falls. */
	int gate[2];
	pipe(gate);
	pid_t c = fork();
	if (c == 0) {
		char b;
		close(gate[1]);
		raise(SIGSTOP);
		read(gate[0], &b, 1);
		_exit(4);
	}
	close(gate[0]);
	waitpid(c, &st, WUNTRACED);
	lt_true("SIGSTOP stops (WUNTRACED)", WIFSTOPPED(st) && WSTOPSIG(st) == SIGSTOP);
	kill(c, SIGCONT);
	waitpid(c, &st, WCONTINUED);
	lt_true("SIGCONT continues (WCONTINUED)", WIFCONTINUED(st));
	write(gate[1], "x", 1);
	close(gate[1]);
	waitpid(c, &st, 0);
	VAL("continued child exits", WEXITSTATUS(st), 4);
}

static void test_sigchld_sigpipe(void)
{
	handle(SIGCHLD, note, 0);
	got_signal = 0;
	pid_t c = fork();
	if (c == 0)
		_exit(0);
	waitpid(c, NULL, 0);
	VAL("SIGCHLD on child exit", got_signal, SIGCHLD);
	signal(SIGCHLD, SIG_DFL);
	handle(SIGPIPE, note, 0);
	int p[2];
	pipe(p);
	close(p[0]);
	got_signal = 0;
	ERR("write without readers", write(p[1], "x", 1), EPIPE);
	VAL("SIGPIPE delivered", got_signal, SIGPIPE);
	close(p[1]);
	c = fork();
	if (c == 0) {
		signal(SIGPIPE, SIG_DFL);
		pipe(p);
		close(p[0]);
		write(p[1], "x", 1);
		_exit(0);
	}
	int st;
	waitpid(c, &st, 0);
	lt_true("SIGPIPE default terminates", WIFSIGNALED(st) && WTERMSIG(st) == SIGPIPE);
}

static void test_timers_eintr(void)
{
	int p[2];
	char b;
	pipe(p);
	handle(SIGALRM, note, 0);
	got_signal = 0;
	alarm(1);
	ERR("read interrupted by alarm", read(p[0], &b, 1), EINTR);
	VAL("SIGALRM from alarm", got_signal, SIGALRM);
	VAL("alarm cancel returns 0 left", alarm(0), 0);
	struct itimerval it = {{0, 0}, {0, 20000}};
	got_signal = 0;
	VAL("setitimer", setitimer(ITIMER_REAL, &it, NULL), 0);
	pause();
	VAL("SIGALRM from setitimer", got_signal, SIGALRM);
	ERR("setitimer bad which", setitimer(99, &it, NULL), EINVAL);
	pid_t c = fork();
	if (c == 0) {
		usleep(20000);
		write(p[1], "r", 1);
		_exit(0);
	}
	handle(SIGALRM, note, SA_RESTART);
	setitimer(ITIMER_REAL, &(struct itimerval){{0, 0}, {0, 5000}}, NULL);
	VAL("read restarted by SA_RESTART", read(p[0], &b, 1), 1);
	waitpid(c, NULL, 0);
	handle(SIGALRM, note, 0);
	/* A periodic timer: should its first expiry come before nanosleep has begun (a busy
	 * host), the next one still ends the sleep. */
	struct timespec t = {5, 0};
	setitimer(ITIMER_REAL, &(struct itimerval){{0, 20000}, {0, 5000}}, NULL);
	ERR("nanosleep interrupted", nanosleep(&t, NULL), EINTR);
	setitimer(ITIMER_REAL, &(struct itimerval){{0, 0}, {0, 0}}, NULL);
	close(p[0]);
	close(p[1]);
}

static void test_faults(void)
{
	struct { int sig; const char *name; } want[] = {
		{SIGSEGV, "SIGSEGV handler for null write"}, {SIGFPE, "SIGFPE handler for divide by zero"},
		{SIGILL, "SIGILL handler for ud2"}, {SIGBUS, "SIGBUS handler for mapping past EOF"},
	};
	for (int i = 0; i < 4; i++)
		handle(want[i].sig, escape, SA_NODEFER);
	int fd = open("short", O_RDWR | O_CREAT | O_TRUNC, 0644);
	write(fd, "x", 1);
	char *map = mmap(NULL, 8192, PROT_READ, MAP_SHARED, fd, 0);
	for (int i = 0; i < 4; i++) {
		int sig = sigsetjmp(fault_jump, 1);
		if (sig == 0) {
			volatile char sink;
			if (i == 0)
				*(volatile int *)unmapped_address = 1;
			else if (i == 1)
				__asm__ volatile("xorl %%ecx, %%ecx; cltd; idivl %%ecx" ::: "eax", "ecx", "edx");
			else if (i == 2)
				__asm__ volatile("ud2");
			else
				sink = map[4096];
			(void)sink;
			sig = -1;
		}
		VAL(want[i].name, sig, want[i].sig);
	}
	pid_t c = fork();
	if (c == 0) {
		signal(SIGSEGV, SIG_DFL);
		*(volatile int *)unmapped_address = 1;
		_exit(0);
	}
	int st;
	waitpid(c, &st, 0);
	lt_true("SIGSEGV without handler kills", WIFSIGNALED(st) && WTERMSIG(st) == SIGSEGV);
	close(fd);
}

int main(void)
{
	test_delivery();
	test_masks();
	test_altstack();
	test_defaults();
	test_sigchld_sigpipe();
	test_timers_eintr();
	test_faults();
	return lt_done();
}
