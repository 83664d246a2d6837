#include <ctype.h>
#include "wc2.h"

/* Walk the text once: a word is a run of letters, each one goes into the table. */
void count_stream(const char *text, size_t len, struct counts *c)
{
    size_t start = 0;
    int in_word = 0;
    for (size_t i = 0; i <= len; i++) {
        int ch = i < len ? (unsigned char)text[i] : ' ';
        if (i < len)
            c->chars++;
        if (ch == '\n')
            c->lines++;
        if (isalpha(ch)) {
            if (!in_word)
                start = i;
            in_word = 1;
        } else if (in_word) {
            c->words++;
            table_add(text + start, i - start);
            in_word = 0;
        }
    }
}
