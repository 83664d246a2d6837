/*
 * execve of ELF programs (docs/unix.md, "Processes"). The file comes from the VFS
 * (vfs_exec_inode); the header and program headers are checked before anything changes
 * (a malformed file is -ENOEXEC or -EINVAL, the process goes on); then a new task gets
 * the PT_LOAD segments (the file's pages from the page cache, copy-on-write, as mmap
 * maps them: docs/unix.md "File mappings") and a stack with argc, argv, envp and the
 * auxiliary vector laid out as the x86-64 psABI says, and one thread starts at the entry. The old task, with all its
 * threads, ends. A dynamic program (PT_INTERP) gets its interpreter loaded too and
 * starts there (exec_interp.c).
 */
#include "devices.h"
#include "runtime.h"
#include "signal.h"
#include "exec_elf.h"

#define DYN_BIAS 0x555555554000ull      /* where a PIE program goes, as Linux */
#define ARG_MAX_BYTES (128u * 1024)     /* argv + envp strings (Linux: a quarter of the
                                           stack limit, 2 MiB; E2BIG beyond ours) */
#define ARG_MAX_PTRS 4096

static uint64_t page_down(uint64_t a) { return a & ~(PAGE - 1); }
static uint64_t page_up(uint64_t a) { return (a + PAGE - 1) & ~(PAGE - 1); }

static long check_header(const struct elf_ehdr *h, uint64_t size)
{
    if (size < sizeof(*h) || vfs_memcmp(h->ident, "\177ELF", 4) != 0)
        return -ENOEXEC;
    if (h->ident[4] != 2 || h->ident[5] != 1)           /* 64-bit, little-endian */
        return -ENOEXEC;
    if ((h->type != ET_EXEC && h->type != ET_DYN) || h->machine != EM_X86_64)
        return -ENOEXEC;
    if (h->phentsize != sizeof(struct elf_phdr) || h->phnum == 0 ||
        h->phnum > 65536 / sizeof(struct elf_phdr))
        return -ENOEXEC;
    if (h->phoff > size || (uint64_t)h->phnum * sizeof(struct elf_phdr) > size - h->phoff)
        return -ENOEXEC;
    return 0;
}

/* One PT_LOAD: inside the file, inside user space, after the previous one. */
static long check_load(const struct elf_phdr *ph, uint64_t size, uint64_t bias,
                       const struct image *img)
{
    if ((ph->offset & (PAGE - 1)) != (ph->vaddr & (PAGE - 1)) || ph->filesz > ph->memsz)
        return -EINVAL;
    if (ph->offset > size || ph->filesz > size - ph->offset)
        return -EINVAL;
    uint64_t start = ph->vaddr + bias;
    if (start < 0x10000 || ph->memsz > STACK_TOP - STACK_SIZE ||
        start > STACK_TOP - STACK_SIZE - ph->memsz)
        return -EINVAL;
    if (img->nload == MAX_LOADS)
        return -ENOEXEC;
    if (img->nload && start < img->end)
        return -EINVAL;                 /* overlapping, or not in ascending order */
    return 0;
}

static bool entry_in_code(const struct image *img)
{
    for (int i = 0; i < img->nload; i++) {
        const struct elf_phdr *l = &img->load[i];
        if ((l->flags & PF_X) && img->entry >= l->vaddr && img->entry < l->vaddr + l->memsz)
            return true;
    }
    return false;
}

long exec_check_elf(const unsigned char *data, uint64_t size, uint64_t dyn_bias,
                    struct image *img)
{
    const struct elf_ehdr *h = (const void *)data;
    long r = check_header(h, size);
    if (r < 0)
        return r;
    static struct elf_phdr ph[65536 / sizeof(struct elf_phdr)];
    vfs_memcpy(ph, data + h->phoff, h->phnum * sizeof(struct elf_phdr));
    uint64_t bias = h->type == ET_DYN ? dyn_bias : 0, phdr = 0, first_file = 0;
    vfs_memset(img, 0, sizeof(*img));
    for (int i = 0; i < h->phnum; i++) {
        if (ph[i].type == PT_INTERP && !img->interp.type)
            img->interp = ph[i];               /* the first counts, as Linux */
        if (ph[i].type == PT_PHDR)
            phdr = ph[i].vaddr + bias;
        if (ph[i].type != PT_LOAD || ph[i].memsz == 0)
            continue;
        if ((r = check_load(&ph[i], size, bias, img)) < 0)
            return r;
        if (!img->nload)
            first_file = ph[i].vaddr + bias - ph[i].offset;
        img->load[img->nload] = ph[i];
        img->load[img->nload].vaddr += bias;
        img->end = img->load[img->nload].vaddr + ph[i].memsz;
        img->nload++;
    }
    if (!img->nload)
        return -ENOEXEC;
    img->entry = img->start = h->entry + bias;
    img->phdr = phdr ? phdr : first_file + h->phoff;
    img->phnum = h->phnum;
    return entry_in_code(img) ? 0 : -EINVAL;
}

