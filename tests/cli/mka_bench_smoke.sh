#!/usr/bin/env bash
# Smoke run of `layersec bench mka` (bench/mka_bench.h): short phases and
# short MKA timers; checks that every figure is produced (bring-up, both
# load phases, exclusion) and that the JSON has its shape. No timing
# assertions. Root only; skips (77) otherwise.
# Usage: bash tests/cli/mka_bench_smoke.sh /path/to/layersec
set -euo pipefail
layersec="${1:?usage: $0 /path/to/layersec}"
if [[ "$(id -u)" != 0 ]]; then echo "SKIP: mka_bench_smoke needs root (namespaces, TAP, AF_PACKET)"; exit 77; fi
command -v ip >/dev/null || { echo "SKIP: ip is not installed"; exit 77; }
work="$(mktemp -d /tmp/mka_bench_smoke.XXXXXX)"
trap 'rm -rf "$work"' EXIT
"$layersec" bench mka --rate 2000 --seconds 1.2 --rekey-interval-ms 1000 --hello-ms 500 --life-ms 1500 \
  --json "$work/mka.json" | tee "$work/out.txt"
grep -q "link up -> first protected frame" "$work/out.txt" || { echo "FAIL: no bring-up line"; exit 1; }
/usr/bin/python3 - "$work/mka.json" <<'PY'
import json, sys
j = json.load(open(sys.argv[1]))
b = j["bringup"]
assert b["until_both_transmit_ms"] > 0, b
assert b["until_first_protected_frame_ms"] is not None, b
assert len(b["sak_fingerprint"]) == 16, b
for phase in ("baseline", "with_rekeys"):
    p = j["rekey"][phase]
    assert p["sent"] > 0 and p["received"] > 0, (phase, p)
    assert p["lost"] == p["sent"] - min(p["sent"], p["received"]), (phase, p)
assert j["rekey"]["baseline"]["rekeys"] == 0, j["rekey"]
assert j["exclusion"]["ms"] is not None and j["exclusion"]["ms"] > 0, j["exclusion"]
assert j["options"]["life_ms"] == 1500
print("ok: bench mka JSON has every figure")
PY
echo "PASS: mka_bench_smoke"
