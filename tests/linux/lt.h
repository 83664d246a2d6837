/* lt.h - case printer shared by the differential suite's C programs.
 *
 * Every case prints exactly one line, "NAME: OBSERVED", where OBSERVED is what the call
 * returned as text: a value that is the same on every system ("5", "ok"), or "-1 ENAME"
 * for a failure. Nothing that varies between systems or runs (pids, addresses, times,
 * inode numbers) is printed: a case compares such values and prints the relation.
 * When OBSERVED differs from what POSIX/Linux documents the line starts with "FAIL ",
 * which validates the suite itself on Linux. lt_done() prints the totals and gives the
 * exit status (0 when no case failed). Header-only so each program is one file.
 */
#ifndef LT_H
#define LT_H
#define _GNU_SOURCE
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static int lt_cases, lt_failed;

/* The symbolic name of an errno value; the suite only prints names, never numbers. */
static inline const char *lt_errname(int e)
{
	static const struct { int e; const char *n; } names[] = {
		{EPERM, "EPERM"}, {ENOENT, "ENOENT"}, {ESRCH, "ESRCH"}, {EINTR, "EINTR"},
		{EIO, "EIO"}, {ENXIO, "ENXIO"}, {E2BIG, "E2BIG"}, {ENOEXEC, "ENOEXEC"},
		{EBADF, "EBADF"}, {ECHILD, "ECHILD"}, {EAGAIN, "EAGAIN"}, {ENOMEM, "ENOMEM"},
		{EACCES, "EACCES"}, {EFAULT, "EFAULT"}, {EBUSY, "EBUSY"}, {EEXIST, "EEXIST"},
		{EXDEV, "EXDEV"}, {ENODEV, "ENODEV"}, {ENOTDIR, "ENOTDIR"}, {EISDIR, "EISDIR"},
		{EINVAL, "EINVAL"}, {ENFILE, "ENFILE"}, {EMFILE, "EMFILE"}, {ENOTTY, "ENOTTY"},
		{EFBIG, "EFBIG"}, {ENOSPC, "ENOSPC"}, {ESPIPE, "ESPIPE"}, {EROFS, "EROFS"},
		{EMLINK, "EMLINK"}, {EPIPE, "EPIPE"}, {EDOM, "EDOM"}, {ERANGE, "ERANGE"},
		{ENAMETOOLONG, "ENAMETOOLONG"}, {ENOSYS, "ENOSYS"}, {ENOTEMPTY, "ENOTEMPTY"},
		{ELOOP, "ELOOP"}, {ETIMEDOUT, "ETIMEDOUT"}, {EOVERFLOW, "EOVERFLOW"},
		{ELIBBAD, "ELIBBAD"}, {EOPNOTSUPP, "EOPNOTSUPP"}, {ENOTSUP, "ENOTSUP"},
		{ESOCKTNOSUPPORT, "ESOCKTNOSUPPORT"}, {EPROTONOSUPPORT, "EPROTONOSUPPORT"},
		{EADDRINUSE, "EADDRINUSE"}, {ECONNREFUSED, "ECONNREFUSED"},
		{EADDRNOTAVAIL, "EADDRNOTAVAIL"}, {ENETUNREACH, "ENETUNREACH"},
	};
	for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
		if (names[i].e == e)
			return names[i].n;
	return "E?";
}

/* Print one case: OBSERVED formatted by the caller, FAIL-prefixed unless it is WANT. */
static inline void lt_line(const char *name, const char *observed, const char *want)
{
	int ok = strcmp(observed, want) == 0;
	lt_cases++;
	if (!ok)
		lt_failed++;
	if (ok)
		printf("%s: %s\n", name, observed);
	else
		printf("FAIL %s: %s (want %s)\n", name, observed, want);
	fflush(stdout);
}

/* A call's result as text: "-1 ENAME" on failure, else the value itself. */
static inline void lt_show(char *buf, size_t len, long ret, int err)
{
	if (ret == -1)
		snprintf(buf, len, "-1 %s", lt_errname(err));
	else
		snprintf(buf, len, "%ld", ret);
}

/* A call expected to fail with errno WANT. */
static inline void lt_err(const char *name, long ret, int err, int want)
{
	char got[64], exp[64];
	lt_show(got, sizeof got, ret, err);
	snprintf(exp, sizeof exp, "-1 %s", lt_errname(want));
	lt_line(name, got, exp);
}

/* A call expected to return exactly WANT. */
static inline void lt_val(const char *name, long ret, int err, long want)
{
	char got[64], exp[64];
	lt_show(got, sizeof got, ret, err);
	snprintf(exp, sizeof exp, "%ld", want);
	lt_line(name, got, exp);
}

/* A call expected to succeed with a value that may differ between systems (an fd, a
 * pid): printed as "ok" when it is >= 0. */
static inline void lt_ok(const char *name, long ret, int err)
{
	char got[64];
	if (ret >= 0)
		snprintf(got, sizeof got, "ok");
	else
		lt_show(got, sizeof got, ret, err);
	lt_line(name, got, "ok");
}

/* A yes/no observation the documentation fixes (e.g. "child saw parent's data"). */
static inline void lt_true(const char *name, int cond)
{
	lt_line(name, cond ? "yes" : "no", "yes");
}

/* A string observation that must equal WANT. */
static inline void lt_str(const char *name, const char *got, const char *want)
{
	lt_line(name, got, want);
}

/* Shorthands: evaluate CALL once, capturing errno right after it. */
#define ERR(name, call, want) do { errno = 0; long r_ = (long)(call); lt_err(name, r_, errno, want); } while (0)
#define VAL(name, call, want) do { errno = 0; long r_ = (long)(call); lt_val(name, r_, errno, want); } while (0)
#define OK(name, call) do { errno = 0; long r_ = (long)(call); lt_ok(name, r_, errno); } while (0)

/* Print the totals and return the exit status: 0 when every case passed. */
static inline int lt_done(void)
{
	printf("cases %d failed %d\n", lt_cases, lt_failed);
	fflush(stdout);
	return lt_failed ? 1 : 0;
}

/* A scratch pointer no process has mapped: the low page is never mapped on Linux. */
#define LT_BADPTR ((void *)8)

#endif
