/* Kernel command-line options: space-separated key=value words (docs/options.md). */
#ifndef OPTIONS_H
#define OPTIONS_H
#include "types.h"

void options_parse(const char *cmdline);
const char *opt_get(const char *key);                    /* NULL when absent */
long opt_get_int(const char *key, long def, long min, long max);
bool opt_get_bool(const char *key, bool def);            /* on/off, 1/0, yes/no */
int options_count(void);
void options_at(int i, const char **key, const char **value);
#endif
