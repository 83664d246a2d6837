#!/bin/sh
# /sdet/bench N...: the SDET-like workload measured (docs/sdet.md). One untimed run of one
# user first (a warm-up); then per N: fresh homes, the counters, N users at once, a result
# record of the difference (sdetmark); on ondol, cache-model window N around the run
# (/dev/window: the plugin, when there is one, counts just the run). Run as pid 1 by ondol (linux_init=, one script per
# user count list: /sdet/bench-full, /sdet/bench-quick) or by the peer's /init; pid 1
# powers off at the end.
export PATH=/bin:/sbin:/usr/bin:/usr/sbin
/sdet/homes 1 && /sdet/run 1
for n in "$@"; do
	/sdet/homes "$n" || exit 1
	start=$(/sdet/mark)
	[ -c /dev/window ] && echo "begin $n" >/dev/window
	/sdet/run "$n"
	[ -c /dev/window ] && echo "end $n" >/dev/window
	/sdet/mark "$n" $start
done
results=/dev/results
[ -e "$results" ] || results=/dev/stdout
echo '{"type":"end","bench":"sdet","status":0}' >"$results"
if [ "$$" = 1 ]; then
	sync
	poweroff -f
fi
