/* JSON string literals for result lines (see ondol/result.h); no system calls, so the
 * host unit tests cover it. */
#include <ondol/result.h>

int result_json_string(char *buf, int size, const char *s)
{
    static const char hex[] = "0123456789abcdef";
    int n = 0;
#define OUT(ch)                   \
    do {                          \
        if (n + 1 < size)         \
            buf[n] = (char)(ch);  \
        n++;                      \
    } while (0)
    OUT('"');
    for (; *s != '\0'; s++) {
        unsigned char c = (unsigned char)*s;
        if (c == '"' || c == '\\') {
            OUT('\\');
            OUT(c);
        } else if (c == '\n') {
            OUT('\\');
            OUT('n');
        } else if (c < 0x20 || c == 0x7f) {
            OUT('\\');
            OUT('u');
            OUT('0');
            OUT('0');
            OUT(hex[c >> 4]);
            OUT(hex[c & 15]);
        } else {
            OUT(c);
        }
    }
    OUT('"');
#undef OUT
    if (size > 0)
        buf[n < size ? n : size - 1] = '\0';
    return n;
}
