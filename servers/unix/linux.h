/*
 * The Linux x86-64 ABI as the UNIX server sees it: numbers and layouts from the Linux
 * manual pages and the kernel's uapi headers (facts, written out here; no Linux header is
 * included, so the server builds freestanding and in the kernel). Each part of the server
 * adds the constants it needs, grouped under a heading.
 */
#ifndef UNIX_LINUX_H
#define UNIX_LINUX_H

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
#define EILSEQ 84
#define ERESTART 85
#define ENOTSOCK 88
#define EOPNOTSUPP 95
#define EAFNOSUPPORT 97
#define EADDRINUSE 98
#define ECONNREFUSED 111
#define ETIMEDOUT 110

/* ---- devices, pipes, the tty and poll (unix-dev: pipe.c, devices.c, tty.c, poll.c) ---- */
/* open flags (octal, as in the uapi's asm-generic/fcntl.h) */

/* signals the devices send */
#define SIGHUP 1
#define SIGINT 2
#define SIGKILL 9
#define SIGCHLD 17
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
#define LINUX_UTS_LEN 65             /* struct utsname: six fields of 65 bytes */
struct linux_utsname {
    char sysname[LINUX_UTS_LEN], nodename[LINUX_UTS_LEN], release[LINUX_UTS_LEN];
    char version[LINUX_UTS_LEN], machine[LINUX_UTS_LEN], domainname[LINUX_UTS_LEN];
};

#endif
