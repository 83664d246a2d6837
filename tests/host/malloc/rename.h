/* Included first by the sanitizer builds (lib/malloc/malloc.mk): ondol's allocator and its
 * callers in the test programs use om_* names, so the host's malloc (and ASan's) stays
 * the process allocator and the sanitizers check our code like any other. */
#define malloc om_malloc
#define free om_free
#define calloc om_calloc
#define realloc om_realloc
#define reallocarray om_reallocarray
#define posix_memalign om_posix_memalign
#define aligned_alloc om_aligned_alloc
#define memalign om_memalign
#define valloc om_valloc
#define pvalloc om_pvalloc
#define malloc_usable_size om_malloc_usable_size

/* Prototypes, as <malloc.h> and <stdlib.h> would give them (seen after the renaming). */
#include <stddef.h>
size_t om_malloc_usable_size(void *p);
void *om_pvalloc(size_t n);
void *om_valloc(size_t n);
void *om_memalign(size_t align, size_t n);
