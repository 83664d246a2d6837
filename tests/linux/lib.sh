# lib.sh - case printer for the suite's busybox shell scripts (the shell twin of lt.h).
# check NAME WANT GOT prints "NAME: GOT", or "FAIL NAME: GOT (want WANT)" when they
# differ; done prints the totals and sets the exit status (0 when no case failed).
cases=0
failed=0
check() {
	cases=$((cases + 1))
	if [ "$2" = "$3" ]; then
		echo "$1: $3"
	else
		failed=$((failed + 1))
		echo "FAIL $1: $3 (want $2)"
	fi
}
done_cases() {
	echo "cases $cases failed $failed"
	[ "$failed" = 0 ]
}