/* ---- loading -------------------------------------------------------------------------- */
static unsigned prot_of(const struct elf_phdr *l)
{
    return ((l->flags & PF_R) ? PROT_READ : 0) | ((l->flags & PF_W) ? PROT_WRITE : 0) |
           ((l->flags & PF_X) ? PROT_EXEC : 0);
}

/* The pages of load i that map the file itself (copy-on-write, from the page cache):
 * [lo, *fhi), lo its first page not mapped by the load before; the whole pages of its
 * file bytes, the last partial one too when no .bss follows in it, none shared with the
 * next load. *fhi == lo: none. */
static void file_pages(const struct image *img, int i, uint64_t lo, uint64_t *fhi)
{
    const struct elf_phdr *l = &img->load[i];
    uint64_t end = l->vaddr + l->filesz;
    uint64_t hi = l->memsz > l->filesz ? page_down(end) : page_up(end);
    if (i + 1 < img->nload && page_down(img->load[i + 1].vaddr) < hi)
        hi = page_down(img->load[i + 1].vaddr);
    *fhi = hi > lo ? hi : lo;
}

/* Bytes [from, to) of load l copied from the file into the task (to <= from: none). */
static long copy_part(int task, const unsigned char *data, const struct elf_phdr *l,
                      uint64_t from, uint64_t to)
{
    if (to <= from)
        return 0;
    return rt_copy_to(task, from, data + l->offset + (from - l->vaddr), to - from);
}

/* Load l's pages from lo (the first not mapped already) to hi: the file's own pages
 * mapped copy-on-write, the rest (.bss, a page shared with a neighbour) anonymous, with
 * the file bytes that fall there copied in. Linux maps the partial pages from the file
 * too and zeroes their tails, which gives the same bytes. */
static long load_one(int task, struct inode *ino, const struct image *img, int i, uint64_t lo,
                     uint64_t hi)
{
    const struct elf_phdr *l = &img->load[i];
    uint64_t fhi, fend = l->vaddr + l->filesz;
    file_pages(img, i, lo, &fhi);
    uint64_t off = page_down(l->offset) + (lo - page_down(l->vaddr));
    if (fhi > lo && rt_file_map(task, lo, fhi - lo, PROT_READ | PROT_WRITE, VM_MMAP_FIXED,
                                ino->pages, off) < 0)
        return -ENOMEM;
    if (hi > fhi && rt_vm_map(task, fhi, hi - fhi, PROT_READ | PROT_WRITE, VM_MMAP_FIXED) < 0)
        return -ENOMEM;
    if (copy_part(task, ino->data, l, l->vaddr, fend < lo ? fend : lo) < 0 ||
        copy_part(task, ino->data, l, l->vaddr > fhi ? l->vaddr : fhi, fend) < 0)
        return -ENOMEM;
    return 0;
}

/* Map every load (pages two loads share are mapped once) from the page cache, then give
 * each load's pages its protection together with a neighbour's on a shared page. */
long exec_load_segments(int task, struct inode *ino, const struct image *img)
{
    if (inode_pages(ino) < 0)
        return -ENOMEM;
    uint64_t mapped = 0;
    for (int i = 0; i < img->nload; i++) {
        const struct elf_phdr *l = &img->load[i];
        uint64_t lo = page_down(l->vaddr), hi = page_up(l->vaddr + l->memsz);
        if (lo < mapped)
            lo = mapped;
        if (load_one(task, ino, img, i, lo, hi > lo ? hi : lo) < 0)
            return -ENOMEM;
        mapped = hi > mapped ? hi : mapped;
    }
    for (int i = 0; i < img->nload; i++) {
        const struct elf_phdr *l = &img->load[i];
        uint64_t lo = page_down(l->vaddr), hi = page_up(l->vaddr + l->memsz);
        unsigned prot = prot_of(l);
        if (i > 0 && page_up(img->load[i - 1].vaddr + img->load[i - 1].memsz) > lo)
            prot |= prot_of(&img->load[i - 1]);
        if (i + 1 < img->nload && page_down(img->load[i + 1].vaddr) < hi)
            prot |= prot_of(&img->load[i + 1]);
        if (rt_vm_protect(task, lo, hi - lo, prot) < 0)
            return -ENOMEM;
    }
    return 0;
}

