/* 16550 UARTs: COM1 is the human console, COM2 the machine-readable result stream. */
#ifndef SERIAL_H
#define SERIAL_H
#include "types.h"

#define COM1 0x3f8
#define COM2 0x2f8

void serial_init(u16 port, bool rx_interrupts);
void serial_putc(u16 port, char c);
void serial_write(u16 port, const char *s, size_t n);
int serial_getc_nowait(u16 port);          /* -1 when nothing is waiting */
#endif
