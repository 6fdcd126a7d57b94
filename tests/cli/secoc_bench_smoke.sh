#!/usr/bin/env bash
# Smoke run of `layersec bench secoc` so the benchmarks cannot rot: every
# profile x op x size must produce a figure and a same-run baseline, the
# cost goal (64-byte protect+verify of profiles 1-3 and vendor against its two
# bare MACs, interleaved) a row and a verdict per profile (no timing is
# asserted), and the resynchronisation simulation must print its table.
set -euo pipefail
bin="$1"
out="$(mktemp -d)"
trap 'rm -rf "$out"' EXIT
"$bin" bench secoc --smoke --json "$out/secoc.json" >"$out/stdout"
/usr/bin/python3 - "$out/secoc.json" <<'PY'
import json, sys
rows = json.load(open(sys.argv[1]))
profiles = {"profile1", "profile2", "profile3", "vendor", "hmac-sha256", "aead-gcm"}
ops = {"protect", "verify", "protect+verify"}
sizes = {8, 64, 256, 1400}
seen = set()
goal = [r for r in rows if "goal_met" in r]
rows = [r for r in rows if "goal_met" not in r]
assert sorted(r["profile"] for r in goal) == ["profile1", "profile2", "profile3", "vendor"], goal
for r in goal:
    assert r["op"] == "protect+verify" and r["bytes"] == 64 and r["goal_ratio"] == 1.15, r
    assert r["ns_per_op"] > 0 and r["baseline_ns_per_op"] > 0 and r["rounds"] >= 1, r
    assert 0 < r["ratio_min"] <= r["ratio"] <= r["ratio_max"], r
    assert r["own_mac_ns_per_op"] > 0 and r["framing_ratio"] > 0, r
    assert r["goal_met"] == (r["ratio"] <= r["goal_ratio"]), r
for r in rows:
    for k in ("profile", "op", "bytes", "ns_per_op", "baseline_ns_per_op", "ratio"):
        assert k in r, (k, r)
    assert r["profile"] in profiles and r["op"] in ops and r["bytes"] in sizes, r
    assert r["ns_per_op"] > 0 and r["baseline_ns_per_op"] > 0 and r["ratio"] > 0, r
    assert abs(r["ratio"] - r["ns_per_op"] / r["baseline_ns_per_op"]) < 1e-6, r
    seen.add((r["profile"], r["op"], r["bytes"]))
want = {(p, o, b) for p in profiles for o in ops for b in sizes}
assert seen == want, f"missing rows: {sorted(want - seen)}"
print(f"bench secoc smoke: {len(rows)} rows")
PY
grep -q "ratio" "$out/stdout"
grep -q "^goal: protect+verify of a 64-byte PDU within 1.15x" "$out/stdout"
[ "$(grep -cE '^(profile[123]|vendor) +cmac-aes(128|256) .* (met|NOT met) +[0-9.]+ +[0-9.]+$' "$out/stdout")" = 4 ]
grep -q "resynchronisation after a burst loss" "$out/stdout"