/* ---- the stack ------------------------------------------------------------------------ */
enum {
    AT_NULL = 0, AT_PHDR = 3, AT_PHENT = 4, AT_PHNUM = 5, AT_PAGESZ = 6, AT_BASE = 7,
    AT_FLAGS = 8, AT_ENTRY = 9, AT_UID = 11, AT_EUID = 12, AT_GID = 13, AT_EGID = 14,
    AT_PLATFORM = 15, AT_HWCAP = 16, AT_CLKTCK = 17, AT_SECURE = 23, AT_RANDOM = 25,
    AT_HWCAP2 = 26, AT_EXECFN = 31,
};
#define AUXV_PAIRS 19
#define HWCAP_X86_64 0x178bfbffull      /* CPUID.1:EDX of QEMU's default CPU */

/* The image of the stack's top, built here and copied out once. */
static unsigned char stack_image[ARG_MAX_BYTES + 8192 + (ARG_MAX_PTRS + 2 * AUXV_PAIRS + 4) * 8];

static size_t count(const char *const *v)
{
    size_t n = 0;
    while (v[n])
        n++;
    return n;
}

/* Strings from the top down: execfn, envp, argv, "x86_64", 16 random bytes. Fills
 * uargv/uenvp with their user addresses; the lowest address used. */
static uint64_t push_strings(uint64_t top, const char *path, const char *const *argv,
                             const char *const *envp, uint64_t *uargv, uint64_t *uenvp,
                             uint64_t *execfn, uint64_t *platform, uint64_t *random)
{
    uint64_t at = top - 8;             /* 8 zero bytes at the very top, as Linux */
    size_t base = sizeof(stack_image) - (size_t)(top - at);
#define PUSH(src, n)                                                                   \
    (at -= (n), base -= (n), vfs_memcpy(stack_image + base, (src), (n)), at)
    *execfn = PUSH(path, vfs_strlen(path) + 1);
    for (size_t i = count(envp); i-- > 0;)
        uenvp[i] = PUSH(envp[i], vfs_strlen(envp[i]) + 1);
    for (size_t i = count(argv); i-- > 0;)
        uargv[i] = PUSH(argv[i], vfs_strlen(argv[i]) + 1);
    *platform = PUSH("x86_64", 7);
    unsigned char rnd[16];
    unix_random(rnd, sizeof(rnd));
    *random = PUSH(rnd, 16);
#undef PUSH
    return at;
}

/* The whole stack top for the program: the initial rsp (argc), or 0 when too big. */
static uint64_t build_stack(int task, const struct proc *p, const struct image *img,
                            const char *path, const char *const *argv, const char *const *envp)
{
    static uint64_t uargv[ARG_MAX_PTRS], uenvp[ARG_MAX_PTRS];
    size_t argc = count(argv), envc = count(envp);
    uint64_t execfn, platform, random;
    vfs_memset(stack_image, 0, sizeof(stack_image));
    uint64_t low = push_strings(STACK_TOP, path, argv, envp, uargv, uenvp, &execfn,
                                &platform, &random);
    uint64_t words = 1 + argc + 1 + envc + 1 + 2 * AUXV_PAIRS;
    uint64_t sp = (low - words * 8) & ~15ull;
    static uint64_t v[4 + ARG_MAX_PTRS + 2 * AUXV_PAIRS];
    uint64_t n = 0;
    v[n++] = argc;
    for (size_t i = 0; i < argc; i++)
        v[n++] = uargv[i];
    v[n++] = 0;
    for (size_t i = 0; i < envc; i++)
        v[n++] = uenvp[i];
    v[n++] = 0;
    const uint64_t aux[AUXV_PAIRS][2] = {
        {AT_PHDR, img->phdr}, {AT_PHENT, sizeof(struct elf_phdr)}, {AT_PHNUM, img->phnum},
        {AT_PAGESZ, PAGE}, {AT_BASE, img->base}, {AT_FLAGS, 0}, {AT_ENTRY, img->entry},
        {AT_UID, p->uid[ID_REAL]}, {AT_EUID, p->uid[ID_EFFECTIVE]},
        {AT_GID, p->gid[ID_REAL]}, {AT_EGID, p->gid[ID_EFFECTIVE]},
        {AT_PLATFORM, platform}, {AT_HWCAP, HWCAP_X86_64}, {AT_CLKTCK, 100},
        {AT_SECURE, 0}, {AT_RANDOM, random}, {AT_HWCAP2, 0}, {AT_EXECFN, execfn},
        {AT_NULL, 0},
    };
    for (int i = 0; i < AUXV_PAIRS; i++) {
        v[n++] = aux[i][0];
        v[n++] = aux[i][1];
    }
    size_t base = sizeof(stack_image) - (size_t)(STACK_TOP - sp);
    vfs_memcpy(stack_image + base, v, n * 8);
    if (rt_vm_map(task, STACK_TOP - STACK_SIZE, STACK_SIZE, PROT_READ | PROT_WRITE,
                  VM_MMAP_FIXED) < 0 ||
        rt_copy_to(task, sp, stack_image + base, (size_t)(STACK_TOP - sp)) < 0)
        return 0;
    return sp;
}

