/*
 * The root archive: a newc cpio (the format Linux unpacks as its initramfs) unpacked
 * into the root tmpfs at boot. Each member is a 110-byte header of "070701" and 13
 * eight-digit hex fields, its NUL-terminated name, padding to 4 bytes, its data (a
 * file's bytes, a symlink's target), padding to 4 bytes; "TRAILER!!!" ends the archive.
 *
 * The archive is input like any other: every length is checked against what is left
 * before it is used, so a truncated or lying archive is -EINVAL (or the error of a name
 * that cannot be made), never a read outside it. Members unpack in order; a member
 * replaces an existing non-directory of the same name (Linux does the same), and a
 * directory that exists already takes the member's mode, owner and time.
 */
#include "vfs.h"

#define NEWC_HEADER 110

struct member {
    unsigned mode, uid, gid, mtime, rdev_major, rdev_minor;
    const char *name;               /* NUL-terminated inside the archive */
    const unsigned char *data;
    size_t size;
};

static bool parse_hex8(const unsigned char *p, unsigned *out)
{
    unsigned v = 0;
    for (int k = 0; k < 8; k++) {
        unsigned char ch = p[k];
        unsigned d;
        if (ch >= '0' && ch <= '9')
            d = ch - '0';
        else if (ch >= 'a' && ch <= 'f')
            d = ch - 'a' + 10;
        else if (ch >= 'A' && ch <= 'F')
            d = ch - 'A' + 10;
        else
            return false;
        v = v << 4 | d;
    }
    *out = v;
    return true;
}

static size_t align4(size_t n)
{
    return (n + 3) & ~(size_t)3;
}

/* The member at *pos (advanced past it): 0 or -EINVAL. */
static long parse_member(const unsigned char *a, size_t len, size_t *pos, struct member *m)
{
    unsigned f[13];
    if (len - *pos < NEWC_HEADER || vfs_memcmp(a + *pos, "07070", 5) != 0 ||
        (a[*pos + 5] != '1' && a[*pos + 5] != '2'))
        return -EINVAL;
    for (int k = 0; k < 13; k++)
        if (!parse_hex8(a + *pos + 6 + 8 * k, &f[k]))
            return -EINVAL;
    size_t name_at = *pos + NEWC_HEADER, namesize = f[11];
    if (namesize == 0 || namesize > PATH_MAX || len - name_at < namesize ||
        a[name_at + namesize - 1] != 0 || vfs_strlen((const char *)a + name_at) != namesize - 1)
        return -EINVAL;
    size_t data_at = align4(name_at + namesize);
    if (data_at > len || len - data_at < f[6])
        return -EINVAL;
    *m = (struct member){f[1], f[2], f[3], f[5], f[9], f[10], (const char *)a + name_at,
                         a + data_at, f[6]};
    *pos = align4(data_at + f[6]) < len ? align4(data_at + f[6]) : len;
    return 0;
}

/* A new inode for m, with its contents: a reference, or -errno. */
static long make_inode(const struct member *m, struct inode **out)
{
    unsigned type = m->mode & S_IFMT;
    if (type != S_IFDIR && type != S_IFREG && type != S_IFLNK && type != S_IFCHR &&
        type != S_IFBLK && type != S_IFIFO && type != S_IFSOCK)
        return -EINVAL;
    if (type == S_IFLNK && (m->size == 0 || m->size >= PATH_MAX ||
                            vfs_memchr(m->data, 0, m->size)))
        return -EINVAL;
    struct inode *i = inode_new(m->mode & (S_IFMT | 07777));
    if (!i)
        return -ENOMEM;
    long r = 0;
    if (type == S_IFREG && m->size) {
        r = inode_resize(i, m->size);
        if (r == 0)
            vfs_memcpy(i->data, m->data, m->size);
    } else if (type == S_IFLNK) {
        r = inode_set_target(i, (const char *)m->data, m->size);
    }
    i->rdev_major = m->rdev_major;
    i->rdev_minor = m->rdev_minor;
    if (r < 0) {
        inode_put(i);
        return r;
    }
    *out = i;
    return 0;
}

static void set_attrs(struct inode *i, const struct member *m)
{
    i->mode = (i->mode & S_IFMT) | (m->mode & 07777);
    i->uid = m->uid;
    i->gid = m->gid;
    i->atime = i->mtime = i->ctime = (struct linux_timespec){m->mtime, 0};
}

/* Put m at its name: the name's directory must exist (members come parents first). */
static long place(struct walk *w, const struct member *m)
{
    bool dir = (m->mode & S_IFMT) == S_IFDIR;
    if (w->inode && inode_is(w->inode, S_IFDIR) && dir) {
        set_attrs(w->inode, m);
        return 0;
    }
    if (w->name[0] == '.' && (w->len == 1 || (w->len == 2 && w->name[1] == '.')))
        return -EINVAL;
    if (w->inode && inode_is(w->inode, S_IFDIR) && !dir_is_empty(w->inode))
        return -EEXIST;
    struct inode *i;
    long r = make_inode(m, &i);
    if (r < 0)
        return r;
    struct linux_timespec mtime = w->dir->mtime, ctime = w->dir->ctime;
    if (w->inode)
        dir_unlink(w->dir, dir_find(w->dir, w->name, w->len));
    r = dir_link(w->dir, w->name, w->len, i);
    set_attrs(i, m);
    w->dir->mtime = mtime;          /* the directory keeps the archive's times */
    w->dir->ctime = ctime;
    inode_put(i);
    return r;
}

static long unpack_member(struct inode *rootdir, const struct member *m)
{
    const char *name = m->name;
    while (name[0] == '/' || (name[0] == '.' && name[1] == '/'))
        name += name[0] == '/' ? 1 : 2;
    if (!name[0] || (name[0] == '.' && !name[1])) {
        if ((m->mode & S_IFMT) != S_IFDIR)
            return -EINVAL;
        set_attrs(rootdir, m);
        return 0;
    }
    struct walk w;
    long r = vfs_walk_from(rootdir, rootdir, name, WALK_MAY_BE_MISSING, &w);
    if (r < 0)
        return r;
    r = place(&w, m);
    walk_done(&w);
    return r;
}

long vfs_unpack_cpio(const void *data, size_t len)
{
    struct inode *rootdir = vfs_root();
    if (!rootdir)
        return -ENOMEM;
    const unsigned char *a = data;
    size_t pos = 0;
    while (pos < len) {
        struct member m;
        long r = parse_member(a, len, &pos, &m);
        if (r < 0)
            return r;
        if (vfs_strcmp(m.name, "TRAILER!!!") == 0)
            return 0;
        r = unpack_member(rootdir, &m);
        if (r < 0)
            return r;
    }
    return -EINVAL;                 /* no trailer */
}
