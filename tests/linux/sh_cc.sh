# sh_cc: Debian's dynamically linked programs from the root archive (debroot.py): GNU
# hello, tcc compiling, linking and running C programs against glibc's headers and start
# files, and make driving tcc (docs/unix.md, "Dynamic programs").
. "$SUITE/lib.sh"

check "hello" "Hello, world!" "$(hello)"
check "hello -g" "hi there" "$(hello -g 'hi there')"
cat > hi.c <<'C'
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <errno.h>
#include <unistd.h>
int main(int argc, char **argv)
{
    char buf[64];
    snprintf(buf, sizeof(buf), "%s %d %s", "argc", argc, argc > 1 ? argv[1] : "-");
    errno = 0;
    if (close(-1) < 0)
        printf("%s close: %s\n", buf, strerror(errno));
    return strlen(buf) == 8 ? 4 : 5;
}
C
tcc -o hi hi.c
check "tcc compiles" "0" "$?"
check "tcc program runs" "argc 2 x close: Bad file descriptor status 4" "$(./hi x >out; s=$?; echo "$(cat out) status $s"; rm out)"
check "tcc -run" "argc 2 y close: Bad file descriptor" "$(tcc -run hi.c y)"
cat > lib.c <<'C'
int twice(int x) { return 2 * x; }
C
cat > main.c <<'C'
#include <stdio.h>
int twice(int x);
int main(void) { printf("twice 21 = %d\n", twice(21)); return 0; }
C
printf 'prog: main.o lib.o\n\ttcc -o prog main.o lib.o\n%%.o: %%.c\n\ttcc -c -o $@ $<\nclean:\n\trm -f prog *.o\n' > Makefile
check "make builds" "tcc -c -o main.o main.c|tcc -c -o lib.o lib.c|tcc -o prog main.o lib.o" "$(make 2>&1 | tr '\n' '|' | sed 's/|$//')"
check "make's program runs" "twice 21 = 42" "$(./prog)"
check "make is up to date" "make: 'prog' is up to date." "$(make 2>&1)"
touch lib.c
check "make rebuilds what changed" "tcc -c -o lib.o lib.c|tcc -o prog main.o lib.o" "$(make 2>&1 | tr '\n' '|' | sed 's/|$//')"
check "make clean" "rm -f prog *.o" "$(make clean 2>&1)"
check "what is left" "Makefile hi hi.c lib.c main.c" "$(ls | tr '\n' ' ' | sed 's/ $//')"
done_cases