/* The argument strings must fit the stack image. */
static long check_args(const char *path, const char *const *argv, const char *const *envp)
{
    size_t bytes = vfs_strlen(path) + 1, ptrs = count(argv) + count(envp);
    for (size_t i = 0; argv[i]; i++)
        bytes += vfs_strlen(argv[i]) + 1;
    for (size_t i = 0; envp[i]; i++)
        bytes += vfs_strlen(envp[i]) + 1;
    return bytes > ARG_MAX_BYTES || ptrs > ARG_MAX_PTRS ? -E2BIG : 0;
}

/* ---- replacing the process's program -------------------------------------------------- */
static void set_comm(struct proc *p, const char *path)
{
    const char *name = path;
    for (const char *s = path; *s; s++)
        if (*s == '/')
            name = s + 1;
    size_t n = vfs_strlen(name);
    n = n < sizeof(p->comm) - 1 ? n : sizeof(p->comm) - 1;
    vfs_memcpy(p->comm, name, n);
    p->comm[n] = 0;
}

/* ---- what /proc shows of the program ---------------------------------------------------- */
/* The executable (a new reference) and argv's bytes, each string with its NUL, as Linux's
 * argument area; NULL without memory. */
static struct proc_image *image_of(struct inode *exe, const char *const *argv)
{
    size_t len = 0;
    for (size_t i = 0; argv[i]; i++)
        len += vfs_strlen(argv[i]) + 1;
    struct proc_image *img = unix_alloc(sizeof(*img) + len);
    if (!img)
        return NULL;
    img->refs = 1;
    img->exe = inode_get(exe);
    for (size_t i = 0; argv[i]; i++) {
        size_t n = vfs_strlen(argv[i]) + 1;
        vfs_memcpy(img->args + img->args_len, argv[i], n);
        img->args_len += n;
    }
    return img;
}

/* A new task with the program (and its interpreter, in) loaded: its id and the thread's
 * registers, or -errno. */
static long new_image(struct proc *p, const char *path, struct image *img,
                      struct inode *ino, const struct interp *in,
                      const char *const *argv, const char *const *envp,
                      struct user_regs *regs)
{
    long task = rt_task_create(p->comm[0] ? p->comm : "linux");
    if (task < 0)
        return rt_errno(task);
    long r = rt_task_linux((int)task);
    if (r == 0)
        r = exec_load_segments((int)task, ino, img);
    if (r == 0 && in->ino)
        r = interp_load((int)task, in, img);
    uint64_t sp = r == 0 ? build_stack((int)task, p, img, path, argv, envp) : 0;
    if (!sp) {
        rt_task_kill((int)task);
        rt_task_reap((int)task);
        return r < 0 ? r : -ENOMEM;
    }
    vfs_memset(regs, 0, sizeof(*regs));
    regs->rip = img->start;
    regs->rsp = sp;
    return task;
}

/* Does another live process run in p's task (a vfork or CLONE_VM child, or the parent
 * it shares with)? */
static bool task_shared(const struct proc *p)
{
    for (const struct proc *q = proc_next(NULL); q; q = proc_next(q))
        if (q != p && q->task == p->task)
            return true;
    return false;
}

/* End every thread of p and its task (execve's old image, exit). A task another process
 * still runs in stays: only p's threads end, each clearing its clear_child_tid word
 * (CLONE_CHILD_CLEARTID) and waking a futex waiter there, as Linux's mm_release when the
 * memory lives on; and p's parent is woken (a vfork parent waits until its child leaves
 * the memory it lent). */
void proc_end_task(struct proc *p)
{
    bool shared = p->task > 0 && task_shared(p);
    while (p->threads) {
        struct uthread *t = p->threads;
        signal_thread_exit(t);
        if (shared) {
            futex_clear_child_tid(t);
            rt_thread_end(t->tid);
        }
        uthread_free(t);
    }
    if (p->task > 0 && !shared) {
        rt_task_kill(p->task);
        rt_task_reap(p->task);
    }
    p->task = 0;
    if (shared)
        proc_wake_parent(p);
}

