/*
 * Kernel options (docs/options.md). Every option is one line of options.def; this header
 * declares the variable of each boot and run-time option from it, so code reads an option
 * as a plain variable (no lookup on any path).
 */
#ifndef OPTIONS_H
#define OPTIONS_H
#include "types.h"

enum opt_type { OPT_TYPE_INT, OPT_TYPE_BOOL, OPT_TYPE_ENUM, OPT_TYPE_STR };
enum opt_scope { OPT_SCOPE_BUILD, OPT_SCOPE_BOOT, OPT_SCOPE_RUN, OPT_SCOPE_USER };
#define OPT_SCOPES(s) (1u << OPT_SCOPE_##s)

#define OPT_EXTERN_BUILD(type, var)
#define OPT_EXTERN_BOOT(type, var) extern type var;
#define OPT_EXTERN_RUN(type, var) extern type var;
#define OPT_EXTERN_USER(type, var)
#define OPT_INT(key, min, max, def, scope, var, doc) OPT_EXTERN_##scope(u64, var)
#define OPT_BOOL(key, def, scope, var, doc) OPT_EXTERN_##scope(bool, var)
#define OPT_ENUM(key, values, def, scope, var, doc) OPT_EXTERN_##scope(int, var)
#define OPT_STR(key, def, scope, var, doc) OPT_EXTERN_##scope(const char *, var)
#include "options.def"
#undef OPT_INT
#undef OPT_BOOL
#undef OPT_ENUM
#undef OPT_STR

/* Reads the command line's key=value words and sets every option variable: the given
 * value, or the default when absent or invalid (with a console message). Call once. */
void options_parse(const char *cmdline);

/* SYS_KSET: sets a run-time option. 0, E_NOENT (no such option, or not run-time) or
 * E_INVAL (bad value); the caller checks privilege. */
long options_set(const char *key, const char *value);
/* klock.c: recomputes the big kernel lock's slow-path flag (klock.h kernel_bkl_slow) from
 * the lock checker and option markers; called when the checker starts and by options_set
 * after a run-time option changed, on the CPU that changed it, under the lock or before
 * any other CPU takes it. */
void kernel_lock_flags_update(void);

/* Writes the current value of every option whose scope is in `scopes` (OPT_SCOPES(...)
 * bits) as "key=value ..." or, with json, as "\"key\":value,..." (numbers bare). Returns
 * the length written; output that does not fit is cut at an option boundary. */
int options_format(char *buf, size_t size, unsigned scopes, bool json);

/* The same for the words given on the command line, as given (unknown keys too, in
 * order, values always quoted): the banner's "options:" line, the hello's "options". */
int options_format_given(char *buf, size_t size, bool json);

/* The value given on the command line for key (the last occurrence), as given; NULL when
 * absent. For SYS_KOPT: user programs read their USER options this way. */
const char *opt_get(const char *key);
#endif
