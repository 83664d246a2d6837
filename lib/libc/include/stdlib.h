/* ondol libc: general utilities. */
#ifndef ONDOL_STDLIB_H
#define ONDOL_STDLIB_H

#include <stddef.h>
#include <stdint.h>

#define EXIT_SUCCESS 0
#define EXIT_FAILURE 1
#define RAND_MAX 0x7fffffff

void *malloc(size_t size);
void free(void *ptr);
void *calloc(size_t nmemb, size_t size);
void *realloc(void *ptr, size_t size);

int atoi(const char *s);
long atol(const char *s);
long strtol(const char *restrict s, char **restrict end, int base);
long long strtoll(const char *restrict s, char **restrict end, int base);
unsigned long strtoul(const char *restrict s, char **restrict end, int base);
unsigned long long strtoull(const char *restrict s, char **restrict end, int base);

int abs(int x);
long labs(long x);
long long llabs(long long x);

/* Pseudo-random numbers. rand/srand: one process-wide stream (not thread-safe).
 * rand64: xorshift64* generator over caller-owned state; a zero state is replaced
 * by a fixed non-zero constant. Deterministic for a given seed. */
int rand(void);
void srand(unsigned seed);
uint64_t rand64(uint64_t *state);

void qsort(void *base, size_t nmemb, size_t size, int (*cmp)(const void *, const void *));

__attribute__((noreturn)) void exit(int status);
__attribute__((noreturn)) void abort(void);

#endif