/* Load the ELF file ino into a new task and end p's old one: 0 or -errno (p unchanged). */
static long exec_elf(struct proc *p, const struct uthread *caller, struct inode *ino,
                     const char *execfn, const char *const *argv, const char *const *envp)
{
    static struct image img;
    static struct interp in;
    long r = exec_check_elf(ino->data, ino->size, DYN_BIAS, &img);
    if (r == 0)
        r = interp_open(p, ino->data, ino->size, &img, &in);
    struct proc_image *shown = r < 0 ? NULL : image_of(ino, argv);
    r = r < 0 ? r : shown ? 0 : -ENOMEM;
    struct user_regs regs;
    char old_comm[16];
    vfs_memcpy(old_comm, p->comm, sizeof(old_comm));
    set_comm(p, execfn);
    long task = r < 0 ? r : new_image(p, execfn, &img, ino, &in, argv, envp, &regs);
    interp_close(&in);
    if (task < 0) {
        vfs_memcpy(p->comm, old_comm, sizeof(old_comm));
        proc_image_put(shown);
        return task;
    }
    proc_end_task(p);            /* the point of no return; caller stays readable */
    proc_image_put(p->image);
    p->image = shown;
    p->task = (int)task;
    long tid = rt_thread_start((int)task, &regs);
    struct uthread *t = tid < 0 ? NULL : uthread_new(p, (int)tid, p->pid);
    if (!t) {
        proc_exit(p, SIGKILL);
        return UNIX_NOREPLY;
    }
    signal_thread_new(t, caller);
    thread_inherit_affinity(t, caller);
    p->brk_start = p->brk_end = p->brk_mapped = page_up(img.end);
    fdtable_exec(p->fds);
    if (signal_exec(p) < 0) {
        proc_exit(p, SIGKILL);
        return UNIX_NOREPLY;
    }
    return 0;
}

long exec_file(struct proc *p, const struct uthread *caller, const char *file,
               const char *execfn, const char *const *argv, const char *const *envp,
               int depth)
{
    long r = check_args(execfn, argv, envp);
    struct inode *ino = NULL;
    if (r == 0)
        r = vfs_exec_inode(p, file, &ino);
    if (r < 0)
        return r;
    if (depth > EXEC_MAX_DEPTH)
        r = -ELOOP;
    else if (exec_is_script(ino))
        r = exec_script(p, caller, ino, file, execfn, argv, envp, depth);
    else
        r = exec_elf(p, caller, ino, execfn, argv, envp);
    inode_put(ino);
    return r;
}

long exec_image(struct proc *p, const struct uthread *caller, const char *path,
                const char *const *argv, const char *const *envp)
{
    return exec_file(p, caller, path, path, argv, envp, 0);
}

/* ---- execve --------------------------------------------------------------------------- */
static char arg_bytes[ARG_MAX_BYTES];
static const char *arg_ptrs[ARG_MAX_PTRS + 2];

/* A NULL-terminated array of user strings into arg_bytes/arg_ptrs from *used on. */
static long copy_strings(struct proc *p, uint64_t uarray, size_t *used, size_t *nptr,
                         const char ***out)
{
    *out = &arg_ptrs[*nptr];
    for (size_t i = 0; uarray; i++) {
        uint64_t u;
        if (copy_in(p, &u, uarray + i * 8, 8) < 0)
            return -EFAULT;
        if (!u)
            break;
        if (*nptr >= ARG_MAX_PTRS)
            return -E2BIG;
        long n = copy_in_str(p, arg_bytes + *used, u, ARG_MAX_BYTES - *used);
        if (n < 0)
            return n == -ENAMETOOLONG ? -E2BIG : n;
        arg_ptrs[(*nptr)++] = arg_bytes + *used;
        *used += (size_t)n + 1;
    }
    arg_ptrs[(*nptr)++] = NULL;
    return 0;
}

long lx_execve(struct ucall *c)
{
    static char path[4096];
    long r = vfs_path_in(c, c->a[0], path);
    if (r < 0)
        return r;
    size_t used = 0, nptr = 0;
    const char **argv, **envp;
    if ((r = copy_strings(c->proc, c->a[1], &used, &nptr, &argv)) < 0 ||
        (r = copy_strings(c->proc, c->a[2], &used, &nptr, &envp)) < 0)
        return r;
    r = exec_image(c->proc, c->thread, path, argv, envp);
    return r < 0 ? r : UNIX_NOREPLY;         /* the calling thread is gone */
}
