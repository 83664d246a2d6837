/*
 * Guest-physical address of an instruction, at translation time.
 *
 * QEMU 7.2 gives a plugin only the instruction's virtual address and a HOST pointer to
 * its bytes (qemu_plugin_insn_haddr). Guest RAM of the pc machine (below 4 GiB) is one
 * host allocation mapped linearly at guest-physical 0, so host pointer minus guest-physical
 * address is one constant. We learn that constant ("delta") from ondol's convention that
 * kernel text lives at virtual ktext_base + physical, check it on every further kernel-text
 * instruction (a mismatch is counted as a conflict), and then use it for every instruction,
 * user code included: paddr = haddr - delta.
 * Before calibration, and for instructions with no host pointer (MMIO), the fallback is
 * identity (right for code running with paging off) or the kernel-text convention.
 */
#ifndef CACHESIM_IPHYS_H
#define CACHESIM_IPHYS_H

#include <stdbool.h>
#include <stdint.h>

struct iphys {
    uint64_t ktext_base;  /* virtual address of physical 0 in the kernel-text mapping */
    uint64_t ktext_end;   /* end (exclusive) of the kernel-text window */
    bool calibrated;
    uint64_t delta;       /* haddr - paddr, modulo 2^64 */
    uint64_t conflicts;   /* kernel-text instructions that disagreed with delta */
    uint64_t fallbacks;   /* instructions resolved without the delta */
};

void iphys_init(struct iphys *ip, uint64_t ktext_base, uint64_t ktext_end);
/* haddr may be 0 (no host pointer). */
uint64_t iphys_resolve(struct iphys *ip, uint64_t vaddr, uint64_t haddr);

#endif
