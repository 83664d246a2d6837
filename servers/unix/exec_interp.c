/*
 * The interpreter of a dynamic program (docs/unix.md, "Dynamic programs"). An ELF file
 * with PT_INTERP names the program that loads it and its libraries (glibc's
 * /lib64/ld-linux-x86-64.so.2). As Linux 6.1's load_elf_binary, execve checks it before
 * anything changes: a name of fewer than 2 or more than PATH_MAX bytes, or one that does
 * not end in its NUL, is -ENOEXEC; the name's bytes outside the file are -EIO; the file is
 * found as an executable is (-ENOENT, -EACCES...); one that is not an x86-64 ELF file is
 * -ELIBBAD. Its own checks are the program's (exec_check_elf; Linux finds some of these
 * only after the point of no return and kills the process instead). An ET_DYN
 * interpreter's loads go at INTERP_BIAS, above the kernel's area for mappings placed
 * "anywhere" (its region map ends 1 GiB below the stack) so that no mmap of the program
 * lands there first; the thread starts at the interpreter's entry, and the auxiliary
 * vector gives it AT_BASE with the program's own AT_PHDR, AT_PHNUM and AT_ENTRY.
 * AT_SYSINFO_EHDR is absent (no vDSO): glibc then makes real system calls.
 */
#include "devices.h"
#include "exec_elf.h"

#define INTERP_BIAS 0x7fffc0000000ull

/* The interpreter's name from the program's bytes into name (PATH_MAX): 0 or -errno. */
static long interp_name(const unsigned char *data, uint64_t size, const struct elf_phdr *ph,
                        char *name)
{
    if (ph->filesz > PATH_MAX || ph->filesz < 2)
        return -ENOEXEC;
    if (ph->offset > size || ph->filesz > size - ph->offset)
        return -EIO;                    /* Linux's elf_read of a short file */
    vfs_memcpy(name, data + ph->offset, ph->filesz);
    return name[ph->filesz - 1] ? -ENOEXEC : 0;
}

/* Is the file an x86-64 ELF file at all (Linux: else ELIBBAD)? */
static bool elf_x86_64(const struct inode *ino)
{
    const struct elf_ehdr *h = (const void *)ino->data;
    return ino->size >= sizeof(*h) && vfs_memcmp(h->ident, "\177ELF", 4) == 0 &&
           h->machine == EM_X86_64;
}

long interp_open(struct proc *p, const unsigned char *data, uint64_t size,
                 const struct image *prog, struct interp *out)
{
    static char name[PATH_MAX];
    out->ino = NULL;
    if (!prog->interp.type)
        return 0;
    long r = interp_name(data, size, &prog->interp, name);
    struct inode *ino = NULL;
    if (r == 0)
        r = vfs_exec_inode(p, name, &ino);
    if (r < 0)
        return r;
    r = elf_x86_64(ino) ? exec_check_elf(ino->data, ino->size, INTERP_BIAS, &out->img)
                        : -ELIBBAD;
    if (r == 0 && out->img.interp.type)
        r = -ELIBBAD;                   /* an interpreter that wants one of its own */
    if (r < 0) {
        inode_put(ino);
        return r;
    }
    out->ino = ino;
    return 0;
}

long interp_load(int task, const struct interp *in, struct image *prog)
{
    long r = exec_load_segments(task, in->ino, &in->img);
    if (r < 0)
        return r;
    const struct elf_ehdr *h = (const void *)in->ino->data;
    prog->start = in->img.entry;
    prog->base = h->type == ET_DYN ? INTERP_BIAS : 0;
    return 0;
}

void interp_close(struct interp *in)
{
    if (in->ino)
        inode_put(in->ino);
    in->ino = NULL;
}
