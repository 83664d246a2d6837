/*
 * Memory calls and the small calls a program expects at start-up (docs/unix.md,
 * "Memory and the rest"): brk, mmap (anonymous private and shared; a file's pages from
 * the page cache, shared or copy-on-write: docs/unix.md "File mappings"), munmap,
 * mprotect, madvise, arch_prctl, getrandom, reboot, sysinfo, the resource limits,
 * sched_yield, sched_getaffinity and sched_setaffinity, prctl's name, set_robust_list and rseq. Addresses are chosen by the kernel's region map
 * (rt_vm_map), which takes a hint as Linux does.
 */
#include "devices.h"
#include "runtime.h"
#include "signal.h"

#define PAGE 4096ull
#define MAP_FIXED_NOREPLACE 0x100000
#define MAP_KNOWN 0x1ff17f             /* every flag Linux 6.1 knows on x86-64 */

static bool page_aligned(uint64_t a) { return !(a & (PAGE - 1)); }
static uint64_t page_up(uint64_t a) { return (a + PAGE - 1) & ~(PAGE - 1); }

/* ---- brk ------------------------------------------------------------------------------ */
long lx_brk(struct ucall *c)
{
    struct proc *p = c->proc;
    uint64_t want = c->a[0];
    if (want < p->brk_start || want > p->brk_start + (1ull << 32))
        return (long)p->brk_end;
    uint64_t need = page_up(want);
    if (need > p->brk_mapped &&
        rt_vm_map(p->task, p->brk_mapped, need - p->brk_mapped, PROT_READ | PROT_WRITE,
                  VM_MMAP_FIXED) < 0)
        return (long)p->brk_end;            /* no room: the break stays */
    if (need < p->brk_mapped)
        rt_vm_unmap(p->task, need, p->brk_mapped - need);
    p->brk_mapped = need;
    p->brk_end = want;
    return (long)want;
}

/* ---- mmap ----------------------------------------------------------------------------- */
/* /dev/zero (1,5): its mappings are anonymous ones, as Linux's shmem_zero_setup. */
static bool is_dev_zero(const struct inode *i)
{
    return inode_is(i, S_IFCHR) && i->rdev_major == 1 && i->rdev_minor == 5;
}

/* The file of a file mapping: a readable regular file (*out), /dev/zero (*out NULL:
 * anonymous), or -errno in Linux's order (access mode, then whether it can be mapped). */
static long mapped_file(struct ucall *c, uint64_t prot, uint64_t type, struct inode **out)
{
    struct file *f = fd_file(c->proc, arg_fd(c->a[4]));
    if (!f)
        return -EBADF;
    unsigned acc = f->flags & O_ACCMODE;
    if (type != MAP_PRIVATE && (prot & PROT_WRITE) && (acc != O_RDWR || (f->flags & O_APPEND)))
        return -EACCES;
    if (acc == O_WRONLY)
        return -EACCES;
    *out = NULL;
    if (f->inode && is_dev_zero(f->inode))
        return 0;
    if (!f->inode || !inode_is(f->inode, S_IFREG))
        return -ENODEV;
    *out = f->inode;
    return inode_pages(f->inode);       /* the bytes into the page cache, once */
}

/* The mapping itself: a file's pages from the page cache (shared, or copy-on-write for
 * MAP_PRIVATE), else anonymous memory. */
static long map_it(struct ucall *c, uint64_t addr, uint64_t len, uint64_t prot, bool shared,
                   bool fixed, const struct inode *ino)
{
    unsigned flags = (shared ? VM_MMAP_SHARED : 0) | (fixed ? VM_MMAP_FIXED : 0);
    if (ino)
        return rt_file_map(c->proc->task, addr, len, (unsigned)prot, flags, ino->pages, c->a[5]);
    return rt_vm_map(c->proc->task, addr, len, (unsigned)prot, flags);
}

