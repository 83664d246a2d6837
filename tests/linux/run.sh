#!/bin/sh
# run.sh - the differential suite's in-guest runner, installed as /suite/run.
#
# usage: /suite/run [PASS]
# Runs every program of /suite/list in order, each in a fresh empty directory
# /tmp/lt/PASS/NAME with stdin from /dev/null, stdout and stderr captured together,
# and writes one frame per program to stdout:
#     @@begin NAME
#     ...the program's output...
#     @@end NAME STATUS
# STATUS is the exit status, or 128+N when signal N ended the program. The same script
# runs on every system under comparison, so frames differ only where the systems do.
SUITE=/suite
export SUITE PATH=/bin:/sbin:/usr/bin:/usr/sbin
pass=${1:-1}
out=/tmp/lt/output.$pass
mkdir -p /tmp/lt
while read -r name kind status compare args; do
	case "$name" in '' | '#'*) continue ;; esac
	dir=/tmp/lt/$pass/$name
	mkdir -p "$dir"
	case "$kind" in
	c | dyn) (cd "$dir" && exec "$SUITE/bin/$name" $args) </dev/null >"$out" 2>&1 ;;
	sh) (cd "$dir" && exec sh "$SUITE/sh/$name.sh" $args) </dev/null >"$out" 2>&1 ;;
	*) echo "run: unknown kind $kind" >"$out"; false ;;
	esac
	rc=$?
	echo "@@begin $name"
	cat "$out"
	echo "@@end $name $rc"
	rm -rf "$dir" "$out"
done <"$SUITE/list"
