#!/usr/bin/env bash
# Smoke run of `layersec bench dtls` (DTLS fan-out vs group-keyed SecOC, the
# seed paper's Table 21): a tiny run over both transports that checks the JSON
# rows' structure and that every value is sane - not the speed.
set -euo pipefail
bin="$1"
out="$(mktemp -d)"
trap 'rm -rf "$out"' EXIT
"$bin" bench dtls --n-max 4 --iterations 20 --warmup 2 --json "$out/dtls.json" >"$out/stdout"
grep -q "DTLS 1.3" "$out/stdout"
grep -q "DTLSv1.2 ECDHE-ECDSA-AES128-GCM-SHA256" "$out/stdout"
/usr/bin/python3 - "$out/dtls.json" <<'PY'
import json, sys
rows = json.load(open(sys.argv[1]))
need = ("name", "topology", "iterations", "mean_us", "p50_us", "p95_us", "p99_us", "max_us",
        "cpu_pct", "rss_kib", "baseline_p99_us", "ratio_p99", "n", "crypto_ops_per_msg",
        "publisher_cpu_us_per_msg", "delivered", "expected")
seen = set()
for r in rows:
    for k in need:
        assert k in r, (k, r)
    assert r["name"] in ("multicast-unsecured", "group-secoc", "dtls-fanout"), r
    assert r["topology"] in ("memory", "loopback"), r
    assert r["n"] in (2, 4), r
    assert r["iterations"] == 20 and r["completed"] == 20, r
    assert 0 < r["min_us"] <= r["p50_us"] <= r["p95_us"] <= r["p99_us"] <= r["max_us"], r
    assert r["min_us"] <= r["mean_us"] <= r["max_us"], r
    assert r["delivered"] == r["expected"] == r["n"] * 22, r
    assert r["baseline_p99_us"] > 0 and abs(r["ratio_p99"] - r["p99_us"] / r["baseline_p99_us"]) < 1e-6, r
    ops = {"multicast-unsecured": 0, "group-secoc": 1, "dtls-fanout": r["n"]}[r["name"]]
    assert r["crypto_ops_per_msg"] == ops, r
    assert r["rss_kib"] > 0 and r["cpu_pct"] >= 0, r
    if r["name"] == "dtls-fanout":
        assert r["protocol"] == "DTLSv1.2" and r["cipher"] == "ECDHE-ECDSA-AES128-GCM-SHA256", r
        assert r["handshake_ms_total"] > 0 and r["group_p99_us"] > 0, r
    seen.add((r["topology"], r["n"], r["name"]))
want = {(t, n, v) for t in ("memory", "loopback") for n in (2, 4)
        for v in ("multicast-unsecured", "group-secoc", "dtls-fanout")}
assert seen == want, f"missing rows: {sorted(want - seen)}"
print(f"bench dtls smoke: {len(rows)} rows")
PY
