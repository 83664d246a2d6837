/*
 * The Linux x86-64 ABI as the UNIX server sees it: numbers and layouts from the Linux
 * manual pages and the kernel's uapi headers (facts, written out here; no Linux header is
 * included, so the server builds freestanding and in the kernel). Each part of the server
 * adds the constants it needs, grouped under a heading.
 */
#ifndef UNIX_LINUX_H
#define UNIX_LINUX_H

#include <ondol/srv.h>          /* <ondol/abi.h>: PROT_*, shared with ondol's ABI */

#include <stdint.h>

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
#define ELIBBAD 80
#define EILSEQ 84
#define ERESTART 85
#define ENOTSOCK 88
#define EDESTADDRREQ 89
#define EMSGSIZE 90
#define ENOPROTOOPT 92
#define EPROTONOSUPPORT 93
#define ESOCKTNOSUPPORT 94
#define EOPNOTSUPP 95
#define EAFNOSUPPORT 97
#define EADDRINUSE 98
#define EADDRNOTAVAIL 99
#define ENETDOWN 100
#define ENETUNREACH 101
#define ENOBUFS 105
#define ENOTCONN 107
#define ETIMEDOUT 110
#define ECONNREFUSED 111
#define EALREADY 114
#define EINPROGRESS 115

/* ---- devices, pipes, the tty and poll (unix-dev: pipe.c, devices.c, tty.c, poll.c) ---- */
/* open flags (octal, as in the uapi's asm-generic/fcntl.h) */

/* signals the devices send */
#define SIGHUP 1
#define SIGINT 2
#define SIGQUIT 3
#define SIGPIPE 13
#define SIGCONT 18
#define SIGTSTP 20
#define SIGTTIN 21
#define SIGTTOU 22
#define SIGWINCH 28

/* poll(2) event bits */
#define POLLIN 0x001
#define POLLPRI 0x002
#define POLLOUT 0x004
#define POLLERR 0x008
#define POLLHUP 0x010
#define POLLNVAL 0x020
#define POLLRDNORM 0x040
#define POLLRDBAND 0x080
#define POLLWRNORM 0x100
#define POLLWRBAND 0x200

#define PIPE_BUF 4096            /* writes up to this size are atomic */

/* ioctl numbers (asm-generic/ioctls.h) */
#define TCGETS 0x5401
#define TCSETS 0x5402
#define TCSETSW 0x5403
#define TCSETSF 0x5404
#define TCFLSH 0x540B
#define TIOCSCTTY 0x540E
#define TIOCGPGRP 0x540F
#define TIOCSPGRP 0x5410
#define TIOCOUTQ 0x5411
#define TIOCGWINSZ 0x5413
#define TIOCSWINSZ 0x5414
#define FIONREAD 0x541B
#define FIONBIO 0x5421
#define TIOCNOTTY 0x5422
#define TIOCGSID 0x5429
#define FIONCLEX 0x5450
#define FIOCLEX 0x5451
#define TCIFLUSH 0
#define TCOFLUSH 1
#define TCIOFLUSH 2

/* struct termios as the kernel's TCGETS/TCSETS copy it (36 bytes; NCCS is 19 here, not
 * libc's 32) and the c_cc indices */
#define LINUX_NCCS 19
struct linux_termios {
    uint32_t c_iflag, c_oflag, c_cflag, c_lflag;
    uint8_t c_line;
    uint8_t c_cc[LINUX_NCCS];
};
struct linux_winsize {
    uint16_t ws_row, ws_col, ws_xpixel, ws_ypixel;
};
#define VINTR 0
#define VQUIT 1
#define VERASE 2
#define VKILL 3
#define VEOF 4
#define VTIME 5
#define VMIN 6
#define VSWTC 7
#define VSTART 8
#define VSTOP 9
#define VSUSP 10
#define VEOL 11
#define VREPRINT 12
#define VDISCARD 13
#define VWERASE 14
#define VLNEXT 15
#define VEOL2 16
/* c_iflag */
#define IGNBRK 0000001
#define BRKINT 0000002
#define ISTRIP 0000040
#define INLCR 0000100
#define IGNCR 0000200
#define ICRNL 0000400
#define IXON 0002000
#define IUTF8 0040000
/* c_oflag */
#define OPOST 0000001
#define ONLCR 0000004
#define OCRNL 0000010
#define ONOCR 0000020
#define ONLRET 0000040
/* c_cflag */
#define B38400 0000017
#define CS8 0000060
#define CREAD 0000200
#define HUPCL 0002000
/* c_lflag */
#define ISIG 0000001
#define ICANON 0000002
#define ECHO 0000010
#define ECHOE 0000020
#define ECHOK 0000040
#define ECHONL 0000100
#define NOFLSH 0000200
#define TOSTOP 0000400
#define ECHOCTL 0001000
#define ECHOKE 0004000
#define IEXTEN 0100000

