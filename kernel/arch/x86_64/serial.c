/* 16550 UART driver, polled output, interrupt-driven input. */
#include "serial.h"
#include "x86.h"

enum { THR = 0, RBR = 0, DLL = 0, IER = 1, DLM = 1, FCR = 2, LCR = 3, MCR = 4, LSR = 5 };

void serial_init(u16 port, bool rx_interrupts)
{
    outb(port + IER, 0);
    outb(port + LCR, 0x80);      /* divisor latch */
    outb(port + DLL, 1);         /* 115200 baud */
    outb(port + DLM, 0);
    outb(port + LCR, 0x03);      /* 8N1 */
    outb(port + FCR, 0x07);      /* enable and clear FIFOs */
    outb(port + MCR, 0x0b);      /* DTR, RTS, OUT2 (routes the IRQ line) */
    outb(port + IER, rx_interrupts ? 0x01 : 0);
}

void serial_putc(u16 port, char c)
{
    for (int spins = 0; spins < 100000 && !(inb(port + LSR) & 0x20); spins++)
        pause();
    outb(port + THR, (u8)c);
}

void serial_write(u16 port, const char *s, size_t n)
{
    for (size_t i = 0; i < n; i++)
        serial_putc(port, s[i]);
}

int serial_getc_nowait(u16 port)
{
    if (!(inb(port + LSR) & 0x01))
        return -1;
    return inb(port + RBR);
}
