/*
 * Force-included (-include) when the portable libc sources are compiled for the host
 * unit tests: renames every public libc name to ondol_<name>, so our implementations
 * link next to glibc without clashing. tests/host/ondol_host.h declares them.
 */
#define memcpy ondol_memcpy
#define memmove ondol_memmove
#define memset ondol_memset
#define memcmp ondol_memcmp
#define memchr ondol_memchr
#define strlen ondol_strlen
#define strnlen ondol_strnlen
#define strcmp ondol_strcmp
#define strncmp ondol_strncmp
#define strcpy ondol_strcpy
#define strncpy ondol_strncpy
#define strlcpy ondol_strlcpy
#define strcat ondol_strcat
#define strchr ondol_strchr
#define strrchr ondol_strrchr
#define strstr ondol_strstr
#define strspn ondol_strspn
#define strcspn ondol_strcspn
#define strtok_r ondol_strtok_r
#define isdigit ondol_isdigit
#define isxdigit ondol_isxdigit
#define isalpha ondol_isalpha
#define isalnum ondol_isalnum
#define isupper ondol_isupper
#define islower ondol_islower
#define isspace ondol_isspace
#define isblank ondol_isblank
#define iscntrl ondol_iscntrl
#define isprint ondol_isprint
#define isgraph ondol_isgraph
#define ispunct ondol_ispunct
#define toupper ondol_toupper
#define tolower ondol_tolower
#define malloc ondol_malloc
#define free ondol_free
#define calloc ondol_calloc
#define realloc ondol_realloc
#define atoi ondol_atoi
#define atol ondol_atol
#define strtol ondol_strtol
#define strtoll ondol_strtoll
#define strtoul ondol_strtoul
#define strtoull ondol_strtoull
#define abs ondol_abs
#define labs ondol_labs
#define llabs ondol_llabs
#define rand ondol_rand
#define srand ondol_srand
#define rand64 ondol_rand64
#define qsort ondol_qsort
#define snprintf ondol_snprintf
#define vsnprintf ondol_vsnprintf
