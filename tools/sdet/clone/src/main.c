#include <stdio.h>
#include <stdlib.h>
#include "wc2.h"

static char buf[1 << 16];

int main(int argc, char **argv)
{
    FILE *f = argc > 1 ? fopen(argv[1], "r") : stdin;
    if (!f) {
        perror(argv[1]);
        return 1;
    }
    size_t len = fread(buf, 1, sizeof(buf) - 1, f);
    struct counts c = {0, 0, 0};
    count_stream(buf, len, &c);
    printf("%ld lines %ld words %ld chars %d distinct\n", c.lines, c.words, c.chars,
           table_size());
    table_print_top(5);
    return 0;
}
