#!/bin/sh
# /sdet/homes N: a fresh home per user, /tmp/sdet/u1 .. uN, each a copy of the clone tree
# /sdet/clone (docs/sdet.md); the outputs of an earlier run go too.
n=${1:?usage: homes N}
rm -rf /tmp/sdet && mkdir -p /tmp/sdet || exit 1
i=1
while [ "$i" -le "$n" ]; do
	cp -r /sdet/clone "/tmp/sdet/u$i" || exit 1
	i=$((i + 1))
done
