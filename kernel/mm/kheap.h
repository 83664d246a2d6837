/* A general kernel heap (kheap.c) for in-kernel code whose objects vary in size: the
 * UNIX server's IK form (file data, pipe buffers, tables). Zeroed blocks, any size. */
#ifndef KHEAP_H
#define KHEAP_H
#include "types.h"

void *kheap_alloc(size_t n);     /* n zeroed bytes (n 0 counts as 1), or NULL when out */
void kheap_free(void *p);        /* a block from kheap_alloc, or NULL */
#endif
