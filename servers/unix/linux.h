/*
 * The Linux x86-64 ABI as the UNIX server sees it: numbers and layouts from the Linux
 * manual pages and the kernel's uapi headers (facts, written out here; no Linux header is
 * included, so the server builds freestanding and in the kernel). Each part of the server
 * adds the constants it needs, grouped under a heading.
 */
#ifndef UNIX_LINUX_H
#define UNIX_LINUX_H

/* ---- errno ---- */
#define EPERM 1
#define ENOENT 2
#define ESRCH 3
#define EINTR 4
#define EIO 5
#define ENXIO 6
#define E2BIG 7
#define ENOEXEC 8
#define EBADF 9
#define ECHILD 10
#define EAGAIN 11
#define ENOMEM 12
#define EACCES 13
#define EFAULT 14
#define ENOTBLK 15
#define EBUSY 16
#define EEXIST 17
#define EXDEV 18
#define ENODEV 19
#define ENOTDIR 20
#define EISDIR 21
#define EINVAL 22
#define ENFILE 23
#define EMFILE 24
#define ENOTTY 25
#define ETXTBSY 26
#define EFBIG 27
#define ENOSPC 28
#define ESPIPE 29
#define EROFS 30
#define EMLINK 31
#define EPIPE 32
#define EDOM 33
#define ERANGE 34
#define EDEADLK 35
#define ENAMETOOLONG 36
#define ENOLCK 37
#define ENOSYS 38
#define ENOTEMPTY 39
#define ELOOP 40
#define ENOMSG 42
#define EOVERFLOW 75
#define EILSEQ 84
#define ERESTART 85
#define ENOTSOCK 88
#define EOPNOTSUPP 95
#define EAFNOSUPPORT 97
#define EADDRINUSE 98
#define ECONNREFUSED 111
#define ETIMEDOUT 110

/* ---- time and system identity (unix-core: time.c, misc.c) ---------------------------- */
#define CLOCK_REALTIME           0
#define CLOCK_MONOTONIC          1
#define CLOCK_PROCESS_CPUTIME_ID 2
#define CLOCK_THREAD_CPUTIME_ID  3
#define CLOCK_MONOTONIC_RAW      4
#define CLOCK_REALTIME_COARSE    5
#define CLOCK_MONOTONIC_COARSE   6
#define CLOCK_BOOTTIME           7
#define TIMER_ABSTIME            1
struct linux_timespec { int64_t tv_sec, tv_nsec; };
struct linux_timeval { int64_t tv_sec, tv_usec; };
#define LINUX_UTS_LEN 65             /* struct utsname: six fields of 65 bytes */
struct linux_utsname {
    char sysname[LINUX_UTS_LEN], nodename[LINUX_UTS_LEN], release[LINUX_UTS_LEN];
    char version[LINUX_UTS_LEN], machine[LINUX_UTS_LEN], domainname[LINUX_UTS_LEN];
};

#endif
