#!/usr/bin/env bash
# Smoke run of `layersec bench crypto` so the benchmarks cannot rot: every
# primitive at every size must produce a figure and a same-run baseline.
set -euo pipefail
bin="$1"
out="$(mktemp -d)"
trap 'rm -rf "$out"' EXIT
"$bin" bench crypto --smoke --json "$out/crypto.json" >"$out/stdout"
/usr/bin/python3 - "$out/crypto.json" <<'PY'
import json, sys
rows = json.load(open(sys.argv[1]))
prims = {r["primitive"] for r in rows}
need = {"cmac-aes128", "cmac-aes192", "cmac-aes256", "hmac-sha256", "blake2s-256", "chaskey8",
        "chaskey12", "gcm-aes128-seal", "gcm-aes128-open", "gcm-aes256-seal", "gcm-aes256-open",
        "gmac-aes128", "gmac-aes256"}
missing = need - prims
assert not missing, f"missing primitives: {missing}"
for r in rows:
    for k in ("primitive", "bytes", "ns_per_op", "baseline_ns_per_op", "ratio"):
        assert k in r, (k, r)
    assert r["bytes"] in (16, 64, 120, 775, 1500), r
    assert r["ns_per_op"] > 0 and r["baseline_ns_per_op"] > 0 and r["ratio"] > 0, r
    assert abs(r["ratio"] - r["ns_per_op"] / r["baseline_ns_per_op"]) < 1e-6, r
sizes = {(r["primitive"], r["bytes"]) for r in rows}
assert len(sizes) == len(need | prims) * 5, len(sizes)
print(f"bench crypto smoke: {len(rows)} rows, {len(prims)} primitives")
PY
grep -q "ratio" "$out/stdout"
