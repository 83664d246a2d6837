/*
 * The UNIX server's file system (docs/unix.md, "Files"): tmpfs inodes (tmpfs.c), path
 * resolution (vfs_walk.c), the fd table and open files (fd.c), the file system calls
 * (vfs_*.c) and the root archive (cpio.c).
 *
 * One tree, all in the server's heap: the root tmpfs. An inode lives while it has a name
 * (nlink > 0) or a reference (refs > 0: an open file, a cwd or root, a subdirectory's
 * parent link, a lookup in progress); the last of the two to go frees it. A directory
 * holds a reference on its parent, so ".." of a removed working directory still works.
 *
 * The server runs one call at a time (the core serialises them), so the file system has
 * no locks; a handler that blocks changes nothing before it does (unix.h).
 */
#ifndef UNIX_VFS_H
#define UNIX_VFS_H

#include "unix.h"

/* String functions: the compiler's builtins (inlined, or calls to the runtime's memcpy...
 * in the kernel and the task), as servers/net does: a server includes no libc header. */
#define vfs_memcpy __builtin_memcpy
#define vfs_memmove __builtin_memmove
#define vfs_memset __builtin_memset
#define vfs_memcmp __builtin_memcmp
#define vfs_memchr __builtin_memchr
#define vfs_strlen __builtin_strlen
#define vfs_strcmp __builtin_strcmp

/* ---- inodes (tmpfs.c) ---- */
struct dentry {                 /* one name in a directory */
    struct dentry *next;
    struct inode *inode;
    uint64_t cookie;            /* getdents64 position: increasing along the list */
    uint8_t len;
    char name[];                /* len bytes + NUL */
};

struct pipe;
struct inode {
    uint64_t ino;
    unsigned mode;              /* S_IFMT type | permission bits */
    unsigned uid, gid;
    unsigned nlink;             /* names (directories: 2 + subdirectories; 0 removed) */
    int refs;
    uint64_t size;              /* regular: bytes; symlink: target length */
    struct linux_timespec atime, mtime, ctime;
    unsigned rdev_major, rdev_minor;    /* character devices */
    unsigned char *data;        /* regular: cap bytes, zero beyond size; symlink: target */
    uint64_t cap;
    uint64_t pages;             /* regular: the page cache's handle (runtime.h rt_file_*)
                                   once mapped, data its window; 0: data in the heap */
    struct dentry *entries, *last;      /* directory: its names, in cookie order */
    uint64_t next_cookie;
    struct inode *parent;       /* directory: its parent (referenced); root: itself */
    /* /proc (procfs.h): what the inode shows (enum proc_kind; 0: plain tmpfs), and the
     * process and fd it is about */
    uint8_t proc_kind;
    int proc_pid, proc_fd;
    struct pipe *fifo;          /* FIFO: its pipe once opened (pipe.c), or NULL */
};

#define TMPFS_DEV 0x16          /* st_dev of every tmpfs inode (tmpfs's anonymous device) */
#define TMPFS_MAX_FILE (1ull << 30)     /* a larger size is EFBIG */
#define TMPFS_DIRENT_SIZE 20    /* a directory's st_size: 20 per name and for "." and ".." */

static inline bool inode_is(const struct inode *i, unsigned type)
{
    return (i->mode & S_IFMT) == type;
}

/* A new inode of type|perm, not linked anywhere, with one reference; NULL if out of
 * memory. A directory's parent is set by dir_link (the root's is itself). */
struct inode *inode_new(unsigned mode);
struct inode *inode_get(struct inode *i);
uint64_t inode_count(void);                 /* inodes in memory (statfs's f_ffree) */
uint64_t page_cache_bytes(void);            /* files' bytes in the page cache (Cached:) */
void inode_put(struct inode *i);            /* frees it when unreferenced and unlinked */
void inode_touch(struct inode *i, bool access, bool modify, bool change);

/* Directories. name is len bytes (1..NAME_MAX, no '/', not "." or ".."). */
struct dentry *dir_find(struct inode *dir, const char *name, size_t len);
long dir_link(struct inode *dir, const char *name, size_t len, struct inode *child);
void dir_unlink(struct inode *dir, struct dentry *d);  /* removes the name, drops its link */
/* rename: move d from directory from to name in to, replacing victim (NULL or an entry
 * of to); 0 or -ENOMEM (nothing changed). */
long dir_rename(struct inode *from, struct dentry *d, struct inode *to, const char *name,
                size_t len, struct dentry *victim);
/* renameat2 RENAME_EXCHANGE: the two names swap their inodes. */
void dir_exchange(struct inode *dir1, struct dentry *d1, struct inode *dir2,
                  struct dentry *d2);
bool dir_is_empty(const struct inode *dir);
/* Free the whole tree under dir (its names), iteratively: used at teardown. */
void dir_clear(struct inode *dir);

