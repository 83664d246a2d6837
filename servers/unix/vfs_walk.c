/*
 * The tree's root and path resolution (vfs.h). A path is resolved one component at a
 * time in a work buffer; a symlink met on the way is spliced in place of its name (its
 * target followed by what is left of the path), so resolution needs no recursion and
 * no stack beyond a few words, and SYMLOOP_MAX bounds the splices (ELOOP).
 */
#include "procfs.h"

static struct inode *root;
static int64_t epoch_sec = 1704067200;          /* 2024-01-01T00:00:00Z */

/* The path being resolved: the server runs one call at a time, so one buffer serves. */
static char work[2 * PATH_MAX + 2];
/* The process whose walk runs (vfs_walk), for /proc/self; NULL for vfs_walk_from. */
static struct proc *walker;

struct inode *vfs_root(void)
{
    if (!root) {
        root = inode_new(S_IFDIR | 0755);
        if (!root)
            return NULL;
        root->parent = root;
        root->nlink = 2;
    }
    return root;
}

void vfs_teardown(void)
{
    if (!root)
        return;
    dir_clear(root);
    root->nlink = 0;
    inode_put(root);
    root = NULL;
}

void vfs_set_epoch(int64_t realtime_at_boot_sec)
{
    epoch_sec = realtime_at_boot_sec;
}

struct linux_timespec vfs_now(void)
{
    uint64_t ns = unix_now_ns();
    return (struct linux_timespec){epoch_sec + (int64_t)(ns / 1000000000u),
                                   (int64_t)(ns % 1000000000u)};
}

/* Replace what was resolved of work, up to pos, with symlink link's target: work
 * becomes target + "/" + work[pos..] (the "/" when something follows or the name had a
 * trailing slash). -ENAMETOOLONG if it does not fit. */
static long splice_link(const struct inode *link, size_t pos, bool slash, size_t *len)
{
    size_t rest = *len - pos, tlen = (size_t)link->size, sep = (rest || slash) ? 1 : 0;
    if (tlen + sep + rest + 1 > sizeof(work))
        return -ENAMETOOLONG;
    vfs_memmove(work + tlen + sep, work + pos, rest + 1);
    vfs_memcpy(work, link->data, tlen);
    if (sep)
        work[tlen] = '/';
    *len = tlen + sep + rest;
    return 0;
}

static void walk_result(struct walk *w, struct inode *dir, struct inode *inode,
                        const char *name, size_t len)
{
    w->dir = inode_get(dir);
    w->inode = inode ? inode_get(inode) : NULL;
    vfs_memcpy(w->name, name, len);
    w->name[len] = 0;
    w->len = len;
}

/* The inode name (len bytes) means in dir: itself, its parent (never above root), an
 * entry, or NULL. */
static struct inode *lookup(struct inode *rootdir, struct inode *dir, const char *name,
                            size_t len)
{
    if (len == 1 && name[0] == '.')
        return dir;
    if (len == 2 && name[0] == '.' && name[1] == '.')
        return dir == rootdir ? dir : dir->parent;
    if (dir->nlink == 0)
        return NULL;                    /* a removed directory has no names */
    if (dir->proc_kind)
        procfs_lookup(walker, dir, name, len);
    struct dentry *d = dir_find(dir, name, len);
    return d ? d->inode : NULL;
}

/* The component of work at *pos (advanced past it and the slashes after it). */
struct component {
    size_t at, len;
    bool slash, last;       /* followed by '/'; nothing after it */
};

static struct component next_component(size_t *pos)
{
    struct component k = {.at = *pos};
    while (work[*pos] && work[*pos] != '/')
        (*pos)++;
    k.len = *pos - k.at;
    k.slash = work[*pos] == '/';
    while (work[*pos] == '/')
        (*pos)++;
    k.last = !work[*pos];
    return k;
}

static long walk_end(struct walk *w, struct inode *dir, struct inode *inode,
                     const struct component *k)
{
    if (inode && k->slash && !inode_is(inode, S_IFDIR))
        return -ENOTDIR;
    walk_result(w, dir, inode, work + k->at, k->len);
    w->slash = k->slash;
    return 0;
}

