#!/usr/bin/env bash
# `layersec bench zonal` smoke test: a short run (hops 1-2, 100 Mbit/s
# backbone, 100 cycles of simulated time) writes the JSON with one row per hop
# count and shaper setting; with the shaper on ST is never lost and never
# later than the analytic bound, strict priority and FIFO show a larger worst
# case, and the compromised switch reads and alters every event while SecOC
# accepts none; with --clock gptp,free every node runs its own drifting clock:
# gPTP keeps adjacent gates within 100 ns, free-running clocks drift apart.
# Bad options are refused with a message naming the option.
# Usage: bench_zonal_smoke.sh /path/to/layersec
set -euo pipefail
LAYERSEC="$1"
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT

if ! "$LAYERSEC" bench zonal --hops 1-2 --port-mbit 100 --be-load 80 --cycles 100 --json "$tmp/z.json" \
    > "$tmp/out.txt" 2> "$tmp/err.txt"; then
  cat "$tmp/out.txt" "$tmp/err.txt"
  echo "FAIL: layersec bench zonal exited non-zero" >&2
  exit 1
fi
cat "$tmp/out.txt"
grep -q "compromised switch Z1" "$tmp/out.txt" || { echo "FAIL: no compromised-switch lines" >&2; exit 1; }

python3 - "$tmp/z.json" <<'PY'
import json, sys
j = json.load(open(sys.argv[1]))
rows = j["rows"]
assert len(rows) == 6, f"expected 6 rows, got {len(rows)}"
by = {(r["hops"], r["shaper"]): r for r in rows}
for hops in (1, 2):
    for s in ("on", "strict", "fifo"):
        r = by[(hops, s)]
        for k in ("hops", "shaper", "st_p50_us", "st_p99_us", "st_max_us", "bound_us", "st_lost",
                  "be_throughput_mbit_s", "streams"):
            assert k in r, f"{hops}/{s}: field {k} missing"
        assert r["st_sent"] == 100, f"{hops}/{s}: st_sent {r['st_sent']}"
        assert 0 < r["st_p50_us"] <= r["st_p99_us"] <= r["st_max_us"], f"{hops}/{s}: percentiles"
        assert len(r["streams"]) == hops, f"{hops}/{s}: streams"
        assert r["be_throughput_mbit_s"] > 0, f"{hops}/{s}: no BE delivered"
    on, strict, fifo = by[(hops, "on")], by[(hops, "strict")], by[(hops, "fifo")]
    assert on["st_lost"] == 0, f"{hops}: ST lost with the shaper on"
    assert on["st_max_us"] <= on["bound_us"], f"{hops}: ST over the bound"
    assert on["st_over_bound"] == 0 and strict["st_over_bound"] == 0, f"{hops}: over bound"
    assert fifo["bound_us"] is None, f"{hops}: FIFO has no analytic bound"
    assert strict["st_max_us"] > on["st_max_us"], f"{hops}: strict worst case not above shaper on"
    assert fifo["st_max_us"] > on["st_max_us"], f"{hops}: FIFO worst case not above shaper on"
c = j["compromised_switch"]
assert c["hops"] == 2
assert c["read_plaintext"] == c["st_sent"] == 200, c
assert c["altered"] == c["st_sent"], c
assert c["secoc_rejected"] == c["altered"], c
assert c["accepted"] == 0, c
print("bench_zonal_smoke: JSON OK (6 rows, compromised switch: %d altered, %d accepted)" % (c["altered"], c["accepted"]))
PY

# Per-node clocks: gPTP keeps the gates of adjacent hops aligned (ST on its
# plan, none lost, within the bound), free-running clocks drift apart
# (deterministic simulator figures, so they are asserted).
if ! "$LAYERSEC" bench zonal --hops 1-2 --port-mbit 100 --cycles 100 --clock gptp,free --drift-ppm 100 \
    --sync-interval-ms 125 --json "$tmp/c.json" > "$tmp/cout.txt" 2> "$tmp/cerr.txt"; then
  cat "$tmp/cout.txt" "$tmp/cerr.txt"
  echo "FAIL: layersec bench zonal --clock gptp,free exited non-zero" >&2
  exit 1
fi
grep -q "per-node clocks" "$tmp/cout.txt" || { cat "$tmp/cout.txt"; echo "FAIL: no clock table" >&2; exit 1; }
python3 - "$tmp/c.json" <<'PY'
import json, sys
j = json.load(open(sys.argv[1]))
rows = j["rows"]
assert len(rows) == 10, f"expected 10 rows (2 hops x on/strict/fifo/gptp/free), got {len(rows)}"
assert j["options"]["clocks"] == ["gptp", "free"], j["options"]
assert "clock_method" in j
for hops in (1, 2):
    by = {r["clock"]: r for r in rows if r["hops"] == hops and r["shaper"] == "on"}
    ideal, gptp, free = by["ideal"], by["gptp"], by["free"]
    for r in (ideal, gptp, free):
        for k in ("clock", "drift_ppm", "wander_ppm_per_s", "sync_interval_ms", "misalign_max_ns",
                  "misalign_rms_ns", "misalign_path_max_ns", "start_offset_max_ns"):
            assert k in r, f"{hops}/{r['clock']}: field {k} missing"
    assert ideal["misalign_max_ns"] == 0 and ideal["sync_interval_ms"] is None
    assert gptp["sync_interval_ms"] == 125 and gptp["drift_ppm"] == 100 and free["sync_interval_ms"] is None
    assert gptp["st_lost"] == 0 and gptp["st_over_bound"] == 0, f"{hops}: gptp ST {gptp}"
    assert gptp["misalign_max_ns"] < 100, f"{hops}: gptp misalignment {gptp['misalign_max_ns']} ns"
    assert free["misalign_max_ns"] > 1000, f"{hops}: free-running misalignment {free['misalign_max_ns']} ns"
    assert free["misalign_max_ns"] > 10 * gptp["misalign_max_ns"], f"{hops}: free not worse than gptp"
    # gPTP: every event within 1 us of the ideal (planned) latency.
    assert abs(gptp["st_max_us"] - ideal["st_max_us"]) < 1.0, f"{hops}: gptp max {gptp['st_max_us']} us"
print("bench_zonal_smoke: clocks OK (gptp misalignment %.0f ns, free-running %.0f ns at 2 hops)"
      % (gptp["misalign_max_ns"], free["misalign_max_ns"]))
PY

# Bad options: refused, non-zero, the option named.
bad() {
  local opt="$1"; shift
  if "$LAYERSEC" bench zonal "$@" > "$tmp/bad.txt" 2>&1; then
    echo "FAIL: accepted $*" >&2; exit 1
  fi
  grep -q -- "$opt" "$tmp/bad.txt" || { cat "$tmp/bad.txt"; echo "FAIL: message for $* does not name $opt" >&2; exit 1; }
}
bad --hops --hops 5
bad --hops --hops 3-1
bad --hops --hops 0-2
bad --be-load --be-load nan
bad --be-load --be-load 99
bad --port-mbit --port-mbit 10
bad --cycles --cycles 0
bad --clock --clock sundial
bad --clock --clock gptp,bogus
bad --drift-ppm --drift-ppm 250
bad --drift-ppm --drift-ppm nan
bad --drift-ppm --drift-ppm 10,-1
bad --wander-ppm-s --wander-ppm-s 2
bad --sync-interval-ms --sync-interval-ms 100
bad --sync-interval-ms --sync-interval-ms 2000
bad --sync-interval-ms --sync-interval-ms 0
echo "bench_zonal_smoke: OK"
