/* Prototypes of the renamed (ondol_*) libc functions, for the hosted unit tests. */
#ifndef ONDOL_HOST_H
#define ONDOL_HOST_H

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include "ondol/fmt.h"

void *ondol_memcpy(void *dst, const void *src, size_t n);
void *ondol_memmove(void *dst, const void *src, size_t n);
void *ondol_memset(void *dst, int c, size_t n);
int ondol_memcmp(const void *a, const void *b, size_t n);
void *ondol_memchr(const void *s, int c, size_t n);
size_t ondol_strlen(const char *s);
size_t ondol_strnlen(const char *s, size_t max);
int ondol_strcmp(const char *a, const char *b);
int ondol_strncmp(const char *a, const char *b, size_t n);
char *ondol_strcpy(char *dst, const char *src);
char *ondol_strncpy(char *dst, const char *src, size_t n);
size_t ondol_strlcpy(char *dst, const char *src, size_t size);
char *ondol_strcat(char *dst, const char *src);
char *ondol_strchr(const char *s, int c);
char *ondol_strrchr(const char *s, int c);
char *ondol_strstr(const char *h, const char *n);
size_t ondol_strspn(const char *s, const char *accept);
size_t ondol_strcspn(const char *s, const char *reject);
char *ondol_strtok_r(char *s, const char *delim, char **save);

int ondol_isdigit(int c);
int ondol_isxdigit(int c);
int ondol_isalpha(int c);
int ondol_isalnum(int c);
int ondol_isupper(int c);
int ondol_islower(int c);
int ondol_isspace(int c);
int ondol_isblank(int c);
int ondol_iscntrl(int c);
int ondol_isprint(int c);
int ondol_isgraph(int c);
int ondol_ispunct(int c);
int ondol_toupper(int c);
int ondol_tolower(int c);

void *ondol_malloc(size_t n);
void ondol_free(void *p);
void *ondol_calloc(size_t nmemb, size_t size);
void *ondol_realloc(void *p, size_t n);
void __malloc_stats(size_t *total, size_t *free_bytes, size_t *free_blocks);
int __malloc_check(void);

int ondol_atoi(const char *s);
long ondol_atol(const char *s);
long ondol_strtol(const char *s, char **end, int base);
long long ondol_strtoll(const char *s, char **end, int base);
unsigned long ondol_strtoul(const char *s, char **end, int base);
unsigned long long ondol_strtoull(const char *s, char **end, int base);
int ondol_abs(int x);
long ondol_labs(long x);
long long ondol_llabs(long long x);
int ondol_rand(void);
void ondol_srand(unsigned seed);
uint64_t ondol_rand64(uint64_t *state);
void ondol_qsort(void *base, size_t nmemb, size_t size, int (*cmp)(const void *, const void *));

int result_json_string(char *buf, int size, const char *s);

int ondol_snprintf(char *buf, size_t size, const char *fmt, ...);
int ondol_vsnprintf(char *buf, size_t size, const char *fmt, va_list ap);

/* host_sysdep.c: page source statistics */
extern size_t host_pages_calls;
extern size_t host_pages_bytes;
extern int host_pages_fail;   /* when set, the page source reports exhaustion */

#endif