long lx_mmap(struct ucall *c)
{
    uint64_t addr = c->a[0], len = c->a[1], prot = c->a[2], flags = c->a[3], off = c->a[5];
    uint64_t type = flags & MAP_TYPE;
    if (!len || !page_aligned(off) || (type != MAP_SHARED && type != MAP_PRIVATE &&
                                       type != MAP_SHARED_VALIDATE))
        return -EINVAL;
    if (type == MAP_SHARED_VALIDATE && (flags & ~(uint64_t)MAP_KNOWN))
        return -EOPNOTSUPP;
    if (prot & ~(uint64_t)(PROT_READ | PROT_WRITE | PROT_EXEC))
        return -EINVAL;
    if (len > LINUX_TASK_SIZE)
        return -ENOMEM;
    len = page_up(len);
    bool fixed = flags & MAP_FIXED, noreplace = flags & MAP_FIXED_NOREPLACE;
    if ((fixed || noreplace) && !page_aligned(addr))
        return -EINVAL;
    struct inode *ino = NULL;
    if (!(flags & MAP_ANONYMOUS)) {
        long r = mapped_file(c, prot, type, &ino);
        if (r < 0)
            return r;
    }
    long at = map_it(c, addr, len, prot, type != MAP_PRIVATE, fixed, ino);
    if (at < 0)
        return at == E_INVAL && fixed ? -EINVAL : -ENOMEM;
    if (noreplace && !fixed && (uint64_t)at != addr) {
        rt_vm_unmap(c->proc->task, (uint64_t)at, len);
        return -EEXIST;
    }
    return at;
}

/* munmap, mprotect and madvise are LX_UNLOCKED (syscalls.def): they check their
 * arguments and act on c->task only. */
long lx_munmap(struct ucall *c)
{
    uint64_t addr = c->a[0], len = c->a[1];
    if (!page_aligned(addr) || !len || !user_range_ok(addr, page_up(len)))
        return -EINVAL;
    return rt_vm_unmap(c->task, addr, page_up(len)) < 0 ? -EINVAL : 0;
}

long lx_mprotect(struct ucall *c)
{
    uint64_t addr = c->a[0], len = c->a[1], prot = c->a[2];
    if (!page_aligned(addr) || (prot & ~(uint64_t)(PROT_READ | PROT_WRITE | PROT_EXEC)))
        return -EINVAL;
    if (!len)
        return 0;
    if (!user_range_ok(addr, page_up(len)))
        return -ENOMEM;
    long r = rt_vm_protect(c->task, addr, page_up(len), (unsigned)prot);
    return r < 0 ? -ENOMEM : 0;
}

/* The advice values Linux 6.1 knows (MADV_NORMAL..DONTNEED, FREE..COLLAPSE, HWPOISON,
 * SOFT_OFFLINE); any other is EINVAL. */
static bool known_advice(uint64_t a) { return a <= 4 || (a >= 8 && a <= 25) || a == 100 || a == 101; }

#define MADV_DONTNEED 4
#define MADV_DONTNEED_LOCKED 24

/* madvise: Linux 6.1's checks in its order (advice, alignment, a length that wraps) and
 * an empty range is 0. MADV_DONTNEED drops the range's pages (rt_vm_discard): private
 * anonymous memory reads back as zeros, shared memory keeps its contents; a hole in the
 * range is ENOMEM, as Linux, after the mapped parts are dropped. Every other advice is
 * accepted and ignored (MADV_FREE may keep the data, as Linux until reclaim). A private
 * file mapping drops its copies and reads the file's pages again, as Linux. */
long lx_madvise(struct ucall *c)
{
    uint64_t start = c->a[0], len = page_up(c->a[1]), advice = c->a[2];
    if (!known_advice(advice) || !page_aligned(start) || (c->a[1] && !len) ||
        start + len < start)
        return -EINVAL;
    if (!len || (advice != MADV_DONTNEED && advice != MADV_DONTNEED_LOCKED))
        return 0;
    long r = rt_vm_discard(c->task, start, len);
    return r == 0 ? 0 : -ENOMEM;
}

/* ---- arch_prctl ----------------------------------------------------------------------- */
#define ARCH_SET_FS 0x1002
#define ARCH_GET_FS 0x1003

long lx_arch_prctl(struct ucall *c)
{
    struct user_regs r;
    if (c->a[0] != ARCH_SET_FS && c->a[0] != ARCH_GET_FS)
        return -EINVAL;
    if (rt_regs_get(c->thread->tid, &r) < 0)
        return -EINVAL;
    if (c->a[0] == ARCH_GET_FS)
        return copy_out(c->proc, c->a[1], &r.fs_base, 8);
    if (c->a[1] >= LINUX_TASK_SIZE)
        return -EPERM;
    r.fs_base = c->a[1];
    r.rax = 0;
    return rt_regs_set(c->thread->tid, &r) < 0 ? -EPERM : 0;
}

