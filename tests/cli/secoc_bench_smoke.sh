#!/usr/bin/env bash
# Smoke run of `layersec bench secoc` so the benchmarks cannot rot: every
# profile x op x size must produce a figure and a same-run baseline, and the
# resynchronisation simulation must print its table.
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
grep -q "resynchronisation after a burst loss" "$out/stdout"