long vfs_walk_from(struct inode *rootdir, struct inode *start, const char *path,
                   unsigned flags, struct walk *w)
{
    size_t len = vfs_strlen(path), pos = 0;
    int links = 0;
    if (len > PATH_MAX - 1)
        return -ENAMETOOLONG;
    vfs_memcpy(work, path, len + 1);
    struct inode *cur = start;
    vfs_memset(w, 0, sizeof(*w));
    for (;;) {
        if (work[pos] == '/') {
            cur = rootdir;
            while (work[pos] == '/')
                pos++;
        }
        if (!work[pos]) {                       /* "/" or a link to "/" */
            walk_result(w, cur, cur, "/", 1);
            w->slash = true;
            return 0;
        }
        struct component k = next_component(&pos);
        if (k.len > NAME_MAX)
            return -ENAMETOOLONG;
        if (!inode_is(cur, S_IFDIR))
            return -ENOTDIR;
        struct inode *next = lookup(rootdir, cur, work + k.at, k.len);
        if (!next)
            return k.last && (flags & WALK_MAY_BE_MISSING) ? walk_end(w, cur, NULL, &k)
                                                          : -ENOENT;
        if (inode_is(next, S_IFLNK) && (!k.last || k.slash || (flags & WALK_FOLLOW))) {
            if (++links > SYMLOOP_MAX)
                return -ELOOP;
            long r = splice_link(next, pos, k.slash, &len);
            if (r < 0)
                return r;
            pos = 0;                            /* relative targets start at cur */
            continue;
        }
        if (k.last)
            return walk_end(w, cur, next, &k);
        cur = next;
    }
}

void walk_done(struct walk *w)
{
    inode_put(w->inode);
    inode_put(w->dir);
    w->inode = w->dir = NULL;
}

/* Where a relative path starts for p: its cwd, or the directory open at dirfd. */
static long walk_start(struct proc *p, int dirfd, struct inode **start)
{
    if (dirfd == AT_FDCWD) {
        *start = p->fs->cwd;
        return 0;
    }
    struct file *f = fd_file(p, dirfd);
    if (!f)
        return -EBADF;
    if (!f->inode || !inode_is(f->inode, S_IFDIR))
        return -ENOTDIR;
    *start = f->inode;
    return 0;
}

long vfs_walk(struct proc *p, int dirfd, const char *path, unsigned flags, struct walk *w)
{
    struct inode *start = p->fs->root;
    if (path[0] != '/') {
        long r = walk_start(p, dirfd, &start);
        if (r < 0)
            return r;
    }
    walker = p;
    long r = vfs_walk_from(p->fs->root, start, path, flags, w);
    walker = NULL;
    return r;
}

long vfs_path_in(struct ucall *c, uint64_t upath, char *buf)
{
    long n = copy_in_str(c->proc, buf, upath, PATH_MAX);
    if (n == 0)
        return -ENOENT;
    return n;
}

/* The path buffer of *at calls (one call at a time). */
static char path_buf[PATH_MAX];

long vfs_at_inode(struct ucall *c, int dirfd, uint64_t upath, bool follow, bool empty_ok,
                  struct inode **out)
{
    long n = copy_in_str(c->proc, path_buf, upath, PATH_MAX);
    if (n < 0)
        return n;
    if (n == 0) {
        if (!empty_ok)
            return -ENOENT;
        struct file *f = dirfd == AT_FDCWD ? NULL : fd_file(c->proc, dirfd);
        if (dirfd == AT_FDCWD) {
            *out = inode_get(c->proc->fs->cwd);
            return 0;
        }
        if (!f)
            return -EBADF;
        if (!f->inode)
            return -EINVAL;     /* a pipe: callers that accept one check the file */
        *out = inode_get(f->inode);
        return 0;
    }
    struct walk w;
    long r = vfs_walk(c->proc, dirfd, path_buf, follow ? WALK_FOLLOW : 0, &w);
    if (r < 0)
        return r;
    *out = inode_get(w.inode);
    walk_done(&w);
    return 0;
}
