/*
 * tmpfs: inodes, directories, file data and symlink targets in the server's heap
 * (vfs.h); a regular file's data moves into the page cache (a kernel file object,
 * runtime.h rt_file_*) at its first mapping, and stays there: its mappings and the
 * server's reads and writes then reach the same frames. Reference rule: an inode is
 * freed when both nlink and refs are zero; a directory keeps a reference on its parent,
 * dropped when it is freed (iteratively, so a chain of removed directories does not
 * recurse).
 */
#include "devices.h"
#include "runtime.h"

static uint64_t next_ino = 1, live_inodes, cached_bytes;

static uint64_t page_up(uint64_t a) { return (a + 4095) & ~4095ull; }

uint64_t inode_count(void)
{
    return live_inodes;
}

uint64_t page_cache_bytes(void)
{
    return cached_bytes;
}

struct inode *inode_new(unsigned mode)
{
    struct inode *i = unix_alloc(sizeof(*i));
    if (!i)
        return NULL;
    vfs_memset(i, 0, sizeof(*i));
    i->ino = next_ino++;
    live_inodes++;
    i->mode = mode;
    i->refs = 1;
    i->next_cookie = 2;             /* 0 and 1 are "." and ".." */
    if (inode_is(i, S_IFDIR))
        i->size = 2 * TMPFS_DIRENT_SIZE;
    i->atime = i->mtime = i->ctime = vfs_now();
    return i;
}

struct inode *inode_get(struct inode *i)
{
    i->refs++;
    return i;
}

/* Free i's own memory; return the parent whose reference it held (directories). */
static struct inode *inode_free(struct inode *i)
{
    struct inode *parent = (inode_is(i, S_IFDIR) && i->parent != i) ? i->parent : NULL;
    fifo_free(i);
    live_inodes--;
    if (i->pages) {
        rt_file_free(i->pages);     /* its mappings keep the frames they use */
        cached_bytes -= i->cap;
    } else {
        unix_free(i->data);
    }
    unix_free(i);
    return parent;
}

/* Free i, and its parents in turn, while they are unreferenced and unlinked. */
static void inode_release_chain(struct inode *i)
{
    while (i && i->refs == 0 && i->nlink == 0) {
        struct inode *parent = inode_free(i);
        if (parent)
            parent->refs--;
        i = parent;
    }
}

void inode_put(struct inode *i)
{
    if (!i)
        return;
    i->refs--;
    inode_release_chain(i);
}

void inode_touch(struct inode *i, bool access, bool modify, bool change)
{
    struct linux_timespec now = vfs_now();
    if (access)
        i->atime = now;
    if (modify)
        i->mtime = now;
    if (change)
        i->ctime = now;
}

struct dentry *dir_find(struct inode *dir, const char *name, size_t len)
{
    for (struct dentry *d = dir->entries; d; d = d->next)
        if (d->len == len && vfs_memcmp(d->name, name, len) == 0)
            return d;
    return NULL;
}

/* Append a name for child to dir's list (no link counts change); NULL: out of memory. */
static struct dentry *dentry_add(struct inode *dir, const char *name, size_t len,
                                 struct inode *child)
{
    struct dentry *d = unix_alloc(sizeof(*d) + len + 1);
    if (!d)
        return NULL;
    d->next = NULL;
    d->inode = child;
    d->cookie = dir->next_cookie++;
    d->len = (uint8_t)len;
    vfs_memcpy(d->name, name, len);
    d->name[len] = 0;
    if (dir->last)
        dir->last->next = d;
    else
        dir->entries = d;
    dir->last = d;
    dir->size += TMPFS_DIRENT_SIZE;
    inode_touch(dir, false, true, true);
    return d;
}

/* Take d off dir's list and free it (no link counts change). */
static void dentry_remove(struct inode *dir, struct dentry *d)
{
    struct dentry **pp = &dir->entries, *prev = NULL;
    while (*pp != d) {
        prev = *pp;
        pp = &(*pp)->next;
    }
    *pp = d->next;
    if (dir->last == d)
        dir->last = prev;
    unix_free(d);
    dir->size -= TMPFS_DIRENT_SIZE;
    inode_touch(dir, false, true, true);
}

/* Link child under dir as name (the caller checked that the name is free). A directory
 * child gets dir as its parent (a reference) and adds its ".." to dir's link count. */
long dir_link(struct inode *dir, const char *name, size_t len, struct inode *child)
{
    if (!dentry_add(dir, name, len, child))
        return -ENOMEM;
    child->nlink++;
    if (inode_is(child, S_IFDIR)) {
        child->nlink++;             /* its "." */
        dir->nlink++;               /* its ".." */
        child->parent = inode_get(dir);
    }
    inode_touch(child, false, false, true);
    return 0;
}

/* Remove d from dir: the child loses the link (a directory loses "." too, and its parent
 * the ".."; the parent reference stays until the directory is freed, for ".."). */
