#!/usr/bin/env bash
# Runs `layersec selftest` and checks the exit status, that every algorithm
# line reports all of its vectors passed (and has vectors at all), and the
# JSON output. Then checks that a corrupted vector makes it fail.
# Usage: selftest.sh /path/to/layersec
set -euo pipefail
LAYERSEC="$1"
ROOT="$(cd "$(dirname "$0")/../.." && pwd)"
VECTORS="${LAYERSEC_VECTORS_DIR:-$ROOT/../shared/vectors}"

tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT

if ! "$LAYERSEC" selftest --vectors "$VECTORS" --testdata "$ROOT/testdata" --json "$tmp/st.json" > "$tmp/out.txt"; then
  cat "$tmp/out.txt"
  echo "FAIL: selftest exited non-zero" >&2
  exit 1
fi
cat "$tmp/out.txt"

# Minimum vector counts per algorithm (what the vector files hold today).
declare -A MIN=(
  [AES-CMAC-128]=29 [AES-CMAC-192]=4 [AES-CMAC-256]=4 [Chaskey-8]=64 [Chaskey-12]=192
  [HMAC-SHA256]=7 [BLAKE2s-256]=256 [AES-GCM-128]=6 [AES-GCM-256]=6 [AES-GMAC]=2
  [HKDF-SHA256]=3 ["AES key wrap"]=12 [ML-KEM-512]=15 [ML-KEM-768]=15 [ML-KEM-1024]=15
  [X25519]=8 [ECDH-P256]=4 [ECDH-P521]=4 [RSA-OAEP-2048]=10 [NTRU-EES613EP1]=5 [NTRU-EES1171EP1]=5
  [X25519+ML-KEM-768]=3 [Ed25519]=6 [ECDSA-P256]=5
)
for algo in "${!MIN[@]}"; do
  re="$(printf '%s' "$algo" | sed 's/[+.]/\\&/g')"
  line="$(grep -E "^${re} +[0-9]+/[0-9]+ " "$tmp/out.txt" || true)"
  if [ -z "$line" ]; then
    echo "FAIL: no line for $algo" >&2
    exit 1
  fi
  counts="$(echo "$line" | sed -E "s/^${re} +([0-9]+)\/([0-9]+) .*/\1 \2/")"
  read -r passed total <<< "$counts"
  if [ "$passed" != "$total" ] || [ "$total" -lt "${MIN[$algo]}" ]; then
    echo "FAIL: $algo: $passed/$total passed (need all, at least ${MIN[$algo]})" >&2
    exit 1
  fi
  echo "$line" | grep -qE " ok +" || { echo "FAIL: $algo not ok" >&2; exit 1; }
done
grep -q "selftest: all vectors passed" "$tmp/out.txt"

# JSON: 24 algorithms (every primitive), all ok, throughput measured.
/usr/bin/python3 - "$tmp/st.json" <<'PYEOF'
import json, sys
rows = json.load(open(sys.argv[1]))
assert len(rows) == 24, len(rows)
for r in rows:
    assert r["ok"] and r["passed"] == r["total"] > 0, r["algorithm"]
    assert r["ns_per_op"] > 0, r["algorithm"]
    assert not r["failures"] and not r["errors"], r["algorithm"]
print("json ok: %d algorithms, %d vectors" % (len(rows), sum(r["total"] for r in rows)))
PYEOF

# A corrupted vector must make the self test fail: copy the testdata, flip
# one HMAC tag digit, and expect a non-zero exit naming the failed vector.
cp -r "$ROOT/testdata" "$tmp/td"
/usr/bin/python3 - "$tmp/td/crypto/hmac_sha256_rfc4231.json" <<'PYEOF'
import json, sys
p = sys.argv[1]
d = json.load(open(p))
t = d["vectors"][1]["tag"]
d["vectors"][1]["tag"] = ("1" if t[0] == "0" else "0") + t[1:]
json.dump(d, open(p, "w"))
PYEOF
if "$LAYERSEC" selftest --vectors "$VECTORS" --testdata "$tmp/td" > "$tmp/bad.txt" 2>&1; then
  echo "FAIL: selftest passed with a corrupted vector" >&2
  exit 1
fi
grep -qE "^HMAC-SHA256 +6/7 +FAIL" "$tmp/bad.txt"
grep -q "failed: RFC 4231 test case 2" "$tmp/bad.txt"

# A missing vector folder is an error, not a pass.
if "$LAYERSEC" selftest --vectors "$tmp/nowhere" --testdata "$tmp/td" > /dev/null 2>&1; then
  echo "FAIL: selftest passed without vectors" >&2
  exit 1
fi
echo "PASS selftest"
