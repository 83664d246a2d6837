/* The console: COM1 output with newline translation, and a small input ring filled by the
 * COM1 receive interrupt, read by SYS_CONSOLE_READ. No echo or line editing here: the shell
 * does that in user space. */
#include "arch.h"
#include "console.h"
#include "spinlock.h"
#include "waitq.h"

#define INPUT_SIZE 1024

static struct {
    struct spinlock lock;
    char buf[INPUT_SIZE];
    size_t head, tail;           /* head: next to read; tail: next to write */
    struct waitq readers;
} input = {.lock = SPINLOCK_INIT(CONSOLE_IN)};

static struct spinlock output_lock = SPINLOCK_INIT(CONSOLE_OUT);

void console_write(const char *s, size_t n)
{
    u64 f = spin_lock_irqsave(&output_lock);
    for (size_t i = 0; i < n; i++) {
        if (s[i] == '\n')
            serial_putc(COM1, '\r');
        serial_putc(COM1, s[i]);
    }
    spin_unlock_irqrestore(&output_lock, f);
}

void console_irq(void)
{
    int c;
    spin_lock(&input.lock);
    while ((c = serial_getc_nowait(COM1)) >= 0) {
        size_t next = (input.tail + 1) % INPUT_SIZE;
        if (next != input.head) {           /* drop input when the ring is full */
            input.buf[input.tail] = (char)c;
            input.tail = next;
        }
    }
    spin_unlock(&input.lock);
    waitq_wake_all(&input.readers, 0);
}

size_t console_read(char *buf, size_t n)
{
    for (;;) {
        spin_lock(&input.lock);
        size_t got = 0;
        while (got < n && input.head != input.tail) {
            buf[got++] = input.buf[input.head];
            input.head = (input.head + 1) % INPUT_SIZE;
        }
        spin_unlock(&input.lock);
        if (got > 0 || n == 0)
            return got;
        if (waitq_sleep(&input.readers, WAIT_FOREVER) < 0)
            return 0;                       /* killed while waiting */
    }
}
