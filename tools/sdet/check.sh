#!/bin/sh
# /sdet/check N: run N users (fresh homes) and print each user's output file with its
# md5sum, for the test that compares ondol MK, ondol IK and Linux (tests/test_sdet.py).
n=${1:?usage: check N}
/sdet/homes "$n" && /sdet/run "$n" || exit 1
cd /tmp/sdet && md5sum u*.out
for f in u*.out; do
	echo "@@ $f"
	cat "$f"
done
echo "@@ end"
