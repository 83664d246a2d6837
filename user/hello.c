/* hello: greets and lists its arguments. */
#include <stdio.h>

int main(int argc, char **argv)
{
    printf("hello from ondol\n");
    printf("argc=%d\n", argc);
    for (int i = 0; i < argc; i++)
        printf("argv[%d]=%s\n", i, argv[i]);
    return 0;
}
