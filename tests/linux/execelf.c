/* execelf: execve each file of the malformed-ELF corpus (/suite/elf, from gen_elf.py)
 * in a child, in name order, and print what happened: "NAME: -1 ENAME" when execve
 * refused it, "NAME: exit N" or "NAME: killed by signal N" when it ran. A line is FAIL
 * when anything else happens: execve failing with an errno outside the documented
 * refusals, or the program ending other than by its own exit or a fault signal. */
#include "lt.h"
#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>

static int acceptable_errno(int e)
{
	return e == ENOEXEC || e == EINVAL || e == ENOENT || e == ENOMEM || e == EIO ||
	       e == EACCES || e == ELIBBAD || e == EFAULT || e == E2BIG;
}

static int fault_signal(int sig)
{
	return sig == SIGSEGV || sig == SIGBUS || sig == SIGILL || sig == SIGFPE || sig == SIGKILL;
}

static int by_name(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static void try_one(const char *dir, const char *name)
{
	char path[512], got[64] = "";
	int p[2], err = 0, st = 0;
	snprintf(path, sizeof path, "%s/%s", dir, name);
	pipe2(p, O_CLOEXEC);
	pid_t c = fork();
	if (c == 0) {
		char *argv[] = {path, NULL}, *envp[] = {NULL};
		execve(path, argv, envp);
		err = errno;
		write(p[1], &err, sizeof err);
		_exit(127);
	}
	close(p[1]);
	long n = read(p[0], &err, sizeof err);
	close(p[0]);
	waitpid(c, &st, 0);
	int fine;
	if (n == sizeof err) {
		snprintf(got, sizeof got, "-1 %s", lt_errname(err));
		fine = acceptable_errno(err);
	} else if (WIFEXITED(st)) {
		snprintf(got, sizeof got, "exit %d", WEXITSTATUS(st));
		fine = 1;
	} else {
		snprintf(got, sizeof got, "killed by signal %d", WTERMSIG(st));
		fine = fault_signal(WTERMSIG(st));
	}
	lt_line(name, got, fine ? got : "a refusal or a fault");
}

int main(int argc, char **argv)
{
	const char *dir = argc > 1 ? argv[1] : "/suite/elf";
	char *names[128];
	int n = 0;
	DIR *d = opendir(dir);
	struct dirent *e;
	while (d && (e = readdir(d)) && n < 128)
		if (e->d_name[0] != '.')
			names[n++] = strdup(e->d_name);
	if (d)
		closedir(d);
	qsort(names, n, sizeof names[0], by_name);
	for (int i = 0; i < n; i++)
		try_one(dir, names[i]);
	VAL("files tried", n, 31);
	return lt_done();
}
