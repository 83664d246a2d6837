/* Instruction physical addresses from host pointers, calibrated on kernel text. */
#include "iphys.h"

/* Above this the result cannot be guest RAM of the machines we run (a different host
 * block, e.g. a ROM); fall back instead of inventing an address. */
#define PHYS_LIMIT (1ull << 40)

void iphys_init(struct iphys *ip, uint64_t ktext_base, uint64_t ktext_end)
{
    *ip = (struct iphys){.ktext_base = ktext_base, .ktext_end = ktext_end};
}

static bool in_ktext(const struct iphys *ip, uint64_t vaddr)
{
    return vaddr >= ip->ktext_base && vaddr < ip->ktext_end;
}

static uint64_t from_ktext(struct iphys *ip, uint64_t vaddr, uint64_t haddr)
{
    uint64_t paddr = vaddr - ip->ktext_base;
    if (!haddr)
        return paddr;
    if (!ip->calibrated) {
        ip->delta = haddr - paddr;
        ip->calibrated = true;
    } else if (haddr - ip->delta != paddr) {
        ip->conflicts++;
    }
    return paddr;
}

uint64_t iphys_resolve(struct iphys *ip, uint64_t vaddr, uint64_t haddr)
{
    if (in_ktext(ip, vaddr))
        return from_ktext(ip, vaddr, haddr);
    if (ip->calibrated && haddr) {
        uint64_t paddr = haddr - ip->delta;
        if (paddr < PHYS_LIMIT)
            return paddr;
    }
    ip->fallbacks++;
    return vaddr;
}
