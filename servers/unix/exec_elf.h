/*
 * What execve's parts share about ELF files (exec.c: checking and loading a program;
 * exec_interp.c: the interpreter of a dynamic one). The layouts are the ELF-64 ones of
 * the System V ABI; docs/unix.md, "Processes" and "Dynamic programs".
 */
#ifndef EXEC_ELF_H
#define EXEC_ELF_H

#include <stdint.h>

struct proc;
struct inode;

struct elf_ehdr {
    unsigned char ident[16];
    uint16_t type, machine;
    uint32_t version;
    uint64_t entry, phoff, shoff;
    uint32_t flags;
    uint16_t ehsize, phentsize, phnum, shentsize, shnum, shstrndx;
};

struct elf_phdr {
    uint32_t type, flags;
    uint64_t offset, vaddr, paddr, filesz, memsz, align;
};

#define ET_EXEC 2
#define ET_DYN 3
#define EM_X86_64 62
#define PT_LOAD 1
#define PT_INTERP 3
#define PT_PHDR 6
#define PF_X 1
#define PF_W 2
#define PF_R 4
#define PAGE 4096ull
#define MAX_LOADS 16
#define STACK_TOP 0x7ffffffff000ull
#define STACK_SIZE (8ull << 20)

/* What the checks found: the loads in address order, with the bias applied. */
struct image {
    struct elf_phdr load[MAX_LOADS];
    int nload;
    uint64_t entry, phdr, phnum, end;
    struct elf_phdr interp;           /* its PT_INTERP; type 0 when it has none */
    uint64_t start;                   /* where its first thread starts: entry, or the
                                         interpreter's entry (exec_interp.c) */
    uint64_t base;                    /* AT_BASE: the interpreter's bias, 0 without one */
};

/* exec.c. Check the ELF file data[0..size) and fill img, an ET_DYN file's loads moved
 * by dyn_bias: 0, -ENOEXEC or -EINVAL, nothing changed. */
long exec_check_elf(const unsigned char *data, uint64_t size, uint64_t dyn_bias,
                    struct image *img);
/* exec.c. Map img's loads into task with their protections and the file's bytes. */
long exec_load_segments(int task, struct inode *ino, const struct image *img);

/* exec_interp.c. A dynamic program's interpreter, found and checked before anything
 * changes, then loaded into the new task. */
struct interp {
    struct inode *ino;                /* the interpreter's file (a reference), or NULL */
    struct image img;                 /* its loads, at INTERP_BIAS if ET_DYN */
};
long interp_open(struct proc *p, const unsigned char *data, uint64_t size,
                 const struct image *prog, struct interp *out);
long interp_load(int task, const struct interp *in, struct image *prog);
void interp_close(struct interp *in);

#endif
