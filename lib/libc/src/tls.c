/*
 * Thread-local storage for native programs (`__thread`, ondol/thread.h), laid out as the
 * x86-64 ELF TLS ABI's variant II expects of a static program (local-exec and
 * initial-exec accesses, `%fs:-offset`):
 *
 *     area start ... [ block: .tdata copy | zeroed .tbss | pad ][ tcb ] ... area end
 *                                                               ^ thread pointer (FS base)
 *
 * The block ends at the thread pointer, aligned to the template's alignment; the control
 * block starts there and its first word points at itself (what `%fs:0` must read). The
 * template's bounds come from user/user.ld (__tls_*). A program without `__thread`
 * variables gets no block and makes no system call; its threads keep FS base 0.
 */
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <ondol/sys.h>
#include <ondol/thread.h>

#include "tls.h"

/* Addresses in the program image (a static PIE: they move with it), so the alignment
 * is the distance from __tls_start to __tls_align_at rather than a symbol's value. */
extern char __tls_start[], __tls_data_end[], __tls_end[], __tls_align_at[];

struct tls_tcb {
    struct tls_tcb *self;             /* %fs:0 */
    void (*exit_fn)(void *);           /* thread_at_exit's registration */
    void *exit_arg;
};

static size_t tls_alignment(void)
{
    size_t a = (size_t)(__tls_align_at - __tls_start);
    return a < 16 ? 16 : a;
}

static size_t tls_memsz(void) { return (size_t)(__tls_end - __tls_start); }

static size_t tls_block_size(void)
{
    size_t a = tls_alignment();
    return (tls_memsz() + a - 1) & ~(a - 1);
}

size_t __libc_tls_area_size(void)
{
    if (tls_memsz() == 0)
        return 0;
    return tls_block_size() + sizeof(struct tls_tcb) + tls_alignment() - 1;
}

void *__libc_tls_layout(void *area, size_t size)
{
    if (tls_memsz() == 0 || size < __libc_tls_area_size())
        return NULL;
    uintptr_t end = (uintptr_t)area + size;
    uintptr_t tp = (end - sizeof(struct tls_tcb)) & ~(uintptr_t)(tls_alignment() - 1);
    char *block = (char *)(tp - tls_block_size());
    size_t filesz = (size_t)(__tls_data_end - __tls_start);
    memcpy(block, __tls_start, filesz);
    memset(block + filesz, 0, tls_block_size() - filesz);
    struct tls_tcb *tcb = (struct tls_tcb *)tp;
    tcb->self = tcb;
    tcb->exit_fn = NULL;
    tcb->exit_arg = NULL;
    return tcb;
}

void __libc_tls_install(void *tp)
{
    if (tp != NULL)
        sys_thread_tls(tp);
}

/* The main thread's area: a static one for small templates (no system call), else
 * mapped. Called by crt0 before main. */
#define MAIN_TLS_STATIC 512
static char main_tls_area[MAIN_TLS_STATIC] __attribute__((aligned(64)));

void __libc_tls_init(void)
{
    size_t need = __libc_tls_area_size();
    if (need == 0)
        return;
    void *area = main_tls_area;
    size_t size = sizeof(main_tls_area);
    if (need > size) {
        size = (need + 4095) & ~(size_t)4095;
        long m = sys_vm_map(size, PROT_READ | PROT_WRITE);
        if (m < 0) {
            sys_console_write("libc: no memory for TLS\n", 24);
            sys_exit(127);
        }
        area = (void *)(uintptr_t)m;
    }
    __libc_tls_install(__libc_tls_layout(area, size));
}

void *__libc_tls_self(void)
{
    if (tls_memsz() == 0)
        return NULL;
    void *tp;
    __asm__("movq %%fs:0, %0" : "=r"(tp));
    return tp;
}

int thread_at_exit(void (*fn)(void *), void *arg)
{
    struct tls_tcb *tcb = __libc_tls_self();
    if (tcb == NULL)
        return E_NOTSUP;
    if (tcb->exit_fn != NULL)
        return E_INVAL;             /* one registration a thread */
    tcb->exit_fn = fn;
    tcb->exit_arg = arg;
    return 0;
}

void __libc_tls_exit(void)
{
    struct tls_tcb *tcb = __libc_tls_self();
    if (tcb == NULL || tcb->exit_fn == NULL)
        return;
    void (*fn)(void *) = tcb->exit_fn;
    tcb->exit_fn = NULL;
    fn(tcb->exit_arg);
}
