#include <stdio.h>

int main(void)
{
    long sum = 0;
    for (int i = 1; i <= 1000; i++)
        sum += (long)i * i;
    printf("sum of squares 1..1000 = %ld\n", sum);
    return 0;
}