/* poll/select time arguments */
struct linux_timeval {
    int64_t tv_sec, tv_usec;
};
struct linux_pollfd {
    int32_t fd;
    int16_t events, revents;
};

/* ---- files (unix-vfs: vfs*.c, tmpfs.c, fd.c, cpio.c) ---- */
#define O_ACCMODE   03
#define O_RDONLY    00
#define O_WRONLY    01
#define O_RDWR      02
#define O_CREAT     0100
#define O_EXCL      0200
#define O_NOCTTY    0400
#define O_TRUNC     01000
#define O_APPEND    02000
#define O_NONBLOCK  04000
#define O_DSYNC     010000
#define O_ASYNC     020000
#define O_DIRECT    040000
#define O_LARGEFILE 0100000
#define O_DIRECTORY 0200000
#define O_NOFOLLOW  0400000
#define O_NOATIME   01000000
#define O_CLOEXEC   02000000
#define O_SYNC      04010000
#define O_PATH      010000000
#define O_TMPFILE   020200000

#define AT_FDCWD            (-100)
#define AT_SYMLINK_NOFOLLOW 0x100
#define AT_EACCESS          0x200
#define AT_REMOVEDIR        0x200
#define AT_SYMLINK_FOLLOW   0x400
#define AT_NO_AUTOMOUNT     0x800
#define AT_EMPTY_PATH       0x1000
#define AT_STATX_SYNC_TYPE  0x6000

#define RENAME_NOREPLACE 1
#define RENAME_EXCHANGE  2
#define RENAME_WHITEOUT  4

#define F_DUPFD         0
#define F_GETFD         1
#define F_SETFD         2
#define F_GETFL         3
#define F_SETFL         4
#define F_DUPFD_CLOEXEC 1030
#define FD_CLOEXEC      1

#define SEEK_SET 0
#define SEEK_CUR 1
#define SEEK_END 2

#define F_OK 0
#define X_OK 1
#define W_OK 2
#define R_OK 4

#define S_IFMT   0170000
#define S_IFSOCK 0140000
#define S_IFLNK  0120000
#define S_IFREG  0100000
#define S_IFBLK  0060000
#define S_IFDIR  0040000
#define S_IFCHR  0020000
#define S_IFIFO  0010000
#define S_ISUID  04000
#define S_ISGID  02000
#define S_ISVTX  01000

/* getdents64 d_type */
#define DT_FIFO 1
#define DT_CHR  2
#define DT_DIR  4
#define DT_REG  8
#define DT_LNK  10

#define UTIME_NOW  ((1L << 30) - 1)
#define UTIME_OMIT ((1L << 30) - 2)

#define PATH_MAX 4096
#define NAME_MAX 255
#define SYMLOOP_MAX 40
#define IOV_MAX 1024

/* statx mask bits */
#define STATX_BASIC_STATS 0x7ffu
#define STATX_MNT_ID      0x1000u
#define STATX__RESERVED   0x80000000u

