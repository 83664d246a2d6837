/* One JSON object per closed window, on one line (format documented in README.md). */
#ifndef CACHESIM_REPORT_H
#define CACHESIM_REPORT_H

#include <stdbool.h>
#include <stdio.h>

struct sim;

void report_window(FILE *f, const struct sim *s, unsigned end_id, bool complete);

#endif
