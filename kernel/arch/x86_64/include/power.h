#ifndef POWER_H
#define POWER_H
__attribute__((noreturn)) void power_off_or_halt(void);
#endif
