/* libc's thread-local storage internals (tls.c), for crt0 and thread.c. */
#ifndef ONDOL_LIBC_TLS_H
#define ONDOL_LIBC_TLS_H

#include <stddef.h>

/* Bytes a thread's TLS area needs (0: the program has no TLS). */
size_t __libc_tls_area_size(void);
/* Lays a fresh block and control block out at the top of [area, area+size) and returns
 * the thread pointer, or NULL (no TLS, or the area is too small). */
void *__libc_tls_layout(void *area, size_t size);
/* The calling thread's FS base := tp (nothing for NULL). */
void __libc_tls_install(void *tp);
/* The main thread's TLS (crt0, before main). */
void __libc_tls_init(void);
/* The calling thread's control block, NULL when the program has no TLS. */
void *__libc_tls_self(void);
/* Runs the thread's thread_at_exit registration, once. */
void __libc_tls_exit(void);

#endif
