#!/usr/bin/env bash
# `layersec tsn schedule` reads a schedule in taprio syntax (the tc-taprio(8)
# example as is), prints per-class windows and latency bounds, writes JSON,
# and names the sched-entry of a malformed schedule.
set -euo pipefail
bin="$1"
out="$(mktemp -d)"
trap 'rm -rf "$out"' EXIT
cat >"$out/sched.txt" <<'TXT'
tc qdisc replace dev eth0 parent root handle 100 taprio \
    num_tc 3 map 2 2 1 0 2 2 2 2 2 2 2 2 2 2 2 2 queues 1@0 1@1 2@2 \
    base-time 1528743495910289987 \
    sched-entry S 01 300000 sched-entry S 02 300000 sched-entry S 04 400000 \
    clockid CLOCK_TAI
TXT
"$bin" tsn schedule --file "$out/sched.txt" --link-mbit 100 --frame-bytes 200 --expansion-bytes 32 \
  --json "$out/s.json" >"$out/table"
grep -q "3 traffic classes, 3 sched-entries, cycle 1000.000 us" "$out/table"
/usr/bin/python3 - "$out/s.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
assert d["cycle_ns"] == 1000000 and d["num_tc"] == 3, d
c = {r["class"]: r for r in d["classes"]}
assert abs(c[0]["share"] - 0.3) < 1e-9 and abs(c[2]["share"] - 0.4) < 1e-9, c
# 200 + 32 + 4 FCS + 20 = 256 bytes at 100 Mbit/s = 20.48 us on the wire
tx = 20480
assert c[0]["transmission_ns"] == tx, c[0]
# class 0 open 0-300 us: worst arrival just after 300 us - tx waits until 1 ms
assert c[0]["gate_wait_ns"] == 1000000 - (300000 - tx), c[0]
assert c[0]["bound_ns"] == c[0]["gate_wait_ns"] + tx and c[0]["blocking_ns"] == 0, c[0]
assert c[1]["pcp"] == "2" and c[0]["pcp"] == "3", c
PY
# Malformed: a mask beyond num_tc, named by entry.
if "$bin" tsn schedule --taprio "num_tc 2 base-time 0 sched-entry S 01 300000 sched-entry S 04 300000" 2>"$out/err"; then
  echo "bad schedule accepted" >&2; exit 1
fi
grep -q "sched-entry 1: gate mask 0x04" "$out/err"
# Intervals shorter than one minimum frame at the port's speed (6.72 us at 100 Mbit/s).
if "$bin" tsn schedule --link-mbit 100 --taprio "num_tc 1 base-time 0 sched-entry S 01 5000" 2>"$out/err"; then
  echo "short interval accepted" >&2; exit 1
fi
grep -q "sched-entry 0: interval 5000 ns is shorter than one minimum frame" "$out/err"
# Options: exactly one source; numbers checked.
if "$bin" tsn schedule 2>/dev/null; then echo "no schedule accepted" >&2; exit 1; fi
if "$bin" tsn schedule --taprio "num_tc 1 base-time 0 sched-entry S 01 300000" --link-mbit 0 2>/dev/null; then
  echo "--link-mbit 0 accepted" >&2; exit 1
fi
if "$bin" tsn schedule --taprio "num_tc 1 base-time 0 sched-entry S 01 300000" --processing-us nan 2>/dev/null; then
  echo "--processing-us nan accepted" >&2; exit 1
fi
echo "tsn schedule ok"
