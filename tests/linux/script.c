/* script: execve of "#!" scripts. Each case writes a script into the current directory
 * and execve's it in a child whose stdout is a pipe; this program is the interpreter
 * (run with LT_SHOW=1 it prints the argv it got, whether /proc/self/cmdline holds exactly
 * those bytes, /proc/self/exe and its name). The case prints what the child wrote, or
 * "-1 ENAME" when execve failed. */
#include "lt.h"
#include <fcntl.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>

static char self[256];

/* Interpreter mode: "argv a|b|c cmdline yes exe /suite/bin/script comm NAME". */
static int show(int argc, char **argv)
{
	char args[1024] = "", cmd[1024], exe[256] = "", comm[17] = "";
	size_t len = 0;
	for (int i = 0; i < argc; i++) {
		strcat(args, i ? "|" : "");
		strcat(args, argv[i]);
		memcpy(cmd + len, argv[i], strlen(argv[i]) + 1);
		len += strlen(argv[i]) + 1;
	}
	char got[1024];
	int fd = open("/proc/self/cmdline", O_RDONLY);
	long n = fd >= 0 ? read(fd, got, sizeof got) : -1;
	readlink("/proc/self/exe", exe, sizeof exe - 1);
	prctl(PR_GET_NAME, comm);
	printf("argv %s cmdline %s exe %s comm %s", args,
	       n == (long)len && !memcmp(got, cmd, len) ? "yes" : "no", exe, comm);
	return 0;
}

static void write_file(const char *name, const char *text, size_t len, int mode)
{
	int fd = open(name, O_WRONLY | O_CREAT | O_TRUNC, mode);
	write(fd, text, len);
	close(fd);
	chmod(name, mode);
}

static void script(const char *name, const char *text)
{
	write_file(name, text, strlen(text), 0755);
}

/* execve(path, {path, extra..., NULL}) in a child; what it printed, or "-1 ENAME". */
static void run(const char *case_name, const char *path, char *extra, const char *want)
{
	int p[2];
	pipe(p);
	pid_t c = fork();
	if (c == 0) {
		char *argv[] = {(char *)path, extra, NULL};
		char *envp[] = {"LT_SHOW=1", NULL};
		dup2(p[1], 1);
		execve(path, argv, envp);
		dprintf(1, "-1 %s", lt_errname(errno));
		_exit(0);
	}
	close(p[1]);
	char out[2048];
	long n = 0, r;
	while (n < (long)sizeof out - 1 && (r = read(p[0], out + n, sizeof out - 1 - n)) > 0)
		n += r;
	out[n - (n > 0 && out[n - 1] == '\n')] = 0;
	close(p[0]);
	waitpid(c, NULL, 0);
	lt_str(case_name, out, want);
}

static void test_argv(void)
{
	script("plain", "#!/suite/bin/script\n");
	run("interpreter, script, rest of argv", "./plain", "x",
	    "argv /suite/bin/script|./plain|x cmdline yes exe /suite/bin/script comm plain");
	script("witharg", "#!  /suite/bin/script   one  two \t \nignored\n");
	run("one argument with spaces inside", "./witharg", "x",
	    "argv /suite/bin/script|one  two|./witharg|x cmdline yes exe /suite/bin/script comm witharg");
	script("tabbed", "#!\t/suite/bin/script\t-a");
	run("tabs, no newline", "./tabbed", NULL,
	    "argv /suite/bin/script|-a|./tabbed cmdline yes exe /suite/bin/script comm tabbed");
	script("sh_script", "#!/bin/sh\necho \"sh ran $0 $1\"\n");
	run("#!/bin/sh runs directly", "./sh_script", "arg", "sh ran ./sh_script arg");
}

/* A chain of n scripts: chain1 runs chain2 ... chainN runs this program. */
static void make_chain(int n)
{
	char name[32], text[64];
	for (int i = 1; i <= n; i++) {
		snprintf(name, sizeof name, "chain%d", i);
		if (i < n)
			snprintf(text, sizeof text, "#!./chain%d\n", i + 1);
		else
			snprintf(text, sizeof text, "#!/suite/bin/script\n");
		script(name, text);
	}
}

static void test_nesting(void)
{
	make_chain(5);
	run("5 scripts deep", "./chain1", NULL,
	    "argv /suite/bin/script|./chain5|./chain4|./chain3|./chain2|./chain1 cmdline yes "
	    "exe /suite/bin/script comm chain1");
	make_chain(6);
	run("6 scripts deep", "./chain1", NULL, "-1 ELOOP");
}

static void test_refusals(void)
{
	script("missing", "#!/no/such/interpreter\n");
	run("missing interpreter", "./missing", NULL, "-1 ENOENT");
	script("noname", "#!   \nrest\n");
	run("no interpreter name", "./noname", NULL, "-1 ENOEXEC");
	char blanks[300] = "#!";
	memset(blanks + 2, ' ', 280);
	write_file("blanks", blanks, 282, 0755);
	run("blanks without newline", "./blanks", NULL, "-1 ENOEXEC");
	char longname[300] = "#!/";
	memset(longname + 3, 'a', 290);
	write_file("longname", longname, 293, 0755);
	run("name cut at 256 bytes", "./longname", NULL, "-1 ENOEXEC");
	write_file("notexec", "data", 4, 0644);
	script("badinterp", "#!./notexec\n");
	run("interpreter not executable", "./badinterp", NULL, "-1 EACCES");
	script("dirinterp", "#!/tmp\n");
	run("interpreter a directory", "./dirinterp", NULL, "-1 EACCES");
}

int main(int argc, char **argv)
{
	if (getenv("LT_SHOW"))
		return show(argc, argv);
	if (readlink("/proc/self/exe", self, sizeof self - 1) < 0)
		strcpy(self, argv[0]);
	lt_str("/proc/self/exe", self, "/suite/bin/script");
	test_argv();
	test_nesting();
	test_refusals();
	return lt_done();
}
