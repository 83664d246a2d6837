/* Minimal x86-64 decoding: just enough to spot mov-to-CR3, invlpg and atomic RMWs. */
#include "x86dec.h"

#include <stdbool.h>

static bool is_legacy_prefix(uint8_t b)
{
    switch (b) {
    case 0x66: case 0x67: case 0xF0: case 0xF2: case 0xF3:
    case 0x2E: case 0x36: case 0x3E: case 0x26: case 0x64: case 0x65:
        return true;
    default:
        return false;
    }
}

enum insn_kind x86_classify(const uint8_t *b, size_t len)
{
    size_t i = 0;
    uint8_t rex = 0;
    bool lock = false;

    while (i < len && is_legacy_prefix(b[i]))
        lock |= b[i++] == 0xF0;
    /* REX must come last, right before the opcode. */
    if (i < len && (b[i] & 0xF0) == 0x40)
        rex = b[i++];
    if (lock || (len >= i + 2 && (b[i] == 0x86 || b[i] == 0x87) && (b[i + 1] >> 6) != 3))
        return INSN_ATOMIC;
    if (len < i + 3 || b[i] != 0x0F)
        return INSN_PLAIN;
    uint8_t op = b[i + 1];
    uint8_t modrm = b[i + 2];
    unsigned mod = modrm >> 6;
    unsigned reg = (modrm >> 3) & 7;

    if (op == 0x22 && reg == 3 && !(rex & 0x04))
        return INSN_MOV_CR3;
    if (op == 0x01 && reg == 7 && mod != 3)
        return INSN_INVLPG;
    return INSN_PLAIN;
}
