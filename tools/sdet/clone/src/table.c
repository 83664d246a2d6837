#include <stdio.h>
#include <string.h>
#include <ctype.h>
#include "wc2.h"

#define SLOTS 1024

struct entry {
    char word[32];
    int count;
};

static struct entry table[SLOTS];
static int used;

static unsigned hash(const char *w, size_t len)
{
    unsigned h = 5381;
    for (size_t i = 0; i < len; i++)
        h = h * 33 + (unsigned)tolower((unsigned char)w[i]);
    return h % SLOTS;
}

/* Count WORD (lower-cased, cut to 31 letters); 1 if it is new. */
int table_add(const char *word, size_t len)
{
    char w[32];
    if (len > 31)
        len = 31;
    for (size_t i = 0; i < len; i++)
        w[i] = (char)tolower((unsigned char)word[i]);
    w[len] = 0;
    for (unsigned h = hash(w, len), n = 0; n < SLOTS; h = (h + 1) % SLOTS, n++) {
        if (!table[h].count) {
            strcpy(table[h].word, w);
            table[h].count = 1;
            used++;
            return 1;
        }
        if (!strcmp(table[h].word, w)) {
            table[h].count++;
            return 0;
        }
    }
    return 0;
}

int table_size(void)
{
    return used;
}

/* The N most frequent words, ties in alphabetical order. */
void table_print_top(int n)
{
    static int done[SLOTS];
    memset(done, 0, sizeof(done));
    for (int k = 0; k < n && k < used; k++) {
        int best = -1;
        for (int i = 0; i < SLOTS; i++) {
            if (!table[i].count || done[i])
                continue;
            if (best < 0 || table[i].count > table[best].count ||
                (table[i].count == table[best].count && strcmp(table[i].word, table[best].word) < 0))
                best = i;
        }
        done[best] = 1;
        printf("%6d %s\n", table[best].count, table[best].word);
    }
}