/* struct stat (x86-64): 144 bytes */
struct linux_timespec {
    int64_t tv_sec;
    int64_t tv_nsec;
};
struct linux_stat {
    uint64_t st_dev, st_ino, st_nlink;
    uint32_t st_mode, st_uid, st_gid, pad0;
    uint64_t st_rdev;
    int64_t st_size, st_blksize, st_blocks;
    struct linux_timespec st_atim, st_mtim, st_ctim;
    int64_t unused[3];
};
/* struct statx: 256 bytes */
struct linux_statx_timestamp {
    int64_t tv_sec;
    uint32_t tv_nsec;
    int32_t reserved;
};
struct linux_statx {
    uint32_t stx_mask, stx_blksize;
    uint64_t stx_attributes;
    uint32_t stx_nlink, stx_uid, stx_gid;
    uint16_t stx_mode, spare0;
    uint64_t stx_ino, stx_size, stx_blocks, stx_attributes_mask;
    struct linux_statx_timestamp stx_atime, stx_btime, stx_ctime, stx_mtime;
    uint32_t stx_rdev_major, stx_rdev_minor, stx_dev_major, stx_dev_minor;
    uint64_t stx_mnt_id;
    uint32_t stx_dio_mem_align, stx_dio_offset_align;
    uint64_t spare3[12];
};
/* struct iovec */
struct linux_iovec {
    uint64_t iov_base;
    uint64_t iov_len;
};

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
/* flock(2), xattrs, statfs(2) */
#define LOCK_SH 1
#define LOCK_EX 2
#define LOCK_NB 4
#define LOCK_UN 8
/* fadvise64's advice: POSIX_FADV_NORMAL 0 .. POSIX_FADV_NOREUSE, the last (x86-64 values) */
#define POSIX_FADV_NOREUSE 5
#define XATTR_CREATE  1
#define XATTR_REPLACE 2
#define XATTR_NAME_MAX 255
#define XATTR_SIZE_MAX 65536
#define TMPFS_MAGIC      0x01021994
#define PROC_SUPER_MAGIC 0x9fa0
#define PIPEFS_MAGIC     0x50495045
#define ST_NOSUID   0x0002
#define ST_NODEV    0x0004
#define ST_NOEXEC   0x0008
#define ST_VALID    0x0020
#define ST_RELATIME 0x1000
struct linux_statfs {                /* x86-64's struct statfs (120 bytes) */
    int64_t f_type, f_bsize, f_blocks, f_bfree, f_bavail, f_files, f_ffree;
    int32_t f_fsid[2];
    int64_t f_namelen, f_frsize, f_flags, f_spare[4];
};
/* mmap(2). PROT_READ/WRITE/EXEC are ondol's (<ondol/abi.h>, included above), which have
 * Linux's values: one definition for server files that use both ABIs. */
#define MAP_SHARED          0x01
#define MAP_PRIVATE         0x02
#define MAP_SHARED_VALIDATE 0x03
#define MAP_TYPE            0x0f
#define MAP_FIXED           0x10
#define MAP_ANONYMOUS       0x20
#define LINUX_UTS_LEN 65             /* struct utsname: six fields of 65 bytes */
struct linux_utsname {
    char sysname[LINUX_UTS_LEN], nodename[LINUX_UTS_LEN], release[LINUX_UTS_LEN];
    char version[LINUX_UTS_LEN], machine[LINUX_UTS_LEN], domainname[LINUX_UTS_LEN];
};

/* ---- signals (signal*.c; the uapi's asm/signal.h, asm/siginfo.h, asm/sigcontext.h,
 * asm/ucontext.h for x86-64) ---------------------------------------------------------- */
