# sh_shell: the shell language as busybox sh runs it: variables, quoting, loops,
# globbing, redirection, pipes, here-documents, subshells, functions, traps, exit status.
. "$SUITE/lib.sh"

x=abc
check "variable" abc "$x"
check "parameter length" 3 "${#x}"
check "default value" dflt "${unset_var:-dflt}"
check "suffix strip" ab "${x%c}"
check "arithmetic" 42 "$((6 * 7))"
check "command substitution" hello "$(echo hello)"
s=""
for i in 1 2 3; do s="$s$i"; done
check "for loop" 123 "$s"
n=0
while [ $n -lt 5 ]; do n=$((n + 1)); done
check "while loop" 5 "$n"
case foo.c in *.c) k=c ;; *) k=other ;; esac
check "case pattern" c "$k"
touch b.txt a.txt c.log
check "glob sorted" "a.txt b.txt" "$(echo *.txt)"
check "glob no match stays" "*.none" "$(echo *.none)"
echo one > f
echo two >> f
check "redirect and append" "one two" "$(cat f | tr '\n' ' ' | sed 's/ $//')"
check "input redirect" one "$(head -n 1 < f)"
check "pipe of three" 2 "$(printf 'a\nb\na\n' | grep a | wc -l | tr -d ' ')"
v=$(cat <<END
here $x
END
)
check "here-document" "here abc" "$v"
(x=changed)
check "subshell isolation" abc "$x"
add() { echo $(($1 + $2)); }
check "function" 5 "$(add 2 3)"
false
check "exit status false" 1 "$?"
sh -c 'exit 7'
check "exit status of child sh" 7 "$?"
check "and-or list" yes "$(false && echo no || echo yes)"
t=$(sh -c 'trap "echo trapped" EXIT; true')
check "trap EXIT" trapped "$t"
t=$(sh -c 'trap "echo got-usr1" USR1; kill -USR1 $$; echo after')
check "trap signal" "got-usr1 after" "$(echo $t)"
check "stderr redirect" err "$(sh -c 'echo err >&2' 2>&1)"
check "missing command status" 127 "$(nosuchcommand 2>/dev/null; echo $?)"
sleep 0.01 &
wait $!
check "background job and wait" 0 "$?"
check "set -e stops script" 1 "$(sh -ec 'false; echo not-reached'; echo $?)"
done_cases
