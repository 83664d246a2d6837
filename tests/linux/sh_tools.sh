# sh_tools: busybox applets over the file system: mkdir -p, cp, mv, rm -r, ln -s,
# ls, find, wc, sort, uniq, head, tail, sed, grep, cut, test, chmod, stat, du-free checks.
. "$SUITE/lib.sh"

mkdir -p a/b/c
check "mkdir -p" yes "$([ -d a/b/c ] && echo yes)"
echo data > a/f
cp a/f a/g
check "cp" data "$(cat a/g)"
mv a/g a/b/h
check "mv" "data no" "$(cat a/b/h) $([ -e a/g ] && echo yes || echo no)"
ln -s ../f a/b/l
check "ln -s and read through" data "$(cat a/b/l)"
check "readlink applet" ../f "$(readlink a/b/l)"
check "ls sorted" "b f" "$(ls a | tr '\n' ' ' | sed 's/ $//')"
check "find sorted" "a a/b a/b/c a/b/h a/b/l a/f" "$(find a | sort | tr '\n' ' ' | sed 's/ $//')"
check "find -type f" "a/b/h a/f" "$(find a -type f | sort | tr '\n' ' ' | sed 's/ $//')"
printf 'b\na\nc\na\n' > s
check "sort" "a a b c" "$(sort s | tr '\n' ' ' | sed 's/ $//')"
check "sort -u" "a b c" "$(sort -u s | tr '\n' ' ' | sed 's/ $//')"
check "uniq -c" "2 a" "$(sort s | uniq -c | head -n 1 | sed 's/^ *//')"
check "wc -l" 4 "$(wc -l < s | tr -d ' ')"
check "wc -c" 8 "$(wc -c < s | tr -d ' ')"
check "head -n 2" "b a" "$(head -n 2 s | tr '\n' ' ' | sed 's/ $//')"
check "tail -n 1" a "$(tail -n 1 s)"
check "sed substitute" "x-y" "$(echo x+y | sed 's/+/-/')"
check "grep -c" 2 "$(grep -c a s)"
check "grep no match status" 1 "$(grep -q zzz s; echo $?)"
check "cut -d" b "$(echo a:b:c | cut -d: -f2)"
check "awk sum" 6 "$(printf '1\n2\n3\n' | awk '{s += $1} END {print s}')"
chmod 0700 a/f
check "chmod and stat" 700 "$(stat -c %a a/f)"
check "test -x" yes "$([ -x a/f ] && echo yes)"
check "stat size" 5 "$(stat -c %s a/f)"
rm -r a
check "rm -r" no "$([ -e a ] && echo yes || echo no)"
check "rmdir nonempty fails" 1 "$(mkdir d; touch d/x; rmdir d 2>/dev/null; echo $?)"
check "cat missing file fails" 1 "$(cat missing 2>/dev/null; echo $?)"
check "touch -d and stat" 2001-09-09 "$(touch -d '2001-09-09 01:46:40' t && date -r t +%Y-%m-%d)"
dd if=/dev/zero of=z bs=512 count=4 2>/dev/null
check "dd from /dev/zero" 2048 "$(stat -c %s z)"
check "od of /dev/zero" "0000000 000000 000000" "$(head -c 4 /dev/zero | od | head -n 1 | sed 's/  */ /g')"
check "tr upper" ABC "$(echo abc | tr a-z A-Z)"
check "xargs" "1 2 3" "$(printf '1\n2\n3\n' | xargs echo)"
check "basename" c "$(basename /a/b/c)"
check "dirname" /a/b "$(dirname /a/b/c)"
check "id -u" 0 "$(id -u)"
check "printf" "05 x" "$(printf '%02d %s' 5 x)"
check "expr" 7 "$(expr 3 + 4)"
check "seq" "1 2 3" "$(seq 3 | tr '\n' ' ' | sed 's/ $//')"
check "md5sum" "d41d8cd98f00b204e9800998ecf8427e" "$(md5sum < /dev/null | cut -d' ' -f1)"
check "tar round trip" data "$(mkdir -p tt && echo data > tt/x && tar cf t.tar tt && rm -r tt && tar xf t.tar && cat tt/x)"
done_cases
