/* The console on COM1: output with newline translation, and buffered input (console.c). */
#ifndef CONSOLE_H
#define CONSOLE_H
#include "types.h"

void console_write(const char *s, size_t n);     /* COM1, "\n" -> "\r\n" */
void console_irq(void);                           /* COM1 receive interrupt */
size_t console_read(char *buf, size_t n);        /* blocks until at least one byte */
#endif
