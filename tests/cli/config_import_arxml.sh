#!/usr/bin/env bash
# `layersec config import-arxml`: the secured echo pair described in ARXML
# (testdata/arxml, written by tests/arxml/make_arxml.py from the AUTOSAR
# parameter names) becomes node.json + secoc.json that `layersec node` runs;
# unsupported or invalid input is refused with exit status 2 and the ARXML
# path. (python3-canmatrix, an independent ARXML reader, is compared in
# tests/cli/arxml_canmatrix.sh.) Loopback only, no privileges.
# Usage: bash tests/cli/config_import_arxml.sh /path/to/layersec
set -euo pipefail
LS="${1:?usage: $0 /path/to/layersec}"
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
SRC="$HERE/../.."
WORK="$(mktemp -d)"
PID=""
cleanup() {
  if [[ -n "$PID" ]]; then kill "$PID" 2>/dev/null || true; wait "$PID" 2>/dev/null || true; fi
  rm -rf "$WORK"
}
trap cleanup EXIT
fail() { echo "FAIL: $*"; cat "$WORK"/out "$WORK"/err 2>/dev/null | tail -n 8; exit 1; }

# 1. Import the server side.
"$LS" config import-arxml "$SRC/testdata/arxml/echo_server.arxml" --out "$WORK/server" \
  --sync-tx-data-id 65001 --sync-rx-data-id 65002 --unicast 127.0.0.78 >"$WORK/out" 2>"$WORK/err" \
  || fail "import exited $?"
[[ -f "$WORK/server/node.json" && -f "$WORK/server/secoc.json" ]] || fail "node.json / secoc.json not written"
grep -q '/ActiveEcuC/SecOC/EchoResponse: txPdu 0' "$WORK/out" || fail "no PDU mapping notes"
grep -q "$WORK/server/keys/pair.key" "$WORK/out" || fail "the key file to provision is not named"
"$LS" secoc describe --config "$WORK/server/secoc.json" >"$WORK/describe" 2>&1 || fail "secoc describe refused secoc.json"
grep -q 'dataId=0x102' "$WORK/describe" || fail "describe: no tx PDU with DataId 258"
echo "ok: import wrote node.json and secoc.json; secoc describe accepts the engine"

# 2. Run the node from the result for a second (SD port moved off the
#    default, so parallel tests do not meet).
/usr/bin/python3 - "$WORK/server/node.json" <<'PY'
import json, sys
p = sys.argv[1]
j = json.load(open(p))
j["service-discovery"] = {"port": 31492}
json.dump(j, open(p, "w"), indent=1)
PY
mkdir -p "$WORK/server/keys"
(umask 077 && head -c 32 /dev/urandom | od -An -tx1 | tr -d ' \n' >"$WORK/server/keys/pair.key" && echo >>"$WORK/server/keys/pair.key")
"$LS" node --config "$WORK/server/node.json" --duration 1 --json --first-start >"$WORK/out" 2>"$WORK/err" \
  || fail "layersec node exited $?"
grep '"type":"started"' "$WORK/out" | grep -q '"secoc":true' || fail "node did not start with SecOC"
grep '"type":"started"' "$WORK/out" | grep -q '"key_group":"pair"' || fail "node did not load key group pair"
tail -n 1 "$WORK/out" | grep -q '"stopped_by":"duration"' || fail "no final counters line"
echo "ok: layersec node ran the imported configuration for 1 s (SecOC on, key group pair)"

# 3. Refusals name the ARXML path; nothing is written.
sed 's|<VALUE>258</VALUE>|<VALUE>70000</VALUE>|' "$SRC/testdata/arxml/echo_server.arxml" >"$WORK/bad.arxml"
st=0
"$LS" config import-arxml "$WORK/bad.arxml" --out "$WORK/bad" --sync-tx-data-id 1 --sync-rx-data-id 2 \
  >"$WORK/out" 2>"$WORK/err" || st=$?
[[ $st -eq 2 ]] || fail "out-of-range DataId: exit status $st, want 2"
grep -q 'bad.arxml: /ActiveEcuC/SecOC/EchoResponse/SecOCDataId: 70000 is out of range 0..65535' "$WORK/err" \
  || fail "out-of-range DataId: message does not name the ARXML path"
[[ ! -e "$WORK/bad" ]] || fail "output written for a refused file"
printf '<AUTOSAR><AR-PACKAGES>' >"$WORK/trunc.arxml"
st=0
"$LS" config import-arxml "$WORK/trunc.arxml" --out "$WORK/bad" >"$WORK/out" 2>"$WORK/err" || st=$?
[[ $st -eq 2 ]] && grep -q 'not well-formed XML' "$WORK/err" || fail "truncated XML: status $st"
st=0
"$LS" config import-arxml "$SRC/testdata/arxml/echo_server.arxml" --out "$WORK/bad" >"$WORK/out" 2>"$WORK/err" || st=$?
[[ $st -eq 2 ]] && grep -q -- '--sync-tx-data-id: required' "$WORK/err" || fail "missing sync DataId: status $st"
echo "ok: invalid input refused with status 2, the ARXML path, nothing written"

echo "PASS"