/* ---- random bytes, power, system information ------------------------------------------ */
long lx_getrandom(struct ucall *c)
{
    if (c->a[2] & ~7ull)
        return -EINVAL;
    uint64_t len = c->a[1] < 33554431 ? c->a[1] : 33554431;
    unsigned char chunk[256];
    for (uint64_t done = 0; done < len;) {
        size_t n = len - done < sizeof(chunk) ? (size_t)(len - done) : sizeof(chunk);
        unix_random(chunk, n);
        if (copy_out(c->proc, c->a[0] + done, chunk, n) < 0)
            return done ? (long)done : -EFAULT;
        done += n;
    }
    return (long)len;
}

long lx_reboot(struct ucall *c)
{
    uint32_t magic2 = (uint32_t)c->a[1], cmd = (uint32_t)c->a[2];
    if ((uint32_t)c->a[0] != 0xfee1dead ||
        (magic2 != 672274793 && magic2 != 85072278 && magic2 != 369367448 &&
         magic2 != 537993216))
        return -EINVAL;
    if (cmd == 0x89abcdef || cmd == 0)              /* Ctrl-Alt-Del on / off */
        return 0;
    if (cmd != 0x4321fedc && cmd != 0xcdef0123 && cmd != 0x01234567)
        return -EINVAL;
    unix_stats_write();
    rt_poweroff();                                  /* power off, halt and restart alike */
    return 0;
}

static void count_proc(struct proc *p, void *arg)
{
    *(unsigned *)arg += !p->zombie;
}

long lx_sysinfo(struct ucall *c)
{
    unsigned procs = 0;
    proc_for_each(count_proc, &procs);
    uint64_t info[14] = {0};
    info[0] = unix_now_ns() / 1000000000ull;      /* uptime, s */
    rt_memory(&info[4], &info[5]);                /* totalram, freeram */
    info[10] = procs & 0xffff;                    /* procs (u16 at offset 80) */
    info[13] = 1;                                 /* mem_unit (u32 at offset 104) */
    return copy_out(c->proc, c->a[0], info, sizeof(info));
}

/* ---- resource limits ------------------------------------------------------------------ */
#define RLIM_INF UINT64_MAX
#define NLIMITS 16

static void limit_of(const struct proc *p, unsigned res, uint64_t out[2])
{
    static const uint64_t defaults[NLIMITS][2] = {
        {RLIM_INF, RLIM_INF}, {RLIM_INF, RLIM_INF}, {RLIM_INF, RLIM_INF},
        {8u << 20, RLIM_INF}, {0, RLIM_INF}, {RLIM_INF, RLIM_INF},
        {UNIX_MAX_PROCS, UNIX_MAX_PROCS}, {UNIX_MAX_FDS, UNIX_MAX_FDS},
        {8u << 20, 8u << 20}, {RLIM_INF, RLIM_INF}, {RLIM_INF, RLIM_INF},
        {4096, 4096}, {819200, 819200}, {0, 0}, {0, 0}, {RLIM_INF, RLIM_INF},
    };
    const uint64_t *v = (p->rlim_set & (1u << res)) ? p->rlim[res] : defaults[res];
    out[0] = v[0];
    out[1] = v[1];
}

uint64_t proc_rlimit_cur(const struct proc *p, unsigned res)
{
    uint64_t v[2];
    limit_of(p, res, v);
    return v[0];
}

/* prlimit64's core: old limits out, new limits in (either pointer may be 0). */
static long rlimit(struct ucall *c, struct proc *p, unsigned res, uint64_t unew, uint64_t uold)
{
    if (res >= NLIMITS)
        return -EINVAL;
    uint64_t old[2], lim[2];
    limit_of(p, res, old);
    if (unew) {
        if (copy_in(c->proc, lim, unew, sizeof(lim)) < 0)
            return -EFAULT;
        if (lim[0] > lim[1])
            return -EINVAL;
        if ((res == 7 && lim[1] > UNIX_MAX_FDS) || (res == 6 && lim[1] > UNIX_MAX_PROCS))
            return -EPERM;            /* above what the server can give */
    }
    if (uold && copy_out(c->proc, uold, old, sizeof(old)) < 0)
        return -EFAULT;
    if (unew) {
        vfs_memcpy(p->rlim[res], lim, sizeof(lim));
        p->rlim_set |= 1u << res;
    }
    return 0;
}

