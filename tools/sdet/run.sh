#!/bin/sh
# /sdet/run N: N users at once, each a shell running its script /sdet/scripts/uK.sh in its
# home /tmp/sdet/uK (made by /sdet/homes), output and errors into /tmp/sdet/uK.out; returns
# when every user has finished. N is at most the number of scripts (16).
n=${1:?usage: run N}
[ -f "/sdet/scripts/u$n.sh" ] || { echo "run: no script for user $n" >&2; exit 2; }
i=1
while [ "$i" -le "$n" ]; do
	(cd "/tmp/sdet/u$i" && exec sh "/sdet/scripts/u$i.sh" >"/tmp/sdet/u$i.out" 2>&1) &
	i=$((i + 1))
done
wait