/* Regular files: grow or shrink to size (new bytes read as zeros): 0, -ENOMEM or -EFBIG. */
long inode_resize(struct inode *i, uint64_t size);
/* Room for size bytes without changing size (zeros beyond it): 0 or -ENOMEM. */
long inode_reserve(struct inode *i, uint64_t size);
/* The size of a regular file becomes size (within its room); its mappings follow. */
void inode_set_size(struct inode *i, uint64_t size);
/* Regular files: the bytes move into the page cache (rt_file_new), where mappings share
 * them, at the first mmap or execve of the file; 0 (already there too) or -ENOMEM. */
long inode_pages(struct inode *i);
/* Symlinks: set the target (len bytes). */
long inode_set_target(struct inode *i, const char *target, size_t len);

/* ---- the tree (vfs_walk.c) ---- */
/* The root directory (created on first use); NULL when out of memory. */
struct inode *vfs_root(void);
/* Free the whole tree (hosted tests): every process must have dropped its references. */
void vfs_teardown(void);
/* Realtime at boot (file times are this plus unix_now_ns()); the core sets it from the
 * clock; until then 2024-01-01, the archive's date, so times stay deterministic. */
void vfs_set_epoch(int64_t realtime_at_boot_sec);
struct linux_timespec vfs_now(void);

/* Path resolution. The result names the last component: dir is its directory, inode the
 * inode (NULL when it does not exist and WALK_MAY_BE_MISSING was asked), name its name
 * ("/" for a path of slashes only), slash that the path ended with '/'. Both hold references:
 * walk_done drops them. */
struct walk {
    struct inode *dir, *inode;
    char name[NAME_MAX + 1];
    size_t len;
    bool slash;
};
#define WALK_FOLLOW         1u  /* follow a symlink in the last component */
#define WALK_MAY_BE_MISSING 2u  /* a missing last component is not ENOENT (create) */
/* Resolve path from start (relative) or root (absolute): 0 or -ENOENT, -ENOTDIR, -ELOOP
 * (more than SYMLOOP_MAX links), -ENAMETOOLONG. */
long vfs_walk_from(struct inode *root, struct inode *start, const char *path,
                   unsigned flags, struct walk *w);
/* The same for process p relative to dirfd (AT_FDCWD: its cwd): also -EBADF (dirfd is
 * not open) and -ENOTDIR (it is not a directory), only when path is relative. */
long vfs_walk(struct proc *p, int dirfd, const char *path, unsigned flags, struct walk *w);
void walk_done(struct walk *w);
/* The inode a *at call means: path (from user address upath) under dirfd, or with
 * AT_EMPTY_PATH and an empty path, dirfd's own file. One reference, or -errno. */
long vfs_at_inode(struct ucall *c, int dirfd, uint64_t upath, bool follow, bool empty_ok,
                  struct inode **out);
/* The absolute path of directory dir as seen from rootdir, in a static buffer (valid
 * until the next call), or NULL when longer than PATH_MAX (vfs_cwd.c). */
const char *vfs_dir_path(const struct inode *dir, const struct inode *rootdir);
/* Copy a path in from the process into buf (PATH_MAX): its length, -EFAULT,
 * -ENAMETOOLONG, or -ENOENT when empty. */
long vfs_path_in(struct ucall *c, uint64_t upath, char *buf);
/* readv/writev's check of a user iovec array (vfs_io.c): 0, -EINVAL or -EFAULT. */
long vfs_check_iov(struct ucall *c, uint64_t uiov, uint64_t cnt);

/* ---- fd tables and open files (fd.c) ---- */
/* A new open file of inode (referenced) with ops; one reference; NULL: out of memory. */
struct file *file_new(const struct file_ops *ops, struct inode *inode, unsigned flags);
/* Is f an AF_INET socket (socket.c)? fstat then reports S_IFSOCK. */
bool sock_file(const struct file *f);
/* One op of the network server with words only (w[0] is set here; results in w[1..]): 0,
 * -ENETDOWN when there is no network server or device, -EPERM when the server refused a
 * privileged op (setconfig: never for this server, which is privileged) (socket.c;
 * netif.c uses it). */
long sock_net_op(unsigned op, uint64_t w[IPC_MRS]);
/* The open file at fd in p's table (borrowed: valid until the call changes the table),
 * or NULL when fd is not open. */
struct file *fd_file(struct proc *p, long fd);
/* The same, but NULL for a file opened with O_PATH, which only names a file: the calls
 * that use the file itself (lseek, getdents64, fchmod, fchown, ftruncate, utimensat)
 * say EBADF for it, as Linux does; fstat, fchdir, dup, fcntl and dirfd accept it. */
struct file *fd_file_io(struct proc *p, long fd);
/* The lowest fd >= min that is not open, or -EMFILE. */
long fd_lowest_free(struct proc *p, long min);
/* Put f (taking over the caller's reference) at the lowest free fd >= min: the fd or
 * -EMFILE (then f is released). */
