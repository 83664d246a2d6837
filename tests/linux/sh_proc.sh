# sh_proc: what busybox's process and system tools read from /proc, and busybox running
# itself again through /proc/self/exe. Only the shape of their output is printed.
. "$SUITE/lib.sh"

check "ps has a header" yes "$(ps | head -n 1 | grep -q PID && echo yes)"
check "ps lists itself" yes "$(ps -o comm | grep -qx ps && echo yes)"
sleep 5 &
bg=$!
check "ps lists a background job" yes "$(ps -o pid,args | grep -q "^ *$bg .*sleep 5" && echo yes)"
kill $bg
wait $bg 2>/dev/null
check "killed job status" 143 "$?"
check "free has Mem line" yes "$(free | grep -q '^Mem:' && echo yes)"
check "uptime says up" yes "$(uptime | grep -q ' up ' && echo yes)"
check "top batch mode shows Mem" yes "$(top -b -n 1 | grep -q '^Mem:' && echo yes)"
check "/proc/self/exe is busybox" /bin/busybox "$(readlink /proc/self/exe)"
check "/proc/self/stat of cat" cat "$(cat /proc/self/stat | cut -d' ' -f2 | tr -d '()')"
check "/proc/self/cmdline of cat" "cat /proc/self/cmdline" "$(cat /proc/self/cmdline | tr '\0' ' ' | sed 's/ $//')"
check "/proc/self/fd has 0 1 2" "0 1 2" "$(ls /proc/self/fd | sort -n | head -n 3 | tr '\n' ' ' | sed 's/ $//')"
check "/proc/\$\$ is the shell" yes "$([ -d /proc/$$ ] && grep -q '^Name:.*sh' /proc/$$/status && echo yes)"
check "/proc/meminfo MemTotal" yes "$(grep -q '^MemTotal: *[0-9][0-9]* kB' /proc/meminfo && echo yes)"
check "/proc/uptime two numbers" yes "$(grep -qE '^[0-9]+\.[0-9]+ [0-9]+\.[0-9]+$' /proc/uptime && echo yes)"
check "/proc/stat cpu line" yes "$(grep -q '^cpu ' /proc/stat && echo yes)"
check "busybox runs an applet by name" hi "$(busybox echo hi)"
ln -s /proc/self/exe busybox
check "exec through /proc/self/exe" 5 "$(./busybox echo 5)"
check "kill -0 own shell" 0 "$(kill -0 $$; echo $?)"
check "kill of missing pid fails" 1 "$(kill 999999 2>/dev/null; echo $?)"
check "SIGINT ends a child sh" 130 "$(sh -c 'kill -INT $$; sleep 1'; echo $?)"
check "trap INT in script" caught "$(sh -c 'trap "echo caught; exit 0" INT; kill -INT $$; sleep 1')"
check "uname -m" x86_64 "$(uname -m)"
check "id" "uid=0(root) gid=0(root)" "$(id | cut -d' ' -f1,2)"
check "whoami" root "$(whoami)"
check "hostname answers" yes "$(hostname >/dev/null && echo yes)"
check "date is after 2020" yes "$([ "$(date +%Y)" -ge 2020 ] && echo yes)"
check "sleep 0.01" 0 "$(sleep 0.01; echo $?)"
done_cases
