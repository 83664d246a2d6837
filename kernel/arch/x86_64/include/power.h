#ifndef POWER_H
#define POWER_H
__attribute__((noreturn)) void power_off_or_halt(void);
/* Power off with a failure status: QEMU's isa-debug-exit port (tools/qemucmd.py adds the
 * device) makes QEMU exit with status 2 * code + 1; elsewhere, as power_off_or_halt. */
__attribute__((noreturn)) void power_off_failed(unsigned char code);
#endif