void dir_unlink(struct inode *dir, struct dentry *d)
{
    struct inode *child = d->inode;
    dentry_remove(dir, d);
    if (inode_is(child, S_IFDIR)) {
        child->nlink = 0;
        dir->nlink--;
    } else {
        child->nlink--;
    }
    inode_touch(child, false, false, true);
    inode_release_chain(child);
}

/* Move d's inode from directory from to a new name in to, replacing victim (an entry of
 * to, or NULL). Nothing changes when memory runs out (-ENOMEM). A directory that changes
 * parent moves its ".." link and its parent reference. */
long dir_rename(struct inode *from, struct dentry *d, struct inode *to, const char *name,
                size_t len, struct dentry *victim)
{
    struct inode *child = d->inode;
    if (!dentry_add(to, name, len, child))
        return -ENOMEM;
    if (victim)
        dir_unlink(to, victim);
    dentry_remove(from, d);
    if (inode_is(child, S_IFDIR) && from != to) {
        from->nlink--;
        to->nlink++;
        child->parent = inode_get(to);
        inode_put(from);
    }
    inode_touch(child, false, false, true);
    return 0;
}

/* Swap the inodes of two names (renameat2 RENAME_EXCHANGE). */
void dir_exchange(struct inode *dir1, struct dentry *d1, struct inode *dir2,
                  struct dentry *d2)
{
    struct inode *a = d1->inode, *b = d2->inode;
    d1->inode = b;
    d2->inode = a;
    if (dir1 != dir2 && inode_is(a, S_IFDIR)) {
        dir1->nlink--;
        dir2->nlink++;
        a->parent = inode_get(dir2);
        inode_put(dir1);
    }
    if (dir1 != dir2 && inode_is(b, S_IFDIR)) {
        dir2->nlink--;
        dir1->nlink++;
        b->parent = inode_get(dir1);
        inode_put(dir2);
    }
    inode_touch(dir1, false, true, true);
    inode_touch(dir2, false, true, true);
}

bool dir_is_empty(const struct inode *dir)
{
    return dir->entries == NULL;
}

/* Depth-first without recursion: descend into the first non-empty subdirectory, remove
 * names of a directory whose subdirectories are all empty, climb back. */
void dir_clear(struct inode *top)
{
    struct inode *cur = top;
    for (;;) {
        struct dentry *d = cur->entries;
        if (d && inode_is(d->inode, S_IFDIR) && !dir_is_empty(d->inode)) {
            cur = d->inode;
            continue;
        }
        if (d) {
            dir_unlink(cur, d);
            continue;
        }
        if (cur == top)
            return;
        cur = cur->parent;
    }
}

/* A file in the page cache grows by a new run (rt_file_grow): its mappings follow. */
static long pages_grow(struct inode *i, uint64_t cap)
{
    cap = page_up(cap);
    if (!unix_budget_ok(cap - i->cap) || rt_file_grow(&i->pages, cap, &i->data) < 0)
        return -ENOSPC;
    cached_bytes += cap - i->cap;
    i->cap = cap;
    return 0;
}

long inode_reserve(struct inode *i, uint64_t size)
{
    if (size > TMPFS_MAX_FILE)
        return -EFBIG;
    if (size <= i->cap)
        return 0;
    uint64_t cap = i->cap ? i->cap : 64;
    while (cap < size)
        cap *= 2;
    if (cap > TMPFS_MAX_FILE)
        cap = TMPFS_MAX_FILE;
    if (i->pages)
        return pages_grow(i, cap);
    unsigned char *data = unix_alloc_big(cap);
    if (!data)
        return -ENOSPC;
    if (i->size)
        vfs_memcpy(data, i->data, i->size);
    vfs_memset(data + i->size, 0, cap - i->size);
    unix_free(i->data);
    i->data = data;
    i->cap = cap;
    return 0;
}

long inode_resize(struct inode *i, uint64_t size)
{
    long r = inode_reserve(i, size);
    if (r < 0)
        return r;
    if (size < i->size)
        vfs_memset(i->data + size, 0, i->size - size);
    inode_set_size(i, size);
    return 0;
}

void inode_set_size(struct inode *i, uint64_t size)
{
    i->size = size;
    if (i->pages)
        rt_file_eof(i->pages, size);        /* pages past a shrunken end leave mappings */
}

long inode_pages(struct inode *i)
{
    if (i->pages)
        return 0;
    uint64_t cap = page_up(i->size ? i->size : 1), handle;
    unsigned char *data;
    if (!unix_budget_ok(cap) || rt_file_new(cap, &handle, &data) < 0)
        return -ENOMEM;
    vfs_memcpy(data, i->data, i->size);
    rt_file_eof(handle, i->size);
    unix_free(i->data);
    i->data = data;
    i->cap = cap;
    i->pages = handle;
    cached_bytes += cap;
    return 0;
}

long inode_set_target(struct inode *i, const char *target, size_t len)
{
    unsigned char *data = unix_alloc(len + 1);
    if (!data)
        return -ENOMEM;
    vfs_memcpy(data, target, len);
    data[len] = 0;
    unix_free(i->data);
    i->data = data;
    i->size = len;
    return 0;
}
