/* hello: the smallest check that a static Linux program runs (issue 10): it prints a
 * greeting and its arguments, looks at its auxiliary vector and environment, forks a
 * child that exits 7 and one that dies of SIGSEGV and reads their wait4 statuses, and
 * makes an unknown system call (ENOSYS). `hello segv` instead dies of SIGSEGV itself
 * (tests/test_unix.py checks that the system goes on). */
#include "lt.h"
#include <elf.h>
#include <sys/auxv.h>
#include <sys/syscall.h>
#include <sys/wait.h>

extern char **environ;
extern char _start[];

/* A write to an address below every mapping (a pointer the compiler cannot see through). */
static void crash(void)
{
	volatile int *volatile bad = LT_BADPTR;
	*bad = 1;
}

/* A PT_LOAD among the program headers AT_PHDR points to. */
static int phdrs_have_load(void)
{
	const Elf64_Phdr *ph = (const Elf64_Phdr *)getauxval(AT_PHDR);
	for (unsigned long i = 0; ph && i < getauxval(AT_PHNUM); i++)
		if (ph[i].p_type == PT_LOAD)
			return 1;
	return 0;
}

static int child_status(int crash_it)
{
	pid_t pid = fork();
	if (pid == 0) {
		if (crash_it)
			crash();
		_exit(7);
	}
	int st = -1;
	return pid > 0 && wait4(pid, &st, 0, NULL) == pid ? st : -1;
}

int main(int argc, char **argv)
{
	if (argc > 1 && strcmp(argv[1], "segv") == 0)
		crash();
	lt_str("greeting", "hello, world", "hello, world");
	VAL("argc", argc, 3);
	lt_str("argv[1]", argc > 1 ? argv[1] : "", "one");
	lt_str("argv[2]", argc > 2 ? argv[2] : "", "two");
	lt_true("argv terminated", argv[argc] == NULL);
	lt_true("environ terminated", environ != NULL);
	VAL("AT_PAGESZ", getauxval(AT_PAGESZ), 4096);
	lt_true("AT_ENTRY is _start", getauxval(AT_ENTRY) == (unsigned long)_start);
	lt_true("AT_PHDR has a load", phdrs_have_load());
	lt_true("AT_RANDOM set", getauxval(AT_RANDOM) != 0);
	VAL("AT_UID", getauxval(AT_UID), getuid());
	VAL("AT_EGID", getauxval(AT_EGID), getegid());
	VAL("AT_SECURE", getauxval(AT_SECURE), 0);
	const char *fn = (const char *)getauxval(AT_EXECFN);
	lt_true("AT_EXECFN ends in hello", fn && strlen(fn) >= 5 && !strcmp(fn + strlen(fn) - 5, "hello"));
	int st = child_status(0);
	lt_true("child exit 7", WIFEXITED(st) && WEXITSTATUS(st) == 7);
	st = child_status(1);
	lt_true("child SIGSEGV", WIFSIGNALED(st) && WTERMSIG(st) == SIGSEGV);
	ERR("unknown call", syscall(500), ENOSYS);
	return lt_done();
}