long fd_install(struct proc *p, struct file *f, long min, bool cloexec);
long fd_close(struct proc *p, long fd);         /* 0 or -EBADF */
bool fd_cloexec(struct proc *p, long fd);
void fd_set_cloexec(struct proc *p, long fd, bool on);

/* For the core: a new empty table; a copy for fork (every file gets a reference; the
 * close-on-exec flags are copied); closing the close-on-exec files at execve; dropping a
 * reference at exit or thread end (closing all at zero). NULL: out of memory. */
struct fdtable *fdtable_new(void);
struct fdtable *fdtable_copy(const struct fdtable *t);
void fdtable_exec(struct fdtable *t);
void fdtable_put(struct fdtable *t);
/* The same for cwd, root and umask: new (cwd = root = vfs_root(), umask 022), copy for
 * fork, drop at exit. */
struct fs_context *fs_context_new(void);
struct fs_context *fs_context_copy(const struct fs_context *fs);
void fs_context_put(struct fs_context *fs);

/* ---- tmpfs files (vfs_io.c): the file_ops of a regular file and a directory ---- */
extern const struct file_ops tmpfs_file_ops, tmpfs_dir_ops;
/* Open inode for process c->proc with open flags (the checks of open(2) already made):
 * a new file with one reference, or -errno (-ENXIO: no such device). */
long vfs_open_inode(struct ucall *c, struct inode *inode, unsigned flags, struct file **out);

/* A system call's fd argument: Linux takes the low 32 bits as an unsigned int; any value
 * that is not an open fd is then -EBADF. */
static inline long arg_fd(uint64_t a)
{
    return (long)(int32_t)(uint32_t)a;
}
/* The most one read or write moves (Linux's MAX_RW_COUNT). */
#define VFS_MAX_RW 0x7ffff000ul
/* Linux's access_ok: a user range must lie below the top of user space (x86-64, four
 * levels), else the call is -EFAULT before anything moves. */
#define LINUX_TASK_SIZE 0x7ffffffff000ull
static inline bool user_range_ok(uint64_t uaddr, uint64_t n)
{
    return n <= LINUX_TASK_SIZE && uaddr <= LINUX_TASK_SIZE - n;
}

/* File access checks (vfs_meta.c; Linux's generic_permission without ACLs): may process
 * p reach inode i for mask (R_OK | W_OK | X_OK) as its fs ids say (ID_FS: open, exec,
 * creation; access(2) asks for ID_REAL)? Uid 0 may read and write anything, and execute
 * a directory or a file with any execute bit (the capabilities a root fs uid has, and
 * loses when setfsuid moves it); any other uid gets the owner's bits, else the group's
 * (its gid or a supplementary group), else the others'. */
bool vfs_permitted(const struct proc *p, const struct inode *i, unsigned mask,
                   enum id_kind ids);

/* For execve (the core): the regular file path names for process p, following symlinks,
 * with one reference; its bytes are inode->data[0..size). -ENOENT, -ENOTDIR, -ELOOP,
 * -ENAMETOOLONG from the walk; -EACCES when it is not a regular file or p may not
 * execute it (vfs_permitted with the fs ids). */
long vfs_exec_inode(struct proc *p, const char *path, struct inode **out);

/* ---- mmap of a file (vfs_mmap.c), for unix-run's mmap ----
 * The file side of mmap(fd, off, len, prot, flags): Linux's errors (-EINVAL for an
 * unaligned offset, length 0 or a bad MAP_TYPE; -EBADF for an fd that is not open or is
 * O_PATH; -ENOMEM, -EOVERFLOW for ranges; -EACCES for a write-only fd, or a shared
 * writable mapping of a file not open for writing or open O_APPEND; -ENODEV for what
 * cannot be mapped: directories, pipes, the tty, /dev/null, /proc files) and, on success,
 * the bytes the mapping starts with. A private mapping of a tmpfs file: out->inode (one
 * reference: inode_put it once the bytes are copied in) and out->data/out->size, the file's
 * bytes from off, at most len (size 0 when off is at or past the end); the rest of the
 * mapping reads zeros (Linux: SIGBUS for pages wholly past the end). /dev/zero:
 * out->zero, an anonymous mapping. Shared read-only mappings of a file are given as the
 * same copy (a later write to the file does not show in them); shared writable ones are
 * -ENODEV (not supported). */
struct vfs_mapping {
    struct inode *inode;
    const unsigned char *data;
    uint64_t size;
    bool zero;
};
long vfs_mmap_file(struct proc *p, long fd, uint64_t off, uint64_t len, unsigned prot,
                   unsigned flags, struct vfs_mapping *out);

/* ---- the root archive (cpio.c) ---- */
/* Unpack a newc cpio archive into the root tmpfs: 0, or -EINVAL for a malformed archive
 * (what was unpacked before the fault stays), -ENAMETOOLONG, -ENOMEM. */
long vfs_unpack_cpio(const void *data, size_t len);

#endif
