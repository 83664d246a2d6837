/*
 * The file side of mmap(2) (vfs.h, vfs_mmap_file): the checks Linux makes of the file
 * and the bytes a private mapping starts with. unix-run's mmap makes the mapping and
 * copies the bytes in; the VFS only says what they are. Linux's order: the offset's
 * alignment (x86's sys_mmap), the fd (fget: O_PATH files are not files here), the length,
 * the offset's range, then per mapping type the access mode and whether the file can be
 * mapped at all (file_operations->mmap: tmpfs files and /dev/zero can; directories,
 * pipes, the tty, /dev/null and /proc files cannot, ENODEV).
 */
#include "vfs.h"

#define PAGE 4096ull

/* What kind of mapping the file allows: 1 its bytes, 2 zeros (/dev/zero), 0 none. */
static int mappable(const struct file *f)
{
    const struct inode *i = f->inode;
    if (!i || i->proc_kind)
        return 0;
    if (inode_is(i, S_IFREG))
        return 1;
    return inode_is(i, S_IFCHR) && i->rdev_major == 1 && i->rdev_minor == 5 ? 2 : 0;
}

/* The access checks of do_mmap for a file mapping of type (MAP_SHARED...). */
static long check_access(const struct file *f, unsigned type, unsigned prot)
{
    unsigned acc = f->flags & O_ACCMODE;
    bool readable = acc == O_RDONLY || acc == O_RDWR;
    bool writable = acc == O_WRONLY || acc == O_RDWR;
    switch (type) {
    case MAP_SHARED:
    case MAP_SHARED_VALIDATE:
        if ((prot & PROT_WRITE) && (!writable || (f->flags & O_APPEND)))
            return -EACCES;
        break;
    case MAP_PRIVATE:
        break;
    default:
        return -EINVAL;
    }
    if (!readable)
        return -EACCES;
    return mappable(f) ? 0 : -ENODEV;
}

long vfs_mmap_file(struct proc *p, long fd, uint64_t off, uint64_t len, unsigned prot,
                   unsigned flags, struct vfs_mapping *out)
{
    vfs_memset(out, 0, sizeof(*out));
    if (off % PAGE)
        return -EINVAL;
    struct file *f = fd_file_io(p, fd);
    if (!f)
        return -EBADF;
    if (len == 0)
        return -EINVAL;
    if (len > LINUX_TASK_SIZE)
        return -ENOMEM;
    uint64_t pages = (len + PAGE - 1) / PAGE;
    if (off / PAGE + pages < off / PAGE)
        return -EOVERFLOW;
    if (f->inode && inode_is(f->inode, S_IFREG) &&     /* file_mmap_ok: a file's limit */
        (len > INT64_MAX || off / PAGE > (INT64_MAX - len) / PAGE))
        return -EOVERFLOW;
    unsigned type = flags & MAP_TYPE;
    long r = check_access(f, type, prot);
    if (r < 0)
        return r;
    if (mappable(f) == 2) {
        out->zero = true;
        return 0;
    }
    struct inode *i = f->inode;
    out->inode = inode_get(i);
    if (off < i->size) {
        out->data = i->data + off;
        out->size = i->size - off < len ? i->size - off : len;
    }
    return 0;
}