#define LINUX_NSIG 64                /* signals 1..64; a set is one 64-bit word, bit sig-1 */
#define SIGILL 4
#define SIGTRAP 5
#define SIGABRT 6
#define SIGBUS 7
#define SIGFPE 8
#define SIGKILL 9
#define SIGUSR1 10
#define SIGSEGV 11
#define SIGUSR2 12
#define SIGALRM 14
#define SIGTERM 15
#define SIGCHLD 17
#define SIGSTOP 19
#define SIGURG 23
#define SIGXCPU 24
#define SIGXFSZ 25
#define SIGSYS 31
#define SIGRTMIN 32
#define SIG_DFL 0
#define SIG_IGN 1
#define SIG_BLOCK 0
#define SIG_UNBLOCK 1
#define SIG_SETMASK 2
/* sa_flags */
#define SA_NOCLDSTOP 0x00000001u
#define SA_NOCLDWAIT 0x00000002u
#define SA_SIGINFO   0x00000004u
#define SA_RESTORER  0x04000000u
#define SA_ONSTACK   0x08000000u
#define SA_RESTART   0x10000000u
#define SA_NODEFER   0x40000000u
#define SA_RESETHAND 0x80000000u
/* sigaltstack */
#define SS_ONSTACK 1
#define SS_DISABLE 2
#define SS_AUTODISARM (1u << 31)
#define MINSIGSTKSZ 2048
/* si_code values */
#define SI_USER 0
#define SI_KERNEL 0x80
#define SI_QUEUE (-1)
#define SI_TIMER (-2)
#define SI_TKILL (-6)
#define ILL_ILLOPN 2
#define FPE_INTDIV 1
#define FPE_FLTINV 7
#define SEGV_MAPERR 1
#define SEGV_ACCERR 2
#define BUS_ADRALN 1
#define BUS_ADRERR 2
#define TRAP_BRKPT 1
#define CLD_EXITED 1
#define CLD_KILLED 2
#define CLD_DUMPED 3
#define CLD_STOPPED 5
#define CLD_CONTINUED 6
/* The kernel-internal "restart" results (Linux's include/linux/errno.h): a handler returns
 * one when a signal interrupts it; signal_deliver turns it into -EINTR or a restart and
 * user space never sees it. */
#define ERESTARTSYS 512              /* restart if the handler has SA_RESTART */
#define ERESTARTNOINTR 513           /* always restart */
#define ERESTARTNOHAND 514           /* restart only when no handler runs */
#define ERESTART_RESTARTBLOCK 516    /* sleeps: -EINTR with a handler, else run again */

/* struct kernel_sigaction as rt_sigaction copies it (32 bytes) */
struct linux_sigaction {
    uint64_t handler, flags, restorer, mask;
};
/* stack_t (24 bytes) */
struct linux_stack {
    uint64_t ss_sp;
    int32_t ss_flags, pad;
    uint64_t ss_size;
};
/* siginfo_t: 128 bytes; the union starts at byte 16 */
struct linux_siginfo {
    int32_t si_signo, si_errno, si_code, pad;
    union {
        struct { int32_t pid; uint32_t uid; uint64_t value; } kill;    /* also rt queue */
        struct { int32_t pid; uint32_t uid; int32_t status, pad; int64_t utime, stime; } chld;
        struct { uint64_t addr; } fault;
        uint8_t bytes[112];
    } u;
};
/* struct sigcontext (256 bytes) */
struct linux_sigcontext {
    uint64_t r8, r9, r10, r11, r12, r13, r14, r15;
    uint64_t rdi, rsi, rbp, rbx, rdx, rax, rcx, rsp, rip, eflags;
    uint16_t cs, gs, fs, ss;
    uint64_t err, trapno, oldmask, cr2;
    uint64_t fpstate;                 /* 0: no FP state saved (docs/unix.md, "Signals") */
    uint64_t reserved1[8];
};
/* struct ucontext (304 bytes) */
#define UC_FP_XSTATE 1
#define UC_SIGCONTEXT_SS 2
#define UC_STRICT_RESTORE_SS 4
struct linux_ucontext {
    uint64_t uc_flags, uc_link;
    struct linux_stack uc_stack;
    struct linux_sigcontext uc_mcontext;
    uint64_t uc_sigmask;
};
/* struct rt_sigframe (440 bytes): what a handler finds at its rsp */
struct linux_rt_sigframe {
    uint64_t pretcode;                /* sa_restorer: the handler's return address */
    struct linux_ucontext uc;
    struct linux_siginfo info;
};
#define LINUX_USER_CS 0x33
#define LINUX_USER_DS 0x2b
/* itimers */
#define ITIMER_REAL 0
#define ITIMER_VIRTUAL 1
#define ITIMER_PROF 2
struct linux_itimerval {
    struct linux_timeval it_interval, it_value;
};

#endif
