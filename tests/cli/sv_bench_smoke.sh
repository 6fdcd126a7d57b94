#!/usr/bin/env bash
# Smoke run of `layersec bench sv`: every profile x scheme yields a row with
# the documented fields, the baseline ("none") is in the same run, and the
# publisher/subscriber processed every frame.
set -euo pipefail
bin="$1"
out="$(mktemp -d)"
trap 'rm -rf "$out"' EXIT
"$bin" bench sv --smoke --json "$out/sv.json" >"$out/stdout"
/usr/bin/python3 - "$out/sv.json" <<'PY'
import json, sys
doc = json.load(open(sys.argv[1]))
rows = doc["rows"]
schemes = ["none", "hmac-sha256", "aes-gmac-128", "blake2s", "chaskey12-full", "chaskey12-selective"]
profiles = {r["profile"] for r in rows}
assert len(profiles) == 8, profiles
assert len(rows) == 48, len(rows)
for r in rows:
    for k in ("profile", "scheme", "mac_ns", "interarrival_us", "p50_us", "p99_us", "max_us", "margin_p99", "rss_kib"):
        assert k in r, (k, r)
    assert r["scheme"] in schemes, r
    assert r["p50_us"] > 0 and r["p50_us"] <= r["p99_us"] <= r["max_us"], r
    assert abs(r["margin_p99"] - r["interarrival_us"] / r["p99_us"]) < 1e-9, r
    assert r["rss_kib"] > 0, r
    assert (r["mac_ns"] > 0) == (r["scheme"] != "none"), r
    assert r["frames"] == 500, r
by = {(r["profile"], r["scheme"]) for r in rows}
assert len(by) == 48
assert len(doc["pacing"]) == 8
for p in doc["pacing"]:
    assert p["frames_sent"] > 0 and p["frames_sent"] + p["frames_skipped"] >= p["frames_due"], p
assert doc["paper_reference"]["publisher_us_per_frame_1asdu"] == 71.93
print(f"bench sv smoke: {len(rows)} rows, {len(doc['pacing'])} pacing rows")
PY
grep -q "paper's figures" "$out/stdout"
