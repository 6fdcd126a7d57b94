#!/usr/bin/env bash
# `layersec bench kex --smoke`: the benchmark runs for every scheme and writes
# rows with the documented fields.
set -euo pipefail
LAYERSEC=${1:?usage: kem_bench_smoke.sh /path/to/layersec}
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
"$LAYERSEC" bench kex --smoke --json "$TMP/kex.json"
/usr/bin/python3 - "$TMP/kex.json" <<'PYEOF'
import json, sys
rows = json.load(open(sys.argv[1]))
names = {r["scheme"] for r in rows}
want = {"ml-kem-512", "ml-kem-768", "ml-kem-1024", "x25519", "ecdh-p256", "ecdh-p521", "rsa-2048", "rsa-3072",
        "ntru-ees613ep1", "ntru-ees1171ep1", "x25519+ml-kem-768"}
missing = want - names
assert not missing, f"missing rows: {missing}"
for r in rows:
    for f in ("scheme", "keygen_us", "encaps_us", "decaps_us", "negotiation_us", "peak_rss_kib"):
        assert f in r, f"{r['scheme']}: no {f}"
    assert r["encaps_us"] > 0 and r["decaps_us"] > 0, r
    assert r["keygen_us"] is None or r["keygen_us"] > 0, r
    assert r["peak_rss_kib"] > 0, r
    if r["scheme"].startswith("ntru-"):
        assert r["set"].upper() in r["scheme"].upper(), r
print(f"ok: {len(rows)} scheme rows with keygen/encaps/decaps/negotiation/peak_rss fields")
PYEOF
