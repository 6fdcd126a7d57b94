#!/usr/bin/env bash
# `layersec bench modeb --smoke`: Mode B group-key establishment runs for every
# default KEM and N = 1..64 and writes rows with the documented fields. Only the
# structure is checked (no timing assertions): one row per (KEM, N), positive
# costs and baselines, ratios computed from them, wire bytes = N x the three
# message sizes.
set -euo pipefail
LAYERSEC=${1:?usage: keymgmt_modeb_bench_smoke.sh /path/to/layersec}
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
"$LAYERSEC" bench modeb --smoke --json "$TMP/modeb.json" > "$TMP/out.txt"
grep -q "per-subscriber slope" "$TMP/out.txt"
# A bad scheme name is a clear failure, not a crash.
if "$LAYERSEC" bench modeb --smoke --scheme no-such-kem > "$TMP/bad.txt" 2>&1; then
  echo "unknown scheme accepted"; exit 1
fi
grep -q "unknown scheme" "$TMP/bad.txt"
/usr/bin/python3 - "$TMP/modeb.json" <<'PYEOF'
import json, sys
rows = json.load(open(sys.argv[1]))
schemes = ["rsa-2048", "rsa-3072", "x25519", "ecdh-p256", "ml-kem-768", "x25519+ml-kem-768", "ntru-ees613ep1"]
sizes = [1, 2, 4, 8, 16, 32, 64]
got = {(r["scheme"], r["n"]) for r in rows}
want = {(s, n) for s in schemes for n in sizes}
assert got == want, f"rows differ: missing {want - got}, extra {got - want}"
assert len(rows) == len(want), "duplicate rows"
fields = ["publisher_cpu_us", "publisher_wall_us", "publisher_per_subscriber_cpu_us", "subscriber_cpu_us",
          "subscriber_max_cpu_us", "serial_wall_us", "keyed_group_model_us", "baseline_kem_cpu_us", "ratio_vs_kem",
          "baseline_psk_publisher_cpu_us", "baseline_psk_total_cpu_us", "ratio_vs_psk"]
for r in rows:
    tag = f'{r["scheme"]} n={r["n"]}'
    for f in fields:
        assert f in r and isinstance(r[f], (int, float)) and r[f] > 0, f"{tag}: {f} = {r.get(f)}"
    assert r["rounds"] == 1, tag
    assert abs(r["publisher_per_subscriber_cpu_us"] * r["n"] - r["publisher_cpu_us"]) < 1e-6 * r["publisher_cpu_us"] + 1e-9, tag
    all_cpu = r["publisher_cpu_us"] + r["subscriber_cpu_us"] * r["n"]
    assert abs(all_cpu / r["baseline_kem_cpu_us"] - r["ratio_vs_kem"]) < 1e-6 * r["ratio_vs_kem"], tag
    assert abs(r["publisher_cpu_us"] / r["baseline_psk_publisher_cpu_us"] - r["ratio_vs_psk"]) < 1e-6 * r["ratio_vs_psk"], tag
    assert r["subscriber_max_cpu_us"] >= r["subscriber_cpu_us"] - 1e-9, tag
    # The modelled time to a keyed group needs at least the publisher's work.
    assert r["keyed_group_model_us"] >= r["publisher_cpu_us"] - 1e-6, tag
    per = r["request_bytes"] + r["delivery_bytes"] + r["confirm_bytes"]
    assert r["bytes_on_wire"] == per * r["n"], tag
    assert r["confirm_bytes"] == 8 + 4 + 32 + 1 + 32, tag  # HMAC-SHA256 confirmation (docs/pki.md §3.4)
    if r["scheme"].startswith("rsa-"):
        assert "certificate key" in r["subscriber_cert"], tag
    if r["scheme"].startswith("ntru-"):
        assert r["set"] == "EES613EP1", tag
print(f"ok: {len(rows)} rows ({len(schemes)} KEMs x N = {sizes})")
PYEOF
# The same groups keyed over the SOME/IP key-management service (simulated segment).
"$LAYERSEC" bench modeb --smoke --someip --scheme x25519 --scheme rsa-2048 --n 1 --n 4 --json "$TMP/someip.json" > "$TMP/someip.txt"
grep -q "over SOME/IP" "$TMP/someip.txt"
/usr/bin/python3 - "$TMP/someip.json" <<'PYEOF'
import json, sys
rows = json.load(open(sys.argv[1]))
assert {(r["scheme"], r["n"]) for r in rows} == {(s, n) for s in ("x25519", "rsa-2048") for n in (1, 4)}, rows
for r in rows:
    n = r["n"]
    assert r["someip_cpu_us"] > 0 and r["someip_sim_ms"] > 0, r
    assert r["someip_rekeys"] == n, r               # one rekey per join
    assert n <= r["someip_handshakes"] <= n * n, r  # re-handshakes after the join notices
    assert r["someip_ratio_vs_in_process"] > 0, r
print(f"ok: {len(rows)} SOME/IP rows")
PYEOF
