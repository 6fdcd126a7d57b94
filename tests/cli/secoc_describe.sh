#!/usr/bin/env bash
# `layersec secoc describe` validates a JSON config, states every PDU's
# per-attempt forgery probability, and names the JSON path of an error.
set -euo pipefail
bin="$1"
src="${LAYERSEC_SOURCE_DIR:-$(cd "$(dirname "$0")/../.." && pwd)}"
out="$(mktemp -d)"
trap 'rm -rf "$out"' EXIT
"$bin" secoc describe --config "$src/testdata/secoc/engine_config.json" >"$out/describe"
grep -q "forgery probability 2^-64 per attempt" "$out/describe"
grep -q "forgery probability 2^-24 per attempt" "$out/describe"
grep -q "forgery probability 2^-28 per attempt" "$out/describe"
grep -q "NON-STANDARD AEAD" "$out/describe"
/usr/bin/python3 - "$src/testdata/secoc/engine_config.json" "$out/bad.json" <<'PY'
import json, sys
c = json.load(open(sys.argv[1]))
c["rxPdus"][1]["window"] = 100000
json.dump(c, open(sys.argv[2], "w"))
PY
if "$bin" secoc describe --config "$out/bad.json" 2>"$out/err"; then
  echo "invalid config accepted" >&2
  exit 1
fi
grep -q '\$.rxPdus\[1\].window' "$out/err"
# A number beyond a double (nlohmann's out_of_range 406, not a parse_error)
# is refused as a JSON error naming the file, exit 2, like any syntax error.
printf '{"senderId": 1E99999}' >"$out/huge.json"
st=0
"$bin" secoc describe --config "$out/huge.json" 2>"$out/err" || st=$?
[[ $st -eq 2 ]] || { echo "huge number: exit $st, expected 2: $(cat "$out/err")" >&2; exit 1; }
grep -q "huge.json.*JSON syntax.*number overflow" "$out/err" || { echo "huge number: $(cat "$out/err")" >&2; exit 1; }
