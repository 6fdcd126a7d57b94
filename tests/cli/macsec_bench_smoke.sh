#!/usr/bin/env bash
# Smoke run of `layersec bench macsec` so the benchmarks cannot rot: every
# suite x op x size must produce a figure and a same-run baseline.
set -euo pipefail
bin="$1"
out="$(mktemp -d)"
trap 'rm -rf "$out"' EXIT
"$bin" bench macsec --smoke --json "$out/macsec.json" >"$out/stdout"
/usr/bin/python3 - "$out/macsec.json" <<'PY'
import json, sys
rows = json.load(open(sys.argv[1]))
suites = {"gcm-aes-128", "gcm-aes-256", "gcm-aes-xpn-128", "gcm-aes-xpn-256"}
seen = set()
for r in rows:
    for k in ("suite", "op", "bytes", "ns_per_frame", "gbit_s", "baseline_ns_per_frame", "ratio"):
        assert k in r, (k, r)
    assert r["suite"] in suites, r
    assert r["op"] in ("protect", "validate"), r
    assert r["bytes"] in (64, 512, 1500), r
    assert r["ns_per_frame"] > 0 and r["baseline_ns_per_frame"] > 0 and r["ratio"] > 0, r
    assert abs(r["ratio"] - r["ns_per_frame"] / r["baseline_ns_per_frame"]) < 1e-6, r
    assert abs(r["gbit_s"] - r["bytes"] * 8 / r["ns_per_frame"]) < 1e-6, r
    seen.add((r["suite"], r["op"], r["bytes"]))
assert len(seen) == 4 * 2 * 3 == len(rows), (len(seen), len(rows))
print(f"bench macsec smoke: {len(rows)} rows")
PY
grep -q "ratio" "$out/stdout"
