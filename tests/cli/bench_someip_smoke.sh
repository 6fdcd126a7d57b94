#!/usr/bin/env bash
# Smoke run of `layersec bench someip`: a tiny sim run (and a netns one when
# run as root) that checks the JSON structure and that every row has sane
# values; the secured rows must show SecOC work and no rejections.
set -euo pipefail
bin="$1"
out="$(mktemp -d)"
trap 'rm -rf "$out"' EXIT
topology=sim
if [[ "$(id -u)" == 0 ]] && command -v ip >/dev/null; then topology=both; fi
"$bin" bench someip --topology "$topology" --iterations 30 --warmup 5 --json "$out/someip.json" >"$out/stdout"
grep -q "goals (issue 4)" "$out/stdout"
grep -q "REAL" "$out/stdout"
/usr/bin/python3 - "$out/someip.json" "$topology" <<'PY'
import json, sys
doc = json.load(open(sys.argv[1]))
topologies = ["sim", "netns"] if sys.argv[2] == "both" else ["sim"]
names = ["udp-bare", "rr-unsecured", "rr-secoc", "event-unsecured", "event-secoc"]
baseline = {"rr-unsecured": "udp-bare", "rr-secoc": "rr-unsecured", "event-secoc": "event-unsecured"}
rows = doc["rows"]
if len(rows) != 5 * len(topologies):
    # netns may be skipped with a note (no namespaces on this host)
    assert topologies == ["sim", "netns"] and len(rows) == 5 and doc["notes"], doc
    topologies = ["sim"]
for i, r in enumerate(rows):
    assert r["topology"] == topologies[i // 5] and r["name"] == names[i % 5], r
    for k in ("mean_us", "p50_us", "p99_us", "max_us", "msgs_per_s"):
        assert r[k] > 0, (k, r)
    assert r["min_us"] <= r["p50_us"] <= r["p99_us"] <= r["max_us"], r
    assert r["completed"] == r["iterations"] == 30 and r["timeouts"] == 0, r
    assert r["measure"] == ("one way" if r["name"].startswith("event") else "round trip"), r
    assert r["secoc_rejected"] == 0, r
    if r["name"] == "rr-secoc":
        assert r["secoc_protected"] == 60 and r["secoc_verified"] == 60, r
    elif r["name"] == "event-secoc":
        assert r["secoc_protected"] == 30 and r["secoc_verified"] == 30, r
    else:
        assert r["secoc_protected"] == 0 and r["secoc_verified"] == 0, r
    if r["name"] in baseline:
        assert r["baseline"] == baseline[r["name"]], r
        assert abs(r["ratio_p50"] - r["p50_us"] / r["baseline_p50_us"]) < 1e-6, r
        assert abs(r["ratio_p99"] - r["p99_us"] / r["baseline_p99_us"]) < 1e-6, r
assert len(doc["goals"]) == 2 * len(topologies), doc["goals"]
for g in doc["goals"]:
    assert g["limit"] in (1.3, 1.1) and g["met_p50"] == (g["ratio_p50"] <= g["limit"]), g
assert doc["reference"]["vsomeip_rtt_p50_us"] == 204
print(f"bench someip smoke: {len(rows)} rows on {', '.join(topologies)}")
PY