long lx_getrlimit(struct ucall *c) { return rlimit(c, c->proc, (unsigned)c->a[0], 0, c->a[1]); }
long lx_setrlimit(struct ucall *c) { return rlimit(c, c->proc, (unsigned)c->a[0], c->a[1], 0); }

long lx_prlimit64(struct ucall *c)
{
    int32_t pid = (int32_t)c->a[0];
    struct proc *p = pid == 0 ? c->proc : pid > 0 ? proc_find(pid) : NULL;
    if (!p || p->zombie)
        return -ESRCH;
    return rlimit(c, p, (unsigned)c->a[1], c->a[2], c->a[3]);
}

/* ---- scheduling, names, robust lists, rseq -------------------------------------------- */
long lx_sched_yield(struct ucall *c)
{
    (void)c;
    return 0;
}

/* The thread sched_*affinity's pid names (a Linux thread id; 0: the caller), or NULL. */
static struct uthread *affinity_target(struct ucall *c, int32_t pid)
{
    return pid == 0 ? c->thread : pid > 0 ? thread_find_linux(0, pid) : NULL;
}

/* The thread's CPUs, the kernel's mask (every CPU that runs threads until it is set). */
long lx_sched_getaffinity(struct ucall *c)
{
    uint64_t len = c->a[1];
    if (len < 8 || (len & 7))
        return -EINVAL;
    struct uthread *t = affinity_target(c, (int32_t)c->a[0]);
    if (!t)
        return -ESRCH;
    uint64_t m;
    long r = rt_thread_affinity(t->tid, 0, &m);
    if (r < 0)
        return rt_errno(r);
    return copy_out(c->proc, c->a[2], &m, 8) < 0 ? -EFAULT : 8;
}

/* Linux's order: the mask is read first (a shorter one is zero-extended, a longer one
 * cut to 64 CPUs: EFAULT), then the thread (ESRCH), the caller's right (root, or its
 * effective uid the target's real or effective one: EPERM), then the mask must name a CPU
 * that runs threads (EINVAL). Forks, threads and exec inherit it (uthread.affinity). */
long lx_sched_setaffinity(struct ucall *c)
{
    uint64_t mask = 0;
    uint32_t len = (uint32_t)c->a[1];
    if (copy_in(c->proc, &mask, c->a[2], len < 8 ? len : 8) < 0)
        return -EFAULT;
    struct uthread *t = affinity_target(c, (int32_t)c->a[0]);
    if (!t)
        return -ESRCH;
    uint32_t euid = c->proc->uid[ID_EFFECTIVE];
    if (euid != 0 && euid != t->proc->uid[ID_REAL] && euid != t->proc->uid[ID_EFFECTIVE])
        return -EPERM;
    long r = mask ? rt_thread_affinity(t->tid, mask, NULL) : E_INVAL;
    if (r < 0)
        return rt_errno(r);
    t->affinity = mask;
    return 0;
}

void thread_inherit_affinity(struct uthread *t, const struct uthread *from)
{
    t->affinity = from ? from->affinity : 0;      /* init's first image: no caller */
    if (t->affinity)
        rt_thread_affinity(t->tid, t->affinity, NULL);
}

#define PR_SET_NAME 15
#define PR_GET_NAME 16

long lx_prctl(struct ucall *c)
{
    char name[16] = {0};
    if (c->a[0] == PR_GET_NAME)
        return copy_out(c->proc, c->a[1], c->proc->comm, sizeof(c->proc->comm));
    if (c->a[0] != PR_SET_NAME)
        return -EINVAL;
    for (size_t i = 0; i < sizeof(name) - 1; i++) {        /* at most 15 bytes, as Linux */
        if (copy_in(c->proc, &name[i], c->a[1] + i, 1) < 0)
            return -EFAULT;
        if (!name[i])
            break;
    }
    vfs_memcpy(c->proc->comm, name, sizeof(name));
    return 0;
}

long lx_set_robust_list(struct ucall *c)
{
    return c->a[1] == 24 ? 0 : -EINVAL;      /* the list is not walked at exit */
}

/* rseq: the arguments are checked as Linux does (length 32, only the unregister flag);
 * registering is not supported (ENOSYS: glibc and musl then go on without it). */
long lx_rseq(struct ucall *c)
{
    if (c->a[1] != 32 || (c->a[2] & ~1ull))
        return -EINVAL;
    return -ENOSYS;
}
